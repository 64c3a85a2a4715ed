// Human-readable views of configurations, all generated from the parameter declarations:
// `config explain` (one row per parameter), `config diff` (parameters whose values differ)
// and the Markdown reference checked in as docs/config-reference.md.
#pragma once

#include <string>
#include <vector>

#include "config/load.hpp"

namespace trnsim::config {

/// A parameter's value as shown to people: numbers and booleans as JSON, strings unquoted.
std::string display_value(const nlohmann::ordered_json& value);

/// Table with columns key, value, unit, description, source; one row per parameter.
std::string explain_table(const LoadedConfig& config);

struct ParameterDifference {
  std::string key;   ///< dotted key
  std::string unit;  ///< declared unit ("" when none)
  std::string a;     ///< display value in the first config
  std::string b;     ///< display value in the second config
};

/// Parameters (other than name and description) whose values differ, in declaration order.
std::vector<ParameterDifference> diff_configs(const LoadedConfig& a, const LoadedConfig& b);

/// Table of diff_configs(a, b) with a header naming both configs; a line saying so when equal.
std::string diff_table(const LoadedConfig& a, const LoadedConfig& b);

/// The complete Markdown reference (docs/config-reference.md): layout, rules, built-in
/// configs and one table per section with each generation's value.
std::string reference_markdown();

}  // namespace trnsim::config
