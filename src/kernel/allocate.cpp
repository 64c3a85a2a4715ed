#include "kernel/allocate.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "util/error.hpp"

namespace trnsim::kernel {
namespace {

std::uint64_t align_up(std::uint64_t value, std::uint64_t alignment) {
  if (alignment <= 1) return value;
  return (value + alignment - 1) / alignment * alignment;
}

// PSUM: a tensor that fits in one bank is not placed across a bank boundary, and a larger one
// starts at a bank boundary (matmul outputs must stay inside banks).
std::uint64_t bank_fit(std::uint64_t candidate, std::uint64_t bytes, const Target& target) {
  const std::uint64_t bank = target.psum_bank_bytes;
  if (bytes > bank) return align_up(candidate, bank);
  if (candidate / bank != (candidate + bytes - 1) / bank) return align_up(candidate, bank);
  return candidate;
}

struct Rect {
  std::uint32_t tensor;
  std::uint32_t partition_begin;
  std::uint32_t partition_end;
  std::uint64_t byte_begin;
  std::uint64_t byte_end;
  bool intersects(const Rect& o) const {
    return partition_begin < o.partition_end && o.partition_begin < partition_end &&
           byte_begin < o.byte_end && o.byte_begin < byte_end;
  }
};

const char* memory_label(MemoryKind memory) {
  switch (memory) {
    case MemoryKind::kSbuf:
      return "SBUF";
    case MemoryKind::kPsum:
      return "PSUM";
    case MemoryKind::kHbm:
      return "HBM";
  }
  return "?";
}

std::string describe_rects(const Program& program, const std::vector<Rect>& rects) {
  std::string out;
  for (const Rect& r : rects) {
    if (!out.empty()) out += ", ";
    out += fmt::format("{} {} B at {} (partitions {}-{})", program.tensors[r.tensor].name,
                       r.byte_end - r.byte_begin, r.byte_begin, r.partition_begin,
                       r.partition_end - 1);
  }
  return out.empty() ? "none" : out;
}

void allocate_on_chip(const Program& program, const std::vector<TensorLayout>& layouts,
                      const Target& target, MemoryKind memory, Allocation& allocation) {
  const std::uint64_t capacity =
      memory == MemoryKind::kSbuf ? target.sbuf_partition_bytes : target.psum_partition_bytes();
  const std::uint64_t alignment =
      memory == MemoryKind::kSbuf ? target.sbuf_alignment_bytes : target.psum_alignment_bytes;
  std::vector<Rect> placed;
  std::uint64_t used = 0;
  // Explicit placements first: they are fixed, automatic ones fill around them.
  for (std::uint32_t t = 0; t < program.tensors.size(); ++t) {
    const TensorDecl& decl = program.tensors[t];
    const TensorLayout& layout = layouts[t];
    if (decl.memory != memory || !layout.requested_offset) continue;
    const Rect rect{t, layout.requested_partition_start,
                    layout.requested_partition_start + layout.partitions, *layout.requested_offset,
                    *layout.requested_offset + layout.bytes_per_partition};
    if (rect.byte_end > capacity) {
      throw InputError(
          program.file + ": " + decl.pointer + "/offset",
          fmt::format("{} capacity exceeded: tensor '{}' at offset {} with {} bytes per "
                      "partition ends at byte {}, beyond the {} {} bytes per partition of {}",
                      memory_label(memory), decl.name, rect.byte_begin, layout.bytes_per_partition,
                      rect.byte_end, capacity, memory == MemoryKind::kSbuf ? "usable SBUF" : "PSUM",
                      target.name));
    }
    for (const Rect& other : placed) {
      if (other.intersects(rect)) allocation.overlaps.emplace_back(other.tensor, t);
    }
    placed.push_back(rect);
    Placement& placement = allocation.placements[t];
    placement.partition_start = rect.partition_begin;
    placement.offset = rect.byte_begin;
    placement.explicitly_placed = true;
    used = std::max(used, rect.byte_end);
  }
  for (std::uint32_t t = 0; t < program.tensors.size(); ++t) {
    const TensorDecl& decl = program.tensors[t];
    const TensorLayout& layout = layouts[t];
    if (decl.memory != memory || layout.requested_offset) continue;
    Rect rect{t, layout.requested_partition_start,
              layout.requested_partition_start + layout.partitions, 0, 0};
    std::vector<std::uint64_t> candidates{0};
    for (const Rect& other : placed) {
      if (other.partition_begin < rect.partition_end &&
          rect.partition_begin < other.partition_end) {
        candidates.push_back(align_up(other.byte_end, alignment));
      }
    }
    std::sort(candidates.begin(), candidates.end());
    bool found = false;
    for (std::uint64_t candidate : candidates) {
      if (memory == MemoryKind::kPsum)
        candidate = bank_fit(candidate, layout.bytes_per_partition, target);
      rect.byte_begin = candidate;
      rect.byte_end = candidate + layout.bytes_per_partition;
      if (rect.byte_end > capacity) break;
      if (std::none_of(placed.begin(), placed.end(),
                       [&rect](const Rect& other) { return other.intersects(rect); })) {
        found = true;
        break;
      }
    }
    if (!found) {
      std::uint64_t total = layout.bytes_per_partition;
      for (const Rect& r : placed) total += r.byte_end - r.byte_begin;
      throw InputError(
          program.file + ": " + decl.pointer,
          fmt::format("{} capacity exceeded: tensor '{}' needs {} bytes per partition "
                      "(partitions {}-{}) but no free {}-byte-aligned range of that size is left "
                      "in the {} {} bytes per partition of {}; already placed: {} (together "
                      "with '{}': {} bytes)",
                      memory_label(memory), decl.name, layout.bytes_per_partition,
                      rect.partition_begin, rect.partition_end - 1, alignment, capacity,
                      memory == MemoryKind::kSbuf ? "usable SBUF" : "PSUM", target.name,
                      describe_rects(program, placed), decl.name, total));
    }
    placed.push_back(rect);
    Placement& placement = allocation.placements[t];
    placement.partition_start = rect.partition_begin;
    placement.offset = rect.byte_begin;
    used = std::max(used, rect.byte_end);
  }
  (memory == MemoryKind::kSbuf ? allocation.sbuf_bytes_used : allocation.psum_bytes_used) = used;
}

}  // namespace

Allocation allocate(const Program& program, const std::vector<TensorLayout>& layouts,
                    const Target& target, std::uint32_t cores) {
  Allocation allocation;
  allocation.placements.resize(program.tensors.size());
  allocate_on_chip(program, layouts, target, MemoryKind::kSbuf, allocation);
  allocate_on_chip(program, layouts, target, MemoryKind::kPsum, allocation);

  const std::uint64_t instances = std::min<std::uint64_t>(cores, target.cores_per_chip);
  std::uint64_t cursor = 0;
  for (std::uint32_t t = 0; t < program.tensors.size(); ++t) {
    const TensorDecl& decl = program.tensors[t];
    if (decl.memory != MemoryKind::kHbm) continue;
    const std::uint64_t stride = align_up(layouts[t].bytes, target.hbm_alignment_bytes);
    Placement& placement = allocation.placements[t];
    placement.offset = cursor;
    placement.instance_stride = decl.per_core ? stride : 0;
    cursor += decl.per_core ? stride * instances : stride;
    if (cursor > target.hbm_bytes) {
      throw InputError(program.file + ": " + decl.pointer,
                       fmt::format("HBM capacity exceeded: tensor '{}' ({} bytes{}) ends at byte "
                                   "{} of the chip's HBM, beyond the {} bytes of {}",
                                   decl.name, layouts[t].bytes,
                                   decl.per_core ? fmt::format(" x {} cores", instances) : "",
                                   cursor, target.hbm_bytes, target.name));
    }
  }
  allocation.hbm_bytes_used = cursor;
  return allocation;
}

std::string format_allocation(const Program& program, const std::vector<TensorLayout>& layouts,
                              const Allocation& allocation, const Target& target) {
  std::vector<std::string> shapes;
  std::size_t name_width = 6;
  std::size_t shape_width = 5;
  for (std::size_t t = 0; t < program.tensors.size(); ++t) {
    std::string shape = "[";
    for (std::size_t d = 0; d < layouts[t].shape.size(); ++d) {
      if (d > 0) shape += ", ";
      shape += std::to_string(layouts[t].shape[d]);
    }
    shape += "]";
    name_width = std::max(name_width, program.tensors[t].name.size());
    shape_width = std::max(shape_width, shape.size());
    shapes.push_back(std::move(shape));
  }
  std::string out = fmt::format("{:<{}}  {:<6}  {:<16}  {:<{}}  {:>10}  {:>14}  {:>12}  {}\n",
                                "tensor", name_width, "memory", "dtype", "shape", shape_width,
                                "partitions", "offset/address", "bytes/part", "total bytes");
  for (std::size_t t = 0; t < program.tensors.size(); ++t) {
    const TensorDecl& decl = program.tensors[t];
    const TensorLayout& layout = layouts[t];
    const Placement& placement = allocation.placements[t];
    const bool on_chip = decl.memory != MemoryKind::kHbm;
    std::string partitions = on_chip
                                 ? fmt::format("{}-{}", placement.partition_start,
                                               placement.partition_start + layout.partitions - 1)
                                 : "-";
    std::string where =
        on_chip ? std::to_string(placement.offset) + (placement.explicitly_placed ? " (fixed)" : "")
                : fmt::format("{:#x}", placement.offset);
    std::string per_partition = on_chip ? std::to_string(layout.bytes_per_partition) : "-";
    std::string total = std::to_string(layout.bytes);
    if (decl.per_core) {
      total += fmt::format(" per core (stride {:#x})", placement.instance_stride);
    }
    out += fmt::format("{:<{}}  {:<6}  {:<16}  {:<{}}  {:>10}  {:>14}  {:>12}  {}\n", decl.name,
                       name_width, memory_kind_name(decl.memory), dtype_name(decl.dtype), shapes[t],
                       shape_width, partitions, where, per_partition, total);
  }
  for (const auto& [a, b] : allocation.overlaps) {
    out += fmt::format("overlap: '{}' and '{}' share bytes (explicit placement)\n",
                       program.tensors[a].name, program.tensors[b].name);
  }
  out += fmt::format(
      "SBUF used {} of {} bytes per partition; PSUM used {} of {}; HBM used {} bytes per chip\n",
      allocation.sbuf_bytes_used, target.sbuf_partition_bytes, allocation.psum_bytes_used,
      target.psum_partition_bytes(), allocation.hbm_bytes_used);
  return out;
}

}  // namespace trnsim::kernel
