#include "util/log.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include "util/error.hpp"

namespace trnsim::log {

namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, spdlog::level::level_enum, std::less<>> levels;
  std::map<std::string, std::shared_ptr<spdlog::logger>, std::less<>> loggers;
  std::shared_ptr<spdlog::sinks::stderr_color_sink_mt> sink =
      std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
};

Registry& registry() {
  static Registry instance;
  return instance;
}

std::string component_list() {
  std::string list;
  for (std::string_view name : kComponents) {
    if (!list.empty()) list += ", ";
    list += name;
  }
  return list;
}

bool is_component(std::string_view name) {
  return std::find(kComponents.begin(), kComponents.end(), name) != kComponents.end();
}

/// Sets `name` and the components below it (name + ".") to `level`.
void set_level(Registry& reg, std::string_view name, spdlog::level::level_enum level) {
  for (std::string_view component : kComponents) {
    if (component == name ||
        (component.size() > name.size() && component.substr(0, name.size()) == name &&
         component[name.size()] == '.')) {
      reg.levels[std::string(component)] = level;
      const auto logger = reg.loggers.find(component);
      if (logger != reg.loggers.end()) logger->second->set_level(level);
    }
  }
}

spdlog::level::level_enum level_of(Registry& reg, std::string_view component) {
  const auto found = reg.levels.find(component);
  return found != reg.levels.end() ? found->second : spdlog::level::warn;
}

}  // namespace

void configure(int verbosity, const std::vector<std::string>& specs) {
  Registry& reg = registry();
  const std::lock_guard<std::mutex> lock(reg.mutex);
  const spdlog::level::level_enum base = verbosity >= 2   ? spdlog::level::debug
                                         : verbosity == 1 ? spdlog::level::info
                                                          : spdlog::level::warn;
  for (std::string_view component : kComponents) set_level(reg, component, base);
  for (const std::string& spec : specs) {
    const std::size_t equals = spec.find('=');
    const std::string name = spec.substr(0, equals);
    const std::string level_name = equals == std::string::npos ? "" : spec.substr(equals + 1);
    const std::string where = "command line: --log '" + spec + "'";
    if (equals == std::string::npos || !is_component(name)) {
      throw InputError(where, "expected COMPONENT=LEVEL with COMPONENT one of " + component_list() +
                                  "; found '" + name + "'");
    }
    const spdlog::level::level_enum level = spdlog::level::from_str(level_name);
    if (level == spdlog::level::off && level_name != "off") {
      throw InputError(
          where,
          "expected LEVEL one of trace, debug, info, warn, error, off; found '" + level_name + "'");
    }
    set_level(reg, name, level);
  }
}

spdlog::logger& component(std::string_view name) {
  Registry& reg = registry();
  const std::lock_guard<std::mutex> lock(reg.mutex);
  auto found = reg.loggers.find(name);
  if (found == reg.loggers.end()) {
    auto logger = std::make_shared<spdlog::logger>(std::string(name), reg.sink);
    logger->set_pattern("trnsim: %n: %l: %v");
    logger->set_level(level_of(reg, name));
    found = reg.loggers.emplace(std::string(name), std::move(logger)).first;
  }
  return *found->second;
}

bool debug_enabled(std::string_view name) {
  Registry& reg = registry();
  const std::lock_guard<std::mutex> lock(reg.mutex);
  return level_of(reg, name) <= spdlog::level::debug;
}

}  // namespace trnsim::log
