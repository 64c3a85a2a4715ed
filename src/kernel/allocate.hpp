// Placement of a kernel's tensors: SBUF/PSUM offsets (first fit, aligned, declaration order,
// explicit placement honoured, explicitly placed tensors may overlap and are listed) and HBM
// addresses (aligned, declaration order, one instance per core for per_core tensors).
// Every core gets the same on-chip layout and every chip the same HBM layout.
// Leaves out: liveness analysis (the author reuses space explicitly), HBM interleaving (memory
// model).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernel/program.hpp"
#include "kernel/target.hpp"

namespace trnsim::kernel {

/// A tensor declaration with its expressions evaluated.
struct TensorLayout {
  std::vector<std::uint64_t> shape;  ///< elements per dimension
  /// Elements between neighbours of each dimension. On-chip: inside one partition, row-major
  /// over the non-partition dimensions (the partition dimension's entry is 0). HBM: row-major.
  std::vector<std::int64_t> strides;
  std::uint32_t partitions = 1;           ///< on-chip: size of the partition dimension; HBM: 1
  std::uint64_t bytes_per_partition = 0;  ///< on-chip: all buffers and free dims of one partition
  std::uint64_t bytes = 0;                ///< all bytes of one instance
  std::uint32_t requested_partition_start = 0;    ///< on-chip `partition_start` (default 0)
  std::optional<std::uint64_t> requested_offset;  ///< on-chip `offset`, when given
};

struct Placement {
  std::uint32_t partition_start = 0;  ///< on-chip: first partition
  std::uint64_t offset = 0;           ///< on-chip: byte offset in each partition; HBM: address
  /// HBM per_core: bytes between the instances of cores c and c+1 of one chip (0 otherwise).
  std::uint64_t instance_stride = 0;
  bool explicitly_placed = false;  ///< on-chip: `offset` given by the author
};

struct Allocation {
  std::vector<Placement> placements;  ///< by tensor index
  /// Pairs (a, b), a < b, of explicitly placed tensors whose partitions x bytes intersect.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> overlaps;
  std::uint64_t sbuf_bytes_used = 0;  ///< per partition: highest end offset of any SBUF tensor
  std::uint64_t psum_bytes_used = 0;  ///< per partition: highest end offset of any PSUM tensor
  std::uint64_t hbm_bytes_used = 0;   ///< per chip, including alignment padding

  /// HBM address of `tensor`'s instance used by core `pid`.
  std::uint64_t hbm_address(std::uint32_t tensor, std::uint32_t pid,
                            std::uint32_t cores_per_chip) const {
    const Placement& p = placements[tensor];
    return p.offset + p.instance_stride * (pid % cores_per_chip);
  }
};

/// Places every tensor. Throws InputError (naming the tensors and the bytes) when SBUF, PSUM or
/// HBM capacity is exceeded or an explicit placement lies outside the memory.
Allocation allocate(const Program& program, const std::vector<TensorLayout>& layouts,
                    const Target& target, std::uint32_t cores);

/// A table of every tensor with memory, dtype, shape, partitions, offset or address and sizes,
/// followed by the overlapping pairs and the memory use.
std::string format_allocation(const Program& program, const std::vector<TensorLayout>& layouts,
                              const Allocation& allocation, const Target& target);

}  // namespace trnsim::kernel
