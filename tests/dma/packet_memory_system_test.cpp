// PacketMemorySystem end to end with small SystemC testbenches: calibration target T4, the
// efficiency curve, per-core saturation and the core cap, HBM sharing between cores, queue
// arbitration. Each TEST elaborates once (gtest_discover_tests runs every TEST in its own process).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "dma/stack_layout.hpp"
#include "dma_test_support.hpp"

namespace trnsim::dma::test {
namespace {

TEST(DmaCalibration, T4SingleEngine32KiBOnTrn2) {
  // calibration-targets.md T4: 4 partitions x 4096 bf16 HBM -> SBUF on ONE engine: 1,416 ns
  // measured (N-DMA Example 1). Model: 32,768 B / 23 B/ns = 1,424.7 ns on the engine (HBM
  // latency hides behind the 4 KiB packets), plus the last packet's SBUF write,
  // 4096 B / 10,000 B/ns = 0.4 ns: 1,425.1 ns. The 450 ns latency (dma.fixed_cost_ns) comes
  // before the engine starts: complete = issue + 450 + 1,425.1.
  const config::Params params = builtin("trn2");
  PacketMemorySystem system("memory", params, 1, memory::banked_stacks(params.hbm));
  Testbench bench("bench", system);
  const std::uint64_t id = bench.add(0, 0, load(4, 8192, 0));
  bench.run_all();
  const Completion& c = bench.completion(id);
  EXPECT_NEAR(c.transfer_ns, 1416, 141.6);  // the calibration tolerance
  EXPECT_NEAR(c.transfer_ns, 1425.1, 1.0);
  EXPECT_NEAR(c.complete_ns, 450 + 1425.1, 1.0);
  const auto stats = system.statistics();
  EXPECT_EQ(stats["dma"]["cores"][0]["descriptors"], 4);
  EXPECT_EQ(stats["dma"]["cores"][0]["packets"], 8);
  EXPECT_EQ(stats["hbm"]["stacks"][0]["read_bytes"], 32768);
  EXPECT_EQ(stats["dma"]["cores"][0]["sbuf_write_bytes"], 32768);
}

TEST(DmaCalibration, HardwareDescriptorGenerationAddsItsCost) {
  // The same copy through hwdge: descriptors exist 750 ns later; data starts at 750 + 450.
  const config::Params params = builtin("trn2");
  PacketMemorySystem system("memory", params, 1, memory::banked_stacks(params.hbm));
  Testbench bench("bench", system);
  Instruction copy = load(4, 8192, 0);
  copy.dge = kernel::DgeMode::kHwdge;
  const std::uint64_t id = bench.add(0, 0, copy);
  bench.run_all();
  EXPECT_NEAR(bench.completion(id).complete_ns, 750 + 450 + 1425.1, 1.0);
}

/// Steady-state efficiency of [128, F] BF16 loads on 16 engines against the core's peak
/// (16 x 23 = 368 B/ns), F = bytes per partition, with every load in flight at once: their
/// latencies overlap, so only engine occupancy and bytes remain. (T4's published curve is a
/// double-buffered stream whose latencies show: tests/validation, docs/validation.md.)
TEST(DmaLatency, AnHbmWriteIsIssuedWhenItsPacketHasBeenRead) {
  // One 256 B row SBUF -> HBM on an idle stack: the engine reads the packet from 450 for
  // 256 / 23 = 11.13 ns, then writes it: at the channel 50 ns later (511.13), into a closed
  // bank (activate t_rcd 14, CAS t_cl 14), its burst 256 / (725 / 16) = 5.65 ns: done at
  // 544.78. The rate models add the same write latency with the row conflict they assume
  // (t_rp 14 more, transfer_model_test.cpp).
  const config::Params params = builtin("trn2");
  PacketMemorySystem system("memory", params, 1, memory::banked_stacks(params.hbm));
  EXPECT_NEAR(complete_alone(system, store(1, 256, 0)), 544.78, 0.01);
}

TEST(DmaEvents, ThePacketModelReportsEachPacketWithItsEngineAndStack) {
  // The T4 copy above: 4 partitions x 8 KiB on one engine in 4 KiB packets: 8 packets of
  // 4,096 B, all on engine 0 (4 partitions fit one engine's 8), all reading HBM stack 0.
  const config::Params params = builtin("trn2");
  PacketMemorySystem system("memory", params, 1, memory::banked_stacks(params.hbm));
  std::vector<core::DmaEvent> events;
  system.set_observer([&events](const core::DmaEvent& event) { events.push_back(event); });
  Testbench bench("bench", system);
  const std::uint64_t id = bench.add(0, 0, load(4, 8192, 0));
  bench.run_all();
  std::uint64_t packet_bytes = 0;
  std::uint32_t packets = 0;
  double previous_end_ns = 0;
  for (const core::DmaEvent& event : events) {
    EXPECT_EQ(event.id, id);
    EXPECT_EQ(event.hbm_stack, 0);
    if (event.kind == core::DmaEvent::Kind::kTransfer) continue;
    EXPECT_EQ(event.dma_engine, 0);
    EXPECT_EQ(event.packet, packets);
    EXPECT_EQ(event.bytes, 4096u);
    EXPECT_EQ(event.hbm_read_bytes, 4096u);
    // A packet's slice is the time it occupies its engine, 4,096 B at 23 B/ns = 178.087 ns,
    // although its HBM read completes later: the engine's packets follow one another.
    EXPECT_NEAR(event.end_ns - event.start_ns, 4096.0 / 23.0, 1e-6);
    EXPECT_GE(event.start_ns, previous_end_ns - 1e-9) << "packet " << event.packet;
    previous_end_ns = event.end_ns;
    packet_bytes += event.bytes;
    ++packets;
  }
  EXPECT_EQ(packets, 8u);
  EXPECT_EQ(packet_bytes, 32768u);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().kind, core::DmaEvent::Kind::kTransfer);  // reported at completion
}

class DmaEfficiencyCurve : public ::testing::TestWithParam<std::uint32_t> {};

TEST_P(DmaEfficiencyCurve, IsSetByDescriptorOccupancyWhenLatenciesOverlap) {
  const std::uint32_t bytes_per_partition = GetParam();
  const config::Params params = builtin("trn2");
  PacketMemorySystem system("memory", params, 1, memory::banked_stacks(params.hbm));
  Testbench bench("bench", system);
  const std::uint64_t count = 24;
  const std::uint64_t bytes = 128ull * bytes_per_partition;
  for (std::uint64_t i = 0; i < count; ++i) {
    bench.add(0, 0, load(128, bytes_per_partition, i * bytes));
  }
  bench.run_all();
  const double efficiency = steady_rate(bench, 8, count - 1, static_cast<double>(bytes)) / 368.0;
  // By hand: each engine moves 8 descriptors of F bytes per DMA; its descriptor unit needs
  // 25 ns per descriptor, its data path F / 23 ns, in a pipeline: efficiency =
  // min(1, F / 23 / 25) = min(1, F / 575): 128 B 22.3 %, 256 B 44.5 %, 512 B 89.0 %, from
  // 1 KiB 100 %.
  const double expected = std::min(1.0, bytes_per_partition / 575.0);
  EXPECT_NEAR(efficiency, expected, 0.03) << bytes_per_partition << " B per partition";
}

INSTANTIATE_TEST_SUITE_P(BytesPerPartition, DmaEfficiencyCurve,
                         ::testing::Values(128u, 256u, 512u, 1024u, 2048u, 4096u, 8192u));

TEST(DmaBandwidth, SixteenEnginesSaturateAtTheCorePeak) {
  // Large loads: min(16 x 23, 437.5) = 368 B/ns.
  const config::Params params = builtin("trn2");
  PacketMemorySystem system("memory", params, 1, memory::banked_stacks(params.hbm));
  Testbench bench("bench", system);
  const std::uint64_t bytes = 128ull * 16384;
  for (std::uint64_t i = 0; i < 12; ++i) bench.add(0, 0, load(128, 16384, i * bytes));
  bench.run_all();
  const double rate = steady_rate(bench, 4, 11, static_cast<double>(bytes));
  EXPECT_NEAR(rate, 368.0, 368.0 * 0.02);
  EXPECT_DOUBLE_EQ(system.core_peak_bytes_per_ns(), 368.0);
}

TEST(DmaBandwidth, TheCoreCapLimitsAllEngines) {
  // dma.core_bandwidth_gbps = 200 below 16 x 23 = 368: the core moves 200 B/ns.
  const config::Params params = builtin("trn2", {"dma.core_bandwidth_gbps=200"});
  PacketMemorySystem system("memory", params, 1, memory::banked_stacks(params.hbm));
  Testbench bench("bench", system);
  const std::uint64_t bytes = 128ull * 16384;
  for (std::uint64_t i = 0; i < 12; ++i) bench.add(0, 0, load(128, 16384, i * bytes));
  bench.run_all();
  EXPECT_NEAR(steady_rate(bench, 4, 11, static_cast<double>(bytes)), 200.0, 200.0 * 0.02);
}

TEST(DmaBandwidth, TheHbmPortCapsReadsAndWritesSeparately) {
  // dma.hbm_port_bandwidth_gbps = 150 below the engines' 368 B/ns. A stream of HBM -> SBUF
  // loads reads at 150 B/ns; SBUF -> HBM stores submitted with them write at 150 B/ns of their
  // own, so together the core moves 300 B/ns (the per-direction caps do not share a budget).
  const config::Params params = builtin("trn2", {"dma.hbm_port_bandwidth_gbps=150"});
  PacketMemorySystem system("memory", params, 1, memory::banked_stacks(params.hbm));
  Testbench bench("bench", system);
  const std::uint64_t bytes = add_loads_and_stores(bench);
  bench.run_all();
  // Loads are DMAs 0-11, stores 12-23 (ids in submission order).
  EXPECT_NEAR(steady_rate(bench, 4, 11, static_cast<double>(bytes)), 150.0, 150.0 * 0.03);
  EXPECT_NEAR(steady_rate(bench, 16, 23, static_cast<double>(bytes)), 150.0, 150.0 * 0.03);
}

TEST(DmaBandwidth, TheHbmPortCapLeavesOnChipCopiesAlone) {
  // SBUF -> SBUF copies never touch HBM: with a 50 GB/s port they still move at the engines'
  // 368 B/ns.
  const config::Params params = builtin("trn2", {"dma.hbm_port_bandwidth_gbps=50"});
  PacketMemorySystem system("memory", params, 1, memory::banked_stacks(params.hbm));
  Testbench bench("bench", system);
  const std::uint64_t bytes = 128ull * 16384;
  for (std::uint64_t i = 0; i < 12; ++i) {
    bench.add(
        0, 0,
        dma_copy(sbuf(DType::kBFloat16, 128, {8192}, 65536), sbuf(DType::kBFloat16, 128, {8192})));
  }
  bench.run_all();
  EXPECT_NEAR(steady_rate(bench, 4, 11, static_cast<double>(bytes)), 368.0, 368.0 * 0.03);
}

TEST(StackLayout, NumbersStacksPerChipAndServesOperandsFromTheCoresPosition) {
  // trn2: 8 cores and 4 stacks per chip, 2 cores per stack; 16 cores fill two chips (8 stacks).
  const StackLayout layout(builtin("trn2"), 16);
  EXPECT_EQ(layout.stacks(), 8u);
  EXPECT_EQ(layout.home(0), 0u);
  EXPECT_EQ(layout.home(1), 0u);
  EXPECT_EQ(layout.home(2), 1u);
  EXPECT_EQ(layout.home(7), 3u);
  EXPECT_EQ(layout.home(8), 4u);
  EXPECT_EQ(layout.home(15), 7u);
  EXPECT_EQ(layout.of_operand(1, 0), 4u);  // chip 1, position of core 0: its stack 0
  EXPECT_EQ(layout.of_operand(0, 9), 0u);  // core 9 (chip 1, position 1) on chip 0
  EXPECT_EQ(layout.of_operand(5, 3), 1u);  // no chip 5: the core's own stack
  EXPECT_EQ(StackLayout(builtin("trn2"), 9).stacks(), 8u);  // a ninth core opens chip 1
}

TEST(StackLayout, RefreshTakesItsShareOfTheStackBandwidth) {
  config::HbmParams hbm;
  hbm.stack_bandwidth_gbps = 1000;
  hbm.t_rfc_ns = 350;
  hbm.t_refi_ns = 3900;
  EXPECT_NEAR(refreshed_stack_bytes_per_ns(hbm), 1000.0 * 3550 / 3900, 1e-9);  // 910.26
  hbm.t_refi_ns = 0;                                                           // no refresh
  EXPECT_DOUBLE_EQ(refreshed_stack_bytes_per_ns(hbm), 1000.0);
  hbm.t_refi_ns = 100;  // refresh longer than its interval: at most 90 % off
  EXPECT_NEAR(refreshed_stack_bytes_per_ns(hbm), 100.0, 1e-9);
}

TEST(StackLayout, ALastPacketsHbmReadShowsWhereItOutlastsStreamingAWriteInFull) {
  config::HbmParams hbm;  // 1,600 GB/s over 16 channels: 100 B/ns each; 64 B bursts
  hbm.stack_bandwidth_gbps = 1600;
  hbm.channels_per_stack = 16;
  hbm.burst_bytes = 64;
  hbm.interleave_bytes = 256;
  hbm.controller_latency_ns = 50;
  hbm.t_rp_ns = 10;
  hbm.t_rcd_ns = 12;
  hbm.t_cl_ns = 13;
  // 50 + 10 + 12 + 13 = 85 ns to the CAS, then a granule's burst: 256 B in 2.56 ns; 100 B
  // round up to two bursts, 1.28 ns; a 4 KiB packet's last granule is 256 B.
  EXPECT_NEAR(row_conflict_latency_ns(hbm, 256), 87.56, 1e-9);
  EXPECT_NEAR(row_conflict_latency_ns(hbm, 100), 86.28, 1e-9);
  EXPECT_NEAR(row_conflict_latency_ns(hbm, 4096), 87.56, 1e-9);
  EXPECT_NEAR(hbm_tail_latency_ns(hbm, true, false, 256, 20), 67.56, 1e-9);    // read
  EXPECT_NEAR(hbm_tail_latency_ns(hbm, true, false, 4096, 178), 0.0, 1e-9);    // streams longer
  EXPECT_NEAR(hbm_tail_latency_ns(hbm, false, true, 4096, 178), 87.56, 1e-9);  // write
  EXPECT_NEAR(hbm_tail_latency_ns(hbm, true, true, 256, 20), 67.56 + 87.56, 1e-9);
  EXPECT_DOUBLE_EQ(hbm_tail_latency_ns(hbm, false, false, 256, 20), 0.0);  // on chip
}

TEST(DmaBandwidth, TwoCoresSharingAStackEachGetAboutHalf) {
  // Trn2, stack bandwidth lowered to 368 GB/s = one core's DMA peak, so the stack is the
  // bottleneck once two cores stream. Cores 0 and 1 share stack 0 (hbm.cores_per_stack = 2);
  // core 2 has stack 1 alone. All-bank refresh takes tRFC / tREFI = 350 / 3900 = 9% of each
  // channel: a stack sustains at most 368 x 0.91 = 335 B/ns. Shared: about 335 / 2 = 167 each.
  const config::Params params = builtin("trn2", {"hbm.stack_bandwidth_gbps=368"});
  PacketMemorySystem system("memory", params, 3, memory::banked_stacks(params.hbm));
  const StackLayout layout(params, 3);
  ASSERT_EQ(layout.home(0), layout.home(1));
  ASSERT_NE(layout.home(0), layout.home(2));
  Testbench bench("bench", system);
  const std::uint64_t bytes = 128ull * 16384;
  const std::uint64_t count = 16;
  for (std::uint64_t i = 0; i < count; ++i) {
    for (std::uint32_t pid = 0; pid < 3; ++pid) {
      bench.add(0, pid, load(128, 16384, (pid << 28) + i * bytes));
    }
  }
  bench.run_all();
  // Ids are i * 3 + pid; the rate of core pid over DMAs 4..15.
  auto rate = [&](std::uint32_t pid) {
    const double span =
        bench.completion(15 * 3 + pid).complete_ns - bench.completion(3 * 3 + pid).complete_ns;
    return 12.0 * bytes / span;
  };
  const double r0 = rate(0);
  const double r1 = rate(1);
  const double alone = rate(2);
  EXPECT_NEAR(r0, 335.0 / 2, 335.0 / 2 * 0.12);
  EXPECT_NEAR(r1, 335.0 / 2, 335.0 / 2 * 0.12);
  EXPECT_NEAR(r0 / r1, 1.0, 0.1);
  EXPECT_NEAR(alone, 335.0, 335.0 * 0.12);
  const auto stats = system.statistics();
  EXPECT_EQ(stats["hbm"]["stacks"].size(), 2u);
  EXPECT_GT(stats["hbm"]["stacks"][0]["mean_queueing_delay_ns"].get<double>(),
            stats["hbm"]["stacks"][1]["mean_queueing_delay_ns"].get<double>());
}

TEST(DmaQueues, RoundRobinBetweenQueuesInOrderWithinOne) {
  // Two 32 KiB single-engine copies (T4 shape) at t = 0. On queues 0 and 1 they alternate 4 KiB
  // packets and finish within a packet (4096 / 23 = 178 ns) of each other, at about
  // 450 + 2 x 1,425 ns. On one queue the second starts when the first has issued everything.
  const config::Params params = builtin("trn2");
  PacketMemorySystem system("memory", params, 1, memory::banked_stacks(params.hbm));
  Testbench bench("bench", system);
  const std::uint64_t a = bench.add(0, 0, load(4, 8192, 0, 0));
  const std::uint64_t b = bench.add(0, 0, load(4, 8192, 1 << 20, 1));
  const std::uint64_t c = bench.add(10000, 0, load(4, 8192, 2 << 20, 2));
  const std::uint64_t d = bench.add(10000, 0, load(4, 8192, 3 << 20, 2));
  bench.run_all();
  EXPECT_LE(std::abs(bench.completion(a).complete_ns - bench.completion(b).complete_ns), 179.0);
  EXPECT_NEAR(std::max(bench.completion(a).complete_ns, bench.completion(b).complete_ns),
              450 + 2 * 1424.7, 5.0);
  EXPECT_NEAR(bench.completion(c).complete_ns, 10000 + 450 + 1424.7, 5.0);
  EXPECT_NEAR(bench.completion(d).complete_ns, 10000 + 450 + 2 * 1424.7, 5.0);
}

TEST(DmaQueues, ALaterDmaOnAnotherQueueJoinsTheRoundRobinWhenReady) {
  // A: 4 partitions x 64 KiB on engine 0, queue 0, from 450 to 450 + 262,144 / 23 =
  // 11,848 ns alone. B: the T4 copy on queue 1, issued at 2,000, ready at 2,450: from then the
  // engine alternates 4 KiB packets, so B's 8 packets take 2 x 1,424.7 ns: B completes at about
  // 2,450 + 2,849 = 5,299 (within one packet, 178 ns), and A 1,425 ns later than alone.
  const config::Params params = builtin("trn2");
  PacketMemorySystem system("memory", params, 1, memory::banked_stacks(params.hbm));
  Testbench bench("bench", system);
  const std::uint64_t a = bench.add(0, 0, load(4, 65536, 0, 0));
  const std::uint64_t b = bench.add(2000, 0, load(4, 8192, 1 << 24, 1));
  bench.run_all();
  EXPECT_NEAR(bench.completion(b).complete_ns, 2450 + 2 * 1424.7, 179.0);
  EXPECT_NEAR(bench.completion(a).complete_ns, 450 + (262144 + 32768) / 23.0, 179.0);
}

TEST(DmaQueues, StrictPriorityServesTheHigherClassFirst) {
  // Trn3 arbitration: strict priority, 4 classes over 16 queues (queue 0 highest, 15 lowest).
  // Both ready at 450: queue 0's copy runs first (32 KiB / 33 B/ns = 993 ns), then queue 15's.
  const config::Params params = builtin("trn3");
  PacketMemorySystem system("memory", params, 1, memory::banked_stacks(params.hbm));
  Testbench bench("bench", system);
  const std::uint64_t low = bench.add(0, 0, load(4, 8192, 0, 15));
  const std::uint64_t high = bench.add(0, 0, load(4, 8192, 1 << 20, 0));
  bench.run_all();
  EXPECT_NEAR(bench.completion(high).complete_ns, 450 + 32768 / 33.0, 5.0);
  EXPECT_NEAR(bench.completion(low).complete_ns, 450 + 2 * 32768 / 33.0, 5.0);
}

TEST(DmaTransfers, HbmToHbmCastTransposeAndSbufToSbuf) {
  const config::Params params = builtin("trn2");
  PacketMemorySystem system("memory", params, 1, memory::banked_stacks(params.hbm));
  Testbench bench("bench", system);
  // HBM -> HBM [16, 4096] FP32: 16 engines x one 16 KiB row, 16 KiB / 23 = 712.3 ns per engine;
  // but the 256 KiB cross the one stack twice (read and write): at least 524,288 / 725 = 723 ns,
  // plus read/write turnarounds on the channels.
  const std::uint64_t copy = bench.add(
      0, 0, dma_copy(hbm(DType::kFloat32, {16, 4096}, 1 << 24), hbm(DType::kFloat32, {16, 4096})));
  // Cast FP32 HBM -> BF16 SBUF, [128, 2048]: the engines move 4 B per element: 8 KiB per
  // partition, 8 partitions per engine: 65,536 / 23 = 2,849 ns.
  const std::uint64_t cast = bench.add(
      20000, 0,
      dma_copy(sbuf(DType::kBFloat16, 128, {2048}), hbm(DType::kFloat32, {128, 2048}, 1 << 25)));
  // Transpose from HBM at 90%: [128, 4096] BF16, 64 KiB per engine: 65,536 / (23 x 0.9) =
  // 3,166 ns.
  Instruction transpose = load(128, 8192, 1 << 26);
  transpose.opcode = Opcode::kDmaTranspose;
  const std::uint64_t transposed = bench.add(40000, 0, transpose);
  // SBUF -> SBUF [128, 4096] FP32, 16 KiB per partition: 128 KiB per engine = 5,699 ns; the
  // engines' reads and writes share the core's SBUF port (10,000 B/ns): when all 16 start a
  // 4 KiB packet together the last waits up to 2 x 16 x 0.41 = 13 ns.
  const std::uint64_t on_chip = bench.add(
      60000, 0,
      dma_copy(sbuf(DType::kFloat32, 128, {4096}, 65536), sbuf(DType::kFloat32, 128, {4096})));
  bench.run_all();
  EXPECT_GT(bench.completion(copy).transfer_ns, 524288 / 725.0);
  EXPECT_LT(bench.completion(copy).transfer_ns, 1.35 * 524288 / 725.0);
  EXPECT_NEAR(bench.completion(cast).transfer_ns, 65536 / 23.0, 10);
  EXPECT_NEAR(bench.completion(transposed).transfer_ns, 65536 / (23 * 0.9), 10);
  EXPECT_GE(bench.completion(on_chip).transfer_ns, 131072 / 23.0);
  EXPECT_LE(bench.completion(on_chip).transfer_ns, 131072 / 23.0 + 14);
  const auto stats = system.statistics();
  const auto& stack = stats["hbm"]["stacks"][0];
  EXPECT_EQ(stack["read_bytes"], 16 * 4096 * 4 + 128 * 2048 * 4 + 128 * 8192);
  EXPECT_EQ(stack["write_bytes"], 16 * 4096 * 4);
  const auto& core = stats["dma"]["cores"][0];
  EXPECT_EQ(core["sbuf_write_bytes"], 128 * 2048 * 2 + 128 * 8192 + 128 * 4096 * 4);
  EXPECT_EQ(core["sbuf_read_bytes"], 128 * 4096 * 4);
}

TEST(DmaStatistics, UnitsInKeyNamesAndPerQueueActivity) {
  const config::Params params = builtin("trn2");
  PacketMemorySystem system("memory", params, 1, memory::banked_stacks(params.hbm));
  Testbench bench("bench", system);
  bench.add(0, 0, load(4, 8192, 0, 3));
  bench.run_all();
  const auto stats = system.statistics(10000);
  const auto& core = stats["dma"]["cores"][0];
  EXPECT_EQ(core["transfers"], 1);
  EXPECT_EQ(core["bytes"], 32768);
  EXPECT_NEAR(core["active_ns"].get<double>(), 1425.1, 1.0);
  EXPECT_NEAR(core["achieved_bandwidth_gbps"].get<double>(), 32768 / 1425.1, 0.1);
  ASSERT_EQ(core["queues"].size(), 1u);
  EXPECT_EQ(core["queues"][0]["queue"], 3);
  EXPECT_NEAR(core["queues"][0]["active_ns"].get<double>(), 1425.1, 1.0);
  const auto& stack = stats["hbm"]["stacks"][0];
  EXPECT_NEAR(stack["achieved_bandwidth_gbps"].get<double>(), 32768 / 10000.0, 1e-9);
  EXPECT_EQ(stack["channels"].size(), 16u);
  EXPECT_TRUE(stack.contains("row_hit_pct"));
  EXPECT_TRUE(stack.contains("mean_queueing_delay_ns"));
  EXPECT_TRUE(stats["dma"].contains("peak_bandwidth_per_core_gbps"));
}

}  // namespace
}  // namespace trnsim::dma::test

// libsystemc.so refers to sc_main (its own main() calls it); gtest_main provides main() and the
// tests call sc_start() themselves, so this is never called.
extern "C" int sc_main(int /*argc*/, char* /*argv*/[]) {
  return 1;
}
