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

/// `compare --report`: one self-contained HTML page (inline SVG and CSS, no scripts or fetches)
/// with the table and, across the configs, the charts a run's report has: kernel time, each
/// engine's busy share, MFU, a TensorE roofline with one point per config under its own roofs,
/// and each engine's dependency wait by producer. Invalid configs appear in the table only.
std::string compare_html(const std::string& kernel, const std::vector<CompareColumn>& columns);

}  // namespace trnsim::sweep
