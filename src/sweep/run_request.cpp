#include "sweep/run_request.hpp"

#include <cctype>
#include <iterator>

#include "config/load.hpp"
#include "nki/kernel_reference.hpp"
#include "util/error.hpp"
#include "util/hash.hpp"
#include "util/json_input.hpp"

namespace trnsim::sweep {

namespace fs = std::filesystem;

namespace {

bool is_dotted_name(const std::string& text) {
  if (text.empty() || text == "True" || text == "False" || text == "None") return false;
  bool start = true;
  for (const char c : text) {
    const bool letter = std::isalpha(static_cast<unsigned char>(c)) || c == '_';
    if (c == '.') {
      if (start) return false;
      start = true;
    } else if (letter || (!start && std::isdigit(static_cast<unsigned char>(c)))) {
      start = false;
    } else {
      return false;
    }
  }
  return !start;
}

std::string python_string(const std::string& text) {
  std::string out = "'";
  for (const char c : text) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\'':
        out += "\\'";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += c;
    }
  }
  return out + "'";
}

}  // namespace

bool RunRequest::is_nki() const {
  return nki::is_nki_kernel(kernel_path);
}

std::vector<std::string> run_command_line(const RunRequest& request,
                                          const std::string& trnsim_binary) {
  std::vector<std::string> argv = {trnsim_binary, "run", request.kernel_path, "--config",
                                   request.config_path};
  const auto add = [&argv](const char* option, const Assignments& assignments) {
    for (const auto& [name, value] : assignments) {
      argv.push_back(option);
      argv.push_back(name + "=" + value);
    }
  };
  add("--set", request.sets);
  add("--param", request.params);
  add("--input", request.inputs);
  add("--kwarg", request.kwargs);
  if (!request.grid.empty()) {
    argv.push_back("--grid");
    argv.push_back(request.grid);
  }
  argv.push_back("--json");
  return argv;
}

std::string python_literal(const nlohmann::ordered_json& value) {
  switch (value.type()) {
    case nlohmann::ordered_json::value_t::null:
      return "None";
    case nlohmann::ordered_json::value_t::boolean:
      return value.get<bool>() ? "True" : "False";
    case nlohmann::ordered_json::value_t::string: {
      const std::string text = value.get<std::string>();
      return is_dotted_name(text) ? text : python_string(text);
    }
    case nlohmann::ordered_json::value_t::array: {
      std::string out = "[";
      for (std::size_t i = 0; i < value.size(); ++i) {
        out += (i > 0 ? ", " : "") + python_literal(value[i]);
      }
      return out + "]";
    }
    case nlohmann::ordered_json::value_t::object: {
      std::string out = "{";
      bool first = true;
      for (const auto& [key, member] : value.items()) {
        out += (first ? "" : ", ") + python_string(key) + ": " + python_literal(member);
        first = false;
      }
      return out + "}";
    }
    default:
      return value.dump();  // numbers
  }
}

std::string resolve_input(const std::string& value, const fs::path& base_dir) {
  const bool npy = value.size() > 4 && value.compare(value.size() - 4, 4, ".npy") == 0;
  return npy ? resolve_path(value, base_dir) : value;
}

std::string resolve_path(const std::string& file, const fs::path& base_dir) {
  const fs::path path(file);
  if (path.is_absolute() || base_dir.empty()) return path.lexically_normal().string();
  return (base_dir / path).lexically_normal().string();
}

std::string resolve_config(const std::string& config, const fs::path& base_dir) {
  for (const std::string& name : config::builtin_config_names()) {
    if (name == config) return config;
  }
  return resolve_path(config, base_dir);
}

std::string kernel_hash(std::string_view kernel_text, const RunRequest& request) {
  std::uint64_t hash = util::fnv1a64(kernel_text);
  const auto add = [&hash](const char* option, const Assignments& assignments) {
    for (const auto& [name, value] : assignments) {
      hash = util::fnv1a64(std::string("\n") + option + " " + name + "=" + value, hash);
    }
  };
  add("--param", request.params);
  add("--input", request.inputs);
  add("--kwarg", request.kwargs);
  if (!request.grid.empty()) hash = util::fnv1a64("\n--grid " + request.grid, hash);
  return util::hex64(hash);
}

std::string config_hash(const nlohmann::ordered_json& effective) {
  nlohmann::ordered_json values = effective;
  values.erase("sources");
  return util::hex64(util::fnv1a64(values.dump()));
}

std::string value_text(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

nlohmann::ordered_json assignments_json(const Assignments& assignments) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& [key, text] : assignments) {
    const auto parsed = nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
    out[key] = parsed.is_number() || parsed.is_boolean() ? parsed : nlohmann::ordered_json(text);
  }
  return out;
}

nlohmann::ordered_json kwargs_json(const Assignments& kwargs) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& [name, text] : kwargs) {
    if (text == "True" || text == "False") {
      out[name] = text == "True";
    } else if (text == "None") {
      out[name] = nullptr;
    } else {
      const auto parsed = nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
      out[name] = parsed.is_number() ? parsed : nlohmann::ordered_json(text);
    }
  }
  return out;
}

const std::string& FileCache::text(const std::string& path) {
  if (const auto it = texts_.find(path); it != texts_.end()) return it->second;
  return texts_.emplace(path, util::read_input_file(path, "kernel file")).first->second;
}

}  // namespace trnsim::sweep
