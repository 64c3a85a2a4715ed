#include "core/queued_instruction.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstring>
#include <type_traits>

namespace trnsim::core {

namespace {

using kernel::AccessPattern;
using kernel::Instruction;

// Packed layout: a fixed header (id u64, dependency count u32, engine u8, flags u8: kPlacedFlag,
// kOwnQueueFlag, kOwnKeyFlag; 2 bytes padding), then
//   dependencies                u64 x count
//   sequence, statement, source depth
//   loop values                 i64 x depth
//   placement                   when kPlacedFlag
//   the content, when the entry shares its family's template (held beside the bytes): the mask
//     of the used slots whose offset differs from the template's and those offsets (u64), the
//     DMA queue (u8) with kOwnQueueFlag, the content key (u64) with kOwnKeyFlag; else the
//     content itself:
//     opcode, pid, content_key, family_key, used-slot mask
//     per used slot: the pattern's fields up to its strides (all sizes), then rank strides
//     the instruction from num_reads to its end (derived numbers and attributes)
//   The tail is written as 8-byte words: a mask of the words that differ from a
//   default-constructed instruction's, then those words (most attributes and the immediates
//   are their defaults).
// The fetch time is kept beside the bytes too (engines set it while the entry waits).
constexpr std::size_t kPatternHead = offsetof(AccessPattern, strides);  // with all sizes
constexpr std::size_t kTail = offsetof(Instruction, num_reads);
static_assert(std::is_trivially_copyable_v<Instruction> && std::is_standard_layout_v<Instruction>);
static_assert(std::is_trivially_copyable_v<AccessPattern> &&
              std::is_standard_layout_v<AccessPattern>);
static_assert(offsetof(AccessPattern, sizes) < kPatternHead);
constexpr std::size_t kWordBytes = sizeof(std::uint64_t);
constexpr std::size_t kTailWords = (sizeof(Instruction) - kTail) / kWordBytes;
static_assert(kTail % kWordBytes == 0 && sizeof(Instruction) % kWordBytes == 0 && kTailWords <= 16,
              "the tail is whole words, its mask two bytes");
static_assert(offsetof(Instruction, num_writes) < kTail + kWordBytes,
              "the region counts are in the tail's first word");
static_assert(kernel::kSlotCount <= 8, "the used-slot mask is one byte");

/// Bytes of the source fields pack() writes after the producers (without loop values).
constexpr std::size_t kSourceBytes = sizeof(Instruction::sequence) +
                                     sizeof(kernel::SourceRef::statement) +
                                     sizeof(kernel::SourceRef::depth);
/// Bytes of the identity fields that open a content (with the used-slot mask).
constexpr std::size_t kIdentityBytes = sizeof(Instruction::opcode) + sizeof(Instruction::pid) +
                                       sizeof(Instruction::content_key) +
                                       sizeof(Instruction::family_key) + sizeof(std::uint8_t);

// Small copies are loops of fixed-size ones: a library memcpy call per field of variable length
// would cost more than the copy.
class Writer {
 public:
  explicit Writer(std::byte* at) : at_(at) {}
  template <typename T>
  void put(const T& value) {
    std::memcpy(at_, &value, sizeof(T));
    at_ += sizeof(T);
  }
  template <typename T>
  void put_each(const T* values, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) put(values[i]);
  }
  template <std::size_t Bytes>
  void put_fixed(const void* from) {
    std::memcpy(at_, from, Bytes);
    at_ += Bytes;
  }

 private:
  std::byte* at_;
};

class Reader {
 public:
  explicit Reader(const std::byte* at) : at_(at) {}
  template <typename T>
  void get(T& value) {
    std::memcpy(&value, at_, sizeof(T));
    at_ += sizeof(T);
  }
  template <typename T>
  void get_each(T* values, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) get(values[i]);
  }
  template <std::size_t Bytes>
  void get_fixed(void* to) {
    std::memcpy(to, at_, Bytes);
    at_ += Bytes;
  }
  void skip(std::size_t bytes) { at_ += bytes; }

 private:
  const std::byte* at_;
};

/// The tail's words as packed: the region counts cleared (unpack gives 0).
std::array<std::uint64_t, kTailWords> tail_words(const Instruction& instruction) {
  std::array<std::uint64_t, kTailWords> words;
  auto* bytes = reinterpret_cast<std::byte*>(words.data());
  std::memcpy(bytes, reinterpret_cast<const std::byte*>(&instruction) + kTail, sizeof(words));
  bytes[offsetof(Instruction, num_reads) - kTail] = std::byte{0};
  bytes[offsetof(Instruction, num_writes) - kTail] = std::byte{0};
  return words;
}

/// A default-constructed instruction's tail: what words left out of a packed tail stand for.
const std::array<std::uint64_t, kTailWords> kDefaultTail = tail_words(Instruction{});

/// Mask of the words of `words` that differ from the default tail's.
std::uint32_t differing_words(const std::array<std::uint64_t, kTailWords>& words) {
  std::uint32_t mask = 0;
  for (std::size_t w = 0; w < kTailWords; ++w) {
    if (words[w] != kDefaultTail[w]) mask |= 1u << w;
  }
  return mask;
}

/// The tail words of `instruction` that differ from the default's.
std::uint32_t tail_mask_of(const Instruction& instruction) {
  return differing_words(tail_words(instruction));
}

/// Writes the tail: `mask` = tail_mask_of(instruction), then the words it selects.
void put_tail(Writer& out, const Instruction& instruction, std::uint32_t mask) {
  const std::array<std::uint64_t, kTailWords> words = tail_words(instruction);
  out.put(static_cast<std::uint16_t>(mask));
  for (; mask != 0; mask &= mask - 1) out.put(words[std::countr_zero(mask)]);
}

/// Reads a tail put_tail() wrote into `instruction`.
void get_tail(Reader& in, Instruction& instruction) {
  std::uint16_t packed_mask = 0;
  in.get(packed_mask);
  auto* tail = reinterpret_cast<std::byte*>(&instruction) + kTail;
  std::memcpy(tail, kDefaultTail.data(), sizeof(kDefaultTail));
  for (unsigned mask = packed_mask; mask != 0; mask &= mask - 1) {
    in.get_fixed<kWordBytes>(tail + std::countr_zero(mask) * kWordBytes);
  }
}

/// Bytes of the content of `instruction` (everything but its sequence, source and regions),
/// `tail_mask` = tail_mask_of(instruction).
std::size_t content_size(const Instruction& instruction, std::uint32_t tail_mask) {
  std::size_t size = kIdentityBytes + sizeof(std::uint16_t) +
                     static_cast<std::size_t>(std::popcount(tail_mask)) * kWordBytes;
  for (const AccessPattern& pattern : instruction.operands) {
    if (!pattern.used()) continue;
    size += kPatternHead + pattern.rank * sizeof(std::int64_t);
  }
  return size;
}

void pack_content(Writer& out, const Instruction& instruction, std::uint32_t tail_mask) {
  std::uint8_t used_slots = 0;
  for (std::size_t slot = 0; slot < instruction.operands.size(); ++slot) {
    if (instruction.operands[slot].used()) used_slots |= static_cast<std::uint8_t>(1u << slot);
  }
  out.put(instruction.opcode);
  out.put(instruction.pid);
  out.put(instruction.content_key);
  out.put(instruction.family_key);
  out.put(used_slots);
  for (const AccessPattern& pattern : instruction.operands) {
    if (!pattern.used()) continue;
    out.put_fixed<kPatternHead>(&pattern);
    out.put_each(pattern.strides.data(), pattern.rank);
  }
  put_tail(out, instruction, tail_mask);
}

void unpack_content(Reader& in, Instruction& instruction) {
  std::uint8_t used_slots = 0;
  in.get(instruction.opcode);
  in.get(instruction.pid);
  in.get(instruction.content_key);
  in.get(instruction.family_key);
  in.get(used_slots);
  for (std::size_t slot = 0; slot < instruction.operands.size(); ++slot) {
    AccessPattern& pattern = instruction.operands[slot];
    if ((used_slots & (1u << slot)) == 0) {
      if (pattern.used()) pattern = AccessPattern{};
      continue;
    }
    in.get_fixed<kPatternHead>(&pattern);
    pattern.strides = {};
    in.get_each(pattern.strides.data(), pattern.rank);
  }
  get_tail(in, instruction);
}

}  // namespace

// ---- SharedContents ----------------------------------------------------------------------------

SharedContents::Content& SharedContents::acquire(const Instruction& instruction) {
  const auto [at, inserted] = contents_.try_emplace(instruction.family_key);
  Content& content = at->second;
  if (inserted) {
    const std::uint32_t tail_mask = tail_mask_of(instruction);
    content.bytes.resize(content_size(instruction, tail_mask));
    Writer out(content.bytes.data());
    pack_content(out, instruction, tail_mask);
    content.content_key = instruction.content_key;
    for (std::size_t slot = 0; slot < instruction.operands.size(); ++slot) {
      content.offsets[slot] = instruction.operands[slot].offset;
    }
    content.dma_queue = instruction.dma_queue;
  } else if (content.references == 0) {
    --unreferenced_;
  }
  ++content.references;
  return content;
}

void SharedContents::release(Content& content) {
  if (--content.references > 0) return;
  ++unreferenced_;
  if (unreferenced_ <= kKeptUnreferenced || unreferenced_ * 2 <= contents_.size()) return;
  std::erase_if(contents_, [](const auto& entry) { return entry.second.references == 0; });
  unreferenced_ = 0;
}

// ---- PackedInstruction -------------------------------------------------------------------------

namespace {

/// The used slots of `instruction` whose offset differs from `shared`'s template.
std::uint8_t moved_slots(const Instruction& instruction, const SharedContents::Content& shared) {
  std::uint8_t mask = 0;
  for (std::size_t slot = 0; slot < instruction.operands.size(); ++slot) {
    const AccessPattern& pattern = instruction.operands[slot];
    if (pattern.used() && pattern.offset != shared.offsets[slot]) {
      mask |= static_cast<std::uint8_t>(1u << slot);
    }
  }
  return mask;
}

}  // namespace

PackedInstruction::Layout PackedInstruction::layout_of(const QueuedInstruction& item,
                                                       SharedContents::Content* shared) {
  const Instruction& instruction = item.instruction;
  Layout layout;
  layout.shared = shared;
  layout.bytes = kHeaderBytes + item.dependencies.size() * sizeof(std::uint64_t) + kSourceBytes +
                 instruction.source.depth * sizeof(std::int64_t) +
                 (item.placement.empty() ? 0 : sizeof(PePlacement));
  if (shared == nullptr) {
    layout.tail_mask = tail_mask_of(instruction);
    layout.bytes += content_size(instruction, layout.tail_mask);
    return layout;
  }
  layout.moved = moved_slots(instruction, *shared);
  layout.own_queue = instruction.dma_queue != shared->dma_queue;
  layout.own_key = instruction.content_key != shared->content_key;
  layout.bytes += sizeof(std::uint8_t) +
                  static_cast<std::size_t>(std::popcount(layout.moved)) * sizeof(std::uint64_t) +
                  (layout.own_queue ? sizeof(instruction.dma_queue) : 0) +
                  (layout.own_key ? sizeof(instruction.content_key) : 0);
  return layout;
}

void PackedInstruction::pack(const QueuedInstruction& item, const Layout& layout) {
  const Instruction& instruction = item.instruction;
  fetched_at_ = item.fetched_at;
  shared_ = layout.shared;
  if (bytes_.size() < layout.bytes) {
    bytes_ = std::vector<std::byte>((layout.bytes + kStorageGranule - 1) / kStorageGranule *
                                    kStorageGranule);
  }

  Writer out(bytes_.data());
  out.put(item.id);
  out.put(static_cast<std::uint32_t>(item.dependencies.size()));
  out.put(instruction.engine);
  const bool placed = !item.placement.empty();
  out.put(static_cast<std::uint8_t>((placed ? kPlacedFlag : 0) |
                                    (layout.own_queue ? kOwnQueueFlag : 0) |
                                    (layout.own_key ? kOwnKeyFlag : 0)));
  out.put(std::uint16_t{0});  // padding to kHeaderBytes
  out.put_each(item.dependencies.data(), item.dependencies.size());
  out.put(instruction.sequence);
  out.put(instruction.source.statement);
  out.put(instruction.source.depth);
  out.put_each(instruction.source.loop_values.data(), instruction.source.depth);
  if (placed) out.put(item.placement);
  if (shared_ == nullptr) {
    pack_content(out, instruction, layout.tail_mask);
    return;
  }
  out.put(layout.moved);
  for (unsigned mask = layout.moved; mask != 0; mask &= mask - 1) {
    out.put(instruction.operands[std::countr_zero(mask)].offset);
  }
  if (layout.own_queue) out.put(instruction.dma_queue);
  if (layout.own_key) out.put(instruction.content_key);
}

void PackedInstruction::unpack(QueuedInstruction& to) const {
  Instruction& instruction = to.instruction;
  Reader in(bytes_.data());
  in.get(to.id);
  to.fetched_at = fetched_at_;
  std::uint32_t dependencies = 0;
  in.get(dependencies);
  in.get(instruction.engine);
  std::uint8_t flags = 0;
  in.get(flags);
  in.skip(sizeof(std::uint16_t));  // padding to kHeaderBytes
  to.dependencies.clear();
  for (std::uint32_t i = 0; i < dependencies; ++i) {
    std::uint64_t producer = 0;
    in.get(producer);
    to.dependencies.push_back(producer);
  }
  in.get(instruction.sequence);
  in.get(instruction.source.statement);
  in.get(instruction.source.depth);
  instruction.source.loop_values = {};  // a fixed-size store: cheaper than zeroing past depth
  in.get_each(instruction.source.loop_values.data(), instruction.source.depth);
  to.placement = PePlacement{};
  if ((flags & kPlacedFlag) != 0) in.get(to.placement);
  if (shared_ == nullptr) {
    unpack_content(in, instruction);
    return;
  }
  Reader shared(shared_->bytes.data());
  unpack_content(shared, instruction);
  std::uint8_t moved = 0;
  in.get(moved);
  for (unsigned mask = moved; mask != 0; mask &= mask - 1) {
    in.get(instruction.operands[std::countr_zero(mask)].offset);
  }
  if ((flags & kOwnQueueFlag) != 0) in.get(instruction.dma_queue);
  if ((flags & kOwnKeyFlag) != 0) in.get(instruction.content_key);
}

void PackedInstruction::release(SharedContents& contents) {
  if (shared_ == nullptr) return;
  contents.release(*shared_);
  shared_ = nullptr;
}

// ---- EntryPool ---------------------------------------------------------------------------------

PackedInstruction EntryPool::pack(const QueuedInstruction& item) {
  SharedContents::Content* shared =
      item.instruction.family_key != 0 ? &contents_.acquire(item.instruction) : nullptr;
  const PackedInstruction::Layout layout = PackedInstruction::layout_of(item, shared);
  PackedInstruction entry = take(layout.bytes);
  entry.pack(item, layout);
  return entry;
}

PackedInstruction EntryPool::take(std::size_t bytes) {
  const std::size_t size_class =
      (bytes + PackedInstruction::kStorageGranule - 1) / PackedInstruction::kStorageGranule;
  for (std::size_t c = size_class; c < std::min(size_class + 2, spares_.size()); ++c) {
    if (spares_[c].empty()) continue;
    PackedInstruction entry = std::move(spares_[c].back());
    spares_[c].pop_back();
    return entry;
  }
  return {};
}

void EntryPool::give(PackedInstruction&& entry) {
  entry.release(contents_);
  if (!entry.holds_storage()) return;
  const std::size_t size_class = entry.storage_bytes() / PackedInstruction::kStorageGranule;
  if (spares_.size() <= size_class) spares_.resize(size_class + 1);
  spares_[size_class].push_back(std::move(entry));
}

std::size_t EntryPool::spare_count() const {
  std::size_t count = 0;
  for (const auto& spares : spares_) count += spares.size();
  return count;
}

}  // namespace trnsim::core
