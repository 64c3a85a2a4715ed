#include "report/trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "util/error.hpp"

namespace trnsim::report {

using kernel::Engine;

namespace {

// Track indices inside a core's process. tid = index + 1 + lane * kLaneStride.
constexpr std::size_t kSequencerTracks = 6;  // tensor, vector, scalar, gpsimd, sync, collective
constexpr std::size_t kQueuesPerTrigger = 16;
constexpr std::size_t kDmaQueueBase = kSequencerTracks;
constexpr std::size_t kDmaEngineBase = kDmaQueueBase + 5 * kQueuesPerTrigger;
constexpr std::uint64_t kLaneStride = 10000;
constexpr std::uint64_t kChipPidBase = 1000000;

/// The engine whose sequencer runs (or, for DMAs, triggers) an instruction.
Engine sequencer_engine(const kernel::Instruction& instruction) {
  return instruction.engine == Engine::kDma ? instruction.dma_trigger : instruction.engine;
}

/// The sequencer that runs (or, for DMAs, triggers) an instruction, as a track index.
std::size_t sequencer_track(const kernel::Instruction& instruction) {
  const Engine engine = sequencer_engine(instruction);
  if (engine == Engine::kCollective) return 5;
  return std::min<std::size_t>(static_cast<std::size_t>(engine), 4);
}

std::string_view sequencer_track_name(std::size_t track) {
  static constexpr std::array<std::string_view, kSequencerTracks> kNames{
      "tensor", "vector", "scalar", "gpsimd", "sync", "collective"};
  return kNames[track];
}

}  // namespace

struct TraceWriter::ChipCounters {
  ChipCounters(double bin_ns, std::size_t max_bins) : hbm(bin_ns, max_bins) {}
  RateCounter hbm;  ///< HBM bytes of every DMA transfer of the chip's cores
  std::vector<std::unique_ptr<RateCounter>> stack_transfers;  ///< by stack, kTransfer events
  std::vector<std::unique_ptr<RateCounter>> stack_packets;    ///< by stack, kPacket events
};

void parse_trace_detail(const std::string& text, TraceOptions& options) {
  if (text == "instructions") {
    options.detail = TraceDetail::kInstructions;
  } else if (text == "dma") {
    options.detail = TraceDetail::kDma;
  } else if (text == "packets") {
    options.detail = TraceDetail::kPackets;
  } else {
    throw InputError("--trace-detail",
                     "expected instructions, dma or packets, found '" + text + "'");
  }
}

void parse_trace_window(const std::string& text, TraceOptions& options) {
  const std::string where = "--trace-window " + text;
  const std::size_t colon = text.find(':');
  if (colon == std::string::npos) {
    throw InputError(where,
                     "expected BEGIN_US:END_US (microseconds from the kernel start; "
                     "either side may be empty, e.g. '10:20' or '50:'), found no ':'");
  }
  auto parse_side = [&](const std::string& side, double fallback, const char* which) {
    if (side.empty()) return fallback;
    std::size_t used = 0;
    double value = 0;
    try {
      value = std::stod(side, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != side.size() || !std::isfinite(value) || value < 0) {
      throw InputError(where, fmt::format("expected the {} as a non-negative number of "
                                          "microseconds, found '{}'",
                                          which, side));
    }
    return value * 1e3;
  };
  options.window_begin_ns = parse_side(text.substr(0, colon), 0.0, "begin");
  options.window_end_ns =
      parse_side(text.substr(colon + 1), std::numeric_limits<double>::infinity(), "end");
  if (options.window_end_ns <= options.window_begin_ns) {
    throw InputError(where, "expected the end after the begin, found an empty window");
  }
}

// --- RateCounter ---------------------------------------------------------------------------------

RateCounter::RateCounter(double bin_ns, std::size_t max_bins)
    : bin_ns_(bin_ns > 0 ? bin_ns : 1000), max_bins_(std::max<std::size_t>(2, max_bins)) {}

void RateCounter::coarsen() {
  const std::size_t merged = (bins_.size() + 1) / 2;
  for (std::size_t i = 0; i < merged; ++i) {
    const double right = 2 * i + 1 < bins_.size() ? bins_[2 * i + 1] : 0.0;
    bins_[i] = bins_[2 * i] + right;
  }
  bins_.resize(merged);
  bin_ns_ *= 2;
}

void RateCounter::add(double start_ns, double end_ns, double bytes) {
  if (bytes <= 0) return;
  start_ns = std::max(0.0, start_ns);
  end_ns = std::max(start_ns, end_ns);
  // Last bin touched: an interval ending exactly on a bin boundary does not touch the next bin.
  auto last_bin = [&] {
    const auto first = static_cast<std::size_t>(start_ns / bin_ns_);
    if (end_ns <= start_ns) return first;
    return std::max(first, static_cast<std::size_t>(std::ceil(end_ns / bin_ns_)) - 1);
  };
  while (last_bin() >= max_bins_) coarsen();
  const auto first = static_cast<std::size_t>(start_ns / bin_ns_);
  const std::size_t last = last_bin();
  if (bins_.size() <= last) bins_.resize(last + 1, 0.0);
  if (first == last) {
    bins_[first] += bytes;
    return;
  }
  const double rate = bytes / (end_ns - start_ns);
  for (std::size_t bin = first; bin <= last; ++bin) {
    const double lo = std::max(start_ns, static_cast<double>(bin) * bin_ns_);
    const double hi = std::min(end_ns, static_cast<double>(bin + 1) * bin_ns_);
    if (hi > lo) bins_[bin] += rate * (hi - lo);
  }
}

// --- TraceWriter ---------------------------------------------------------------------------------

TraceWriter::TraceWriter(const std::string& path, const kernel::Program& program,
                         TraceSystem system, TraceOptions options)
    : file_(path, "--trace"),
      labels_(program),
      system_(std::move(system)),
      options_(options),
      window_begin_ns_(round_ns(options.window_begin_ns)),
      window_end_ns_(std::isfinite(options.window_end_ns)
                         ? round_ns(options.window_end_ns)
                         : std::numeric_limits<std::int64_t>::max()) {
  if (system_.cores_per_chip == 0) system_.cores_per_chip = 1;
  cores_.resize(system_.cores);
  core_dma_rate_.resize(system_.cores);
  file_.buffer() << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
}

TraceWriter::~TraceWriter() = default;

TextBuffer& TraceWriter::begin_event() {
  TextBuffer& out = file_.buffer();
  out << (first_event_ ? "\n" : ",\n");
  first_event_ = false;
  return out;
}

void TraceWriter::write_metadata(std::uint64_t pid, std::uint64_t tid, std::string_view kind,
                                 std::string_view name, int sort_index) {
  begin_event() << "{\"name\":\"" << kind << "_name\",\"ph\":\"M\",\"pid\":" << pid
                << ",\"tid\":" << tid << ",\"args\":{\"name\":";
  file_.buffer().json_string(name) << "}}";
  begin_event() << "{\"name\":\"" << kind << "_sort_index\",\"ph\":\"M\",\"pid\":" << pid
                << ",\"tid\":" << tid << ",\"args\":{\"sort_index\":" << sort_index << "}}";
}

TraceWriter::Process& TraceWriter::core_process(std::uint32_t core) {
  if (core >= cores_.size()) {
    cores_.resize(core + 1);
    core_dma_rate_.resize(core + 1);
  }
  Process& process = cores_[core];
  if (!process.named) {
    process.named = true;
    const std::uint32_t chip = core / system_.cores_per_chip;
    const std::uint32_t local = core % system_.cores_per_chip;
    write_metadata(core, 0, "process",
                   fmt::format("NeuronCore {} (chip {}, pid {})", local, chip, core),
                   static_cast<int>(chip * (system_.cores_per_chip + 1) + 1 + local));
  }
  return process;
}

TraceWriter::Track& TraceWriter::ensure_track(Process& process, std::size_t index) {
  if (process.tracks.size() <= index) process.tracks.resize(index + 1);
  Track& track = process.tracks[index];
  if (track.name.empty()) {
    if (index < kSequencerTracks) {
      track.name = std::string(sequencer_track_name(index));
    } else if (index < kDmaEngineBase) {
      const std::size_t queue = (index - kDmaQueueBase) % kQueuesPerTrigger;
      const auto trigger = static_cast<Engine>((index - kDmaQueueBase) / kQueuesPerTrigger);
      track.name = fmt::format("dma queue {} ({})", queue, kernel::engine_name(trigger));
    } else {
      track.name = fmt::format("dma engine {}", index - kDmaEngineBase);
    }
  }
  return track;
}

std::uint64_t TraceWriter::place(std::uint32_t process_id, Process& process, std::size_t index,
                                 std::int64_t start_ns, std::int64_t end_ns) {
  Track& track = ensure_track(process, index);
  std::size_t lane = 0;
  while (lane < track.lane_end_ns.size() && track.lane_end_ns[lane] > start_ns) ++lane;
  const std::uint64_t tid = index + 1 + lane * kLaneStride;
  if (lane == track.lane_end_ns.size()) {
    track.lane_end_ns.push_back(end_ns);
    write_metadata(process_id, tid, "thread",
                   lane == 0 ? track.name : fmt::format("{} #{}", track.name, lane + 1),
                   static_cast<int>(index * 64 + std::min<std::size_t>(lane, 63)));
  } else {
    track.lane_end_ns[lane] = std::max(track.lane_end_ns[lane], end_ns);
  }
  return tid;
}

bool TraceWriter::admit(std::int64_t start_ns, std::int64_t end_ns) {
  if (end_ns < window_begin_ns_ || start_ns > window_end_ns_) {
    ++slices_outside_window_;
    return false;
  }
  if (options_.max_slices > 0 && slices_written_ >= options_.max_slices) {
    ++slices_over_limit_;
    if (!limit_marked_) {
      limit_marked_ = true;
      TextBuffer& out = begin_event();
      out << "{\"name\":\"trace limit reached\",\"ph\":\"i\",\"s\":\"g\",\"pid\":0,\"tid\":0,"
             "\"ts\":";
      out.us_from_ns(start_ns);
      out << ",\"args\":{\"max_slices\":" << options_.max_slices
          << ",\"hint\":\"use --trace-window or a larger --trace-limit\"}}";
    }
    return false;
  }
  ++slices_written_;
  return true;
}

TextBuffer& TraceWriter::begin_slice(const InstructionLabels::StatementText& text,
                                     std::string_view category, std::uint32_t pid,
                                     std::uint64_t tid, std::int64_t start_ns, std::int64_t end_ns,
                                     kernel::Opcode opcode, std::uint64_t sequence,
                                     const kernel::SourceRef& source) {
  TextBuffer& out = begin_event();
  out << "{\"name\":";
  out.json_string(text.label) << ",\"cat\":\"" << category << "\",\"ph\":\"X\",\"pid\":" << pid
                              << ",\"tid\":" << tid << ",\"ts\":";
  out.us_from_ns(start_ns) << ",\"dur\":";
  out.us_from_ns(end_ns - start_ns) << ",\"args\":{\"op\":\"" << kernel::opcode_name(opcode)
                                    << "\",\"seq\":" << sequence << ",\"pointer\":";
  out.json_string(text.pointer);
  if (!text.source.empty()) {
    out << ",\"source\":";
    out.json_string(text.source);
  }
  out << ",\"loops\":{";
  const std::size_t depth = std::min<std::size_t>(source.depth, text.loop_names.size());
  for (std::size_t d = 0; d < depth; ++d) {
    if (d > 0) out << ',';
    out.json_string(text.loop_names[d]) << ':' << source.loop_values[d];
  }
  out << '}';
  return out;
}

void TraceWriter::instruction(const core::InstructionTiming& timing) {
  const kernel::Instruction& instruction = *timing.instruction;
  last_end_ns_ = std::max(last_end_ns_, std::max(timing.end_ns, timing.visible_ns));
  const std::int64_t start = round_ns(timing.start_ns);
  const std::int64_t end = std::max(start, round_ns(timing.end_ns));

  const std::uint32_t core = instruction.pid;
  if (timing.start_ns > timing.fetched_ns) {
    // Queued from its fetch to its start: the mean count per bin is the time queued per ns.
    if (core >= core_queue_.size()) core_queue_.resize(core + 1);
    auto& counter = core_queue_[core][static_cast<std::size_t>(sequencer_engine(instruction))];
    if (!counter) {
      counter = std::make_unique<RateCounter>(options_.counter_bin_ns, options_.max_counter_bins);
    }
    counter->add(timing.fetched_ns, timing.start_ns, timing.start_ns - timing.fetched_ns);
  }
  if (instruction.engine != Engine::kDma && timing.end_ns > timing.start_ns) {
    // Engine traffic through the on-chip memories, spread over the instruction's time.
    std::array<double, 2> bytes{};  // SBUF, PSUM
    for (const kernel::AccessPattern& pattern : instruction.operands) {
      if (!pattern.used() || !pattern.on_chip()) continue;
      bytes[pattern.memory == kernel::MemoryKind::kPsum ? 1 : 0] +=
          static_cast<double>(pattern.bytes());
    }
    if (core >= core_onchip_rate_.size()) core_onchip_rate_.resize(core + 1);
    for (std::size_t memory = 0; memory < 2; ++memory) {
      if (bytes[memory] == 0) continue;
      auto& counter = core_onchip_rate_[core][memory];
      if (!counter) {
        counter = std::make_unique<RateCounter>(options_.counter_bin_ns, options_.max_counter_bins);
      }
      counter->add(timing.start_ns, timing.end_ns, bytes[memory]);
    }
  }
  if (!admit(start, end)) return;
  Process& process = core_process(core);
  const std::uint64_t tid = place(core, process, sequencer_track(instruction), start, end);
  const InstructionLabels::StatementText& text = labels_.statement(instruction.source.statement);
  const bool is_dma = instruction.engine == Engine::kDma;
  if (timing.wait_ns > 0) write_flow(core, timing.waited_on_sequence, tid, start);
  remember(core, instruction.sequence, tid, start, end, false);

  TextBuffer& out =
      begin_slice(text, is_dma ? "dma_trigger" : kernel::engine_name(instruction.engine), core, tid,
                  start, end, instruction.opcode, instruction.sequence, instruction.source);
  for (std::size_t slot = 0; slot < kernel::kSlotCount; ++slot) {
    const kernel::AccessPattern& pattern = instruction.operands[slot];
    if (!pattern.used()) continue;
    const std::string& key = text.operand_keys[slot];
    if (key.empty()) {
      out << ",\"operand" << slot << '"';
    } else {
      out << ',';
      out.json_string(key);
    }
    out << ":\"";
    labels_.append_operand(out, pattern);
    out << '"';
  }
  out << ",\"dtype\":\"" << kernel::dtype_name(main_dtype(instruction))
      << "\",\"partitions\":" << instruction.partitions
      << ",\"elements_per_partition\":" << instruction.elements_per_partition
      << ",\"bytes_read\":" << instruction.bytes_read
      << ",\"bytes_written\":" << instruction.bytes_written;
  // Zero-valued hbm_bytes, flops and wait_ns are left out (docs/outputs.md).
  if (instruction.hbm_bytes > 0) out << ",\"hbm_bytes\":" << instruction.hbm_bytes;
  if (instruction.flops > 0) out << ",\"flops\":" << instruction.flops;
  if (timing.wait_ns > 0) {
    out << ",\"wait_ns\":";
    out.fixed3(timing.wait_ns) << ",\"waited_on\":\"" << kernel::engine_name(timing.waited_on)
                               << " #" << timing.waited_on_sequence << '"';
  }
  if (is_dma) {
    out << ",\"queue\":" << static_cast<unsigned>(instruction.dma_queue) << ",\"dge\":\""
        << kernel::dge_mode_name(instruction.dge) << '"';
  } else {
    out << ",\"visible_ns\":";
    out.fixed3(timing.visible_ns);
  }
  out << "}}";
  file_.maybe_flush();
}

TraceWriter::ChipCounters& TraceWriter::chip_counters(std::uint32_t chip) {
  if (chips_.size() <= chip) chips_.resize(chip + 1);
  if (!chips_[chip]) {
    chips_[chip] =
        std::make_unique<ChipCounters>(options_.counter_bin_ns, options_.max_counter_bins);
  }
  return *chips_[chip];
}

void TraceWriter::dma(const core::DmaEvent& event) {
  last_end_ns_ = std::max(last_end_ns_, event.end_ns);
  const std::uint32_t core = event.pid;
  const bool packet = event.kind == core::DmaEvent::Kind::kPacket;
  const double hbm_bytes = static_cast<double>(event.hbm_read_bytes + event.hbm_write_bytes);
  ChipCounters& counters = chip_counters(core / system_.cores_per_chip);
  if (!packet) {
    counters.hbm.add(event.start_ns, event.end_ns, hbm_bytes);
    if (core >= core_dma_rate_.size()) core_dma_rate_.resize(core + 1);
    if (!core_dma_rate_[core]) {
      core_dma_rate_[core] =
          std::make_unique<RateCounter>(options_.counter_bin_ns, options_.max_counter_bins);
    }
    core_dma_rate_[core]->add(event.start_ns, event.end_ns, static_cast<double>(event.bytes));
    if (event.end_ns > event.issue_ns) {
      if (core >= core_dma_in_flight_.size()) core_dma_in_flight_.resize(core + 1);
      auto& in_flight = core_dma_in_flight_[core];
      if (!in_flight) {
        in_flight =
            std::make_unique<RateCounter>(options_.counter_bin_ns, options_.max_counter_bins);
      }
      in_flight->add(event.issue_ns, event.end_ns, event.end_ns - event.issue_ns);
    }
  }
  if (event.hbm_stack >= 0) {
    auto& stacks = packet ? counters.stack_packets : counters.stack_transfers;
    const auto stack = static_cast<std::size_t>(event.hbm_stack);
    if (stacks.size() <= stack) stacks.resize(stack + 1);
    if (!stacks[stack]) {
      stacks[stack] =
          std::make_unique<RateCounter>(options_.counter_bin_ns, options_.max_counter_bins);
    }
    stacks[stack]->add(event.start_ns, event.end_ns, hbm_bytes);
  }

  if (options_.detail == TraceDetail::kInstructions ||
      (packet && options_.detail != TraceDetail::kPackets)) {
    return;
  }
  const std::int64_t start = round_ns(event.start_ns);
  const std::int64_t end = std::max(start, round_ns(event.end_ns));
  if (!admit(start, end)) return;
  Process& process = core_process(core);
  std::size_t track = 0;
  if (packet && event.dma_engine >= 0) {
    track = kDmaEngineBase + static_cast<std::size_t>(event.dma_engine);
  } else {
    const std::size_t trigger = std::min<std::size_t>(static_cast<std::size_t>(event.trigger), 4);
    track = kDmaQueueBase + trigger * kQueuesPerTrigger + event.queue % kQueuesPerTrigger;
  }
  const std::uint64_t tid = place(core, process, track, start, end);
  const InstructionLabels::StatementText& text = labels_.statement(event.source.statement);
  if (!packet) remember(core, event.id, tid, start, end, true);

  TextBuffer& out = begin_slice(text, packet ? "dma_packet" : "dma_transfer", core, tid, start, end,
                                event.opcode, event.id, event.source);
  if (packet) out << ",\"packet\":" << event.packet;
  out << ",\"trigger\":\"" << kernel::engine_name(event.trigger)
      << "\",\"queue\":" << static_cast<unsigned>(event.queue)
      << ",\"dma_engine\":" << event.dma_engine << ",\"hbm_stack\":" << event.hbm_stack
      << ",\"src\":\"" << kernel::memory_kind_name(event.src_memory) << "\",\"dst\":\""
      << kernel::memory_kind_name(event.dst_memory) << "\",\"bytes\":" << event.bytes
      << ",\"hbm_read_bytes\":" << event.hbm_read_bytes
      << ",\"hbm_write_bytes\":" << event.hbm_write_bytes << ",\"latency_ns\":";
  out.fixed3(event.start_ns - event.issue_ns) << ",\"achieved_gbps\":";
  out.fixed3(event.end_ns > event.start_ns
                 ? static_cast<double>(event.bytes) / (event.end_ns - event.start_ns)
                 : 0.0);
  out << "}}";
  file_.maybe_flush();
}

void TraceWriter::remember(std::uint32_t core, std::uint64_t sequence, std::uint64_t tid,
                           std::int64_t start_ns, std::int64_t end_ns, bool transfer) {
  const std::uint64_t key = slice_key(core, sequence);
  RecentSlice& slot = recent_slot(key);
  if (slot.key == key && slot.transfer && !transfer) return;  // the transfer is what was waited on
  slot = {key, tid, start_ns, end_ns, transfer};
}

void TraceWriter::write_flow(std::uint32_t core, std::uint64_t producer, std::uint64_t tid,
                             std::int64_t start_ns) {
  const std::uint64_t key = slice_key(core, producer);
  const RecentSlice& from = recent_slot(key);
  if (from.key != key) return;
  // The arrow leaves from inside the producer's slice (its last ns) and binds to the slice
  // that encloses its end ("bp":"e"): the waiting instruction's, which starts there.
  const std::int64_t from_ts = std::max(from.start_ns, from.end_ns - 1);
  const std::uint64_t id = ++flows_written_;
  TextBuffer& out = begin_event();
  out << "{\"name\":\"dependency\",\"cat\":\"dependency\",\"ph\":\"s\",\"id\":" << id
      << ",\"pid\":" << core << ",\"tid\":" << from.tid << ",\"ts\":";
  out.us_from_ns(from_ts) << "}";
  TextBuffer& in = begin_event();
  in << "{\"name\":\"dependency\",\"cat\":\"dependency\",\"ph\":\"f\",\"bp\":\"e\",\"id\":" << id
     << ",\"pid\":" << core << ",\"tid\":" << tid << ",\"ts\":";
  in.us_from_ns(start_ns) << "}";
}

void TraceWriter::write_counter_sample(std::uint64_t pid, std::string_view name_json,
                                       std::string_view unit, std::int64_t ts_ns, double value) {
  TextBuffer& out = begin_event();
  out << "{\"name\":" << name_json << ",\"ph\":\"C\",\"pid\":" << pid << ",\"ts\":";
  out.us_from_ns(ts_ns) << ",\"args\":{\"" << unit << "\":";
  out.fixed3(value) << "}}";
}

void TraceWriter::write_counter(std::uint64_t pid, const std::string& name,
                                const RateCounter& counter, double end_ns, std::string_view unit) {
  const double bin_ns = counter.bin_ns();
  const std::string name_json = json_string(name);
  // Samples inside the window, plus the one just before it (the value at the window's start).
  const std::int64_t first_ts = window_begin_ns_ - round_ns(bin_ns);
  auto sample = [&](double time_ns, double gbps) {
    const std::int64_t ts = round_ns(time_ns);
    if (ts < first_ts || ts > window_end_ns_) return false;
    write_counter_sample(pid, name_json, unit, ts, gbps);
    return true;
  };
  double previous = -1;  // last value written, at the printed precision
  const std::vector<double>& bins = counter.bins();
  for (std::size_t i = 0; i < bins.size(); ++i) {
    const double gbps = bins[i] / bin_ns;  // bytes per ns == GB/s (or ns per ns: a mean count)
    const double shown = std::round(gbps * 1000) / 1000;
    if (shown == previous) continue;  // a counter holds its value until the next sample
    if (sample(static_cast<double>(i) * bin_ns, gbps)) previous = shown;
    file_.maybe_flush();
  }
  sample(std::max(end_ns, static_cast<double>(bins.size()) * bin_ns), 0.0);
}

void TraceWriter::finish(double kernel_ns) {
  const double end_ns = std::max(kernel_ns, last_end_ns_);
  const std::int64_t end = round_ns(end_ns);
  for (std::uint32_t core = 0; core < cores_.size(); ++core) {
    const bool has_dma = core < core_dma_rate_.size() && core_dma_rate_[core];
    if (!cores_[core].named && !has_dma) continue;
    core_process(core);
    // Allocation is static (the kernel places every tensor before the run): constant counters.
    for (const auto& [name, used, capacity] :
         {std::tuple{"SBUF allocated", system_.sbuf_bytes_used, system_.sbuf_partition_bytes},
          std::tuple{"PSUM allocated", system_.psum_bytes_used, system_.psum_partition_bytes}}) {
      if (capacity == 0) continue;
      const double percent = 100.0 * static_cast<double>(used) / static_cast<double>(capacity);
      const std::string name_json = json_string(name);
      write_counter_sample(core, name_json, "%", 0, percent);
      write_counter_sample(core, name_json, "%", end, percent);
    }
    if (has_dma) write_counter(core, "DMA bandwidth", *core_dma_rate_[core], end_ns);
    if (core < core_queue_.size()) {
      for (const Engine engine : {Engine::kTensor, Engine::kVector, Engine::kScalar,
                                  Engine::kGpSimd, Engine::kSync, Engine::kCollective}) {
        const auto& counter = core_queue_[core][static_cast<std::size_t>(engine)];
        if (counter) {
          write_counter(core, fmt::format("{} queue", kernel::engine_name(engine)), *counter,
                        end_ns, "instructions");
        }
      }
    }
    if (core < core_dma_in_flight_.size() && core_dma_in_flight_[core]) {
      write_counter(core, "DMAs in flight", *core_dma_in_flight_[core], end_ns, "transfers");
    }
    if (core < core_onchip_rate_.size()) {
      for (const auto& [memory, name] :
           {std::pair{0, "SBUF bandwidth (engines)"}, std::pair{1, "PSUM bandwidth (engines)"}}) {
        const auto& counter = core_onchip_rate_[core][static_cast<std::size_t>(memory)];
        if (counter) write_counter(core, name, *counter, end_ns);
      }
    }
  }
  for (std::uint32_t chip = 0; chip < chips_.size(); ++chip) {
    if (!chips_[chip]) continue;
    const ChipCounters& counters = *chips_[chip];
    const std::uint64_t pid = kChipPidBase + chip;
    write_metadata(pid, 0, "process", fmt::format("chip {}", chip),
                   static_cast<int>(chip * (system_.cores_per_chip + 1)));
    write_counter(pid, "HBM bandwidth", counters.hbm, end_ns);
    // Per stack: from the finest events the DMA model reported.
    const auto& stacks =
        counters.stack_packets.empty() ? counters.stack_transfers : counters.stack_packets;
    for (std::size_t stack = 0; stack < stacks.size(); ++stack) {
      if (stacks[stack]) {
        write_counter(pid, fmt::format("HBM stack {} bandwidth", stack), *stacks[stack], end_ns);
      }
    }
  }

  nlohmann::json other = nlohmann::json::object();
  other["trnsim"] = system_.metadata;
  other["slices_written"] = slices_written_;
  other["slices_dropped_by_limit"] = slices_over_limit_;
  other["slices_outside_window"] = slices_outside_window_;
  other["max_slices"] = options_.max_slices;
  other["window_begin_us"] = static_cast<double>(window_begin_ns_) / 1e3;
  other["window_end_us"] = window_end_ns_ == std::numeric_limits<std::int64_t>::max()
                               ? nlohmann::json(nullptr)
                               : nlohmann::json(static_cast<double>(window_end_ns_) / 1e3);
  file_.buffer() << "\n],\"otherData\":" << other.dump() << "}\n";
  file_.commit();
}

}  // namespace trnsim::report
