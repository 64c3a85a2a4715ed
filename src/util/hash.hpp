// Content hashes for provenance (kernel and config identity in stats, sweeps and baselines).
// FNV-1a 64-bit: stable across platforms and builds; not cryptographic.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace trnsim::util {

constexpr std::uint64_t fnv1a64(std::string_view data, std::uint64_t hash = 0xcbf29ce484222325ULL) {
  for (const char c : data) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

/// 16 lowercase hex digits.
inline std::string hex64(std::uint64_t value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, value >>= 4)
    out[static_cast<std::size_t>(i)] = kDigits[value & 0xF];
  return out;
}

}  // namespace trnsim::util
