// The memories a kernel, the DMA fabric and the memory models name: the vocabulary they share,
// below all of them.
#pragma once

#include <cstdint>
#include <string_view>

namespace trnsim::address {

/// HBM (per chip), and each NeuronCore's SBUF and PSUM.
enum class MemoryKind : std::uint8_t { kHbm = 0, kSbuf = 1, kPsum = 2 };

/// "hbm", "sbuf" or "psum", as kernels, traces and profiles spell them.
constexpr std::string_view memory_kind_name(MemoryKind memory) {
  switch (memory) {
    case MemoryKind::kHbm:
      return "hbm";
    case MemoryKind::kSbuf:
      return "sbuf";
    case MemoryKind::kPsum:
      return "psum";
  }
  return "?";
}

}  // namespace trnsim::address
