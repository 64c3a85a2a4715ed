// TransferLevelDma (dma.model = transfer): the closed-form engine timing, the rate limits and
// queue order, against numbers worked out by hand from the header's formulas and the trn2
// config (engine 23 B/ns, descriptor 25 ns, fixed 450 ns, prefetch 8, core cap 437.5,
// stack 725 GB/s less refresh 350/3900, HBM access of a row conflict up to the last byte of a
// 256 B granule 50 + 14 + 14 + 14 + 256 / (725 / 16) = 97.65 ns).
#include "dma/transfer_model.hpp"

#include <gtest/gtest.h>

#include <random>

#include "dma_test_support.hpp"

namespace trnsim::dma::test {
namespace {

TEST(TransferModel, T4SingleEngine32KiB) {
  // 4 partitions x 8 KiB on engine 0: 4 descriptors, 32,768 / 23 = 1,424.696 ns of data.
  // Descriptors from 0, data from ready = 450: end = max(450 + 1,424.696, 25 + 1,424.696,
  // 4 x 25 + 356.2) = 1,874.696. Caps end earlier (core 450 + 32,768 / 437.5 = 524.9; stack
  // 32,768 / 659.94 + 450 = 499.7); the 4 KiB last packet streams 178 ns > 92 ns latency.
  const config::Params params = builtin("trn2");
  TransferLevelDma system(params, 1);
  Testbench bench("bench", system);
  const std::uint64_t id = bench.add(0, 0, load(4, 8192, 0));
  bench.run_all();
  const Completion& c = bench.completion(id);
  EXPECT_NEAR(c.complete_ns, 1874.696, 0.01);
  EXPECT_NEAR(c.transfer_ns, 1424.696, 0.01);
  EXPECT_NEAR(c.transfer_ns, 1416, 141.6);  // calibration-targets.md T4 tolerance
  const auto stats = system.statistics(0);
  EXPECT_EQ(stats["model"], "transfer");
  EXPECT_EQ(stats["dma"]["cores"][0]["descriptors"], 4);
  EXPECT_EQ(stats["hbm"]["stacks"][0]["read_bytes"], 32768);
  EXPECT_EQ(stats["dma"]["cores"][0]["sbuf_write_bytes"], 32768);
}

TEST(TransferModel, AShapeSeenBeforeTimesAsInAFreshModel) {
  // The engine split is cached per shape (not per address): a shape seen before, or evicted
  // by many others since, must take exactly as long as in a model that never saw it. Each
  // DMA is submitted 1 ms after the previous one, so every DMA finds the engines idle.
  const config::Params params = builtin("trn2");
  std::vector<Instruction> shapes;
  for (std::uint32_t rows = 1; rows <= 128; rows *= 2) shapes.push_back(load(rows, 4096, 0));
  shapes.push_back(load(128, 128, 0));
  shapes.push_back(load(16, 1024, 0));
  ASSERT_GT(shapes.size(), 8u);  // more shapes than the cache holds
  // A fresh model, submitted to before the simulation starts (at time 0): the transfer model
  // reports completion from inside submit().
  struct Capture : core::DmaClient {
    double complete_ns = -1;
    void dma_complete(std::uint64_t, const sc_core::sc_time& complete, double) override {
      complete_ns = sim_time::to_ns(complete);
    }
  };
  auto alone = [&](const Instruction& dma) {
    TransferLevelDma fresh(params, 1);
    Capture capture;
    fresh.submit(0, 0, dma, capture);
    return capture.complete_ns;
  };
  TransferLevelDma system(params, 1);
  Testbench bench("bench", system);
  std::vector<std::pair<std::uint64_t, double>> expected;  // (id, latency alone)
  double time = 0;
  for (int round = 0; round < 3; ++round) {
    for (std::size_t s = 0; s < shapes.size(); ++s) {
      Instruction dma = shapes[s];
      dma.operand(kernel::Slot::kSrc).offset =
          (round * 64 + s) * (std::uint64_t{1} << 20);  // a new address every time
      expected.emplace_back(bench.add(time, 0, dma), alone(dma));
      time += 1e6;
    }
  }
  bench.run_all();
  time = 0;
  for (const auto& [id, latency] : expected) {
    // Equal up to the time resolution (1 ps): the absolute times are 1e6 ns apart.
    EXPECT_NEAR(bench.completion(id).complete_ns - time, latency, 1e-3) << "DMA " << id;
    time += 1e6;
  }
}

TEST(TransferModel, ShortcutsChangeNoResult) {
  // The split cache and the engines moved in lockstep are exact shortcuts: a random mix of
  // shapes (uniform splits over all engines, over a few, and uneven ones), back to back and
  // spaced, on two cores and four queues, completes at the same times, to the bit, as in a
  // model that computes every engine of every DMA on its own.
  const config::Params params = builtin("trn2");
  TransferLevelDma fast(params, 2, TransferLevelDma::Shortcuts::kOn);
  TransferLevelDma plain(params, 2, TransferLevelDma::Shortcuts::kOff);
  Testbench fast_bench("fast", fast);
  Testbench plain_bench("plain", plain);
  std::mt19937 random(20261130);
  const std::array<std::uint32_t, 8> rows{1, 2, 3, 16, 17, 32, 100, 128};
  const std::array<std::uint32_t, 4> row_bytes{128, 512, 4096, 8192};
  const std::array<double, 5> gaps_ns{0, 0, 50, 700, 6000};
  double time = 0;
  std::vector<std::uint64_t> ids;
  for (int i = 0; i < 600; ++i) {
    // Runs of one shape (where lockstep pays off) broken by other shapes.
    const std::uint32_t shape_rows = rows[random() % rows.size()];
    const std::uint32_t shape_bytes = row_bytes[random() % row_bytes.size()];
    for (std::uint32_t repeat = 1 + random() % 6; repeat > 0; --repeat) {
      const auto queue = static_cast<std::uint8_t>(random() % 4);
      const std::uint32_t pid = random() % 4 == 0 ? 1 : 0;
      Instruction dma = load(shape_rows, shape_bytes, (i * 8 + repeat) * 1048576ull, queue);
      time += gaps_ns[random() % gaps_ns.size()];
      ids.push_back(fast_bench.add(time, pid, dma));
      plain_bench.add(time, pid, dma);
    }
  }
  sc_core::sc_start();
  ASSERT_EQ(fast_bench.completed(), ids.size());
  ASSERT_EQ(plain_bench.completed(), ids.size());
  for (const std::uint64_t id : ids) {
    EXPECT_EQ(fast_bench.completion(id).complete_ns, plain_bench.completion(id).complete_ns)
        << "DMA " << id;
    EXPECT_EQ(fast_bench.completion(id).transfer_ns, plain_bench.completion(id).transfer_ns)
        << "DMA " << id;
  }
  EXPECT_EQ(fast.statistics(time).dump(), plain.statistics(time).dump());
}

TEST(TransferModel, HardwareDescriptorGenerationDelaysDescriptorsAndData) {
  const config::Params params = builtin("trn2");
  TransferLevelDma system(params, 1);
  Testbench bench("bench", system);
  Instruction copy = load(4, 8192, 0);
  copy.dge = kernel::DgeMode::kHwdge;
  const std::uint64_t id = bench.add(0, 0, copy);
  bench.run_all();
  EXPECT_NEAR(bench.completion(id).complete_ns, 750 + 450 + 1424.696, 0.01);
}

TEST(TransferModel, SmallRowsAreDescriptorBound) {
  // [128, 128 B] loads: each engine 8 descriptors of 128 B (5.57 ns of data each). Back to
  // back the descriptor unit is the limit: 8 x 25 = 200 ns per DMA per engine, so the core
  // moves 16 x 1,024 B / 200 ns = 81.92 B/ns. The 92 ns latency minus 5.57 ns shows on each
  // completion but not in the spacing.
  const config::Params params = builtin("trn2");
  TransferLevelDma system(params, 1);
  Testbench bench("bench", system);
  for (std::uint64_t i = 0; i < 20; ++i) bench.add(0, 0, load(128, 128, i * 16384));
  bench.run_all();
  EXPECT_NEAR(steady_rate(bench, 5, 19, 16384.0), 16384.0 / 200.0, 0.01);
}

TEST(TransferModel, AShortHbmLoadEndsWithTheLatencyOfARowConflict) {
  // One 256 B row from HBM on engine 0: data from 450 for 256 / 23 = 11.13 ns; the read was
  // issued with the packet, so the part of the 97.65 ns access its streaming does not cover
  // shows: done at 450 + 97.65 = 547.65.
  const config::Params params = builtin("trn2");
  TransferLevelDma system(params, 1);
  EXPECT_NEAR(complete_alone(system, load(1, 256, 0)), 547.65, 0.01);
}

TEST(TransferModel, AShortHbmStoreEndsWithTheWholeWriteLatency) {
  // One 256 B row to HBM: its write is issued once the engine has read the packet from SBUF
  // (450 + 11.13), so the whole 97.65 ns access follows: done at 558.78.
  const config::Params params = builtin("trn2");
  TransferLevelDma system(params, 1);
  EXPECT_NEAR(complete_alone(system, store(1, 256, 0)), 558.78, 0.01);
}

TEST(TransferModel, AShortHbmToHbmCopyWaitsForTheReadThenTheWrite) {
  // One 256 B row HBM -> HBM: the read ends at 450 + 97.65, the write takes 97.65 more:
  // done at 645.30.
  const config::Params params = builtin("trn2");
  TransferLevelDma system(params, 1);
  EXPECT_NEAR(complete_alone(system, hbm_copy(1, 256, 0, 1 << 20)), 645.30, 0.01);
}

TEST(TransferModel, LargeRowsRunAtTheEnginesPeak) {
  // [128, 16 KiB] loads: 128 KiB per engine = 5,698.8 ns per DMA; 16 engines: 368 B/ns, under
  // the core cap (437.5) and the stack (659.9).
  const config::Params params = builtin("trn2");
  TransferLevelDma system(params, 1);
  Testbench bench("bench", system);
  const std::uint64_t bytes = 128ull * 16384;
  for (std::uint64_t i = 0; i < 12; ++i) bench.add(0, 0, load(128, 16384, i * bytes));
  bench.run_all();
  EXPECT_NEAR(steady_rate(bench, 4, 11, static_cast<double>(bytes)), 368.0, 0.01);
  EXPECT_DOUBLE_EQ(system.core_peak_bytes_per_ns(), 368.0);
}

TEST(TransferModel, TheHbmPortCapsReadsAndWritesSeparately) {
  // Port 150 B/ns: loads read at 150; stores on another queue write at 150 of their own.
  const config::Params params = builtin("trn2", {"dma.hbm_port_bandwidth_gbps=150"});
  TransferLevelDma system(params, 1);
  Testbench bench("bench", system);
  const std::uint64_t bytes = add_loads_and_stores(bench);
  bench.run_all();
  EXPECT_NEAR(steady_rate(bench, 4, 11, static_cast<double>(bytes)), 150.0, 0.01);
  EXPECT_NEAR(steady_rate(bench, 16, 23, static_cast<double>(bytes)), 150.0, 0.01);
}

TEST(TransferModel, TwoCoresSharingAStackSplitItsBandwidth) {
  // Stack bandwidth 368 GB/s less refresh: 368 x (1 - 350 / 3900) = 334.97 B/ns for both trn2
  // cores of stack 0; loads submitted alternately get about half each.
  const config::Params params = builtin("trn2", {"hbm.stack_bandwidth_gbps=368"});
  TransferLevelDma system(params, 2);
  Testbench bench("bench", system);
  const std::uint64_t bytes = 128ull * 16384;
  for (std::uint64_t i = 0; i < 12; ++i) {
    bench.add(0, 0, load(128, 16384, i * bytes));
    bench.add(0, 1, load(128, 16384, (1ull << 30) + i * bytes));
  }
  bench.run_all();
  const double both = 16.0 * static_cast<double>(bytes) /
                      (bench.completion(23).complete_ns - bench.completion(7).complete_ns);
  EXPECT_NEAR(both, 368.0 * (1.0 - 350.0 / 3900.0), 0.5);
}

TEST(TransferModel, SameTimeDmasOfCoresSharingAStackPassItRoundRobinInCoreOrder) {
  // Two trn2 cores of stack 0 submit two 2 MiB loads each at the same time, in the kernel's
  // order of their processes, which the model must not depend on: whatever the submission
  // order, the stack takes core 0's first, core 1's first, core 0's second, core 1's second.
  // The stack (368 GB/s less refresh: 334.97 B/ns) is the limit: a load passes it in
  // 2,097,152 / 334.97 = 6,260.7 ns, its core's engines (16 x 23 B/ns) in 5,698.8 ns, so the
  // stack takes one load after the other from 450 ns (the fixed cost) and the four complete
  // 6,260.7 ns apart, the first at 450 + 6,260.7; the HBM access of a last packet (103.1 ns at
  // 23 B/ns per channel) hides behind its streaming (4,096 / 23 = 178 ns).
  const config::Params params = builtin("trn2", {"hbm.stack_bandwidth_gbps=368"});
  const std::uint64_t bytes = 128ull * 16384;
  const double step = static_cast<double>(bytes) / (368.0 * (1.0 - 350.0 / 3900.0));
  // One model per submission order, simulated together (one elaboration per process).
  TransferLevelDma core_0_first(params, 2);
  TransferLevelDma core_1_first(params, 2);
  Testbench bench_0("core_0_first", core_0_first);
  Testbench bench_1("core_1_first", core_1_first);
  // ids[b][pid][k]: load k of core pid on bench b.
  std::uint64_t ids[2][2][2] = {};
  for (std::uint32_t k = 0; k < 2; ++k) {
    for (std::uint32_t turn = 0; turn < 2; ++turn) {
      const std::uint32_t pid_0 = turn;
      const std::uint32_t pid_1 = 1 - turn;
      ids[0][pid_0][k] = bench_0.add(0, pid_0, load(128, 16384, pid_0 * (1ull << 30) + k * bytes));
      ids[1][pid_1][k] = bench_1.add(0, pid_1, load(128, 16384, pid_1 * (1ull << 30) + k * bytes));
    }
  }
  sc_core::sc_start();
  for (std::uint32_t b = 0; b < 2; ++b) {
    SCOPED_TRACE(b == 0 ? "core 0 submits first" : "core 1 submits first");
    Testbench& bench = b == 0 ? bench_0 : bench_1;
    ASSERT_EQ(bench.completed(), 4u);
    EXPECT_NEAR(bench.completion(ids[b][0][0]).complete_ns, 450 + step, 0.01);
    EXPECT_NEAR(bench.completion(ids[b][1][0]).complete_ns, 450 + 2 * step, 0.01);
    EXPECT_NEAR(bench.completion(ids[b][0][1]).complete_ns, 450 + 3 * step, 0.01);
    EXPECT_NEAR(bench.completion(ids[b][1][1]).complete_ns, 450 + 4 * step, 0.01);
  }
}

TEST(TransferModel, CompletionsKeepQueueOrder) {
  // A load held back by a 10 GB/s HBM port (65,536 B: 6,554 ns) and a small SBUF -> SBUF copy
  // after it, whose engines are free long before: on the same queue the copy completes after
  // the load (queue order), on another queue before it.
  const config::Params params = builtin("trn2", {"dma.hbm_port_bandwidth_gbps=10"});
  TransferLevelDma system(params, 1);
  Testbench bench("bench", system);
  const Instruction copy =
      dma_copy(sbuf(DType::kBFloat16, 128, {64}, 65536), sbuf(DType::kBFloat16, 128, {64}));
  Instruction copy_other_queue = copy;
  copy_other_queue.dma_queue = 1;
  const std::uint64_t load_id = bench.add(0, 0, load(16, 4096, 0, 0));
  const std::uint64_t same_queue = bench.add(0, 0, copy);
  const std::uint64_t other_queue = bench.add(0, 0, copy_other_queue);
  bench.run_all();
  EXPECT_GE(bench.completion(load_id).complete_ns, 450 + 65536 / 10.0);
  EXPECT_GE(bench.completion(same_queue).complete_ns, bench.completion(load_id).complete_ns);
  EXPECT_LT(bench.completion(other_queue).complete_ns, bench.completion(load_id).complete_ns);
}

}  // namespace
}  // namespace trnsim::dma::test
