// The three parts of a DMA's cost (docs/cost-models.md, "DMA"), each a contract on both DMA
// models (packet: PacketMemorySystem; transfer: TransferLevelDma), with times worked out by hand:
//   (a) per-DMA latency: dma.fixed_cost_ns (after dma.hwdge_latency_ns of descriptor generation
//       for hardware-generated descriptors; a DGE starts one DMA per dma.hwdge_cost_ns) from
//       issue to the first data, overlapping every other DMA in flight on the same and other
//       queues; it occupies no engine;
//   (b) per-descriptor engine occupancy: dma.descriptor_overhead_ns per descriptor on the
//       engine's descriptor unit, pipelined with its data path;
//   (c) per-byte transfer: bytes / dma.engine_bandwidth_gbps on each engine, then the core's
//       DMA cap, its HBM ports and the HBM stack.
// The parameters are pinned (the trn2 values), so the contracts do not move with a re-fit.
// Each TEST elaborates once (gtest_discover_tests runs every TEST in its own process).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "dma/transfer_model.hpp"
#include "dma_test_support.hpp"

namespace trnsim::dma::test {
namespace {

/// trn2 with the cost parts pinned: latency 450 ns, hwdge latency 750 ns and occupancy 600 ns,
/// 25 ns per descriptor, 23 B/ns per engine.
config::Params pinned(std::vector<std::string> more = {}) {
  std::vector<std::string> overrides = {"dma.fixed_cost_ns=450", "dma.hwdge_cost_ns=600",
                                        "dma.hwdge_latency_ns=750", "dma.descriptor_overhead_ns=25",
                                        "dma.engine_bandwidth_gbps=23"};
  overrides.insert(overrides.end(), more.begin(), more.end());
  return builtin("trn2", overrides);
}

// ---- (a) per-DMA latency ---------------------------------------------------------------------

/// Submits the latency scenario; the expectations are the same for both models.
///   A, B: 32 KiB on engine 0 (4 partitions x 8 KiB: one engine, 4 descriptors), queue 0, at 0.
///     A's data moves from 450 to 450 + 32,768 / 23 = 1,874.7. B's latency ran alongside A's:
///     its data follows A's at once and ends at 450 + 2 x 1,424.7 = 3,299.4 (serial latencies
///     would give 2 x (450 + 1,424.7) = 3,749.4).
///   C, D: the same on queues 1 and 2 at 10,000: both ready at 10,450, the engine moves one
///     after the other (packet model: alternating packets): the later ends at
///     10,450 + 2 x 1,424.7 = 13,299.4 (serial latencies: 13,749.4).
///   E: the same with hardware descriptor generation at 20,000, alone: 20,000 + 750 + 450 +
///     1,424.7 = 22,624.7.
/// The packet model adds the last packet's SBUF write, 4,096 B / 10,000 B/ns = 0.4 ns.
void expect_latency_overlaps(Testbench& bench, double write_ns) {
  const std::uint64_t a = bench.add(0, 0, load(4, 8192, 0, 0));
  const std::uint64_t b = bench.add(0, 0, load(4, 8192, 1 << 20, 0));
  const std::uint64_t c = bench.add(10000, 0, load(4, 8192, 2 << 20, 1));
  const std::uint64_t d = bench.add(10000, 0, load(4, 8192, 3 << 20, 2));
  Instruction generated = load(4, 8192, 4 << 20, 3);
  generated.dge = kernel::DgeMode::kHwdge;
  const std::uint64_t e = bench.add(20000, 0, generated);
  bench.run_all();
  EXPECT_NEAR(bench.completion(a).complete_ns, 1874.7 + write_ns, 0.1);
  EXPECT_NEAR(bench.completion(b).complete_ns, 3299.4 + write_ns, 0.1);
  EXPECT_NEAR(std::max(bench.completion(c).complete_ns, bench.completion(d).complete_ns) - write_ns,
              13299.4, 0.1);
  EXPECT_NEAR(bench.completion(e).complete_ns, 22624.7 + write_ns, 0.1);
  // Only the data counts as transfer time: 1,424.7 ns for A and E.
  EXPECT_NEAR(bench.completion(a).transfer_ns - write_ns, 1424.7, 0.1);
  EXPECT_NEAR(bench.completion(e).transfer_ns - write_ns, 1424.7, 0.1);
}

TEST(DmaCostParts, PacketModelLatencyOverlapsDmasInFlight) {
  const auto memory_params = pinned();
  PacketMemorySystem system("memory", memory_params, 1, memory::banked_stacks(memory_params.hbm));
  Testbench bench("bench", system);
  expect_latency_overlaps(bench, 0.4);
}

TEST(DmaCostParts, TransferModelLatencyOverlapsDmasInFlight) {
  TransferLevelDma system(pinned(), 1);
  Testbench bench("bench", system);
  expect_latency_overlaps(bench, 0.0);
}

/// Descriptor generation is part of the latency, but a DGE (hwdge: the triggering sequencer's)
/// starts one DMA per 600 ns; it has a DMA's descriptors 750 ns after starting it. Three SBUF ->
/// SBUF copies of [4, 64 B] (engine 0: 4 descriptors of 64 B, 25 ns each, all processed before
/// the DMA is ready; data 4 x 64 / 23 = 11.1 ns; the SBUF write adds 0.006 ns), all issued at 0:
///   S: prebuilt descriptors (queue 2): ready 450, complete 461.1.
///   P: hwdge from Sync (queue 0): started at 0, descriptors at 750, ready 1,200, complete
///      1,211.1.
///   Q: hwdge from Sync (queue 1): the DGE starts it at 600, descriptors at 1,350, ready 1,800,
///      complete 1,811.1 (1,211.1 + 11.1 if generation overlapped like the rest of the
///      latency; 1,961.1 if the DGE finished P before starting Q).
void expect_generators_one_at_a_time(Testbench& bench) {
  auto copy = [](std::uint8_t queue, kernel::DgeMode dge) {
    Instruction i =
        dma_copy(sbuf(DType::kBFloat16, 4, {32}, 4096), sbuf(DType::kBFloat16, 4, {32}), queue);
    i.dge = dge;
    return i;
  };
  const std::uint64_t s = bench.add(0, 0, copy(2, kernel::DgeMode::kNone));
  const std::uint64_t p = bench.add(0, 0, copy(0, kernel::DgeMode::kHwdge));
  const std::uint64_t q = bench.add(0, 0, copy(1, kernel::DgeMode::kHwdge));
  bench.run_all();
  EXPECT_NEAR(bench.completion(s).complete_ns, 461.1, 0.1);
  EXPECT_NEAR(bench.completion(p).complete_ns, 1211.1, 0.1);
  EXPECT_NEAR(bench.completion(q).complete_ns, 1811.1, 0.1);
}

TEST(DmaCostParts, PacketModelHardwareDgeStartsOneDmaPerOccupancy) {
  const auto memory_params = pinned();
  PacketMemorySystem system("memory", memory_params, 1, memory::banked_stacks(memory_params.hbm));
  Testbench bench("bench", system);
  expect_generators_one_at_a_time(bench);
}

TEST(DmaCostParts, TransferModelHardwareDgeStartsOneDmaPerOccupancy) {
  TransferLevelDma system(pinned(), 1);
  Testbench bench("bench", system);
  expect_generators_one_at_a_time(bench);
}

// ---- (b) per-descriptor engine occupancy -----------------------------------------------------

/// 20 loads of [128, 128 B] at 0 (every latency overlaps): each engine gets 8 descriptors of
/// 128 B per load, 8 x 25 = 200 ns on its descriptor unit against 8 x 128 / 23 = 44.5 ns of
/// data, so the unit binds: the core moves 16 x 1,024 B per 200 ns = 81.92 B/ns. Without the
/// occupancy it would be the engines' 368 B/ns.
void expect_descriptor_bound(Testbench& bench, double tolerance) {
  for (std::uint64_t i = 0; i < 20; ++i) bench.add(0, 0, load(128, 128, i * 16384));
  bench.run_all();
  EXPECT_NEAR(steady_rate(bench, 5, 19, 16384.0), 81.92, tolerance);
}

TEST(DmaCostParts, PacketModelDescriptorOccupancyBindsSmallDescriptors) {
  const auto memory_params = pinned();
  PacketMemorySystem system("memory", memory_params, 1, memory::banked_stacks(memory_params.hbm));
  Testbench bench("bench", system);
  expect_descriptor_bound(bench, 81.92 * 0.02);
}

TEST(DmaCostParts, TransferModelDescriptorOccupancyBindsSmallDescriptors) {
  TransferLevelDma system(pinned(), 1);
  Testbench bench("bench", system);
  expect_descriptor_bound(bench, 0.01);
}

/// 20 loads of [128, 1 KiB]: 8 x 25 = 200 ns of descriptors hide behind 8 x 1,024 / 23 =
/// 356.2 ns of data per engine and load: 16 x 8,192 B per 356.2 ns = 368 B/ns, the engines' peak.
void expect_descriptors_hidden(Testbench& bench, double tolerance) {
  for (std::uint64_t i = 0; i < 20; ++i) bench.add(0, 0, load(128, 1024, i * 131072));
  bench.run_all();
  EXPECT_NEAR(steady_rate(bench, 5, 19, 131072.0), 368.0, tolerance);
}

TEST(DmaCostParts, PacketModelDescriptorOccupancyHidesBehindData) {
  const auto memory_params = pinned();
  PacketMemorySystem system("memory", memory_params, 1, memory::banked_stacks(memory_params.hbm));
  Testbench bench("bench", system);
  expect_descriptors_hidden(bench, 368.0 * 0.02);
}

TEST(DmaCostParts, TransferModelDescriptorOccupancyHidesBehindData) {
  TransferLevelDma system(pinned(), 1);
  Testbench bench("bench", system);
  expect_descriptors_hidden(bench, 0.01);
}

// ---- (c) per-byte transfer on the engines, ports and HBM -------------------------------------

/// 12 loads of [128, 16 KiB] at 0 with the core's HBM read port at 300 GB/s: the engines could
/// move 16 x 23 = 368 B/ns (core cap 437.5, stack 725 x (1 - 350 / 3,900) = 659.9), the port
/// passes 300 B/ns: 2 MiB per 6,990.5 ns.
void expect_port_bound(Testbench& bench, double tolerance) {
  const std::uint64_t bytes = 128ull * 16384;
  for (std::uint64_t i = 0; i < 12; ++i) bench.add(0, 0, load(128, 16384, i * bytes));
  bench.run_all();
  EXPECT_NEAR(steady_rate(bench, 4, 11, static_cast<double>(bytes)), 300.0, tolerance);
}

TEST(DmaCostParts, PacketModelBytesPassTheEnginesAndTheHbmPort) {
  const auto memory_params = pinned({"dma.hbm_port_bandwidth_gbps=300"});
  PacketMemorySystem system("memory", memory_params, 1, memory::banked_stacks(memory_params.hbm));
  Testbench bench("bench", system);
  expect_port_bound(bench, 300.0 * 0.03);
}

TEST(DmaCostParts, TransferModelBytesPassTheEnginesAndTheHbmPort) {
  TransferLevelDma system(pinned({"dma.hbm_port_bandwidth_gbps=300"}), 1);
  Testbench bench("bench", system);
  expect_port_bound(bench, 0.01);
}

}  // namespace
}  // namespace trnsim::dma::test
