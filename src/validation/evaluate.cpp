#include "validation/evaluate.hpp"

#include <fmt/format.h>

#include <cmath>
#include <exception>

namespace trnsim::validation {

namespace {

/// Inserts thousands separators into the integer part of a formatted number.
std::string group_thousands(std::string text) {
  const std::size_t start = (!text.empty() && text[0] == '-') ? 1 : 0;
  std::size_t end = text.find('.');
  if (end == std::string::npos) end = text.size();
  for (std::size_t digits = end - start; digits > 3;) {
    digits -= 3;
    text.insert(start + digits, ",");
  }
  return text;
}

/// Numbers are compared as printed, so a value shown inside its band never fails by a rounding
/// residue (e.g. 100.0000001 % shown as 100.0 %).
double as_printed(double value, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(value * scale) / scale;
}

}  // namespace

std::string_view status_name(Status status) {
  switch (status) {
    case Status::kPass:
      return "pass";
    case Status::kFail:
      return "FAIL";
    case Status::kKnownMiss:
      return "known miss";
    case Status::kPending:
      return "pending";
    case Status::kNoResult:
      return "NO RESULT";
  }
  return "?";
}

Outcome evaluate(const Row& row, const RunResults& results) {
  Outcome outcome;
  if (row.check.kind == Check::Kind::kPending || !row.simulate) {
    outcome.status = Status::kPending;
    return outcome;
  }
  Measured measured;
  try {
    measured = row.simulate(results);
  } catch (const std::exception& error) {
    outcome.status = Status::kNoResult;
    outcome.where = error.what();
    return outcome;
  }
  outcome.simulated = measured.value;
  outcome.where = measured.where;
  const double value = as_printed(measured.value, row.decimals);
  bool inside = false;
  switch (row.check.kind) {
    case Check::Kind::kRelative: {
      const double error = (measured.value - row.reference) / row.reference;
      outcome.error_pct = 100.0 * error;
      inside = std::abs(as_printed(100.0 * error, 1)) <= 100.0 * row.check.tolerance + 1e-9;
      break;
    }
    case Check::Kind::kRange:
      inside = value >= row.check.low && value <= row.check.high;
      break;
    case Check::Kind::kAtLeast:
      inside = value >= row.check.low;
      break;
    case Check::Kind::kAtMost:
      inside = value <= row.check.high;
      break;
    case Check::Kind::kPending:
      break;
  }
  if (inside) {
    outcome.status = Status::kPass;
  } else {
    outcome.status = row.known_miss.empty() ? Status::kFail : Status::kKnownMiss;
  }
  return outcome;
}

bool all_passed(const std::vector<Outcome>& outcomes) {
  for (const Outcome& outcome : outcomes) {
    if (outcome.status == Status::kFail || outcome.status == Status::kNoResult) return false;
  }
  return true;
}

std::string tolerance_text(const Row& row) {
  const auto number = [](double value) {
    std::string text = fmt::format("{:.2f}", value);
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
    return text;
  };
  switch (row.check.kind) {
    case Check::Kind::kRelative:
    case Check::Kind::kPending:
      return row.check.tolerance == 0 ? "exact"
                                      : fmt::format("±{} %", number(100 * row.check.tolerance));
    case Check::Kind::kRange:
      return row.check.low == row.check.high ? "must hold"
                                             : number(row.check.low) + "-" + number(row.check.high);
    case Check::Kind::kAtLeast:
      return ">= " + number(row.check.low);
    case Check::Kind::kAtMost:
      return "<= " + number(row.check.high);
  }
  return "";
}

std::string value_text(const Row& row, double value) {
  if (row.format) return row.format(value);
  std::string text = group_thousands(fmt::format("{:.{}f}", value, row.decimals));
  if (row.unit == "x") return text + "x";
  return row.unit.empty() ? text : text + " " + row.unit;
}

}  // namespace trnsim::validation
