// `trnsim compare`: one kernel on several configs (typically the generations trn1..trn4), a
// column each: kernel time, speedup over the first valid column, per-engine busy %, MFU, HBM
// bandwidth used and the bottleneck verdict. A config on which the kernel is invalid shows
// "invalid" in its column and the reason in a numbered note. Per-engine figures are core 0's.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sweep/driver.hpp"
#include "util/svg_chart.hpp"

namespace trnsim::sweep {

struct CompareColumn {
  std::string config;
  RunResult run;
};

/// The text table with its notes.
std::string compare_table(const std::string& kernel, const std::vector<CompareColumn>& columns);

/// The same figures as JSON: {"kernel", "columns": [{"config", "ok", ...}]}.
nlohmann::ordered_json compare_json(const std::string& kernel,
                                    const std::vector<CompareColumn>& columns);

/// A bar chart of kernel time per config.
util::BarChart compare_chart(const std::string& kernel, const std::vector<CompareColumn>& columns);

}  // namespace trnsim::sweep
