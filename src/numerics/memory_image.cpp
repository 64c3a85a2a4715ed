#include "numerics/memory_image.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace trnsim::numerics {

namespace {

/// Bits [begin, end) of one 64-bit word's range, as a mask (end - begin in 1..64).
std::uint64_t bit_mask(std::uint64_t begin, std::uint64_t end) {
  const std::uint64_t width = end - begin;
  return (width == 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << width) - 1)) << begin;
}

/// Sets the bits of bytes [begin, end) of a page.
void mark_written(std::uint64_t* words, std::uint64_t begin, std::uint64_t end) {
  while (begin < end) {
    const std::uint64_t word = begin / 64;
    const std::uint64_t stop = std::min(end, (word + 1) * 64);
    words[word] |= bit_mask(begin % 64, stop - word * 64);
    begin = stop;
  }
}

/// The first byte of [begin, end) of a page whose bit is clear, or `end`.
std::uint64_t first_clear_byte(const std::uint64_t* words, std::uint64_t begin, std::uint64_t end) {
  while (begin < end) {
    const std::uint64_t word = begin / 64;
    const std::uint64_t stop = std::min(end, (word + 1) * 64);
    const std::uint64_t missing = ~words[word] & bit_mask(begin % 64, stop - word * 64);
    if (missing != 0) return word * 64 + static_cast<std::uint64_t>(std::countr_zero(missing));
    begin = stop;
  }
  return end;
}

}  // namespace

std::size_t MemoryImage::PageKeyHash::operator()(const PageKey& key) const {
  std::uint64_t h = key.page * 0x9E3779B97F4A7C15ull;
  h ^= (static_cast<std::uint64_t>(key.space.memory) << 56) ^
       (static_cast<std::uint64_t>(key.space.space) << 24) ^ key.space.partition;
  return static_cast<std::size_t>(h ^ (h >> 29));
}

const MemoryImage::Page* MemoryImage::find(const PageKey& key) const {
  if (cached_page_ != nullptr && cached_key_ == key) return cached_page_;
  const auto it = pages_.find(key);
  if (it == pages_.end()) return nullptr;
  cached_key_ = key;
  cached_page_ = it->second.get();
  return cached_page_;
}

MemoryImage::Page& MemoryImage::page(const PageKey& key) {
  if (cached_page_ != nullptr && cached_key_ == key) return *cached_page_;
  std::unique_ptr<Page>& slot = pages_[key];
  if (!slot) slot = std::make_unique<Page>();
  cached_key_ = key;
  cached_page_ = slot.get();
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
    mark_written(target.written, within, within + piece);
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
        const std::uint64_t missing = first_clear_byte(source->written, within, within + piece);
        if (missing < within + piece) first_unwritten = at + (missing - within);
      }
    }
    done += piece;
  }
  return first_unwritten;
}

}  // namespace trnsim::numerics
