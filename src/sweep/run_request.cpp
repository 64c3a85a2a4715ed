#include "sweep/run_request.hpp"

#include <fstream>
#include <iterator>

#include "config/load.hpp"
#include "util/error.hpp"
#include "util/hash.hpp"

namespace trnsim::sweep {

namespace fs = std::filesystem;

std::vector<std::string> run_command_line(const RunRequest& request,
                                          const std::string& trnsim_binary) {
  std::vector<std::string> argv = {trnsim_binary, "run", request.kernel_path, "--config",
                                   request.config_path};
  for (const auto& [key, value] : request.sets) {
    argv.push_back("--set");
    argv.push_back(key + "=" + value);
  }
  for (const auto& [name, value] : request.params) {
    argv.push_back("--param");
    argv.push_back(name + "=" + value);
  }
  argv.push_back("--json");
  return argv;
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

std::string kernel_hash(std::string_view kernel_text, const Assignments& params) {
  std::uint64_t hash = util::fnv1a64(kernel_text);
  for (const auto& [name, value] : params) {
    hash = util::fnv1a64("\n--param " + name + "=" + value, hash);
  }
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

const std::string& FileCache::text(const std::string& path) {
  if (const auto it = texts_.find(path); it != texts_.end()) return it->second;
  std::ifstream file(path, std::ios::binary);
  if (!file) throw InputError(path, "cannot open the file");
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  return texts_.emplace(path, std::move(text)).first->second;
}

}  // namespace trnsim::sweep
