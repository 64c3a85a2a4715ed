// What `trnsim validate` checks: the published measurements of calibration-targets.md (T1-T5)
// and sanity checks of our own, as rows of one table. A row names the runs it needs (an example
// kernel on a built-in config with param overrides), computes its simulated value from their
// statistics (`trnsim run --json`) and says how it is judged against the published figure.
// Leaves out running (validate.hpp) and formatting (report.hpp).
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trnsim::validation {

/// One simulation: an example kernel on a built-in config. A JSON kernel is a file of
/// examples/kernels/; an NKI Python kernel is "../nki/FILE.py::FUNCTION" relative to it.
struct RunSpec {
  std::string kernel;                                       ///< file in examples/kernels/
  std::string config;                                       ///< built-in config name
  std::vector<std::pair<std::string, std::string>> params;  ///< --param NAME=VALUE, in order
  std::vector<std::pair<std::string, std::string>> inputs;  ///< NKI: --input NAME=SPEC
  std::vector<std::pair<std::string, std::string>> kwargs;  ///< NKI: --kwarg NAME=VALUE
  /// --set KEY=VALUE that the measurement's setup implies (e.g. a compiler flag it was built
  /// with); `trnsim validate --set` comes after these.
  std::vector<std::pair<std::string, std::string>> sets;

  /// "kernel.json@trn2 N=4 F=8": identifies the run (equal keys share one simulation).
  std::string key() const;
};

/// Statistics of finished runs, by RunSpec::key(). A failed run has an error message instead.
class RunResults {
 public:
  void add_statistics(const RunSpec& run, nlohmann::json statistics);
  void add_error(const RunSpec& run, std::string message);

  /// The number at JSON `pointer` (e.g. "/time/kernel_ns") in the run's statistics. Throws
  /// std::runtime_error saying why when the run failed, is missing, or has no such number.
  double value(const RunSpec& run, std::string_view pointer) const;
  /// The run's whole statistics; throws like value().
  const nlohmann::json& statistics(const RunSpec& run) const;

 private:
  std::map<std::string, nlohmann::json> statistics_;
  std::map<std::string, std::string> errors_;
};

/// How a simulated value is judged.
struct Check {
  enum class Kind {
    kRelative,  ///< |simulated - reference| <= tolerance * |reference|
    kRange,     ///< low <= simulated <= high
    kAtLeast,   ///< simulated >= low
    kAtMost,    ///< simulated <= high
    kPending,   ///< not simulated yet (the model it needs has not landed)
  };
  Kind kind = Kind::kRelative;
  double tolerance = 0;  ///< kRelative and kPending, as a fraction (0.15 = 15 %)
  double low = 0;
  double high = 0;

  static Check relative(double tolerance) { return {Kind::kRelative, tolerance, 0, 0}; }
  static Check range(double low, double high) { return {Kind::kRange, 0, low, high}; }
  static Check at_least(double low) { return {Kind::kAtLeast, 0, low, 0}; }
  static Check at_most(double high) { return {Kind::kAtMost, 0, 0, high}; }
  static Check pending(double tolerance) { return {Kind::kPending, tolerance, 0, 0}; }
};

/// A simulated value and, for rows over many runs, which run it came from.
struct Measured {
  double value = 0;
  std::string where;  ///< e.g. "softmax.json@trn3"; empty for single-run rows
};

struct Row {
  std::string target;     ///< "T1" .. "T5", or "sanity"
  std::string measure;    ///< what is compared, e.g. "v1 tiled: kernel time"
  std::string hardware;   ///< e.g. "trn1, 1 NeuronCore"
  std::string published;  ///< the figure as published, e.g. "51.80 ms" or "40-45 %"
  double reference = 0;   ///< kRelative: the published value, in `unit`
  std::string unit;       ///< unit of the simulated value: "ms", "us", "ns", "%", "x", "B", ...
  int decimals = 2;       ///< digits after the point when printing values in `unit`
  Check check;
  std::vector<RunSpec> runs;  ///< the runs `simulate` reads
  std::function<Measured(const RunResults&)> simulate;
  /// Why the model cannot reach this figure; a row with a reason is reported as a known miss
  /// (not a failure) while it is outside its tolerance.
  std::string known_miss;
  /// How the kernel or the comparison departs from the target's wording, and why (shown below
  /// the table).
  std::string note;
  /// Optional text for a simulated value (e.g. "holds" for an ordering); default: the number.
  std::function<std::string(double)> format;
};

/// The published targets of calibration-targets.md, T1 to T5, in document order.
std::vector<Row> calibration_rows();

/// Sanity checks over every example on every generation it supports (catalog.hpp): no kernel
/// beats the Tensor Engine peak or the DMA/HBM bandwidth, no engine is busier than the kernel
/// is long, and the large matmuls approach their ideal time.
std::vector<Row> sanity_rows();

/// A parameter fitted on a target: hardware-facts.md §16 leaves it unknown; its value and source
/// are read from the built-in configs.
struct CalibratedParameter {
  std::string key;        ///< dotted config key, e.g. "sequencer.queue_depth"
  std::string fitted_on;  ///< target(s) it was fitted on
  std::string range;      ///< plausible range considered, and why
};
const std::vector<CalibratedParameter>& calibrated_parameters();

/// The built-in configs the rows and the calibration table cover.
const std::vector<std::string>& generations();

}  // namespace trnsim::validation
