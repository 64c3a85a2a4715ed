// The DMA fabric's physical address map: every address a DMA engine puts on its TLM socket
// carries the memory kind (HBM, SBUF, PSUM) and the space (global HBM stack index, or global core
// index for SBUF/PSUM) in its upper bits and the byte address inside that memory in the lower 40
// bits. The interconnect routes on the upper bits and hands the target the local address.
// Leaves out: address translation, protection, host memory.
#pragma once

#include <cstdint>

#include "address/memory_kind.hpp"

namespace trnsim::address {

inline constexpr unsigned kLocalAddressBits = 40;  ///< 1 TiB per stack / per on-chip memory
inline constexpr unsigned kSpaceBits = 20;
inline constexpr std::uint64_t kLocalAddressMask = (std::uint64_t{1} << kLocalAddressBits) - 1;
inline constexpr std::uint64_t kSpaceMask = (std::uint64_t{1} << kSpaceBits) - 1;

struct FabricAddress {
  MemoryKind memory = MemoryKind::kHbm;
  std::uint32_t space = 0;  ///< HBM: global stack index; SBUF/PSUM: global core index
  std::uint64_t local = 0;  ///< byte address inside that memory (< 2^40)
};

constexpr std::uint64_t encode(MemoryKind memory, std::uint32_t space, std::uint64_t local) {
  return (static_cast<std::uint64_t>(memory) << (kLocalAddressBits + kSpaceBits)) |
         ((static_cast<std::uint64_t>(space) & kSpaceMask) << kLocalAddressBits) |
         (local & kLocalAddressMask);
}

constexpr FabricAddress decode(std::uint64_t address) {
  return {static_cast<MemoryKind>(address >> (kLocalAddressBits + kSpaceBits)),
          static_cast<std::uint32_t>((address >> kLocalAddressBits) & kSpaceMask),
          address & kLocalAddressMask};
}

}  // namespace trnsim::address
