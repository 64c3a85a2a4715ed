#include "core/queued_instruction.hpp"

#include <cstddef>
#include <cstring>
#include <type_traits>

namespace trnsim::core {

namespace {

using kernel::AccessPattern;
using kernel::Instruction;

// Packed layout: a fixed header (id u64, dependency count u32, engine u8, flags u8 with bit 0
// set when a PE placement follows, 2 bytes padding), then
//   dependencies                u64 x count
//   opcode, pid, sequence, statement, content_key, source depth, used-slot mask
//   loop values                 i64 x depth
//   placement                   when flagged
//   per used slot: the pattern's fields up to its strides (all sizes), then rank strides
//   the instruction from num_reads to its end (derived numbers and attributes)
// The fetch time is kept beside the bytes (engines set it while the entry waits).
constexpr std::size_t kPatternHead = offsetof(AccessPattern, strides);  // with all sizes
constexpr std::size_t kTail = offsetof(Instruction, num_reads);
static_assert(std::is_trivially_copyable_v<Instruction> && std::is_standard_layout_v<Instruction>);
static_assert(std::is_trivially_copyable_v<AccessPattern> &&
              std::is_standard_layout_v<AccessPattern>);
static_assert(offsetof(AccessPattern, sizes) < kPatternHead);
static_assert(kernel::kSlotCount <= 8, "the used-slot mask is one byte");

/// Bytes of the identity fields pack() writes after the producers (with the used-slot mask).
constexpr std::size_t kIdentityBytes =
    sizeof(Instruction::opcode) + sizeof(Instruction::pid) + sizeof(Instruction::sequence) +
    sizeof(kernel::SourceRef::statement) + sizeof(Instruction::content_key) +
    sizeof(kernel::SourceRef::depth) + sizeof(std::uint8_t);

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

}  // namespace

std::size_t PackedInstruction::packed_size(const QueuedInstruction& item) {
  std::size_t size = kHeaderBytes + item.dependencies.size() * sizeof(std::uint64_t) +
                     kIdentityBytes + item.instruction.source.depth * sizeof(std::int64_t) +
                     sizeof(PePlacement) + (sizeof(Instruction) - kTail);
  for (const AccessPattern& pattern : item.instruction.operands) {
    if (pattern.used()) size += kPatternHead + pattern.rank * sizeof(std::int64_t);
  }
  return size;
}

void PackedInstruction::pack(const QueuedInstruction& item) {
  const Instruction& instruction = item.instruction;
  fetched_at_ = item.fetched_at;
  const std::size_t size = packed_size(item);
  if (bytes_.size() < size) bytes_.resize(size);

  Writer out(bytes_.data());
  out.put(item.id);
  out.put(static_cast<std::uint32_t>(item.dependencies.size()));
  out.put(instruction.engine);
  const bool placed = !item.placement.empty();
  out.put(static_cast<std::uint8_t>(placed ? 1 : 0));
  out.put(std::uint16_t{0});  // padding to kHeaderBytes
  out.put_each(item.dependencies.data(), item.dependencies.size());

  std::uint8_t used_slots = 0;
  for (std::size_t slot = 0; slot < instruction.operands.size(); ++slot) {
    if (instruction.operands[slot].used()) used_slots |= static_cast<std::uint8_t>(1u << slot);
  }
  out.put(instruction.opcode);
  out.put(instruction.pid);
  out.put(instruction.sequence);
  out.put(instruction.source.statement);
  out.put(instruction.content_key);
  out.put(instruction.source.depth);
  out.put(used_slots);
  out.put_each(instruction.source.loop_values.data(), instruction.source.depth);
  if (placed) out.put(item.placement);
  for (const AccessPattern& pattern : instruction.operands) {
    if (!pattern.used()) continue;
    out.put_fixed<kPatternHead>(&pattern);
    out.put_each(pattern.strides.data(), pattern.rank);
  }
  out.put_fixed<sizeof(Instruction) - kTail>(reinterpret_cast<const std::byte*>(&instruction) +
                                             kTail);
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

  std::uint8_t used_slots = 0;
  in.get(instruction.opcode);
  in.get(instruction.pid);
  in.get(instruction.sequence);
  in.get(instruction.source.statement);
  in.get(instruction.content_key);
  in.get(instruction.source.depth);
  in.get(used_slots);
  instruction.source.loop_values = {};  // a fixed-size store: cheaper than zeroing past depth
  in.get_each(instruction.source.loop_values.data(), instruction.source.depth);
  to.placement = PePlacement{};
  if ((flags & 1) != 0) in.get(to.placement);
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
  in.get_fixed<sizeof(Instruction) - kTail>(reinterpret_cast<std::byte*>(&instruction) + kTail);
  instruction.num_reads = 0;
  instruction.num_writes = 0;
}

}  // namespace trnsim::core
