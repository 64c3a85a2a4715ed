// The validation report: every row with its outcome, the calibrated parameters with their
// values and sources in each built-in config, formatted as a terminal table or as the Markdown
// of docs/validation.md. Deterministic: the same results give byte-identical text (no dates,
// hosts or wall times).
#pragma once

#include <string>
#include <vector>

#include "validation/evaluate.hpp"
#include "validation/targets.hpp"

namespace trnsim::validation {

/// One calibrated parameter's value and recorded source in one built-in config.
struct CalibratedValue {
  std::string generation;
  std::string value;   ///< as JSON text
  std::string source;  ///< the config's "sources" entry (or the declaration's source)
};

struct CalibrationEntry {
  CalibratedParameter parameter;
  std::vector<CalibratedValue> values;  ///< one per generation, in generations() order
};

struct Report {
  std::string version;            ///< trnsim version that produced it
  std::vector<Row> rows;          ///< calibration rows, then sanity rows
  std::vector<Outcome> outcomes;  ///< one per row
  std::vector<CalibrationEntry> calibration;
};

/// Reads the calibrated parameters' values and sources from the built-in configs.
std::vector<CalibrationEntry> calibration_entries();

std::string format_text(const Report& report);
std::string format_markdown(const Report& report);

/// "27 pass, 2 known misses, 6 pending, 0 fail".
std::string summary_line(const Report& report);

}  // namespace trnsim::validation
