#include "report/profile.hpp"

#include <algorithm>

namespace trnsim::report {

using kernel::Engine;
using kernel::MemoryKind;

namespace {

void append_header(TextBuffer& out, const std::vector<std::string_view>& columns) {
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (i > 0) out << ',';
    out << columns[i];
  }
  out << '\n';
}

void time_field(TextBuffer& out, double ns) {
  out.fixed3(ns) << ',';
}

void text_field(TextBuffer& out, std::string_view text) {
  out.csv_field(text) << ',';
}

}  // namespace

const std::vector<std::string_view>& profile_columns() {
  static const std::vector<std::string_view> kColumns{
      "core",
      "chip",
      "seq",
      "engine",
      "opcode",
      "label",
      "nki_source_location",
      "loop_values",
      "start_ts",
      "end_ts",
      "duration_ns",
      "evt_wait_time_ns",
      "waited_on_engine",
      "waited_on_seq",
      "result_visible_ts",
      "dtype",
      "partitions",
      "elements_per_partition",
      "operands",
      "hbm_read_bytes",
      "hbm_write_bytes",
      "sbuf_read_bytes",
      "sbuf_write_bytes",
      "psum_read_bytes",
      "psum_write_bytes",
      "raw_flops",
      "dma_queue",
  };
  return kColumns;
}

const std::vector<std::string_view>& dma_profile_columns() {
  static const std::vector<std::string_view> kColumns{
      "core",
      "chip",
      "seq",
      "kind",
      "packet",
      "opcode",
      "label",
      "nki_source_location",
      "loop_values",
      "trigger_engine",
      "queue",
      "dma_engine",
      "hbm_stack",
      "src_memory",
      "dst_memory",
      "bytes",
      "hbm_read_bytes",
      "hbm_write_bytes",
      "issue_ts",
      "start_ts",
      "end_ts",
      "duration_ns",
      "latency_ns",
      "achieved_gbps",
  };
  return kColumns;
}

ProfileWriter::ProfileWriter(const std::string& path, const kernel::Program& program,
                             std::uint32_t cores_per_chip)
    : file_(path, "--profile"),
      labels_(program),
      cores_per_chip_(std::max<std::uint32_t>(1, cores_per_chip)) {
  append_header(file_.buffer(), profile_columns());
}

void ProfileWriter::instruction(const core::InstructionTiming& timing) {
  const kernel::Instruction& instruction = *timing.instruction;
  const InstructionLabels::StatementText& text = labels_.statement(instruction.source.statement);
  const bool is_dma = instruction.engine == Engine::kDma;
  const Engine sequencer = is_dma ? instruction.dma_trigger : instruction.engine;
  TextBuffer& out = file_.buffer();

  out << instruction.pid << ',' << instruction.pid / cores_per_chip_ << ',' << instruction.sequence
      << ',';
  text_field(out, kernel::engine_name(sequencer));
  text_field(out, kernel::opcode_name(instruction.opcode));
  text_field(out, text.label);
  text_field(out, text.location);
  scratch_.clear();
  labels_.append_loop_values(scratch_, instruction.source, " ");
  text_field(out, scratch_.view());
  time_field(out, timing.start_ns);
  time_field(out, timing.end_ns);
  time_field(out, timing.end_ns - timing.start_ns);
  time_field(out, timing.wait_ns);
  if (timing.wait_ns > 0) {
    out << kernel::engine_name(timing.waited_on) << ',' << timing.waited_on_sequence << ',';
  } else {
    out << ",,";
  }
  if (is_dma) {
    out << ',';  // visible when the transfer completes: see the DMA profile
  } else {
    time_field(out, timing.visible_ns);
  }
  out << kernel::dtype_name(main_dtype(instruction)) << ',' << instruction.partitions << ','
      << instruction.elements_per_partition << ',';
  scratch_.clear();
  bool first = true;
  for (std::size_t slot = 0; slot < kernel::kSlotCount; ++slot) {
    const kernel::AccessPattern& pattern = instruction.operands[slot];
    if (!pattern.used()) continue;
    if (!first) scratch_ << "; ";
    first = false;
    if (text.operand_keys[slot].empty()) {
      scratch_ << "operand" << slot;
    } else {
      scratch_ << text.operand_keys[slot];
    }
    scratch_ << '=';
    labels_.append_operand(scratch_, pattern);
  }
  text_field(out, scratch_.view());
  const MemoryTraffic traffic = memory_traffic(instruction);
  out << traffic.read(MemoryKind::kHbm) << ',' << traffic.written(MemoryKind::kHbm) << ','
      << traffic.read(MemoryKind::kSbuf) << ',' << traffic.written(MemoryKind::kSbuf) << ','
      << traffic.read(MemoryKind::kPsum) << ',' << traffic.written(MemoryKind::kPsum) << ','
      << instruction.flops << ',';
  if (is_dma) out << static_cast<unsigned>(instruction.dma_queue);
  out << '\n';
  ++rows_;
  file_.maybe_flush();
}

DmaProfileWriter::DmaProfileWriter(const std::string& path, const kernel::Program& program,
                                   std::uint32_t cores_per_chip)
    : file_(path, "--dma-profile"),
      labels_(program),
      cores_per_chip_(std::max<std::uint32_t>(1, cores_per_chip)) {
  append_header(file_.buffer(), dma_profile_columns());
}

void DmaProfileWriter::dma(const core::DmaEvent& event) {
  const InstructionLabels::StatementText& text = labels_.statement(event.source.statement);
  const bool packet = event.kind == core::DmaEvent::Kind::kPacket;
  TextBuffer& out = file_.buffer();
  out << event.pid << ',' << event.pid / cores_per_chip_ << ',' << event.id << ','
      << (packet ? "packet," : "transfer,");
  if (packet) out << event.packet;
  out << ',';
  text_field(out, kernel::opcode_name(event.opcode));
  text_field(out, text.label);
  text_field(out, text.location);
  scratch_.clear();
  labels_.append_loop_values(scratch_, event.source, " ");
  text_field(out, scratch_.view());
  out << kernel::engine_name(event.trigger) << ',' << static_cast<unsigned>(event.queue) << ','
      << event.dma_engine << ',' << event.hbm_stack << ','
      << kernel::memory_kind_name(event.src_memory) << ','
      << kernel::memory_kind_name(event.dst_memory) << ',' << event.bytes << ','
      << event.hbm_read_bytes << ',' << event.hbm_write_bytes << ',';
  time_field(out, event.issue_ns);
  time_field(out, event.start_ns);
  time_field(out, event.end_ns);
  time_field(out, event.end_ns - event.start_ns);
  time_field(out, event.start_ns - event.issue_ns);
  out.fixed3(event.end_ns > event.start_ns
                 ? static_cast<double>(event.bytes) / (event.end_ns - event.start_ns)
                 : 0.0);
  out << '\n';
  ++rows_;
  file_.maybe_flush();
}

}  // namespace trnsim::report
