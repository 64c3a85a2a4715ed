#include "numerics/memory_image.hpp"

#include <algorithm>
#include <cstring>

namespace trnsim::numerics {

std::size_t MemoryImage::PageKeyHash::operator()(const PageKey& key) const {
  std::uint64_t h = key.page * 0x9E3779B97F4A7C15ull;
  h ^= (static_cast<std::uint64_t>(key.space.memory) << 56) ^
       (static_cast<std::uint64_t>(key.space.space) << 24) ^ key.space.partition;
  return static_cast<std::size_t>(h ^ (h >> 29));
}

const MemoryImage::Page* MemoryImage::find(const PageKey& key) const {
  const auto it = pages_.find(key);
  return it == pages_.end() ? nullptr : it->second.get();
}

MemoryImage::Page& MemoryImage::page(const PageKey& key) {
  std::unique_ptr<Page>& slot = pages_[key];
  if (!slot) slot = std::make_unique<Page>();
  return *slot;
}

void MemoryImage::write(const SpaceKey& key, std::uint64_t address,
                        std::span<const std::uint8_t> bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const std::uint64_t at = address + done;
    const std::uint64_t within = at % kPageBytes;
    const std::size_t piece =
        static_cast<std::size_t>(std::min<std::uint64_t>(kPageBytes - within, bytes.size() - done));
    Page& target = page(PageKey{key, at / kPageBytes});
    std::memcpy(target.data + within, bytes.data() + done, piece);
    for (std::uint64_t b = within; b < within + piece; ++b) {
      target.written[b / 64] |= std::uint64_t{1} << (b % 64);
    }
    done += piece;
  }
}

std::optional<std::uint64_t> MemoryImage::read(const SpaceKey& key, std::uint64_t address,
                                               std::span<std::uint8_t> out) const {
  std::optional<std::uint64_t> first_unwritten;
  std::size_t done = 0;
  while (done < out.size()) {
    const std::uint64_t at = address + done;
    const std::uint64_t within = at % kPageBytes;
    const std::size_t piece =
        static_cast<std::size_t>(std::min<std::uint64_t>(kPageBytes - within, out.size() - done));
    const Page* source = find(PageKey{key, at / kPageBytes});
    if (source == nullptr) {
      std::memset(out.data() + done, 0, piece);
      if (!first_unwritten) first_unwritten = at;
    } else {
      std::memcpy(out.data() + done, source->data + within, piece);
      if (!first_unwritten) {
        for (std::uint64_t b = within; b < within + piece; ++b) {
          if ((source->written[b / 64] >> (b % 64) & 1) == 0) {
            first_unwritten = at + (b - within);
            break;
          }
        }
      }
    }
    done += piece;
  }
  return first_unwritten;
}

}  // namespace trnsim::numerics
