#include "validation/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "config/load.hpp"

namespace trnsim::validation {

namespace {

bool is_sanity(const Row& row) {
  return row.target == "sanity";
}

std::string simulated_text(const Row& row, const Outcome& outcome) {
  if (outcome.status == Status::kPending) return "pending";
  if (!outcome.simulated) return "no result";
  return value_text(row, *outcome.simulated);
}

std::string error_text(const Outcome& outcome) {
  if (!outcome.error_pct) return "";
  return fmt::format("{:+.1f} %", *outcome.error_pct);
}

/// Markdown cell text: pipes escaped, newlines flattened.
std::string cell(std::string text) {
  std::string out;
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

/// A JSON value at a dotted key ("a.b") of an effective config; null when absent.
nlohmann::ordered_json at_dotted(const nlohmann::ordered_json& document, const std::string& key) {
  const nlohmann::ordered_json* node = &document;
  std::size_t start = 0;
  while (start <= key.size()) {
    const std::size_t dot = key.find('.', start);
    const std::string part = key.substr(start, dot == std::string::npos ? dot : dot - start);
    if (!node->is_object() || !node->contains(part)) return nullptr;
    node = &node->at(part);
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return *node;
}

struct Counts {
  std::size_t pass = 0, known = 0, pending = 0, fail = 0;
};

Counts count(const Report& report) {
  Counts counts;
  for (const Outcome& outcome : report.outcomes) {
    switch (outcome.status) {
      case Status::kPass:
        ++counts.pass;
        break;
      case Status::kKnownMiss:
        ++counts.known;
        break;
      case Status::kPending:
        ++counts.pending;
        break;
      case Status::kFail:
      case Status::kNoResult:
        ++counts.fail;
        break;
    }
  }
  return counts;
}

/// Fixed-width table: the widest cell of each column decides its width.
std::string text_table(const std::vector<std::vector<std::string>>& table) {
  std::vector<std::size_t> widths;
  const auto display_width = [](const std::string& text) {
    std::size_t width = 0;
    for (unsigned char c : text) width += (c & 0xC0) != 0x80 ? 1 : 0;  // UTF-8 code points
    return width;
  };
  for (const auto& line : table) {
    widths.resize(std::max(widths.size(), line.size()), 0);
    for (std::size_t i = 0; i < line.size(); ++i) {
      widths[i] = std::max(widths[i], display_width(line[i]));
    }
  }
  std::string out;
  for (const auto& line : table) {
    std::string text;
    for (std::size_t i = 0; i < line.size(); ++i) {
      text += line[i];
      if (i + 1 < line.size()) {
        text += std::string(widths[i] - display_width(line[i]) + 2, ' ');
      }
    }
    out += text + "\n";
  }
  return out;
}

/// "- **a; b**: text" lines, one per distinct text, naming every item that shares it (first
/// appearance order).
std::string grouped_list(const std::vector<std::pair<std::string, std::string>>& items) {
  std::vector<std::string> texts;
  std::map<std::string, std::vector<std::string>> names;
  for (const auto& [name, text] : items) {
    if (!names.count(text)) texts.push_back(text);
    names[text].push_back(name);
  }
  std::string out;
  for (const std::string& text : texts) {
    std::string joined;
    for (const std::string& name : names[text]) joined += (joined.empty() ? "" : "; ") + name;
    out += fmt::format("- **{}**: {}\n", joined, text);
  }
  return out;
}

constexpr const char* kIntro =
    R"(Every figure of `docs/sources/calibration-targets.md` (measurements of real kernels on
real Trainium hardware, with their sources) is compared with a simulation of the same kernel,
written in the kernel format under `examples/kernels/` with the structure the target describes.
Each simulation runs in its own `trnsim run --json` process on a built-in config; the simulated
value is read from its statistics. "Error" is (simulated - published) / published. A row is a
known miss when the model cannot reach the figure for the reason given below: such rows are
reported, never tuned away by special cases (no code path depends on a kernel's name or shape).
)";

constexpr const char* kMethod = R"(## Method

- **Times.** T1 and T2 compare the kernel's own time (`/time/kernel_ns`), T3 the total with the
  configured launch overhead (`/time/total_with_launch_ns`), as the target prescribes: the
  published T3 totals include the runtime's pre- and postamble.
- **T4.** The 32 KiB copy is one `dma_copy` of 4 partitions x 4096 bf16 (one DMA engine owns
  8 partitions); its time is the DMA's data-movement time (`/cores/0/engines/dma/active_ns`),
  as the measurement excludes the fixed issue latency. The efficiency curve streams 32 loads of
  `[128, F]` on one queue, double-buffered, with hardware descriptor generation
  (`dma_load_stream_hwdge.json`); efficiency is the stream's throughput from first issue to
  last completion (`/time/kernel_ns`), relative to the same stream at 16 KiB per partition (the
  plateau), so the per-DMA latencies count where the stream waits for them.
- **Sanity checks** run every example kernel on every generation it supports, at its default
  (full) size: no kernel may beat the Tensor Engine's peak for its input dtype, the core's DMA
  peak or the chip's HBM bandwidth, no engine may be busy longer than the kernel, and the large
  TensorE-bound matmuls must approach the ideal time (FLOPs / peak).
- **Calibration** tunes only parameters whose values are not published (the config's `sources`
  entry of each says so), inside plausible ranges; each fitted value is recorded with its target in the config's
  `sources` and in the table below.
)";

}  // namespace

std::vector<CalibrationEntry> calibration_entries() {
  std::vector<CalibrationEntry> entries;
  std::map<std::string, config::LoadedConfig> configs;
  for (const std::string& generation : generations()) {
    configs.emplace(generation, config::load_config(generation));
  }
  for (const CalibratedParameter& parameter : calibrated_parameters()) {
    CalibrationEntry entry{parameter, {}};
    for (const std::string& generation : generations()) {
      const nlohmann::ordered_json& effective = configs.at(generation).effective;
      const nlohmann::ordered_json value = at_dotted(effective, parameter.key);
      std::string source;
      if (effective.contains("sources") && effective.at("sources").contains(parameter.key)) {
        source = effective.at("sources").at(parameter.key).get<std::string>();
      }
      entry.values.push_back({generation, value.dump(), source});
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

std::string summary_line(const Report& report) {
  const Counts counts = count(report);
  return fmt::format("{} pass, {} known miss{}, {} pending, {} fail", counts.pass, counts.known,
                     counts.known == 1 ? "" : "es", counts.pending, counts.fail);
}

std::string format_text(const Report& report) {
  std::vector<std::vector<std::string>> table = {
      {"target", "measure", "hardware", "published", "simulated", "error", "tolerance", "status"}};
  std::vector<std::string> notes;
  for (std::size_t i = 0; i < report.rows.size(); ++i) {
    const Row& row = report.rows[i];
    const Outcome& outcome = report.outcomes[i];
    std::string status(status_name(outcome.status));
    if (!outcome.where.empty()) {
      notes.push_back(fmt::format("  [{}] {}: {}", i + 1, row.measure, outcome.where));
      status += fmt::format(" [{}]", i + 1);
    }
    table.push_back({row.target, row.measure, row.hardware, row.published,
                     simulated_text(row, outcome), error_text(outcome), tolerance_text(row),
                     status});
  }
  std::string out = text_table(table);
  if (!notes.empty()) {
    out += "\n";
    for (const std::string& note : notes) out += note + "\n";
  }
  out += "\n" + summary_line(report) + "\n";
  return out;
}

std::string format_markdown(const Report& report) {
  std::string out;
  out += "# Validation against published hardware measurements\n\n";
  out +=
      "<!-- Generated by `trnsim validate --markdown`; do not edit by hand. Regenerate with\n"
      "     `trnsim validate --markdown --output docs/validation.md`. A test fails when this\n"
      "     file is stale or a target leaves its tolerance. -->\n\n";
  out += kIntro;
  out += fmt::format("\nGenerated by trnsim {}. Result: **{}**.\n\n", report.version,
                     summary_line(report));

  out += "## Published targets\n\n";
  out += "| target | hardware | measure | published | simulated | error | tolerance | status |\n";
  out += "|---|---|---|---|---|---:|---|---|\n";
  std::vector<std::pair<std::string, std::string>> misses;
  for (std::size_t i = 0; i < report.rows.size(); ++i) {
    const Row& row = report.rows[i];
    if (is_sanity(row)) continue;
    const Outcome& outcome = report.outcomes[i];
    out +=
        fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", row.target, cell(row.hardware),
                    cell(row.measure), cell(row.published), cell(simulated_text(row, outcome)),
                    error_text(outcome), cell(tolerance_text(row)), status_name(outcome.status));
    if (outcome.status == Status::kKnownMiss) {
      misses.emplace_back(row.target + " " + row.measure, row.known_miss);
    }
    if (outcome.status == Status::kNoResult) {
      misses.emplace_back(row.target + " " + row.measure, "no result: " + outcome.where);
    }
  }
  bool any_pending = false;
  for (const Outcome& outcome : report.outcomes) {
    any_pending = any_pending || outcome.status == Status::kPending;
  }
  if (any_pending) {
    out +=
        "\nPending rows wait for a model that has not landed yet (T5: the collective-"
        "communication cores and fabric).\n";
  }

  out += "\n## Sanity checks\n\n";
  out += "| check | runs | bound | simulated | where | status |\n";
  out += "|---|---|---|---|---|---|\n";
  for (std::size_t i = 0; i < report.rows.size(); ++i) {
    const Row& row = report.rows[i];
    if (!is_sanity(row)) continue;
    const Outcome& outcome = report.outcomes[i];
    out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", cell(row.measure), cell(row.hardware),
                       cell(row.published), cell(simulated_text(row, outcome)),
                       cell(outcome.status == Status::kNoResult ? "" : outcome.where),
                       status_name(outcome.status));
    if (outcome.status == Status::kKnownMiss) misses.emplace_back(row.measure, row.known_miss);
    if (outcome.status == Status::kNoResult) {
      misses.emplace_back(row.measure, "no result: " + outcome.where);
    }
  }

  std::vector<std::pair<std::string, std::string>> notes;
  for (const Row& row : report.rows) {
    if (!row.note.empty()) notes.emplace_back(row.target + " " + row.measure, row.note);
  }
  if (!notes.empty()) {
    out += "\n## Notes on the kernels\n\n";
    out += grouped_list(notes);
  }

  if (!misses.empty()) {
    out += "\n## Outside tolerance: reasons\n\n";
    out += grouped_list(misses);
  }

  out += "\n## Calibrated parameters\n\n";
  out += "| parameter |";
  for (const std::string& generation : generations()) out += " " + generation + " |";
  out += " fitted on | range considered |\n|---|";
  for (std::size_t i = 0; i < generations().size(); ++i) out += "---|";
  out += "---|---|\n";
  for (const CalibrationEntry& entry : report.calibration) {
    out += "| `" + entry.parameter.key + "` |";
    for (const CalibratedValue& value : entry.values) out += " " + value.value + " |";
    out +=
        fmt::format(" {} | {} |\n", cell(entry.parameter.fitted_on), cell(entry.parameter.range));
  }
  out += "\nSources recorded in the configs (`sources` entry of each key):\n\n";
  for (const CalibrationEntry& entry : report.calibration) {
    std::map<std::string, std::vector<std::string>> by_source;
    for (const CalibratedValue& value : entry.values) {
      by_source[value.source.empty() ? "(none recorded)" : value.source].push_back(
          value.generation);
    }
    for (const auto& [source, generations_with] : by_source) {
      std::string names;
      for (const std::string& name : generations_with) names += (names.empty() ? "" : ", ") + name;
      out += fmt::format("- `{}` ({}): {}\n", entry.parameter.key, names, source);
    }
  }

  out += "\n## How each target is simulated\n\n";
  out += "| run | kernel | config | params |\n|---|---|---|---|\n";
  std::set<std::string> seen;
  for (const Row& row : report.rows) {
    if (is_sanity(row)) continue;
    for (const RunSpec& run : row.runs) {
      if (!seen.insert(run.key()).second) continue;
      std::string params;
      for (const auto& [name, value] : run.params) {
        params += (params.empty() ? "" : " ") + fmt::format("`--param {}={}`", name, value);
      }
      for (const auto& [name, value] : run.sets) {
        params += (params.empty() ? "" : " ") + fmt::format("`--set {}={}`", name, value);
      }
      out += fmt::format("| {} | `examples/kernels/{}` | {} | {} |\n", row.target, run.kernel,
                         run.config, params.empty() ? "defaults" : params);
    }
  }
  out += "\n";
  out += kMethod;
  return out;
}

}  // namespace trnsim::validation
