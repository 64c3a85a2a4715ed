// How one dma_copy / dma_transpose splits into work for the DMA engines: the rows it spreads
// over the engines (on-chip partitions, by default 8 of 128 per engine; HBM to HBM the outermost
// dimension), the descriptors (chunks contiguous on both sides) and the packets (at most
// dma.packet_bytes) each engine moves. Pure: no SystemC, no timing.
// Leaves out: descriptor memory traffic (its cost is dma.descriptor_overhead_ns), the DMA
// transpose block order (a transpose reads its source as one stream, writes by destination).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "config/params.hpp"
#include "kernel/instruction.hpp"

namespace trnsim::dma {

inline constexpr std::size_t kMaxLogicalDims = kernel::kMaxPatternDims + 1;

/// Maps the logical (row-major) element index k of a transfer to fabric byte addresses of one
/// side (source or destination).
struct SideMap {
  kernel::MemoryKind memory = kernel::MemoryKind::kHbm;
  std::uint64_t fabric_prefix = 0;  ///< address::encode(kind, space, 0)
  std::int64_t base = 0;            ///< local byte address of element 0
  std::uint32_t element_bytes = 1;
  std::uint8_t rank = 1;
  std::array<std::uint64_t, kMaxLogicalDims> shape{};
  std::array<std::int64_t, kMaxLogicalDims> byte_strides{};
  /// Elements contiguous in bytes from any k that is a multiple of `run` (never across an
  /// on-chip partition).
  std::uint64_t run = 1;
  bool linear = false;  ///< read as one stream (dma_transpose source): address = base + k*bytes

  std::uint64_t address(std::uint64_t k) const;
  std::uint64_t run_remaining(std::uint64_t k) const {
    return linear ? ~std::uint64_t{0} : run - k % run;
  }
};

/// k = (outer * rows + row) * inner + t: `rows` is the row side's partition dimension (or the
/// outermost HBM dimension), split over the engines in blocks of rows_per_engine.
struct TransferPlan {
  SideMap src;
  SideMap dst;
  std::uint64_t elements = 0;
  std::uint64_t outer = 1;
  std::uint64_t rows = 1;
  std::uint64_t inner = 0;
  std::uint32_t rows_per_engine = 1;
  std::uint32_t engines = 1;                ///< engines owning at least one row
  std::uint64_t descriptors_per_block = 0;  ///< descriptors of one (outer, row) block
  std::uint64_t packet_elements = 1;
  std::uint32_t moved_element_bytes = 1;  ///< the larger element size: bytes an engine moves
  std::uint64_t bytes = 0;                ///< max(src bytes, dst bytes)
  double efficiency = 1.0;                ///< engine throughput relative to a plain copy

  /// Rows [first, end) of `engine` (empty when the engine owns none).
  std::uint64_t first_row(std::uint32_t engine) const {
    return std::min<std::uint64_t>(rows, std::uint64_t{engine} * rows_per_engine);
  }
  std::uint64_t end_row(std::uint32_t engine) const {
    return std::min<std::uint64_t>(rows, (std::uint64_t{engine} + 1) * rows_per_engine);
  }
  std::uint64_t descriptors_of(std::uint32_t engine) const {
    return outer * (end_row(engine) - first_row(engine)) * descriptors_per_block;
  }
};

/// Builds the plan. `src_prefix`/`dst_prefix`: fabric address prefixes (address::encode) of the
/// memories the operands live in, chosen by the caller (which stack, which core).
TransferPlan plan_transfer(const kernel::Instruction& instruction, const config::Params& params,
                           std::uint64_t src_prefix, std::uint64_t dst_prefix);

/// True when two operands have the same shape, whatever their addresses: everything
/// plan_transfer reads but the offsets and the first partition. Two instructions of one opcode
/// whose operands have the same shapes have plans that differ in their addresses only.
inline bool same_shape(const kernel::AccessPattern& a, const kernel::AccessPattern& b) {
  if (a.memory != b.memory || a.dtype != b.dtype || a.rank != b.rank ||
      a.partition_axis != b.partition_axis || a.partitions != b.partitions) {
    return false;
  }
  for (std::uint8_t d = 0; d < a.rank; ++d) {
    if (a.sizes[d] != b.sizes[d] || a.strides[d] != b.strides[d]) return false;
  }
  return true;
}

/// One packet: contiguous on both sides, inside one descriptor.
struct Packet {
  std::uint64_t src_address = 0;  ///< fabric address
  std::uint64_t dst_address = 0;
  std::uint32_t src_bytes = 0;
  std::uint32_t dst_bytes = 0;
  std::uint32_t moved_bytes = 0;  ///< max(src, dst): the engine's occupancy
  bool starts_descriptor = false;
};

/// Walks one engine's rows in packets. Default-constructed: done (an engine without rows).
class PacketCursor {
 public:
  PacketCursor() = default;
  PacketCursor(const TransferPlan& plan, std::uint32_t engine);

  bool done() const { return outer_ >= outer_end_; }
  /// True when the next packet starts a new descriptor.
  bool at_descriptor_start() const { return descriptor_left_ == 0; }
  /// Requires !done().
  Packet next(const TransferPlan& plan);

 private:
  std::uint64_t outer_ = 0;
  std::uint64_t outer_end_ = 0;
  std::uint64_t row_ = 0;
  std::uint64_t row_begin_ = 0;
  std::uint64_t row_end_ = 0;
  std::uint64_t t_ = 0;
  std::uint64_t descriptor_left_ = 0;  ///< elements left in the current descriptor
  std::uint64_t src_address_ = 0;      ///< next byte of the current descriptor
  std::uint64_t dst_address_ = 0;
};

/// Run-time descriptor generation (`dge: hwdge` / `swdge`), shared by both DMA models. hwdge runs
/// on the DGE of the sequencer that triggers the DMA (hardware-facts.md §9.3: two instances per
/// core, driven by the Sync and the Scalar sequencers): a DGE starts one DMA instruction per
/// dma.hwdge_cost_ns at most (its occupancy) and has that instruction's descriptors ready
/// dma.hwdge_latency_ns after starting it (it pipelines). swdge runs on the core's GpSimd, one
/// instruction at a time, dma.swdge_cost_ns each (occupancy and latency). A DMA with prebuilt
/// descriptors (`dge: none`) needs no generator. DMAs must be submitted in time order per core.
class DescriptorGenerators {
 public:
  DescriptorGenerators(const config::DmaParams& params, std::uint32_t cores);
  /// When the descriptors of `instruction`, submitted at `submit_ns` by core `pid`, exist.
  double generate(std::uint32_t pid, const kernel::Instruction& instruction, double submit_ns);

 private:
  static constexpr std::size_t kSlots = kernel::kEngineCount + 1;  ///< hwdge per trigger, swdge
  const double hwdge_occupancy_ns_;  ///< ns between instruction starts on one DGE
  const double hwdge_latency_ns_;    ///< ns from an instruction's start to its descriptors
  const double swdge_ns_;
  std::vector<double> free_ns_;  ///< per (core, slot): the generator is free from
};

}  // namespace trnsim::dma
