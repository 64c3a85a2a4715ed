// Region builders shared by the dependency-tracker tests.
#pragma once

#include <cstdint>
#include <random>

#include "kernel/region.hpp"

namespace trnsim::deps::test_regions {

/// SBUF region of core `space`: partitions [p0, p1), `count` runs of `run` bytes every `stride`.
inline kernel::Region sbuf(std::uint32_t p0, std::uint32_t p1, std::uint64_t begin,
                           std::uint64_t run, std::uint64_t stride = 0, std::uint64_t count = 1,
                           std::uint32_t space = 0) {
  return {kernel::MemoryKind::kSbuf, space, p0, p1, begin, run, stride, count};
}

inline kernel::Region psum(std::uint32_t p0, std::uint32_t p1, std::uint64_t begin,
                           std::uint64_t run, std::uint32_t space = 0) {
  return {kernel::MemoryKind::kPsum, space, p0, p1, begin, run, 0, 1};
}

inline kernel::Region hbm(std::uint64_t begin, std::uint64_t run, std::uint64_t stride = 0,
                          std::uint64_t count = 1, std::uint32_t chip = 0) {
  return {kernel::MemoryKind::kHbm, chip, 0, 1, begin, run, stride, count};
}

/// Uniform integer in [lo, hi] (inclusive).
inline std::uint64_t uniform(std::mt19937_64& rng, std::uint64_t lo, std::uint64_t hi) {
  return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng);
}

/// A memory kind drawn with weights out of 10: `sbuf_tenths` SBUF, `psum_tenths` PSUM, the
/// rest HBM.
inline kernel::MemoryKind random_memory(std::mt19937_64& rng, std::uint64_t sbuf_tenths,
                                        std::uint64_t psum_tenths) {
  const std::uint64_t pick = uniform(rng, 0, 9);
  return pick < sbuf_tenths                 ? kernel::MemoryKind::kSbuf
         : pick < sbuf_tenths + psum_tenths ? kernel::MemoryKind::kPsum
                                            : kernel::MemoryKind::kHbm;
}

}  // namespace trnsim::deps::test_regions
