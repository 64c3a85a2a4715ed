#include "sweep/regress.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "nki/kernel_reference.hpp"
#include "sweep/json_checks.hpp"
#include "util/error.hpp"

namespace trnsim::sweep {

namespace fs = std::filesystem;
using nlohmann::json;
using nlohmann::ordered_json;

namespace {

constexpr std::string_view kFormat = "trnsim-baseline/1";

std::optional<double> tolerance(const JsonChecker& check, const ordered_json& metric,
                                const char* key, const std::string& pointer) {
  if (!metric.contains(key)) return std::nullopt;
  const ordered_json& value = metric[key];
  if (!value.is_number() || value.get<double>() < 0) {
    check.fail(pointer + "/" + key,
               "expected a non-negative number, found " + describe_json(value));
  }
  return value.get<double>();
}

Assignments read_assignments(const JsonChecker& check, const ordered_json& object,
                             const std::string& pointer, bool params) {
  check.object(object, pointer, params ? "an object {NAME: value}" : "an object {key: value}");
  Assignments out;
  for (const auto& [key, value] : object.items()) {
    const bool scalar = params ? value.is_number_integer() || value.is_string()
                               : value.is_number() || value.is_boolean() || value.is_string();
    if (!scalar) {
      check.fail(pointer + "/" + pointer_token(key),
                 std::string("expected ") +
                     (params ? "an integer or an integer expression string"
                             : "a number, boolean or string") +
                     ", found " + describe_json(value));
    }
    out.emplace_back(key, value_text(value));
  }
  return out;
}

std::string format_value(const json& value) {
  if (value.is_null()) return "-";
  if (value.is_number_float()) return fmt::format("{:.6g}", value.get<double>());
  if (value.is_string()) return value.get<std::string>();
  return value.dump();
}

std::string format_change(const json& expected, const json& actual) {
  if (!expected.is_number() || !actual.is_number()) return expected == actual ? "" : "changed";
  const double e = expected.get<double>();
  const double a = actual.get<double>();
  if (a == e) return "";
  if (e != 0) return fmt::format("{:+.2f}%", 100.0 * (a - e) / std::fabs(e));
  return fmt::format("{:+.4g}", a - e);
}

std::string verdict_text(Verdict verdict) {
  switch (verdict) {
    case Verdict::kUnchanged:
      return "ok";
    case Verdict::kWithin:
      return "ok (within tolerance)";
    case Verdict::kOutside:
      return "FAIL";
    case Verdict::kNoBaseline:
      return "FAIL (no expected value; run with --update)";
    case Verdict::kError:
      return "FAIL (error)";
  }
  return "";
}

std::string tolerance_text(const Expectation& expectation) {
  std::vector<std::string> parts;
  if (expectation.relative) parts.push_back(fmt::format("rel {:g}%", *expectation.relative * 100));
  if (expectation.absolute) parts.push_back(fmt::format("abs {:g}", *expectation.absolute));
  if (parts.empty()) return "exact";
  return parts.size() == 1 ? parts[0] : parts[0] + " or " + parts[1];
}

bool is_flat(const ordered_json& value) {
  if (!value.is_structured()) return true;
  for (const auto& member : value) {
    if (member.is_structured()) return false;
  }
  return true;
}

void format_value_into(const ordered_json& value, std::size_t indent, std::string& out) {
  if (is_flat(value)) {
    if (!value.is_structured()) {
      out += value.dump();
      return;
    }
    const bool object = value.is_object();
    out += object ? "{" : "[";
    std::size_t i = 0;
    for (auto it = value.begin(); it != value.end(); ++it, ++i) {
      if (i > 0) out += ", ";
      if (object) out += ordered_json(it.key()).dump() + ": ";
      out += it->dump();
    }
    out += object ? "}" : "]";
    return;
  }
  const bool object = value.is_object();
  out += object ? "{\n" : "[\n";
  std::size_t i = 0;
  for (auto it = value.begin(); it != value.end(); ++it, ++i) {
    out += std::string(indent + 2, ' ');
    if (object) out += ordered_json(it.key()).dump() + ": ";
    format_value_into(*it, indent + 2, out);
    out += i + 1 < value.size() ? ",\n" : "\n";
  }
  out += std::string(indent, ' ') + (object ? "}" : "]");
}

}  // namespace

std::string format_baseline(const ordered_json& document) {
  std::string out;
  format_value_into(document, 0, out);
  return out + "\n";
}

Baseline load_baseline(const std::string& path) {
  return parse_baseline(read_json_file(path, "baseline"), path);
}

Baseline parse_baseline(const ordered_json& document, const std::string& file) {
  const JsonChecker check(file);
  const fs::path base_dir = file.empty() ? fs::path() : fs::path(file).parent_path();
  check.object(document, "",
               "a baseline object {\"format\": \"trnsim-baseline/1\", \"cases\": "
               "[...]} (docs/sweeps.md)");
  check.keys(document, "", {"format", "description", "cases"});
  if (!document.contains("format") || document["format"] != kFormat) {
    check.fail("/format", "expected \"" + std::string(kFormat) + "\", found " +
                              (document.contains("format") ? describe_json(document["format"])
                                                           : std::string("nothing")));
  }
  if (!document.contains("cases") || !document["cases"].is_array() || document["cases"].empty()) {
    check.fail("/cases", "expected a non-empty list of cases");
  }
  Baseline baseline;
  baseline.file = file;
  baseline.document = document;
  const ordered_json& cases = document["cases"];
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string at = "/cases/" + std::to_string(i);
    const ordered_json& entry = check.object(cases[i], at, "a case object");
    check.keys(
        entry, at,
        {"name", "kernel", "config", "params", "inputs", "kwargs", "grid", "set", "metrics"});
    BaselineCase item;
    if (!entry.contains("kernel")) check.fail(at, "missing required key \"kernel\"");
    item.request.kernel = check.string(entry["kernel"], at + "/kernel", "a kernel file");
    item.request.kernel_path = nki::with_kernel_file(
        item.request.kernel, resolve_path(nki::kernel_file(item.request.kernel), base_dir));
    item.request.config = entry.contains("config")
                              ? check.string(entry["config"], at + "/config", "a config")
                              : std::string("trn2");
    item.request.config_path = resolve_config(item.request.config, base_dir);
    const bool nki_kernel = item.request.is_nki();
    if (nki_kernel && entry.contains("params")) {
      check.fail(at + "/params", "'" + item.request.kernel +
                                     "' is an NKI Python kernel: give its arguments as \"kwargs\" "
                                     "and its tensors as \"inputs\", not \"params\"");
    }
    for (const char* key : {"inputs", "kwargs", "grid"}) {
      if (!nki_kernel && entry.contains(key)) {
        check.fail(at + "/" + key,
                   "'" + item.request.kernel +
                       "' is a JSON kernel: \"inputs\", \"kwargs\" and \"grid\" are for NKI "
                       "Python kernels (FILE.py::FUNCTION); a JSON kernel takes \"params\"");
      }
    }
    if (entry.contains("params")) {
      item.request.params = read_assignments(check, entry["params"], at + "/params", true);
    }
    if (entry.contains("inputs")) {
      const ordered_json& inputs =
          check.object(entry["inputs"], at + "/inputs", "an object {NAME: \"DTYPE[SHAPE]\"}");
      for (const auto& [name, value] : inputs.items()) {
        const std::string spec_text = check.string(
            value, at + "/inputs/" + pointer_token(name),
            "an NKI kernel input: \"DTYPE[D0,D1,..]\" (e.g. \"float32[128,512]\") or a .npy file");
        item.request.inputs.emplace_back(name, resolve_input(spec_text, base_dir));
      }
    }
    if (entry.contains("kwargs")) {
      const ordered_json& kwargs =
          check.object(entry["kwargs"], at + "/kwargs", "an object {NAME: value}");
      for (const auto& [name, value] : kwargs.items()) {
        item.request.kwargs.emplace_back(name, python_literal(value));
      }
    }
    if (entry.contains("grid")) {
      const ordered_json& grid = entry["grid"];
      if (!(grid.is_number_integer() && grid.get<std::int64_t>() > 0) &&
          !(grid.is_string() && !grid.get<std::string>().empty())) {
        check.fail(at + "/grid", "expected a launch grid: a positive integer or \"D0,D1\", found " +
                                     describe_json(grid));
      }
      item.request.grid = value_text(grid);
    }
    if (entry.contains("set")) {
      item.request.sets = read_assignments(check, entry["set"], at + "/set", false);
    }
    if (entry.contains("name")) {
      item.label = check.string(entry["name"], at + "/name", "a case name");
    } else {
      const std::size_t function = item.request.kernel.rfind("::");
      item.label = nki_kernel && function != std::string::npos
                       ? item.request.kernel.substr(function + 2)
                       : fs::path(nki::kernel_file(item.request.kernel)).stem().string();
      item.label += " on " + item.request.config;
      for (const Assignments* arguments :
           {&item.request.params, &item.request.inputs, &item.request.kwargs, &item.request.sets}) {
        for (const auto& [name, value] : *arguments) item.label += " " + name + "=" + value;
      }
      if (!item.request.grid.empty()) item.label += " grid=" + item.request.grid;
    }
    if (!entry.contains("metrics")) check.fail(at, "missing required key \"metrics\"");
    const ordered_json& metrics =
        check.object(entry["metrics"], at + "/metrics",
                     "an object {METRIC: {\"expected\": value, \"rel\": r, \"abs\": a}}");
    if (metrics.empty()) check.fail(at + "/metrics", "expected at least one metric");
    for (const auto& [name, spec] : metrics.items()) {
      const std::string metric_at = at + "/metrics/" + pointer_token(name);
      check.object(spec, metric_at, "an object {\"expected\": value, \"rel\": r, \"abs\": a}");
      check.keys(spec, metric_at, {"expected", "rel", "abs"});
      Expectation expectation;
      expectation.metric = resolve_metric(name, check.where(metric_at));
      expectation.expected = spec.contains("expected") ? json(spec["expected"]) : json();
      expectation.relative = tolerance(check, spec, "rel", metric_at);
      expectation.absolute = tolerance(check, spec, "abs", metric_at);
      const json& expected = expectation.expected;
      if (!expected.is_null() && !expected.is_number() && !expected.is_string() &&
          !expected.is_boolean()) {
        check.fail(metric_at + "/expected",
                   "expected a number, string, boolean or null (not yet recorded), found " +
                       describe_json(spec["expected"]));
      }
      if ((expectation.relative || expectation.absolute) && !expected.is_null() &&
          !expected.is_number()) {
        check.fail(metric_at, "a tolerance (rel, abs) needs a numeric expected value, found " +
                                  describe_json(spec["expected"]));
      }
      item.expectations.push_back(std::move(expectation));
    }
    baseline.cases.push_back(std::move(item));
  }
  return baseline;
}

Verdict judge(const Expectation& expectation, const json& actual) {
  const json& expected = expectation.expected;
  if (expected.is_null()) return Verdict::kNoBaseline;
  if (!expected.is_number() || !actual.is_number()) {
    return expected == actual ? Verdict::kUnchanged : Verdict::kOutside;
  }
  const double e = expected.get<double>();
  const double a = actual.get<double>();
  if (a == e) return Verdict::kUnchanged;
  const double difference = std::fabs(a - e);
  const bool within =
      (expectation.relative && difference <= *expectation.relative * std::fabs(e)) ||
      (expectation.absolute && difference <= *expectation.absolute);
  return within ? Verdict::kWithin : Verdict::kOutside;
}

RegressReport check_baseline(const Baseline& baseline, const std::vector<RunResult>& results) {
  RegressReport report;
  report.cases = baseline.cases.size();
  for (std::size_t c = 0; c < baseline.cases.size(); ++c) {
    const BaselineCase& item = baseline.cases[c];
    const RunResult& result = results.at(c);
    if (!result.ok) ++report.failed_cases;
    for (const Expectation& expectation : item.expectations) {
      CheckRow row;
      row.case_index = c;
      row.metric = expectation.metric.name;
      row.expected = expectation.expected;
      row.tolerance = tolerance_text(expectation);
      if (!result.ok) {
        row.verdict = Verdict::kError;
        row.error = result.error;
      } else {
        std::string problem;
        if (auto value = extract_metric(result.statistics, expectation.metric, problem)) {
          row.actual = std::move(*value);
          row.verdict = judge(expectation, row.actual);
        } else {
          row.verdict = Verdict::kError;
          row.error = problem;
        }
      }
      switch (row.verdict) {
        case Verdict::kUnchanged:
          ++report.unchanged;
          break;
        case Verdict::kWithin:
          ++report.within;
          break;
        default:
          ++report.outside;
      }
      report.rows.push_back(std::move(row));
    }
  }
  return report;
}

std::string format_report(const Baseline& baseline, const RegressReport& report, bool all) {
  std::vector<std::vector<std::string>> table = {
      {"case", "metric", "expected", "actual", "change", "tolerance", "result"}};
  std::vector<std::string> errors;
  for (const CheckRow& row : report.rows) {
    if (row.verdict == Verdict::kError) {
      const std::string message = baseline.cases[row.case_index].label + ": " + row.error;
      if (std::find(errors.begin(), errors.end(), message) == errors.end()) {
        errors.push_back(message);
      }
    }
    if (!all && row.verdict == Verdict::kUnchanged) continue;
    table.push_back({baseline.cases[row.case_index].label, row.metric, format_value(row.expected),
                     format_value(row.actual), format_change(row.expected, row.actual),
                     row.tolerance, verdict_text(row.verdict)});
  }
  std::string out;
  if (table.size() > 1) {
    std::vector<std::size_t> widths(table.front().size(), 0);
    for (const auto& line : table) {
      for (std::size_t i = 0; i < line.size(); ++i) widths[i] = std::max(widths[i], line[i].size());
    }
    for (const auto& line : table) {
      std::string text;
      for (std::size_t i = 0; i < line.size(); ++i) {
        const bool numeric = i >= 2 && i <= 4;
        text += i == 0 ? "" : "  ";
        text += numeric ? fmt::format("{:>{}}", line[i], widths[i])
                        : fmt::format("{:<{}}", line[i], widths[i]);
      }
      out += text.substr(0, text.find_last_not_of(' ') + 1) + "\n";
    }
  }
  for (const std::string& error : errors) out += "error: " + error + "\n";
  const std::size_t metrics = report.rows.size();
  out += fmt::format(
      "regress: {} case{}, {} metric{}: {} unchanged, {} changed within tolerance, {} out of "
      "tolerance{} -> {}\n",
      report.cases, report.cases == 1 ? "" : "s", metrics, metrics == 1 ? "" : "s",
      report.unchanged, report.within, report.outside,
      report.failed_cases > 0 ? fmt::format(" ({} case{} did not run)", report.failed_cases,
                                            report.failed_cases == 1 ? "" : "s")
                              : std::string(),
      report.passed() ? "PASS" : "FAIL");
  return out;
}

ordered_json updated_baseline(const Baseline& baseline, const std::vector<RunResult>& results) {
  ordered_json document = baseline.document;
  for (std::size_t c = 0; c < baseline.cases.size(); ++c) {
    const RunResult& result = results.at(c);
    if (!result.ok) continue;
    ordered_json& metrics = document["cases"][c]["metrics"];
    for (const Expectation& expectation : baseline.cases[c].expectations) {
      std::string problem;
      if (auto value = extract_metric(result.statistics, expectation.metric, problem)) {
        metrics[expectation.metric.name]["expected"] = ordered_json(*value);
      }
    }
  }
  return document;
}

}  // namespace trnsim::sweep
