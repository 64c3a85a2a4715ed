#include "sweep/metrics.hpp"

#include "util/error.hpp"
#include "util/strings.hpp"

namespace trnsim::sweep {

using nlohmann::json;

const std::vector<MetricAlias>& metric_aliases() {
  static const std::vector<MetricAlias> aliases = {
      {"time_us", "/time/kernel_us", "kernel device time, us (launch overhead excluded)"},
      {"time_ns", "/time/kernel_ns", "kernel device time, ns"},
      {"cycles", "/time/kernel_tensor_cycles", "kernel time in TensorE cycles"},
      {"mfu_pct", "/system/mfu_pct", "model FLOPs utilisation, % of peak, mean over cores"},
      {"hbm_gbps", "/system/hbm_achieved_gbps", "HBM bandwidth used, GB/s, all cores"},
      {"hbm_bytes", "/system/hbm_bytes", "HBM bytes read and written, all cores"},
      {"flops", "/system/flops", "matmul FLOPs, all cores"},
      {"instructions", "/system/instructions", "dynamic instructions, all cores"},
      {"tensor_active_pct", "/cores/0/engines/tensor/active_pct", "TensorE busy %, core 0"},
      {"vector_active_pct", "/cores/0/engines/vector/active_pct", "VectorE busy %, core 0"},
      {"scalar_active_pct", "/cores/0/engines/scalar/active_pct", "ScalarE busy %, core 0"},
      {"gpsimd_active_pct", "/cores/0/engines/gpsimd/active_pct", "GpSimd busy %, core 0"},
      {"dma_active_pct", "/cores/0/engines/dma/active_pct",
       "% of the time a DMA of core 0 moves data (at any rate)"},
      {"dma_utilisation_pct", "/cores/0/engines/dma/utilisation_pct",
       "DMA bandwidth utilisation of core 0's busiest DMA resource, % (what the bottleneck "
       "compares)"},
      {"bottleneck", "/cores/0/bottleneck",
       "verdict of core 0's bottleneck line: \"<engine>-bound\" or \"latency-bound\"", true},
  };
  return aliases;
}

const std::vector<std::string>& default_metric_names() {
  static const std::vector<std::string> names = {"time_us", "mfu_pct", "hbm_gbps", "bottleneck"};
  return names;
}

namespace {

const MetricAlias* find_alias(std::string_view name) {
  for (const MetricAlias& alias : metric_aliases()) {
    if (alias.name == name) return &alias;
  }
  return nullptr;
}

std::vector<std::string> alias_names() {
  std::vector<std::string> names;
  for (const MetricAlias& alias : metric_aliases()) names.emplace_back(alias.name);
  return names;
}

/// The pointer a metric name denotes, or "" when it is neither an alias nor a pointer.
std::string pointer_of(const std::string& name) {
  if (const MetricAlias* alias = find_alias(name)) return std::string(alias->pointer);
  return !name.empty() && name.front() == '/' ? name : std::string();
}

}  // namespace

Metric resolve_metric(const std::string& name, const std::string& where) {
  Metric metric;
  metric.name = name;
  if (const MetricAlias* alias = find_alias(name)) {
    metric.pointer = alias->pointer;
    metric.verdict = alias->verdict;
    return metric;
  }
  if (name.empty() || name.front() != '/') {
    throw InputError(where, "unknown metric '" + name +
                                "': expected a JSON pointer into the `trnsim run --json` "
                                "statistics (e.g. /time/kernel_us) or one of the aliases " +
                                util::join(alias_names(), ", ") +
                                util::did_you_mean(name, alias_names()));
  }
  try {
    json::json_pointer pointer(name);
  } catch (const json::exception&) {
    throw InputError(where, "metric '" + name +
                                "' is not a valid JSON pointer (RFC 6901: '/' separated, '~' "
                                "written as ~0 and '/' as ~1)");
  }
  metric.pointer = name;
  return metric;
}

std::optional<json> extract_metric(const json& statistics, const Metric& metric,
                                   std::string& problem) {
  const json::json_pointer pointer(metric.pointer);
  bool present = false;
  try {
    present = statistics.contains(pointer);
  } catch (const json::exception&) {
    present = false;  // e.g. a non-numeric token where the document has an array
  }
  if (!present) {
    std::vector<std::string> existing;
    const json flat = statistics.flatten();
    for (const auto& [key, value] : flat.items()) existing.push_back(key);
    problem = "metric '" + metric.name + "': " + metric.pointer +
              " is not in the statistics of `trnsim run --json`" +
              util::did_you_mean(metric.pointer, existing);
    return std::nullopt;
  }
  json value = statistics.at(pointer);
  if (metric.verdict && value.is_string()) {
    const std::string text = value.get<std::string>();
    value = text.substr(0, text.find(':'));
  }
  return value;
}

bool same_metric(const std::string& a, const std::string& b) {
  if (a == b) return true;
  const std::string pa = pointer_of(a);
  // A verdict alias and its raw pointer are different values.
  const MetricAlias* alias_a = find_alias(a);
  const MetricAlias* alias_b = find_alias(b);
  if ((alias_a && alias_a->verdict) || (alias_b && alias_b->verdict)) return false;
  return !pa.empty() && pa == pointer_of(b);
}

}  // namespace trnsim::sweep
