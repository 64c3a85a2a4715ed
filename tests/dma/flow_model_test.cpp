// Contracts of the flow-level DMA model (dma.model = flow, src/dma/flow_model.hpp), with times
// worked out by hand from its documented rules: per engine, a round-robin round moves one packet
// p_j = min(descriptor bytes, dma.packet_bytes) of every ready item and takes
// sum p_j / r while the engine's descriptor unit has descriptors prefetched and
// max(sum p_j / r, sum of their descriptor time) once they are spent, the unit working ahead at
// one descriptor per 25 ns whenever it has descriptors to process (up to dma.descriptor_prefetch),
// shared caps scale the items they carry once their burst allowance is spent, a queue moves its
// DMAs in order.
// Parameters are flow_pinned (trn2 values): latency 450 ns, 25 ns per descriptor, 8 descriptors of
// prefetch, 23 B/ns per engine. SBUF -> SBUF copies keep HBM out of the way. Each TEST
// elaborates once (gtest_discover_tests runs every TEST in its own process).
#include "dma/flow_model.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "dma_test_support.hpp"

namespace trnsim::dma::test {
namespace {

config::Params flow_pinned(std::vector<std::string> more = {}) {
  std::vector<std::string> overrides = {"dma.model=flow",
                                        "dma.fixed_cost_ns=450",
                                        "dma.descriptor_overhead_ns=25",
                                        "dma.engine_bandwidth_gbps=23",
                                        "dma.descriptor_prefetch=8",
                                        "dma.packet_bytes=4096"};
  overrides.insert(overrides.end(), more.begin(), more.end());
  return builtin("trn2", overrides);
}

/// An SBUF -> SBUF copy of `rows` partitions x `bytes_per_row` (bf16), one descriptor per row;
/// up to 8 rows stay on engine 0.
Instruction copy(std::uint32_t rows, std::uint32_t bytes_per_row, std::uint8_t queue) {
  return dma_copy(sbuf(DType::kBFloat16, rows, {bytes_per_row / 2}, 65536),
                  sbuf(DType::kBFloat16, rows, {bytes_per_row / 2}), queue);
}

TEST(FlowModel, RoundRobinMovesOnePacketPerQueueAndTurn) {
  // A: 4 rows of 2,048 B on queue 0 (4 packets of 2,048 B), B: 8 rows of 256 B on queue 1
  // (8 packets of 256 B), both on engine 0, issued at 0, ready at 450 (descriptors prefetched:
  // 450 / 25 = 18 >= 8). A round takes (2,048 + 256) / 23 = 100.17 ns; after 4 rounds
  // (400.7 ns) A is done at 850.7, B has moved 1,024 B and moves its last 1,024 B alone at
  // 23 B/ns: 44.5 ns more, done at 895.2. (Equal time shares would give A 1,016.5.)
  FlowLevelDma system("memory", flow_pinned(), 1);
  Testbench bench("bench", system);
  const std::uint64_t a = bench.add(0, 0, copy(4, 2048, 0));
  const std::uint64_t b = bench.add(0, 0, copy(8, 256, 1));
  bench.run_all();
  EXPECT_NEAR(bench.completion(a).complete_ns, 850.7, 0.1);
  EXPECT_NEAR(bench.completion(b).complete_ns, 895.2, 0.1);
}

TEST(FlowModel, StrictPriorityServesTheHigherClassFirst) {
  // dma.arbitration strict_priority with 4 classes of 4 queues: A (queue 4, class 1) and B
  // (queue 0, class 0), 4 rows of 2,048 B each on engine 0, issued at 0 and ready at 450. B
  // moves alone: 450 + 8,192 / 23 = 806.17; A waits for it, then moves its 8,192 B:
  // 1,162.35, with its first data at 806.17 (transfer 356.17 ns). Round robin would finish
  // both at about 1,162.
  FlowLevelDma system(
      "memory", flow_pinned({"dma.arbitration=strict_priority", "dma.priority_classes=4"}), 1);
  Testbench bench("bench", system);
  const std::uint64_t a = bench.add(0, 0, copy(4, 2048, 4));
  const std::uint64_t b = bench.add(0, 0, copy(4, 2048, 0));
  bench.run_all();
  EXPECT_NEAR(bench.completion(b).complete_ns, 806.17, 0.01);
  EXPECT_NEAR(bench.completion(a).complete_ns, 1162.35, 0.01);
  EXPECT_NEAR(bench.completion(a).transfer_ns, 356.17, 0.01);
}

TEST(FlowModel, DescriptorsBeyondThePrefetchBindSmallCopies) {
  // With one descriptor of prefetch, an 8-row copy of 64 B rows has 7 descriptors left for the
  // data phase: 7 x 25 = 175 ns against 512 / 23 = 22.3 ns of data, so it moves at
  // 512 / 175 B/ns and completes at 450 + 175 = 625.
  FlowLevelDma system("memory", flow_pinned({"dma.descriptor_prefetch=1"}), 1);
  Testbench bench("bench", system);
  const std::uint64_t c = bench.add(0, 0, copy(8, 64, 0));
  bench.run_all();
  EXPECT_NEAR(bench.completion(c).complete_ns, 625.0, 0.1);
}

TEST(FlowModel, AnEnginesDmasShareItsDescriptorPrefetch) {
  // Two 8-row copies of 64 B rows on queue 0, issued at 0: 16 descriptors. The unit prefetches 8
  // by 200 ns and waits. The first moves its 512 B from 450 at 23 B/ns (22.26 ns) using its 8
  // prefetched descriptors while the unit makes 0.89 more; the second uses those and then runs
  // at the unit's pace: the unit, busy again from 450, makes the last 8 descriptors by
  // 450 + 8 x 25 = 650.
  FlowLevelDma system("memory", flow_pinned(), 1);
  Testbench bench("bench", system);
  const std::uint64_t first = bench.add(0, 0, copy(8, 64, 0));
  const std::uint64_t second = bench.add(0, 0, copy(8, 64, 0));
  bench.run_all();
  EXPECT_NEAR(bench.completion(first).complete_ns, 450 + 512.0 / 23, 0.01);
  EXPECT_NEAR(bench.completion(second).complete_ns, 650.0, 0.01);
}

TEST(FlowModel, TheDescriptorUnitRefillsWhileLargeDescriptorsMove) {
  // Queue 0: an 8 x 64 B copy, a 1 x 4,096 B copy, an 8 x 64 B copy, issued at 0 (17
  // descriptors). As above the first is done at 472.26 with 0.89 descriptors prefetched; the
  // 4,096 B copy moves in 178.09 ns, done at 650.35, using one descriptor while the unit makes
  // 7.12: the last copy starts with 7.01 prefetched and ends when the unit, busy since 450, has
  // made the 9 descriptors after the first 8: 450 + 9 x 25 = 675.
  FlowLevelDma system("memory", flow_pinned(), 1);
  Testbench bench("bench", system);
  bench.add(0, 0, copy(8, 64, 0));
  const std::uint64_t large = bench.add(0, 0, copy(1, 4096, 0));
  const std::uint64_t last = bench.add(0, 0, copy(8, 64, 0));
  bench.run_all();
  EXPECT_NEAR(bench.completion(large).complete_ns, 450 + (512.0 + 4096) / 23, 0.01);
  EXPECT_NEAR(bench.completion(last).complete_ns, 675.0, 0.01);
}

TEST(FlowModel, TheCoreCapScalesItsItemsOnceItsBurstIsSpent) {
  // 16 rows of 8 KiB: engines 0 and 1 with 65,536 B each, 46 B/ns together, against a core cap
  // of 10 B/ns with the packet model's burst allowance of 15 x 4,096 = 61,440 B. The allowance
  // drains at 46 - 10 = 36 B/ns and is spent after 1,706.7 ns, when 78,506.7 B have moved; the
  // other 52,565.3 B pass at 10 B/ns in 5,256.5 ns: done at 450 + 6,963.2 = 7,413.2.
  FlowLevelDma system("memory", flow_pinned({"dma.core_bandwidth_gbps=10"}), 1);
  Testbench bench("bench", system);
  const std::uint64_t d = bench.add(0, 0, copy(16, 8192, 0));
  bench.run_all();
  EXPECT_NEAR(bench.completion(d).complete_ns, 7413.2, 0.1);
}

TEST(FlowModel, AQueueMovesItsDmasInOrder) {
  // Two copies of 4 rows x 2,048 B (8,192 B: 356.2 ns each) on queue 0: the second moves after
  // the first, done at 450 + 356.2 = 806.2 and 806.2 + 356.2 = 1,162.3; on two queues they
  // would share the engine and both complete at 1,162.3.
  FlowLevelDma system("memory", flow_pinned(), 1);
  Testbench bench("bench", system);
  const std::uint64_t first = bench.add(0, 0, copy(4, 2048, 0));
  const std::uint64_t second = bench.add(0, 0, copy(4, 2048, 0));
  bench.run_all();
  EXPECT_NEAR(bench.completion(first).complete_ns, 806.2, 0.1);
  EXPECT_NEAR(bench.completion(second).complete_ns, 1162.3, 0.1);
}

TEST(FlowModel, AnHbmLoadOnOneEngineMatchesTheMeasuredCopy) {
  // Calibration target T4's copy: 4 partitions x 8 KiB from HBM on engine 0, 4 KiB packets
  // that stream longer than the HBM access latency: 450 + 32,768 / 23 = 1,874.7 ns.
  FlowLevelDma system("memory", flow_pinned(), 1);
  Testbench bench("bench", system);
  const std::uint64_t e = bench.add(0, 0, load(4, 8192, 0, 0));
  bench.run_all();
  EXPECT_NEAR(bench.completion(e).complete_ns, 1874.7, 0.1);
}

TEST(FlowModel, AShortHbmLoadEndsWithTheLatencyOfARowConflict) {
  // One 256 B row from HBM on engine 0: data from 450 for 256 / 23 = 11.13 ns. The read was
  // issued with the packet, so of a row conflict's access up to its last byte (controller 50 +
  // t_rp 14 + t_rcd 14 + t_cl 14 + the 256 B burst at 725 / 16 B/ns, 5.65 = 97.65 ns) the part
  // the packet's streaming does not cover shows: done at 450 + 97.65 = 547.65.
  FlowLevelDma system("memory", flow_pinned(), 1);
  EXPECT_NEAR(complete_alone(system, load(1, 256, 0, 0)), 547.65, 0.01);
}

TEST(FlowModel, AShortHbmStoreEndsWithTheWholeWriteLatency) {
  // One 256 B row to HBM: the write is issued once the packet has been read from SBUF
  // (450 + 11.13), and its whole 97.65 ns access follows: done at 558.78.
  FlowLevelDma system("memory", flow_pinned(), 1);
  EXPECT_NEAR(complete_alone(system, store(1, 256, 0, 0)), 558.78, 0.01);
}

TEST(FlowModel, AShortHbmToHbmCopyWaitsForTheReadThenTheWrite) {
  // One 256 B row HBM -> HBM: the read ends at 450 + 97.65, the write takes 97.65 more:
  // done at 645.30.
  FlowLevelDma system("memory", flow_pinned(), 1);
  EXPECT_NEAR(complete_alone(system, hbm_copy(1, 256, 0, 1 << 20)), 645.30, 0.01);
}

TEST(FlowModel, EnginesInLockstepSplitWhenAnUnevenDmaArrives) {
  // X and X2: 128 rows of 2,048 B on queue 0 at 0 (8 rows, 16,384 B per engine on each of the 16
  // engines); Y: 4 rows of 2,048 B on engine 0, queue 1, at 500 (ready 950). 64 B packets (equal
  // round-robin shares on engine 0); a core cap of 184 B/ns with a burst allowance of
  // 15 x 64 = 960 B, so the cap counts every engine's items.
  //   450: X moves at 16 x 23 = 368 B/ns; the allowance is spent at 450 + 960 / 184 = 455.22
  //        (120 B per engine moved), then every engine moves at 23 x 184 / 368 = 11.5 B/ns.
  //   950: X has 10,574 B left per engine. Engine 0 shares between X and Y: 11.5 each, scaled by
  //        the cap (368 B/ns asked) to 5.75; engines 1-15 move X at 11.5.
  //   1,869.48: X done on engines 1-15, X2 starts there (11.5); engine 0 has 5,287 B of X and
  //        2,905 B of Y left, each at 5.75.
  //   2,374.70: Y done. Engine 0's X alone at 11.5: its 2,382 B take 207.13 ns.
  //   2,581.83: X done. X2 on engine 0 shares the cap: engines 1-15 have 8,192 B left at 11.5
  //        (done 3,294.17); engine 0's 16,384 B move 8,192 B at 11.5 and 8,192 B alone at 23 B/ns:
  //        3,294.17 + 356.17 = 3,650.35.
  // If the engines stayed in lockstep, or engine 0 alone held the split items, Y would finish
  // before 1,700.
  FlowLevelDma system("memory", flow_pinned({"dma.packet_bytes=64", "dma.core_bandwidth_gbps=184"}),
                      1);
  Testbench bench("bench", system);
  const std::uint64_t x = bench.add(0, 0, copy(128, 2048, 0));
  const std::uint64_t x2 = bench.add(0, 0, copy(128, 2048, 0));
  const std::uint64_t y = bench.add(500, 0, copy(4, 2048, 1));
  bench.run_all();
  EXPECT_NEAR(bench.completion(y).complete_ns, 2374.7, 0.1);
  EXPECT_NEAR(bench.completion(x).complete_ns, 2581.8, 0.1);
  EXPECT_NEAR(bench.completion(x2).complete_ns, 3650.3, 0.1);
}

TEST(FlowModel, CoresOfAStackShareItInTheirPartitionAndNotWithOthers) {
  // Four trn2 cores whose DMAs reach their home stacks only: cores 0 and 1 share stack 0, core 2
  // has stack 1 to itself. Stack bandwidth 368 GB/s less refresh: 368 x (1 - 350 / 3900) =
  // 334.97 B/ns, below a core's 16 engines (16 x 23 = 368 B/ns). Cores 0 and 1 load 2 MiB
  // alternately and get about half of it each; core 2's loads get all of stack 1.
  const config::Params params = builtin("trn2", {"dma.model=flow", "hbm.stack_bandwidth_gbps=368"});
  FlowLevelDma system("memory", params, 4);
  system.home_stacks_only();
  EXPECT_EQ(system.isolation_group(0), system.isolation_group(1));
  EXPECT_NE(system.isolation_group(0), system.isolation_group(2));
  Testbench bench("bench", system);
  const std::uint64_t bytes = 128ull * 16384;
  for (std::uint64_t i = 0; i < 12; ++i) {
    bench.add(0, 0, load(128, 16384, i * bytes));
    bench.add(0, 1, load(128, 16384, (1ull << 30) + i * bytes));
  }
  for (std::uint64_t i = 0; i < 12; ++i) bench.add(0, 2, load(128, 16384, i * bytes));
  bench.run_all();
  const double stack = 368.0 * (1.0 - 350.0 / 3900.0);
  const double pair = 16.0 * static_cast<double>(bytes) /
                      (bench.completion(23).complete_ns - bench.completion(7).complete_ns);
  EXPECT_NEAR(pair, stack, 0.5);
  const double alone = 8.0 * static_cast<double>(bytes) /
                       (bench.completion(35).complete_ns - bench.completion(27).complete_ns);
  EXPECT_NEAR(alone, stack, 0.5);
}

TEST(FlowModel, AnHbmToHbmCopyPassesItsStackTwice) {
  // One trn2 core copies 2 MiB within its stack, three times on one queue, with the stack at
  // 100 GB/s less refresh: 100 x (1 - 350 / 3900) = 91.03 B/ns, below the core's engines
  // (368 B/ns) and ports (437.5 B/ns each way). Every byte is read from the stack and written
  // back to it, so a copy moves at 91.03 / 2 = 45.51 B/ns: consecutive copies complete
  // 2,097,152 / 45.51 = 46,076 ns apart (91.03 B/ns, 23,038 ns apart, if the stack counted the
  // copy once).
  FlowLevelDma system("memory", builtin("trn2", {"dma.model=flow", "hbm.stack_bandwidth_gbps=100"}),
                      1);
  Testbench bench("bench", system);
  const std::uint64_t bytes = 128ull * 16384;
  for (std::uint64_t i = 0; i < 3; ++i) {
    bench.add(0, 0, hbm_copy(128, 16384, i * bytes, (1ull << 30) + i * bytes));
  }
  bench.run_all();
  const double rate = 100.0 * (1.0 - 350.0 / 3900.0) / 2;
  EXPECT_NEAR(bench.completion(2).complete_ns - bench.completion(1).complete_ns,
              static_cast<double>(bytes) / rate, 1.0);
}

TEST(FlowModel, AShapeSeenBeforeTimesAsInAFreshModel) {
  // What a DMA takes from its plan is kept per shape (not per address) for the 8 most recent
  // shapes: a shape seen before, or evicted by many others since, must take exactly as long as
  // in a model that sees that DMA alone. 10 shapes, three rounds, each DMA at a new address and
  // submitted 1 ms after the previous one, so that every DMA finds the engines idle.
  std::vector<Instruction> shapes;
  for (std::uint32_t rows = 1; rows <= 128; rows *= 2) shapes.push_back(load(rows, 4096, 0));
  shapes.push_back(load(128, 128, 0));
  shapes.push_back(load(16, 1024, 0));
  ASSERT_GT(shapes.size(), 8u);  // more shapes than are kept
  // One fresh model per shape, in the same elaboration.
  std::vector<std::unique_ptr<FlowLevelDma>> fresh;
  std::vector<std::unique_ptr<Testbench>> fresh_benches;
  for (std::size_t s = 0; s < shapes.size(); ++s) {
    const std::string name = "fresh" + std::to_string(s);
    fresh.push_back(std::make_unique<FlowLevelDma>((name + "_memory").c_str(), flow_pinned(), 1));
    fresh_benches.push_back(std::make_unique<Testbench>(name.c_str(), *fresh.back()));
    fresh_benches.back()->add(0, 0, shapes[s]);
  }
  FlowLevelDma system("memory", flow_pinned(), 1);
  Testbench bench("bench", system);
  std::vector<std::uint64_t> ids;
  double time = 0;
  for (int round = 0; round < 3; ++round) {
    for (std::size_t s = 0; s < shapes.size(); ++s) {
      Instruction dma = shapes[s];
      dma.operand(kernel::Slot::kSrc).offset = (round * 64 + s) * (std::uint64_t{1} << 20);
      ids.push_back(bench.add(time, 0, dma));
      time += 1e6;
    }
  }
  bench.run_all();
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const double alone = fresh_benches[i % shapes.size()]->completion(0).complete_ns;
    // Equal up to the time resolution (1 ps): the absolute times are 1e6 ns apart.
    EXPECT_NEAR(bench.completion(ids[i]).complete_ns - 1e6 * static_cast<double>(i), alone, 1e-3)
        << "DMA " << i;
  }
}

}  // namespace
}  // namespace trnsim::dma::test
