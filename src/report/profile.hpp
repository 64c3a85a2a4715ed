// Per-instruction and per-DMA profile tables (CSV, RFC 4180, one header line), streamed while the
// simulation runs. Column names follow the Neuron profiler's Instruction table where the meaning
// is the same (engine, opcode, start_ts, end_ts, duration_ns, evt_wait_time_ns, *_read_bytes,
// *_write_bytes, raw_flops, nki_source_location); every column is documented in docs/outputs.md.
// Times are ns from the kernel start with 3 decimals. Rows appear in the order the timing model
// reports them (per engine in program order), not sorted by start time.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/dma_backend.hpp"
#include "core/neuron_core.hpp"
#include "kernel/program.hpp"
#include "report/instruction_labels.hpp"
#include "report/output_file.hpp"

namespace trnsim::report {

/// Columns of --profile, in file order (the documented contract).
const std::vector<std::string_view>& profile_columns();
/// Columns of --dma-profile, in file order (the documented contract).
const std::vector<std::string_view>& dma_profile_columns();

/// --profile FILE.csv: one row per instruction (DMA triggers included: the trigger's time on its
/// sequencer; the transfer itself is in the DMA profile).
class ProfileWriter {
 public:
  /// Starts PATH.tmp and writes the header. `program` must outlive the writer.
  ProfileWriter(const std::string& path, const kernel::Program& program,
                std::uint32_t cores_per_chip);
  void instruction(const core::InstructionTiming& timing);
  /// Renames the file into place.
  void finish() { file_.commit(); }
  std::uint64_t rows() const { return rows_; }

 private:
  OutputFile file_;
  InstructionLabels labels_;
  std::uint32_t cores_per_chip_;
  TextBuffer scratch_;
  std::uint64_t rows_ = 0;
};

/// --dma-profile FILE.csv: one row per DMA transfer and per packet the DMA model reports.
class DmaProfileWriter {
 public:
  DmaProfileWriter(const std::string& path, const kernel::Program& program,
                   std::uint32_t cores_per_chip);
  void dma(const core::DmaEvent& event);
  void finish() { file_.commit(); }
  std::uint64_t rows() const { return rows_; }

 private:
  OutputFile file_;
  InstructionLabels labels_;
  std::uint32_t cores_per_chip_;
  TextBuffer scratch_;
  std::uint64_t rows_ = 0;
};

}  // namespace trnsim::report
