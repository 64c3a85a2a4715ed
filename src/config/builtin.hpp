// The built-in configs: the text of configs/*.json, embedded at build time by
// cmake/embed_configs.cmake. Internal to trnsim_config; use load.hpp to read them.
#pragma once

#include <string_view>
#include <vector>

namespace trnsim::config {

struct BuiltinConfigText {
  std::string_view name;  ///< file stem, e.g. "trn2-48xl"
  std::string_view json;  ///< the file's content
};

/// All built-in configs, sorted by name.
const std::vector<BuiltinConfigText>& builtin_config_texts();

}  // namespace trnsim::config
