#include "dma/descriptors.hpp"

#include <algorithm>

namespace trnsim::dma {

using kernel::AccessPattern;
using kernel::MemoryKind;

namespace {

SideMap side_map(const AccessPattern& pattern, const config::Params& params, std::uint64_t prefix) {
  SideMap map;
  map.memory = pattern.memory;
  map.fabric_prefix = prefix;
  map.element_bytes = kernel::dtype_bytes(pattern.dtype);
  const auto element_bytes = static_cast<std::int64_t>(map.element_bytes);
  std::uint8_t rank = 0;
  std::int8_t partition_dim = -1;
  auto push = [&](std::uint64_t size, std::int64_t byte_stride) {
    map.shape[rank] = size;
    map.byte_strides[rank] = byte_stride;
    ++rank;
  };
  if (pattern.on_chip()) {
    const std::int64_t partition_bytes = pattern.memory == MemoryKind::kSbuf
                                             ? params.sbuf.partition_bytes
                                             : params.psum.partition_bytes;
    map.base = static_cast<std::int64_t>(pattern.partition_start) * partition_bytes +
               static_cast<std::int64_t>(pattern.offset);
    for (std::uint8_t d = 0; d <= pattern.rank; ++d) {
      if (d == pattern.partition_axis) {
        partition_dim = static_cast<std::int8_t>(rank);
        push(pattern.partitions, partition_bytes);
      }
      if (d < pattern.rank) push(pattern.sizes[d], pattern.strides[d] * element_bytes);
    }
  } else {
    map.base = static_cast<std::int64_t>(pattern.offset);
    for (std::uint8_t d = 0; d < pattern.rank; ++d) {
      push(pattern.sizes[d], pattern.strides[d] * element_bytes);
    }
    if (rank == 0) push(1, element_bytes);
  }
  map.rank = rank;
  // Contiguous run: innermost dimensions merged while each continues the previous one; never
  // across partitions (each partition is its own buffer).
  std::uint64_t run = 1;
  for (int d = rank - 1; d >= 0; --d) {
    if (map.shape[d] == 1) continue;
    if (d == partition_dim) break;
    if (map.byte_strides[d] != static_cast<std::int64_t>(run) * element_bytes) break;
    run *= map.shape[d];
  }
  map.run = run;
  return map;
}

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) {
  return (a + b - 1) / b;
}

}  // namespace

std::uint64_t SideMap::address(std::uint64_t k) const {
  std::int64_t offset = base;
  if (linear) {
    offset += static_cast<std::int64_t>(k * element_bytes);
  } else {
    for (int d = rank - 1; d >= 0; --d) {
      const std::uint64_t size = shape[d];
      offset += static_cast<std::int64_t>(k % size) * byte_strides[d];
      k /= size;
    }
  }
  return fabric_prefix + static_cast<std::uint64_t>(std::max<std::int64_t>(offset, 0));
}

TransferPlan plan_transfer(const kernel::Instruction& instruction, const config::Params& params,
                           std::uint64_t src_prefix, std::uint64_t dst_prefix) {
  const AccessPattern& src = instruction.src();
  const AccessPattern& dst = instruction.dst();
  TransferPlan plan;
  plan.src = side_map(src, params, src_prefix);
  plan.dst = side_map(dst, params, dst_prefix);
  const bool transpose = instruction.opcode == kernel::Opcode::kDmaTranspose;
  if (transpose) {
    plan.src.linear = true;
    plan.efficiency = src.memory == MemoryKind::kHbm ? params.dma.transpose_efficiency_hbm
                                                     : params.dma.transpose_efficiency_sbuf;
  }

  // The row side: the on-chip operand (destination first), else the HBM source.
  const bool dst_rows = dst.on_chip() || !src.on_chip();
  const AccessPattern& row_pattern = dst_rows ? dst : src;
  const SideMap& row_map = dst_rows ? plan.dst : plan.src;
  plan.elements = row_pattern.elements();
  const auto engines = static_cast<std::uint64_t>(std::max(1, params.dma.engines_per_core));
  std::uint64_t rows_per_engine = 1;
  if (row_pattern.on_chip()) {
    const std::uint8_t axis = std::min<std::uint8_t>(row_pattern.partition_axis, row_pattern.rank);
    plan.outer = 1;
    for (std::uint8_t d = 0; d < axis; ++d) plan.outer *= row_map.shape[d];
    plan.rows = row_pattern.partitions;
    rows_per_engine =
        std::max<std::uint64_t>(1, static_cast<std::uint64_t>(params.sbuf.partitions) / engines);
  } else {
    plan.outer = 1;
    plan.rows = row_map.rank > 1 ? row_map.shape[0] : 1;
    rows_per_engine = ceil_div(plan.rows, engines);
  }
  plan.rows = std::max<std::uint64_t>(1, plan.rows);
  rows_per_engine = std::max(rows_per_engine, ceil_div(plan.rows, engines));
  plan.rows_per_engine = static_cast<std::uint32_t>(rows_per_engine);
  plan.engines = static_cast<std::uint32_t>(ceil_div(plan.rows, rows_per_engine));
  plan.inner = plan.elements / std::max<std::uint64_t>(1, plan.outer * plan.rows);
  if (plan.elements == 0 || plan.inner == 0) plan.outer = 0;

  plan.moved_element_bytes = std::max(plan.src.element_bytes, plan.dst.element_bytes);
  plan.packet_elements =
      std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::max(1, params.dma.packet_bytes)) /
                                     plan.moved_element_bytes);
  plan.bytes = std::max(src.bytes(), dst.bytes());

  // Descriptors of one block (outer 0, row 0); blocks of a well-formed transfer are alike.
  for (std::uint64_t t = 0; plan.outer > 0 && t < plan.inner;) {
    const std::uint64_t length =
        std::min({plan.src.run_remaining(t), plan.dst.run_remaining(t), plan.inner - t});
    ++plan.descriptors_per_block;
    t += length;
  }
  return plan;
}

PacketCursor::PacketCursor(const TransferPlan& plan, std::uint32_t engine)
    : outer_end_(plan.outer),
      row_(plan.first_row(engine)),
      row_begin_(plan.first_row(engine)),
      row_end_(plan.end_row(engine)) {
  if (row_begin_ >= row_end_) outer_end_ = 0;
}

Packet PacketCursor::next(const TransferPlan& plan) {
  Packet packet;
  if (descriptor_left_ == 0) {
    const std::uint64_t k = (outer_ * plan.rows + row_) * plan.inner + t_;
    descriptor_left_ =
        std::min({plan.src.run_remaining(k), plan.dst.run_remaining(k), plan.inner - t_});
    src_address_ = plan.src.address(k);
    dst_address_ = plan.dst.address(k);
    packet.starts_descriptor = true;
  }
  const std::uint64_t elements = std::min(descriptor_left_, plan.packet_elements);
  packet.src_address = src_address_;
  packet.dst_address = dst_address_;
  packet.src_bytes = static_cast<std::uint32_t>(elements * plan.src.element_bytes);
  packet.dst_bytes = static_cast<std::uint32_t>(elements * plan.dst.element_bytes);
  packet.moved_bytes = static_cast<std::uint32_t>(elements * plan.moved_element_bytes);
  src_address_ += packet.src_bytes;
  dst_address_ += packet.dst_bytes;
  descriptor_left_ -= elements;
  t_ += elements;
  if (t_ == plan.inner) {
    t_ = 0;
    if (++row_ == row_end_) {
      row_ = row_begin_;
      ++outer_;
    }
  }
  return packet;
}

DescriptorGenerators::DescriptorGenerators(const config::DmaParams& params, std::uint32_t cores)
    : hwdge_occupancy_ns_(params.hwdge_cost_ns),
      hwdge_latency_ns_(params.hwdge_latency_ns),
      swdge_ns_(params.swdge_cost_ns),
      free_ns_(std::size_t{std::max<std::uint32_t>(1, cores)} * kSlots, 0.0) {}

double DescriptorGenerators::generate(std::uint32_t pid, const kernel::Instruction& instruction,
                                      double submit_ns) {
  if (instruction.dge == kernel::DgeMode::kNone) return submit_ns;
  const bool hardware = instruction.dge == kernel::DgeMode::kHwdge;
  const std::size_t slot =
      hardware ? static_cast<std::size_t>(instruction.dma_trigger) : kernel::kEngineCount;
  const std::size_t index =
      std::min<std::size_t>(pid, free_ns_.size() / kSlots - 1) * kSlots + slot;
  double& free = free_ns_[index];
  const double start = std::max(free, submit_ns);
  free = start + (hardware ? hwdge_occupancy_ns_ : swdge_ns_);
  return start + (hardware ? hwdge_latency_ns_ : swdge_ns_);
}

}  // namespace trnsim::dma
