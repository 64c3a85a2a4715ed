// Chrome trace-event JSON of a run for ui.perfetto.dev and chrome://tracing (docs/outputs.md):
// a process per NeuronCore (tracks per engine sequencer, DMA queue and DMA engine) and per chip
// (HBM bandwidth counters); one complete ("X") event per instruction and per DMA transfer/packet;
// per core, counters of the DMA bandwidth and of the bytes the engines move through SBUF and PSUM.
// Streamed while the simulation runs; memory is bounded by the kernel's JSON, the tracks and the
// counter bins, never by the event count. Deterministic: whole ns printed as us, 3 decimals.
// A dependency wait is drawn as a flow arrow from the producer's slice (for a DMA, its transfer)
// to the waiting instruction's, when the producer is among the last 65,536 slices written.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/dma_backend.hpp"
#include "core/neuron_core.hpp"
#include "kernel/program.hpp"
#include "report/instruction_labels.hpp"
#include "report/output_file.hpp"

namespace trnsim::report {

/// What the trace holds (--trace-detail): instruction slices only; also DMA transfer slices
/// (the default); also the packet model's per-packet slices. Counters are written at every level.
enum class TraceDetail : std::uint8_t { kInstructions, kDma, kPackets };

struct TraceOptions {
  std::uint64_t max_slices = 0;  ///< slices (X events) to write at most; 0 = no limit
  TraceDetail detail = TraceDetail::kDma;
  /// Only slices overlapping [window_begin_ns, window_end_ns] are written (counters likewise).
  double window_begin_ns = 0;
  double window_end_ns = std::numeric_limits<double>::infinity();
  double counter_bin_ns = 1000;            ///< initial bin width of the bandwidth counters
  std::size_t max_counter_bins = 1 << 16;  ///< per counter; the bin width doubles beyond it
};

/// The simulated system as the trace lays it out.
struct TraceSystem {
  std::uint32_t cores = 1;                 ///< NeuronCores running the kernel (global 0..cores-1)
  std::uint32_t cores_per_chip = 1;        ///< chip of core g = g / cores_per_chip
  std::uint64_t sbuf_bytes_used = 0;       ///< allocated per partition (static allocation)
  std::uint64_t sbuf_partition_bytes = 0;  ///< usable per partition
  std::uint64_t psum_bytes_used = 0;
  std::uint64_t psum_partition_bytes = 0;
  nlohmann::json metadata = nlohmann::json::object();  ///< written as "otherData.trnsim"
};

/// Parses "--trace-detail instructions|dma|packets" into `options`; InputError otherwise.
void parse_trace_detail(const std::string& text, TraceOptions& options);

/// Parses "--trace-window BEGIN_US:END_US" (either side may be empty) into `options`.
/// Throws InputError naming the option for a malformed or empty window.
void parse_trace_window(const std::string& text, TraceOptions& options);

/// Binned rate of bytes over simulated time (a counter track). Bytes of an interval are spread
/// uniformly over it. At most `max_bins` bins: when a later time needs more, adjacent bins merge
/// and the width doubles.
class RateCounter {
 public:
  RateCounter(double bin_ns, std::size_t max_bins);
  void add(double start_ns, double end_ns, double bytes);
  double bin_ns() const { return bin_ns_; }
  /// Bytes per bin, bin i covering [i*bin_ns, (i+1)*bin_ns).
  const std::vector<double>& bins() const { return bins_; }
  bool empty() const { return bins_.empty(); }

 private:
  void coarsen();
  double bin_ns_;
  std::size_t max_bins_;
  std::vector<double> bins_;
};

class TraceWriter {
 public:
  /// Starts PATH.tmp (renamed to PATH by finish()). `program` must outlive the writer.
  TraceWriter(const std::string& path, const kernel::Program& program, TraceSystem system,
              TraceOptions options);
  ~TraceWriter();

  /// One instruction of core instruction->pid: a slice on its sequencer's track.
  void instruction(const core::InstructionTiming& timing);
  /// A DMA transfer (on its queue's track) or packet (on its DMA engine's track).
  void dma(const core::DmaEvent& event);
  /// Writes counters and the closing metadata, then renames the file into place.
  void finish(double kernel_ns);

  std::uint64_t slices_written() const { return slices_written_; }
  std::uint64_t flows_written() const { return flows_written_; }
  std::uint64_t slices_dropped() const { return slices_over_limit_ + slices_outside_window_; }

 private:
  struct Track {
    std::string name;
    std::vector<std::int64_t> lane_end_ns;  ///< one entry per lane (thread) in use
  };
  struct Process {
    std::vector<Track> tracks;
    bool named = false;
  };
  struct ChipCounters;

  /// Lane of `track` on which [start, end] fits without overlap (created on demand); returns
  /// its tid and writes the thread metadata when the lane is new.
  std::uint64_t place(std::uint32_t process_id, Process& process, std::size_t track,
                      std::int64_t start_ns, std::int64_t end_ns);
  Process& core_process(std::uint32_t core);
  Track& ensure_track(Process& process, std::size_t index);
  /// False (and counts the slice) when the window or the limit excludes it.
  bool admit(std::int64_t start_ns, std::int64_t end_ns);
  TextBuffer& begin_event();
  /// "<kind>_name" and "<kind>_sort_index" metadata events (kind: process or thread).
  void write_metadata(std::uint64_t pid, std::uint64_t tid, std::string_view kind,
                      std::string_view name, int sort_index);
  /// An X event up to and including the args' loops; the caller appends more args and "}}".
  TextBuffer& begin_slice(const InstructionLabels::StatementText& text, std::string_view category,
                          std::uint32_t pid, std::uint64_t tid, std::int64_t start_ns,
                          std::int64_t end_ns, kernel::Opcode opcode, std::uint64_t sequence,
                          const kernel::SourceRef& source);
  void write_counter_sample(std::uint64_t pid, std::string_view name_json, std::string_view unit,
                            std::int64_t ts_ns, double value);
  /// A RateCounter as counter samples: each bin's sum per ns of the bin, in `unit` (bytes per
  /// ns = GB/s; ns per ns of queued items = their mean count).
  void write_counter(std::uint64_t pid, const std::string& name, const RateCounter& counter,
                     double end_ns, std::string_view unit = "GB/s");
  ChipCounters& chip_counters(std::uint32_t chip);
  /// A written slice that a later dependency wait may point back to.
  struct RecentSlice {
    std::uint64_t key = ~std::uint64_t{0};  ///< core << 40 ^ sequence
    std::uint64_t tid = 0;
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    bool transfer = false;  ///< a DMA transfer (kept over its trigger's slice)
  };
  static std::uint64_t slice_key(std::uint32_t core, std::uint64_t sequence) {
    return std::uint64_t{core} << 40 ^ sequence;
  }
  RecentSlice& recent_slot(std::uint64_t key) { return recent_[key & (recent_.size() - 1)]; }
  void remember(std::uint32_t core, std::uint64_t sequence, std::uint64_t tid,
                std::int64_t start_ns, std::int64_t end_ns, bool transfer);
  /// An arrow from the remembered slice of `producer` (if any) to the slice on `tid` that
  /// starts at `start_ns`.
  void write_flow(std::uint32_t core, std::uint64_t producer, std::uint64_t tid,
                  std::int64_t start_ns);

  OutputFile file_;
  InstructionLabels labels_;
  TraceSystem system_;
  TraceOptions options_;
  std::int64_t window_begin_ns_;
  std::int64_t window_end_ns_;
  std::vector<Process> cores_;
  std::vector<std::unique_ptr<ChipCounters>> chips_;
  std::vector<std::unique_ptr<RateCounter>> core_dma_rate_;
  /// Per core, bytes the engines' compute instructions move through SBUF and through PSUM.
  std::vector<std::array<std::unique_ptr<RateCounter>, 2>> core_onchip_rate_;
  /// Per core and sequencer engine, time instructions spent fetched but not started.
  std::vector<std::array<std::unique_ptr<RateCounter>, kernel::kEngineCount>> core_queue_;
  /// Per core, time DMA transfers spent between their issue and their completion.
  std::vector<std::unique_ptr<RateCounter>> core_dma_in_flight_;
  bool first_event_ = true;
  bool limit_marked_ = false;
  std::vector<RecentSlice> recent_ = std::vector<RecentSlice>(std::size_t{1} << 16);
  std::uint64_t flows_written_ = 0;
  std::uint64_t slices_written_ = 0;
  std::uint64_t slices_over_limit_ = 0;
  std::uint64_t slices_outside_window_ = 0;
  double last_end_ns_ = 0;
};

}  // namespace trnsim::report
