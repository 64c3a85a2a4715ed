#include "sweep/json_checks.hpp"

#include <fstream>
#include <iterator>

#include "util/error.hpp"
#include "util/json_input.hpp"
#include "util/strings.hpp"

namespace trnsim::sweep {

using nlohmann::ordered_json;

std::string pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string JsonChecker::where(const std::string& pointer) const {
  const std::string at = pointer.empty() ? std::string("/") : pointer;
  return file_.empty() ? at : file_ + ": " + at;
}

void JsonChecker::fail(const std::string& pointer, const std::string& message) const {
  throw InputError(where(pointer), message);
}

void JsonChecker::keys(const ordered_json& object, const std::string& pointer,
                       const std::vector<std::string>& allowed) const {
  for (const auto& [key, value] : object.items()) {
    bool known = false;
    for (const auto& name : allowed) known = known || name == key;
    if (!known) {
      fail(pointer + "/" + pointer_token(key), "unknown key '" + key + "'; expected one of " +
                                                   util::join(allowed, ", ") +
                                                   util::did_you_mean(key, allowed));
    }
  }
}

const ordered_json& JsonChecker::object(const ordered_json& value, const std::string& pointer,
                                        const std::string& what) const {
  if (!value.is_object()) fail(pointer, "expected " + what + ", found " + describe_json(value));
  return value;
}

std::string JsonChecker::string(const ordered_json& value, const std::string& pointer,
                                const std::string& what) const {
  if (!value.is_string() || value.get<std::string>().empty()) {
    fail(pointer, "expected " + what + " (a non-empty string), found " + describe_json(value));
  }
  // File names, configs and values end up in a worker's command line, where NUL ends a string.
  if (value.get<std::string>().find('\0') != std::string::npos) {
    fail(pointer, "expected " + what + ", found a string with a NUL character (\\u0000)");
  }
  return value.get<std::string>();
}

ordered_json read_json_file(const std::string& path, const std::string& what) {
  return util::parse_json_input<ordered_json>(util::read_input_file(path, what), path);
}

}  // namespace trnsim::sweep
