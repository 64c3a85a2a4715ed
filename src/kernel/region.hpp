// A byte region of simulated memory that one instruction reads or writes: the unit of
// dependency tracking (docs/kernel-format.md section 9).
//
// SBUF/PSUM regions are a partition range x a byte pattern inside each partition; HBM regions are
// a byte pattern in one chip's HBM address space (partition range fixed to [0, 1)).
// The byte pattern is `count` runs of `run_bytes` bytes, the k-th starting at
// `byte_begin + k * stride_bytes` (count == 1: one contiguous run). A producer that cannot express
// an access exactly this way emits its bounding box (count == 1), which is conservative: it may
// order instructions that did not need ordering but never misses a true dependency.
#pragma once

#include <cstdint>

#include "address/memory_kind.hpp"

namespace trnsim::kernel {

using address::MemoryKind;

struct Region {
  MemoryKind memory = MemoryKind::kHbm;
  std::uint32_t space = 0;            ///< SBUF/PSUM: global core index; HBM: chip index
  std::uint32_t partition_begin = 0;  ///< first partition (on-chip); 0 for HBM
  std::uint32_t partition_end = 1;    ///< one past the last partition; 1 for HBM
  std::uint64_t byte_begin = 0;       ///< bytes: offset in partition (on-chip) or HBM address
  std::uint64_t run_bytes = 0;        ///< bytes in each run (> 0 for a non-empty region)
  std::uint64_t stride_bytes = 0;     ///< distance between run starts; >= run_bytes when count > 1
  std::uint64_t count = 1;            ///< number of runs (>= 1)

  /// One past the last byte touched in each partition.
  std::uint64_t byte_end() const { return byte_begin + (count - 1) * stride_bytes + run_bytes; }
  /// Bytes touched per partition.
  std::uint64_t bytes_per_partition() const { return count * run_bytes; }

  bool operator==(const Region&) const = default;
};

}  // namespace trnsim::kernel
