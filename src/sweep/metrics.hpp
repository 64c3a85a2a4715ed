// Metrics of a run: named values read from the statistics JSON printed by `trnsim run --json`
// (src/report). A metric is a JSON pointer into that document ("/time/kernel_us") or one of the
// documented aliases ("time_us"). The "bottleneck" alias keeps only the verdict before ':'
// ("dma-bound"), so it is stable when the busy percentages move.
// Leaves out expressions over several values; compute those from the exported CSV.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trnsim::sweep {

struct Metric {
  std::string name;      ///< as the user wrote it; the key in results and baselines
  std::string pointer;   ///< JSON pointer into the run statistics
  bool verdict = false;  ///< a string value cut at its first ':' (bottleneck verdict)
};

struct MetricAlias {
  std::string_view name;
  std::string_view pointer;
  std::string_view description;
  bool verdict = false;
};

/// Every alias, in documentation order.
const std::vector<MetricAlias>& metric_aliases();

/// Metrics recorded by a sweep spec that names none.
const std::vector<std::string>& default_metric_names();

/// Resolves an alias or a JSON pointer. Throws InputError(where, ...) for an unknown alias
/// (with a suggestion) or a malformed pointer.
Metric resolve_metric(const std::string& name, const std::string& where);

/// The metric's value in `statistics`. When absent, returns nullopt and sets `problem` to a
/// sentence naming the pointer and the closest pointer that does exist.
std::optional<nlohmann::json> extract_metric(const nlohmann::json& statistics, const Metric& metric,
                                             std::string& problem);

/// True when `a` and `b` name the same value ("time_us" and "/time/kernel_us").
bool same_metric(const std::string& a, const std::string& b);

}  // namespace trnsim::sweep
