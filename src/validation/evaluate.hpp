// Judging rows (targets.hpp) against finished runs: the simulated value, its error against the
// published figure, and a status (pass, fail, known miss with its reason, pending, no result).
// Values are compared as they are printed, so a table never shows a passing number as failed.
// Pure: no simulation, no I/O.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "validation/targets.hpp"

namespace trnsim::validation {

enum class Status {
  kPass,       ///< inside the tolerance
  kFail,       ///< outside the tolerance, no known reason
  kKnownMiss,  ///< outside the tolerance for the reason the row states
  kPending,    ///< not simulated yet
  kNoResult,   ///< a run the row needs failed
};

std::string_view status_name(Status status);

struct Outcome {
  Status status = Status::kPending;
  std::optional<double> simulated;  ///< in the row's unit
  std::optional<double> error_pct;  ///< kRelative rows: 100 * (simulated - reference) / reference
  std::string where;                ///< the run a maximum came from, or why there is no result
};

Outcome evaluate(const Row& row, const RunResults& results);

/// True when no outcome is kFail or kNoResult.
bool all_passed(const std::vector<Outcome>& outcomes);

/// "±15 %", "40-45", ">= 70", "<= 100", "exact", "pending".
std::string tolerance_text(const Row& row);

/// The simulated value as printed: the row's format, else the number with its decimals and
/// thousands separators, then the unit ("6.66 ms", "41.2 %", "2,048,000 B").
std::string value_text(const Row& row, double value);

}  // namespace trnsim::validation
