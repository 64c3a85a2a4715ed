#include "report/source_lines.hpp"

#include <algorithm>

namespace trnsim::report {

using kernel::Engine;

const std::vector<std::string_view>& source_line_columns() {
  static const std::vector<std::string_view> kColumns{
      "source",  "instructions",   "busy_ns",     "busy_pct", "wait_ns",
      "engines", "first_start_ns", "last_end_ns", "label",
  };
  return kColumns;
}

SourceLineProfile::SourceLineProfile(const kernel::Program& program)
    : program_(program), statements_(program.statements.size()) {}

SourceLineProfile::StatementTotals& SourceLineProfile::totals(std::uint32_t statement) {
  return statement < statements_.size() ? statements_[statement] : unknown_;
}

void SourceLineProfile::instruction(const core::InstructionTiming& timing) {
  const kernel::Instruction& instruction = *timing.instruction;
  StatementTotals& totals = this->totals(instruction.source.statement);
  const auto engine = static_cast<std::size_t>(instruction.engine);
  ++totals.instructions;
  totals.engines = static_cast<std::uint8_t>(totals.engines | (1u << engine));
  // A DMA's time on its trigger's sequencer is not its work: its transfer counts (dma()).
  if (instruction.engine == Engine::kDma) {
    trigger_end_ns_[{instruction.pid, instruction.sequence}] = timing.end_ns;
  } else {
    totals.busy_ns[engine] += timing.end_ns - timing.start_ns;
  }
  totals.wait_ns += timing.wait_ns;
  totals.first_start_ns = std::min(totals.first_start_ns, timing.start_ns);
  totals.last_end_ns = std::max(totals.last_end_ns, timing.end_ns);
}

void SourceLineProfile::dma(const core::DmaEvent& event) {
  if (event.kind != core::DmaEvent::Kind::kTransfer) return;
  StatementTotals& totals = this->totals(event.source.statement);
  totals.busy_ns[static_cast<std::size_t>(Engine::kDma)] += event.end_ns - event.start_ns;
  const auto trigger = trigger_end_ns_.find({event.pid, event.id});
  if (trigger != trigger_end_ns_.end()) {
    totals.wait_ns += std::max(0.0, event.issue_ns - trigger->second);
    trigger_end_ns_.erase(trigger);
  }
  totals.first_start_ns = std::min(totals.first_start_ns, event.start_ns);
  totals.last_end_ns = std::max(totals.last_end_ns, event.end_ns);
}

std::vector<SourceLineRow> SourceLineProfile::rows(double kernel_ns) const {
  struct Group {
    SourceLineRow row;
    std::array<double, kernel::kEngineCount> busy_ns{};
    std::uint8_t engines = 0;
  };
  std::map<std::string, Group> groups;
  // Statements in kernel order, so each group's label is its first statement's.
  for (std::uint32_t s = 0; s < statements_.size(); ++s) {
    const StatementTotals& totals = statements_[s];
    if (totals.instructions == 0) continue;
    const std::string_view cited = program_.source_line(s);
    std::string key =
        cited.empty() ? program_.file + ":" + program_.statements[s].pointer : std::string(cited);
    auto [it, inserted] = groups.try_emplace(std::move(key));
    Group& group = it->second;
    if (inserted) {
      group.row.source = it->first;
      group.row.label = program_.label(s);
      group.row.first_start_ns = totals.first_start_ns;
    }
    group.row.instructions += totals.instructions;
    group.row.wait_ns += totals.wait_ns;
    group.row.first_start_ns = std::min(group.row.first_start_ns, totals.first_start_ns);
    group.row.last_end_ns = std::max(group.row.last_end_ns, totals.last_end_ns);
    group.engines = static_cast<std::uint8_t>(group.engines | totals.engines);
    for (std::size_t e = 0; e < kernel::kEngineCount; ++e) group.busy_ns[e] += totals.busy_ns[e];
  }
  std::vector<SourceLineRow> rows;
  rows.reserve(groups.size());
  for (auto& [key, group] : groups) {
    std::vector<std::size_t> engines;
    for (std::size_t e = 0; e < kernel::kEngineCount; ++e) {
      if ((group.engines >> e) & 1u) engines.push_back(e);
      group.row.busy_ns += group.busy_ns[e];
    }
    std::stable_sort(engines.begin(), engines.end(), [&group](std::size_t a, std::size_t b) {
      return group.busy_ns[a] > group.busy_ns[b];
    });
    for (const std::size_t e : engines) {
      if (!group.row.engines.empty()) group.row.engines += '+';
      group.row.engines += kernel::engine_name(static_cast<Engine>(e));
    }
    group.row.busy_pct = kernel_ns > 0 ? 100.0 * group.row.busy_ns / kernel_ns : 0.0;
    rows.push_back(std::move(group.row));
  }
  // The map iterated by source, so equal busy times keep source order.
  std::stable_sort(rows.begin(), rows.end(), [](const SourceLineRow& a, const SourceLineRow& b) {
    return a.busy_ns > b.busy_ns;
  });
  return rows;
}

nlohmann::json source_lines_json(const std::vector<SourceLineRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const SourceLineRow& row : rows) {
    out.push_back({{"source", row.source},
                   {"instructions", row.instructions},
                   {"busy_ns", row.busy_ns},
                   {"busy_pct", row.busy_pct},
                   {"wait_ns", row.wait_ns},
                   {"engines", row.engines},
                   {"first_start_ns", row.first_start_ns},
                   {"last_end_ns", row.last_end_ns},
                   {"label", row.label}});
  }
  return out;
}

void write_source_lines_csv(OutputFile& file, const std::vector<SourceLineRow>& rows) {
  TextBuffer& out = file.buffer();
  const std::vector<std::string_view>& columns = source_line_columns();
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (i > 0) out << ',';
    out << columns[i];
  }
  out << '\n';
  for (const SourceLineRow& row : rows) {
    out.csv_field(row.source) << ',' << row.instructions << ',';
    out.fixed3(row.busy_ns) << ',';
    out.fixed3(row.busy_pct) << ',';
    out.fixed3(row.wait_ns) << ',' << row.engines << ',';
    out.fixed3(row.first_start_ns) << ',';
    out.fixed3(row.last_end_ns) << ',';
    out.csv_field(row.label) << '\n';
    file.maybe_flush();
  }
}

}  // namespace trnsim::report
