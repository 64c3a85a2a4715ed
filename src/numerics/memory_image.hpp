// The contents of a simulated system's memories for functional execution: every HBM (per chip),
// SBUF and PSUM (per core and partition) as bytes, with a record of which bytes were ever
// written, so that a read of memory nothing wrote can be reported.
//
// Storage is sparse: pages of kPageBytes bytes come into existence on their first write; a read
// of a page that does not exist yields zero bytes, all of them unwritten. Addresses are the ones
// kernel::AccessPattern carries: on-chip, a byte offset inside a partition; HBM, a byte address
// of the chip's HBM.
// Leaves out: capacity checks (the kernel's allocation already did them) and timing.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>

#include "kernel/region.hpp"

namespace trnsim::numerics {

/// One address space: a memory of one chip (HBM) or one partition of a core (SBUF, PSUM).
struct SpaceKey {
  kernel::MemoryKind memory = kernel::MemoryKind::kHbm;
  std::uint32_t space = 0;      ///< HBM: chip index; SBUF/PSUM: global core index
  std::uint32_t partition = 0;  ///< SBUF/PSUM: partition; HBM: 0
  bool operator==(const SpaceKey&) const = default;
};

class MemoryImage {
 public:
  static constexpr std::uint64_t kPageBytes = 4096;

  /// Stores `bytes` at `address` of `key` and marks them written.
  void write(const SpaceKey& key, std::uint64_t address, std::span<const std::uint8_t> bytes);

  /// Fills `out` with the bytes at `address` of `key` (zero where never written). Returns the
  /// address of the first byte in the range that was never written, if any.
  std::optional<std::uint64_t> read(const SpaceKey& key, std::uint64_t address,
                                    std::span<std::uint8_t> out) const;

  /// Bytes of memory the image holds (pages times kPageBytes).
  std::uint64_t resident_bytes() const { return pages_.size() * kPageBytes; }

 private:
  struct Page {
    std::uint8_t data[kPageBytes] = {};
    std::uint64_t written[kPageBytes / 64] = {};  ///< bit i of word w: byte 64 w + i written
  };
  struct PageKey {
    SpaceKey space;
    std::uint64_t page = 0;  ///< address / kPageBytes
    bool operator==(const PageKey&) const = default;
  };
  struct PageKeyHash {
    std::size_t operator()(const PageKey& key) const;
  };
  const Page* find(const PageKey& key) const;
  Page& page(const PageKey& key);

  std::unordered_map<PageKey, std::unique_ptr<Page>, PageKeyHash> pages_;
  /// The page found last (pages never move or disappear): runs of accesses stay on one page.
  mutable PageKey cached_key_;
  mutable Page* cached_page_ = nullptr;
};

}  // namespace trnsim::numerics
