// trnsim::Config (include/trnsim/config.hpp) over config::load_config.
#include "trnsim/config.hpp"

#include "api/errors.hpp"
#include "api/state.hpp"
#include "config/load.hpp"

namespace trnsim {

Config::Config(std::shared_ptr<const detail::ConfigState> state) : state_(std::move(state)) {}

Config Config::load(const std::string& name_or_path, const std::vector<std::string>& overrides) {
  return detail::translating_errors([&] {
    auto state = std::make_shared<detail::ConfigState>();
    state->loaded = config::load_config(name_or_path, overrides);
    return Config(std::move(state));
  });
}

std::string Config::name() const {
  return state_->loaded.params.name;
}

std::string Config::origin() const {
  return state_->loaded.origin;
}

std::vector<std::string> Config::warnings() const {
  return state_->loaded.warnings;
}

std::string Config::effective_json() const {
  return state_->loaded.effective.dump(2);
}

std::vector<std::string> builtin_config_names() {
  return config::builtin_config_names();
}

}  // namespace trnsim
