// `trnsim regress`: timing regression against a baseline (trnsim-baseline/1, docs/sweeps.md).
// The baseline lists cases (kernel, config, params, overrides) with expected metric values and a
// tolerance per metric (relative, absolute, or exact when neither is given). Checking compares
// fresh runs with it; updating rewrites the expected values and keeps everything else.
// Leaves out running the cases (driver.hpp run_batch).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sweep/driver.hpp"
#include "sweep/metrics.hpp"
#include "sweep/run_request.hpp"

namespace trnsim::sweep {

struct Expectation {
  Metric metric;
  nlohmann::json expected;         ///< null when not recorded yet (fill with --update)
  std::optional<double> relative;  ///< |actual - expected| <= relative * |expected|
  std::optional<double> absolute;  ///< |actual - expected| <= absolute
};

struct BaselineCase {
  std::string label;  ///< "name", else "<kernel stem> on <config> [params]"
  RunRequest request;
  std::vector<Expectation> expectations;
};

struct Baseline {
  std::string file;
  nlohmann::ordered_json document;  ///< as read, for --update
  std::vector<BaselineCase> cases;
};

/// Reads and validates a baseline; kernel and config files are relative to its directory.
/// Throws InputError "FILE: /json/pointer: ...".
Baseline load_baseline(const std::string& path);
Baseline parse_baseline(const nlohmann::ordered_json& document, const std::string& file);

enum class Verdict {
  kUnchanged,   ///< equal to the expected value
  kWithin,      ///< changed within tolerance
  kOutside,     ///< changed beyond tolerance
  kNoBaseline,  ///< no expected value yet
  kError,       ///< the case did not run or the metric is missing
};

struct CheckRow {
  std::size_t case_index = 0;
  std::string metric;
  nlohmann::json expected;
  nlohmann::json actual;  ///< null on error
  std::string tolerance;  ///< "rel 0.1%", "abs 0.5", "exact"
  Verdict verdict = Verdict::kUnchanged;
  std::string error;
};

struct RegressReport {
  std::vector<CheckRow> rows;
  std::size_t cases = 0;
  std::size_t failed_cases = 0;  ///< did not run
  std::size_t unchanged = 0;
  std::size_t within = 0;
  std::size_t outside = 0;  ///< kOutside, kNoBaseline and kError rows
  bool passed() const { return outside == 0 && failed_cases == 0; }
};

/// Compares `results` (one per case, in order) with the baseline.
RegressReport check_baseline(const Baseline& baseline, const std::vector<RunResult>& results);

/// The verdict of one numeric or exact comparison.
Verdict judge(const Expectation& expectation, const nlohmann::json& actual);

/// The table of changes (all rows with `all`), errors, and a summary line.
std::string format_report(const Baseline& baseline, const RegressReport& report, bool all);

/// The baseline document with every expected value replaced by the fresh result; cases that
/// did not run keep theirs. Tolerances, order and other keys are kept.
nlohmann::ordered_json updated_baseline(const Baseline& baseline,
                                        const std::vector<RunResult>& results);

/// A baseline as text for review: indented, with each object or list of scalars on one line
/// (so a changed expected value is one diff line naming its metric and tolerance).
std::string format_baseline(const nlohmann::ordered_json& document);

}  // namespace trnsim::sweep
