// Busy time per kernel source line: what `--profile-lines`, the `source_lines` statistics and
// the summary's "source lines" table report. Dynamic instructions are summed per statement while
// the simulation runs, then grouped by the statements' `source` ("kernel.py:42"); a statement
// without one is its own group, named "KERNEL_FILE:POINTER". Memory is proportional to the number
// of statements, never to the dynamic instruction count.
// Leaves out the DMA triggers' time on their sequencers: a DMA counts by its data transfer.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/dma_backend.hpp"
#include "core/neuron_core.hpp"
#include "kernel/program.hpp"
#include "report/output_file.hpp"

namespace trnsim::report {

/// One source line of the kernel (or one statement without a `source`), over every core.
struct SourceLineRow {
  std::string source;              ///< "kernel.py:42", or "KERNEL_FILE:POINTER"
  std::uint64_t instructions = 0;  ///< dynamic instructions
  /// ns: durations of the instructions on their engines (the profile's duration_ns), DMAs by
  /// their transfer (the DMA profile's duration_ns of the transfer rows). A sum: instructions
  /// that overlap in time (several engines, cores, DMA queues or TensorE tiles) all count.
  double busy_ns = 0;
  double busy_pct = 0;  ///< busy_ns / kernel_ns * 100 (above 100 when instructions overlap)
  /// ns: dependency waits: the profile's evt_wait_time_ns summed, plus for each DMA the time
  /// from its trigger's end to its issue to the DMA engines (its own dependencies).
  double wait_ns = 0;
  std::string engines;        ///< engines that ran them, by busy time descending: "dma+vector"
  double first_start_ns = 0;  ///< earliest start of an instruction or transfer
  double last_end_ns = 0;     ///< latest end of an instruction or transfer
  std::string label;          ///< label of the line's first statement in kernel order
};

/// Columns of --profile-lines, in file order (the documented contract).
const std::vector<std::string_view>& source_line_columns();

/// Sums the instructions and DMA transfers of a run per statement (feed it from the two
/// observers), then reports them per source line.
class SourceLineProfile {
 public:
  /// `program` must outlive this object.
  explicit SourceLineProfile(const kernel::Program& program);
  void instruction(const core::InstructionTiming& timing);
  /// Transfers count (busy time, wait after the trigger, first start, last end); packets are
  /// parts of them.
  void dma(const core::DmaEvent& event);
  /// One row per source line that executed an instruction, by busy_ns descending (then by
  /// source). `kernel_ns` is the kernel time busy_pct refers to.
  std::vector<SourceLineRow> rows(double kernel_ns) const;

 private:
  struct StatementTotals {
    std::uint64_t instructions = 0;
    std::array<double, kernel::kEngineCount> busy_ns{};  ///< by kernel::Engine
    std::uint8_t engines = 0;                            ///< bit e: Engine e ran one
    double wait_ns = 0;
    double first_start_ns = std::numeric_limits<double>::infinity();
    double last_end_ns = 0;
  };
  StatementTotals& totals(std::uint32_t statement);

  const kernel::Program& program_;
  std::vector<StatementTotals> statements_;  ///< by statement index
  StatementTotals unknown_;                  ///< instructions not from this program
  /// End of the trigger of each DMA in flight, by (core, sequence): entries live from the
  /// trigger to the transfer's completion.
  std::map<std::pair<std::uint32_t, std::uint64_t>, double> trigger_end_ns_;
};

/// `rows` as the `source_lines` array of the run statistics (keys: the CSV columns).
nlohmann::json source_lines_json(const std::vector<SourceLineRow>& rows);

/// `rows` as CSV (header line, then one line per row; times with 3 decimals) into `file`.
void write_source_lines_csv(OutputFile& file, const std::vector<SourceLineRow>& rows);

}  // namespace trnsim::report
