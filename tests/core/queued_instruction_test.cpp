// Queue entries at rest: packing and unpacking gives back every field of the instruction except
// its dependency regions, with the id, producers, placement and fetch time, also when entries of
// instructions with the same content key share their content; the stream FIFO keeps order and
// reuses its core's entries.
#include "core/queued_instruction.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "../kernel/test_support.hpp"

namespace trnsim::core {
namespace {

using kernel::Instruction;

/// Instructions of every example kernel (the first 200 of core 0 on trn3, those the generation
/// runs), one list per kernel: content keys are those of one core's stream.
std::vector<std::vector<Instruction>> example_streams() {
  const std::string dir = std::string(TRNSIM_SOURCE_DIR) + "/examples/kernels";
  std::vector<std::vector<Instruction>> streams;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    try {
      const kernel::PreparedKernel prepared =
          kernel::prepare_kernel(std::make_shared<const kernel::Program>(
                                     kernel::parse_program_file(entry.path().string())),
                                 kernel::testing::trn3_target());
      kernel::InstructionStream stream(prepared, 0);
      std::vector<Instruction>& sample = streams.emplace_back();
      Instruction next;
      for (int i = 0; i < 200 && stream.next(next); ++i) sample.push_back(next);
    } catch (const InputError&) {
      continue;  // not for this generation
    }
  }
  return streams;
}

/// example_streams() one after the other.
std::vector<Instruction> example_instructions() {
  std::vector<Instruction> sample;
  for (const std::vector<Instruction>& stream : example_streams()) {
    sample.insert(sample.end(), stream.begin(), stream.end());
  }
  return sample;
}

/// `instruction` as unpacking gives it back: without dependency regions.
Instruction without_regions(Instruction instruction) {
  instruction.reads = {};
  instruction.writes = {};
  instruction.num_reads = 0;
  instruction.num_writes = 0;
  return instruction;
}

QueuedInstruction queued(const Instruction& instruction, std::size_t index) {
  QueuedInstruction item;
  item.instruction = instruction;
  item.id = 1000 + index;
  item.fetched_at = sc_core::sc_time::from_value(7 * index);
  for (std::size_t d = 0; d < index % 13; ++d) item.dependencies.push_back(index * 31 + d);
  if (index % 3 == 1) item.placement = PePlacement{false, 5, 2, 3};
  if (index % 3 == 2) item.placement = PePlacement{true, 0, 0, 0};
  return item;
}

TEST(PackedInstruction, UnpackGivesBackEverythingButTheRegions) {
  std::size_t total = 0;
  std::size_t with_regions = 0;
  std::size_t keyed = 0;
  std::size_t shifted = 0;  // built by moving a full build's addresses: a family, no content key
  std::size_t contents = 0;
  for (const std::vector<Instruction>& sample : example_streams()) {
    // All packed first, then all unpacked: entries of the same key share one content meanwhile.
    EntryPool pool;  // a core's: one stream
    std::vector<PackedInstruction> packed;
    for (std::size_t i = 0; i < sample.size(); ++i) {
      const QueuedInstruction item = queued(sample[i], i);
      with_regions += item.instruction.num_reads + item.instruction.num_writes > 0 ? 1 : 0;
      keyed += item.instruction.family_key != 0 ? 1 : 0;
      shifted += item.instruction.family_key != 0 && item.instruction.content_key == 0 ? 1 : 0;
      packed.push_back(pool.pack(item));
      EXPECT_EQ(packed.back().storage_bytes() % PackedInstruction::kStorageGranule, 0u);
    }
    contents += pool.contents().size();
    QueuedInstruction to;  // reused, as a ring's front is: it holds the previous one
    for (std::size_t i = 0; i < sample.size(); ++i) {
      const QueuedInstruction item = queued(sample[i], i);
      const PackedInstruction& entry = packed[i];
      EXPECT_EQ(entry.id(), item.id);
      EXPECT_EQ(entry.engine(), item.instruction.engine);
      ASSERT_EQ(entry.dependency_count(), item.dependencies.size());
      for (std::size_t d = 0; d < item.dependencies.size(); ++d) {
        EXPECT_EQ(entry.dependency(d), item.dependencies[d]);
      }
      entry.unpack(to);
      ASSERT_TRUE(to.instruction == without_regions(item.instruction))
          << "instruction " << total + i;
      EXPECT_TRUE(kernel::is_compact(to.instruction));
      EXPECT_EQ(to.id, item.id);
      EXPECT_EQ(to.fetched_at, item.fetched_at);
      EXPECT_EQ(to.dependencies, item.dependencies);
      EXPECT_EQ(to.placement.background, item.placement.background);
      EXPECT_EQ(to.placement.first_cell, item.placement.first_cell);
      EXPECT_EQ(to.placement.cell_rows, item.placement.cell_rows);
      EXPECT_EQ(to.placement.cell_cols, item.placement.cell_cols);
    }
    // Given back, the entries release their contents: at most the few kept for reuse remain.
    for (PackedInstruction& entry : packed) pool.give(std::move(entry));
    EXPECT_LE(pool.contents().size(), 64u);
    EXPECT_EQ(pool.spare_count(), sample.size());
    total += sample.size();
  }
  EXPECT_GE(total, 1000u);
  EXPECT_EQ(with_regions, total);  // every example instruction had regions to drop
  EXPECT_GT(keyed, 100u);
  EXPECT_GT(shifted, 10u);
  EXPECT_LT(contents, keyed);  // keys recur: contents are shared
}

TEST(PackedInstruction, SharedContentsOutliveTheirKeyAndAreReused) {
  // A keyed instruction packed, given back, packed again: the table holds one content, and an
  // instruction of another key after many released ones sweeps the unreferenced ones out.
  const std::vector<Instruction> sample = example_instructions();
  EntryPool pool;
  Instruction keyed;
  for (const Instruction& instruction : sample) {
    if (instruction.family_key != 0) {
      keyed = instruction;
      break;
    }
  }
  ASSERT_NE(keyed.family_key, 0u);
  for (int round = 0; round < 3; ++round) {
    PackedInstruction entry = pool.pack(queued(keyed, 1));
    EXPECT_EQ(pool.contents().size(), 1u);
    pool.give(std::move(entry));
  }
  for (std::uint64_t key = 1; key <= 200; ++key) {
    Instruction other = keyed;
    other.family_key = keyed.family_key + key;
    PackedInstruction entry = pool.pack(queued(other, 1));
    QueuedInstruction to;
    entry.unpack(to);
    EXPECT_EQ(to.instruction.family_key, other.family_key);
    pool.give(std::move(entry));
  }
  EXPECT_LE(pool.contents().size(), 65u);  // swept, not 201
}

TEST(PackedInstruction, IsAFractionOfTheWorkingForm) {
  // A matmul with three operands and two producers: the storage its packed form takes (what
  // pack() reserves, an upper bound of the packed bytes) is under half the working form's with
  // its own content, and under a tenth with a shared one.
  const std::vector<Instruction> sample = example_instructions();
  for (const Instruction& instruction : sample) {
    if (instruction.opcode != kernel::Opcode::kNcMatmul || instruction.family_key == 0) {
      continue;
    }
    QueuedInstruction item;
    item.instruction = instruction;
    item.dependencies = {1, 2};
    EntryPool pool;
    InstructionRing ring(pool);
    ring.push_back(item);
    item.instruction.family_key = 0;
    ring.push_back(item);
    PackedInstruction shared = ring.take_front();
    ring.pop_front();
    PackedInstruction own = ring.take_front();
    EXPECT_LT(own.storage_bytes(), sizeof(QueuedInstruction) / 2);
    EXPECT_LT(shared.storage_bytes(), sizeof(QueuedInstruction) / 10);
    return;
  }
  FAIL() << "no keyed matmul in the examples";
}

TEST(InstructionRing, KeepsOrderAndReusesTheCoresEntries) {
  const std::vector<Instruction> sample = example_instructions();
  EntryPool pool;
  InstructionRing ring(pool);
  // Up to 40 in the FIFO at once, 200 through it; every fourth taken out as a DMA would be.
  std::size_t pushed = 0;
  std::size_t popped = 0;
  std::vector<PackedInstruction> taken;
  while (popped < 200) {
    for (; pushed < 200 && ring.size() < 40; ++pushed)
      ring.push_back(queued(sample[pushed], pushed));
    ring.set_fetched_at(1, sc_core::sc_time::from_value(99));
    QueuedInstruction& front = ring.front();
    ASSERT_EQ(front.id, 1000 + popped);
    ASSERT_TRUE(front.instruction == without_regions(sample[popped]));
    if (popped > 0) {
      EXPECT_EQ(front.fetched_at, sc_core::sc_time::from_value(99));
    }
    ring.set_fetched_at(0, sc_core::sc_time::from_value(5));
    EXPECT_EQ(ring.front().fetched_at, sc_core::sc_time::from_value(5));
    if (popped % 4 == 3) {
      taken.push_back(ring.take_front());
      EXPECT_EQ(taken.back().id(), 1000 + popped);
    }
    ring.pop_front();
    ++popped;
  }
  EXPECT_TRUE(ring.empty());
  // The entries came back to the pool: at most the 40 that were in the FIFO at once, less the
  // 50 taken out.
  EXPECT_LE(pool.spare_count(), 40u);
  EXPECT_GT(pool.spare_count(), 0u);
}

}  // namespace
}  // namespace trnsim::core

// libsystemc.so refers to sc_main (its own main() calls it); gtest_main provides main(), so this
// is never called.
extern "C" int sc_main(int /*argc*/, char* /*argv*/[]) {
  return 1;
}
