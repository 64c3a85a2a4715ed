// Region builders shared by the dependency-tracker tests.
#pragma once

#include <cstdint>

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

}  // namespace trnsim::deps::test_regions
