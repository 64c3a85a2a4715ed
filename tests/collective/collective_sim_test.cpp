// Whole simulations with the collective backend, each in a child process: hand-worked ring and
// hierarchical all-reduce times, `auto` by size, LNC=2, send/recv, compute competing with a
// collective (and the trace showing why), core_barrier across chips, cores sharing an HBM stack,
// errors, and the size of system a run handles in seconds.
//
// Numbers (configs, hardware-facts.md §11): trn2 links 128 GB/s per direction, per-hop latency L
// = 1.5 us, DMA fixed cost F = 1.3 us, op overhead 52 us, reduce 184 GB/s, DMA 16 x 23 = 368 GB/s
// per core; trn1 links 48 GB/s, L = 3 us. An idle message of B bytes lands L + B / (slowest server)
// after it is sent (collective_system.hpp), so a ring step is L + chunk / link when the link is
// slowest.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>
#include <string>

#include "collective/algorithms.hpp"
#include "collective/benchmark.hpp"
#include "collective_harness.hpp"
#include "config/load.hpp"

namespace trnsim {
namespace {

using collective::Algorithm;
using collective::BenchmarkPoint;
using collective::BenchmarkResult;
using collective::Operation;
using testing::collective_us;
using testing::run_kernel_in_child;

constexpr double kMiB = 1024.0 * 1024.0;

BenchmarkResult run(BenchmarkPoint point) {
  const BenchmarkResult result = collective::run_point_in_child(point);
  EXPECT_TRUE(result.error.empty()) << result.error;
  return result;
}

BenchmarkPoint ring_point(const std::string& config, std::uint32_t ranks, std::uint64_t bytes) {
  BenchmarkPoint point;
  point.config = config;
  point.operation = Operation::kAllReduce;
  point.algorithm = Algorithm::kRing;
  point.ranks = ranks;
  point.ranks_per_chip = 1;
  point.bytes = bytes;
  return point;
}

TEST(RingAllReduce, MatchesTheHandWorkedFormula) {
  // T = overhead + 2(n-1) x hop latency + 2(n-1)/n x S / link bandwidth, one rank per chip on
  // trn2-48xl: the snake ring 0-1-2-3(-7-6-5-4) steps between torus neighbours, one link each.
  // n = 4, S = 64 MiB: chunk 16 MiB / 128 B/ns = 131,072 ns; DMA (1.3 + 45.6 us) and reduce
  // (91.2 us) are faster than the link. T = 52 + 6 x (1.5 + 131.072) = 847.432 us.
  const BenchmarkResult four = run(ring_point("trn2-48xl", 4, 64ull << 20));
  EXPECT_EQ(four.algorithm, Algorithm::kRing);
  EXPECT_EQ(four.steps, 6u);
  EXPECT_NEAR(four.time_ns / 1e3, 52 + 6 * (1.5 + 16 * kMiB / 128 / 1e3), 0.01);
  // n = 8: chunk 8 MiB = 65.536 us per step, 14 steps: 52 + 14 x 67.036 = 990.504 us.
  const BenchmarkResult eight = run(ring_point("trn2-48xl", 8, 64ull << 20));
  EXPECT_NEAR(eight.time_ns / 1e3, 52 + 14 * (1.5 + 8 * kMiB / 128 / 1e3), 0.01);
  // busbw = 2(n-1)/n x S / T, in GiB/s.
  EXPECT_NEAR(eight.busbw_gibps, 2.0 * 7 / 8 * 64 * kMiB / (eight.time_ns * 1e-9) / (1 << 30),
              1e-6);
}

TEST(RingAllReduce, KernelPathThroughTheDmaModelMatchesToo) {
  // A kernel on trn1-32xl (2 cores per chip): ranks on cores 0, 2, 4, 6 = chips 0-3, 8 MiB of
  // FP32 each. Chunk 2 MiB / 48 B/ns = 43,690.667 ns; L = 3 us (trn1). The DMA legs go through
  // the DMA/HBM model simulate() builds and are faster than the link.
  // T = 52 + 6 x (3 + 43.690667) = 332.144 us.
  const std::string kernel = R"({
    "format": "trnsim-kernel/1", "name": "ring4", "cores": 7,
    "tensors": {"g": {"memory": "hbm", "dtype": "float32", "shape": [2097152], "per_core": true},
                "r": {"memory": "hbm", "dtype": "float32", "shape": [2097152], "per_core": true}},
    "program": [{"if": "pid % 2 == 0", "then": [
      {"op": "all_reduce", "dst": "r", "src": "g", "group": [0, 2, 4, 6], "algorithm": "ring"}]}]
  })";
  const nlohmann::json stats = run_kernel_in_child(kernel, "trn1-32xl");
  EXPECT_NEAR(collective_us(stats), 52 + 6 * (3 + 2 * kMiB / 48 / 1e3), 0.05);
  ASSERT_FALSE(stats.contains("error"));
  EXPECT_EQ(stats["collectives"]["operations"][0]["algorithm"], "ring");
  EXPECT_EQ(stats["collectives"]["operations"][0]["messages"], 4 * 6);
}

TEST(AutoAlgorithm, PicksBySizeInARun) {
  // trn2: Mesh up to 1 MiB, RDH up to 56 MiB, KangaRing above; trn3 has no KangaRing.
  BenchmarkPoint point = ring_point("trn2-48xl", 4, 1 << 20);
  point.algorithm = Algorithm::kAuto;
  EXPECT_EQ(run(point).algorithm, Algorithm::kMesh);
  point.bytes = 2 << 20;
  EXPECT_EQ(run(point).algorithm, Algorithm::kRdh);
  point.bytes = 56ull << 20;
  EXPECT_EQ(run(point).algorithm, Algorithm::kRdh);
  point.bytes = 64ull << 20;
  EXPECT_EQ(run(point).algorithm, Algorithm::kKangaring);
  point.config = "trn3-ultraserver-64";
  EXPECT_EQ(run(point).algorithm, Algorithm::kRing);
}

TEST(RegisteredAlgorithm, AKernelNamesItAndTheRunUsesIt) {
  // A test's own algorithm (collective/algorithms.hpp), all-gather only: in step k every rank
  // sends its piece straight to rank + k, so 4 ranks take 3 steps.
  collective::AlgorithmModel pairwise;
  pairwise.supports = [](Operation operation, std::uint32_t, bool) {
    return operation == Operation::kAllGather;
  };
  pairwise.build = [](collective::Schedule& schedule, std::uint64_t bytes,
                      const collective::RankLayout& layout) {
    const std::uint32_t ring = schedule.add_groups({layout.ring});
    for (std::uint32_t k = 1; k < schedule.ranks(); ++k) {
      schedule.add_step(collective::Schedule::Pattern::kShift, ring, k, 0, bytes / schedule.ranks(),
                        false);
    }
  };
  collective::register_algorithm("pairwise_gather", pairwise);
  const auto kernel = [](const std::string& op, const std::string& out_shape) {
    return R"({"format": "trnsim-kernel/1", "name": "gather", "cores": 4,
      "tensors": {
        "piece": {"memory": "hbm", "dtype": "float32", "shape": [256], "per_core": true},
        "all": {"memory": "hbm", "dtype": "float32", "shape": )" +
           out_shape + R"(, "per_core": true}},
      "program": [{"op": ")" +
           op + R"(", "dst": "all", "src": "piece", "group": "all",
                   "algorithm": "pairwise_gather"}]})";
  };
  const nlohmann::json gather = run_kernel_in_child(kernel("all_gather", "[4, 256]"), "trn2");
  ASSERT_FALSE(gather.contains("error")) << gather.dump();
  const nlohmann::json& operation = gather["collectives"]["operations"][0];
  EXPECT_EQ(operation["algorithm_requested"], "pairwise_gather");
  EXPECT_EQ(operation["algorithm"], "pairwise_gather");
  EXPECT_EQ(operation["steps"], 3);
  // All-reduce it cannot run: Ring, 2(n-1) = 6 steps.
  const nlohmann::json reduce = run_kernel_in_child(kernel("all_reduce", "[256]"), "trn2");
  ASSERT_FALSE(reduce.contains("error")) << reduce.dump();
  EXPECT_EQ(reduce["collectives"]["operations"][0]["algorithm"], "ring");
  EXPECT_EQ(reduce["collectives"]["operations"][0]["steps"], 6);
}

TEST(Hierarchical, AcrossEfaMatchesTheHandWorkedTime) {
  // trn2-ultraserver without inter-instance links: 4 EFA domains of 16 chips (4x4 planes),
  // EFA 25 B/ns per chip per direction, 15 us per hop. 64 ranks, one per chip, S = 64 MiB:
  //   intra reduce-scatter and all-gather: 2 x 15 ring steps of S/16 = 4 MiB over a 128 B/ns
  //   link: 1.5 + 32.768 us each;
  //   inter all-reduce of the 4 MiB shard over 4 domains: 2 x 3 steps of 1 MiB over EFA:
  //   15 + 41.94304 us each.
  // T = 52 + 30 x 34.268 + 6 x 56.94304 = 52 + 1028.04 + 341.65824 = 1421.69824 us.
  BenchmarkPoint point = ring_point("trn2-ultraserver", 64, 64ull << 20);
  point.sets = {"system.inter_instance_link_bandwidth_gbps=0"};
  point.algorithm = Algorithm::kAuto;
  const BenchmarkResult result = run(point);
  EXPECT_EQ(result.algorithm, Algorithm::kHierarchical);
  EXPECT_EQ(result.steps, 15u + 6 + 15);
  EXPECT_NEAR(result.time_ns / 1e3, 52 + 30 * (1.5 + 32.768) + 6 * (15 + kMiB / 25 / 1e3), 0.01);
}

TEST(Lnc2, ACorePairIsOneRankMovingHalfEach) {
  // LNC=2 on trn2-48xl: ranks {0,1} on chip 0 and {8,9} on chip 1, 64 MiB per rank (32 MiB per
  // core). Ring of 2 ranks: 2 steps of 32 MiB over one 128 B/ns link (each core's DMA moves
  // 16 MiB of it); T = 52 + 2 x (1.5 + 262.144) = 579.288 us.
  BenchmarkPoint point = ring_point("trn2-48xl", 2, 64ull << 20);
  point.sets = {"system.lnc=2"};
  const BenchmarkResult result = run(point);
  EXPECT_NEAR(result.time_ns / 1e3, 52 + 2 * (1.5 + 32 * kMiB / 128 / 1e3), 0.01);

  // A group with a core but not its partner is an error naming both.
  const std::string kernel = R"({
    "format": "trnsim-kernel/1", "name": "unpaired", "cores": 9,
    "tensors": {"g": {"memory": "hbm", "dtype": "float32", "shape": [1024], "per_core": true},
                "r": {"memory": "hbm", "dtype": "float32", "shape": [1024], "per_core": true}},
    "program": [{"if": "pid % 8 == 0", "then": [
      {"op": "all_reduce", "dst": "r", "src": "g", "group": [0, 8]}]}]
  })";
  const nlohmann::json stats = run_kernel_in_child(kernel, "trn2-48xl", {"system.lnc=2"});
  ASSERT_TRUE(stats.contains("error"));
  EXPECT_NE(stats["error"].get<std::string>().find("core 0 has no partner core 1"),
            std::string::npos)
      << stats["error"];
}

TEST(SendRecv, CrossesOneLink) {
  // trn1-32xl: core 0 (chip 0) sends 8 MiB to core 2 (chip 1) over one 48 B/ns link.
  // T = 52 + 3 + 8 MiB / 48 B/ns = 55 + 174.762667 = 229.762667 us.
  const std::string kernel = R"({
    "format": "trnsim-kernel/1", "name": "p2p", "cores": 3,
    "tensors": {"a": {"memory": "hbm", "dtype": "float32", "shape": [2097152], "per_core": true}},
    "program": [
      {"if": "pid == 0", "then": [{"op": "send", "src": "a", "peer": 2}]},
      {"if": "pid == 2", "then": [{"op": "recv", "dst": "a", "peer": 0}]}]
  })";
  const nlohmann::json stats = run_kernel_in_child(kernel, "trn1-32xl");
  EXPECT_NEAR(collective_us(stats), 55 + 8 * kMiB / 48 / 1e3, 0.05);
}

TEST(CcCores, ACoreRunsAsManyCollectivesAtOnceAsItHasCcCores) {
  // trn1-32xl, ranks on cores 0 and 2 (chips 0 and 1), two independent 8 MiB ring all-reduces.
  // One collective alone: 2 steps of 4 MiB over a 48 B/ns link:
  //   T1 = 52 + 2 x (3 + 4 MiB / 48 B/ns) = 52 + 2 x 90.381 = 232.762 us.
  // With chip.collective_cores = 2 (one per core) the second waits for the first's CC core:
  // 2 x T1 = 465.525 us. With the default 6 (three per core) they share the link at once and
  // finish sooner.
  const std::string kernel = R"({
    "format": "trnsim-kernel/1", "name": "two_collectives", "cores": 3,
    "tensors": {"g": {"memory": "hbm", "dtype": "float32", "shape": [2, 2097152], "per_core": true},
                "r": {"memory": "hbm", "dtype": "float32", "shape": [2, 2097152], "per_core": true}},
    "program": [{"if": "pid % 2 == 0", "then": [{"for": "i", "range": 2, "body": [
      {"op": "all_reduce", "dst": "r[i]", "src": "g[i]", "group": [0, 2], "algorithm": "ring"}]}]}]
  })";
  const double one = 52 + 2 * (3 + 4 * kMiB / 48 / 1e3);
  const double serial =
      collective_us(run_kernel_in_child(kernel, "trn1-32xl", {"chip.collective_cores=2"}));
  EXPECT_NEAR(serial, 2 * one, 0.05);
  const double concurrent = collective_us(run_kernel_in_child(kernel, "trn1-32xl"));
  EXPECT_LT(concurrent, serial - 40);
  EXPECT_GT(concurrent, one);
}

TEST(Errors, CoresOfAGroupMustIssueTheSameCollectives) {
  const std::string kernel = R"({
    "format": "trnsim-kernel/1", "name": "mismatch", "cores": 2,
    "tensors": {"g": {"memory": "hbm", "dtype": "float32", "shape": [1024], "per_core": true},
                "r": {"memory": "hbm", "dtype": "float32", "shape": [1024], "per_core": true},
                "big": {"memory": "hbm", "dtype": "float32", "shape": [2048], "per_core": true}},
    "program": [
      {"if": "pid == 0", "then": [{"op": "all_reduce", "dst": "r", "src": "g"}]},
      {"if": "pid == 1", "then": [{"op": "all_gather", "dst": "big", "src": "g"}]}]
  })";
  const nlohmann::json stats = run_kernel_in_child(kernel, "trn2");
  ASSERT_TRUE(stats.contains("error"));
  const std::string error = stats["error"];
  EXPECT_NE(error.find("collective #0 of group [0, 1]"), std::string::npos) << error;
  EXPECT_NE(error.find("issues all_gather but core 0 issued all_reduce"), std::string::npos)
      << error;
}

// ---- compute competing with a collective ------------------------------------------------------

// Two cores of one trn2 chip (both on HBM stack 0): optionally a 32 MiB ring all-reduce between
// them, optionally a DMA-bound loop streaming 16 x 2 MiB in and out of SBUF per core.
const char* kOverlapKernel = R"({
  "format": "trnsim-kernel/1", "name": "overlap", "cores": 2,
  "params": {"T": 16, "F": 4096, "COLL": 1, "COMP": 1},
  "tensors": {
    "x": {"memory": "hbm", "dtype": "float32", "shape": ["T", 128, "F"], "per_core": true},
    "y": {"memory": "hbm", "dtype": "float32", "shape": ["T", 128, "F"], "per_core": true},
    "g": {"memory": "hbm", "dtype": "float32", "shape": [8388608], "per_core": true},
    "r": {"memory": "hbm", "dtype": "float32", "shape": [8388608], "per_core": true},
    "a": {"memory": "sbuf", "dtype": "float32", "shape": [2, 128, "F"], "partition_dim": 1},
    "b": {"memory": "sbuf", "dtype": "float32", "shape": [2, 128, "F"], "partition_dim": 1}},
  "program": [
    {"if": "COLL", "then": [{"op": "all_reduce", "dst": "r", "src": "g", "algorithm": "ring"}]},
    {"if": "COMP", "then": [{"for": "t", "range": "T", "body": [
      {"op": "dma_copy", "dst": "a[t % 2]", "src": "x[t]"},
      {"op": "tensor_scalar", "dst": "b[t % 2]", "src": "a[t % 2]", "op0": "multiply",
       "operand0": 2.0},
      {"op": "dma_copy", "dst": "y[t]", "src": "b[t % 2]", "queue": 1}]}]}]
})";

struct TracedRun {
  nlohmann::json stats;
  nlohmann::json trace;
};

TracedRun run_binary(const std::string& tag, const std::string& params) {
  const std::string dir = ::testing::TempDir();
  const std::string kernel = dir + "collective_overlap.json";
  std::ofstream(kernel) << kOverlapKernel;
  const std::string stats = dir + "overlap_" + tag + "_stats.json";
  const std::string trace = dir + "overlap_" + tag + "_trace.json";
  const std::string command = std::string(TRNSIM_BINARY) + " run " + kernel +
                              " --config trn2 --json --trace " + trace + " " + params + " > " +
                              stats;
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  TracedRun out;
  std::ifstream(stats) >> out.stats;
  std::ifstream(trace) >> out.trace;
  return out;
}

/// Compute DMA transfers of core 0 (the kernel's own dma_copy slices).
std::vector<nlohmann::json> slices(const nlohmann::json& trace, const std::string& label) {
  std::vector<nlohmann::json> out;
  for (const auto& event : trace["traceEvents"]) {
    if (event.value("ph", "") == "X" && event.value("cat", "") == "dma_transfer" &&
        event["pid"] == 0 && event["name"].get<std::string>().find(label) == 0) {
      out.push_back(event);
    }
  }
  return out;
}

double mean_rate(const std::vector<nlohmann::json>& transfers) {
  double sum = 0;
  for (const auto& t : transfers) sum += t["args"]["achieved_gbps"].get<double>();
  return transfers.empty() ? 0 : sum / static_cast<double>(transfers.size());
}

TEST(Overlap, ComputeWhileACollectiveRunsIsSlowerAndTheTraceShowsWhy) {
  const TracedRun collective = run_binary("coll", "--param COMP=0");
  const TracedRun compute = run_binary("comp", "--param COLL=0");
  const TracedRun both = run_binary("both", "");
  const double t_coll = collective.stats["time"]["kernel_ns"].get<double>();
  const double t_comp = compute.stats["time"]["kernel_ns"].get<double>();
  const double t_both = both.stats["time"]["kernel_ns"].get<double>();
  // Slower than either alone, but overlapping: less than one after the other.
  EXPECT_GT(t_both, 1.2 * std::max(t_coll, t_comp));
  EXPECT_LT(t_both, t_coll + t_comp);
  // Plausible: stack 0 carries the compute's 2 cores x 16 x (2 + 2) MiB and the collective's
  // 2 cores x 2 legs x (16 MiB read + 16 MiB written) = 256 MiB; at 725 B/ns that is 370 us.
  EXPECT_GE(t_both, 256 * kMiB / 725);

  // Why: the collective's DMA legs (slices named after the all_reduce statement) run on core
  // 0's DMA queues at the same time as the compute DMAs, which then move data more slowly.
  const auto legs = slices(both.trace, "all_reduce");
  ASSERT_EQ(legs.size(), 2u);  // 2 ring steps
  const auto shared = slices(both.trace, "dma_copy");
  const auto alone = slices(compute.trace, "dma_copy");
  ASSERT_EQ(shared.size(), 32u);
  ASSERT_EQ(alone.size(), 32u);
  std::vector<nlohmann::json> overlapping;
  const double leg_start = legs[0]["ts"].get<double>();
  const double leg_end = leg_start + legs[0]["dur"].get<double>();
  for (const auto& t : shared) {
    const double start = t["ts"].get<double>();
    if (start < leg_end && start + t["dur"].get<double>() > leg_start) overlapping.push_back(t);
  }
  EXPECT_GE(overlapping.size(), 4u);
  EXPECT_LT(mean_rate(overlapping), 0.8 * mean_rate(alone));
}

// ---- multi-core kernels --------------------------------------------------------------------

TEST(CoreBarrier, HoldsEveryCoreOfBothChipsUntilTheLastArrives) {
  // trn2-48xl, 16 cores on chips 0 and 1. Core 15 runs 1000 dependent memsets of [128, 2048]
  // FP32 on VectorE (>= max(MIN_II, N) = 2048 cycles / 0.96 GHz = 2133.3 ns each, hardware-facts.md
  // §13); the barrier is a fence, so core 15 reaches it after all 1000. Every core's DMA after the
  // barrier ends later than that.
  const std::string kernel = R"({
    "format": "trnsim-kernel/1", "name": "barrier", "cores": 16, "params": {"BARRIER": 1},
    "tensors": {"a": {"memory": "sbuf", "dtype": "float32", "shape": [128, 2048]},
                "out": {"memory": "hbm", "dtype": "float32", "shape": [128, 2048],
                        "per_core": true}},
    "program": [
      {"if": "pid == 15", "then": [{"for": "i", "range": 1000, "body": [
        {"op": "memset", "dst": "a", "value": 1.0}]}]},
      {"if": "BARRIER", "then": [{"op": "core_barrier"}]},
      {"op": "dma_copy", "dst": "out", "src": "a"}]
  })";
  const double arrival_bound_ns = 1000 * 2048 / 0.96;
  const nlohmann::json with = run_kernel_in_child(kernel, "trn2-48xl");
  const nlohmann::json without = run_kernel_in_child(kernel, "trn2-48xl", {}, {"BARRIER=0"});
  ASSERT_FALSE(with.contains("error")) << with["error"];
  ASSERT_FALSE(without.contains("error")) << without["error"];
  double first_release = 1e300;
  double last_release = 0;
  for (int pid = 0; pid < 15; ++pid) {
    const double end = with["cores"][pid]["end_ns"].get<double>();
    EXPECT_GT(end, arrival_bound_ns) << "core " << pid;
    EXPECT_LT(without["cores"][pid]["end_ns"].get<double>(), 0.1 * arrival_bound_ns);
    first_release = std::min(first_release, end);
    last_release = std::max(last_release, end);
  }
  // Released together: the cores end within one small DMA of each other on both chips.
  EXPECT_LT(last_release - first_release, 1000);
}

TEST(CoreBarrier, IsAFenceForDmasBeforeAndInstructionsAfter) {
  // trn2, 2 cores. Core 0 stores 4 MiB of SBUF to a shared HBM tensor, then both cores meet at
  // a barrier, then core 1 loads it back. The barrier waits for core 0's store (its data must
  // be in HBM before core 1 reads it), so core 1's load starts after the store completed: core
  // 1 ends after two transfers, each >= 450 ns latency + 4,194,304 B / 368 B/ns = 11,848 ns.
  // Without the barrier the load overlaps the store and core 1 ends after about one.
  const std::string kernel = R"({
    "format": "trnsim-kernel/1", "name": "fence", "cores": 2, "params": {"BARRIER": 1},
    "tensors": {"shared": {"memory": "hbm", "dtype": "float32", "shape": [128, 8192]},
                "a": {"memory": "sbuf", "dtype": "float32", "shape": [128, 8192]}},
    "program": [
      {"if": "pid == 0", "then": [{"op": "dma_copy", "dst": "shared", "src": "a"}]},
      {"if": "BARRIER", "then": [{"op": "core_barrier"}]},
      {"if": "pid == 1", "then": [{"op": "dma_copy", "dst": "a", "src": "shared"}]}]
  })";
  const double one_transfer_ns = 450 + 4194304 / 368.0;
  const nlohmann::json with = run_kernel_in_child(kernel, "trn2");
  const nlohmann::json without = run_kernel_in_child(kernel, "trn2", {}, {"BARRIER=0"});
  ASSERT_FALSE(with.contains("error")) << with["error"];
  ASSERT_FALSE(without.contains("error")) << without["error"];
  EXPECT_GE(with["cores"][1]["end_ns"].get<double>(), 2 * one_transfer_ns);
  EXPECT_LT(without["cores"][1]["end_ns"].get<double>(), 1.5 * one_transfer_ns);
  // Core 0 leaves the barrier when its store is done, not before.
  EXPECT_GE(with["cores"][0]["end_ns"].get<double>(), one_transfer_ns);
}

TEST(SharedHbm, TwoCoresOnOneStackContend) {
  // trn2: cores 0 and 1 share HBM stack 0, core 2 uses stack 1 (hbm.cores_per_stack = 2).
  // Each active core streams 16 x [128, 8192] FP32 = 64 MiB from HBM into SBUF.
  const std::string kernel = R"({
    "format": "trnsim-kernel/1", "name": "hbm_share", "cores": 3,
    "params": {"A": 0, "B": 1, "T": 16, "F": 8192},
    "tensors": {"x": {"memory": "hbm", "dtype": "float32", "shape": ["T", 128, "F"],
                      "per_core": true},
                "s": {"memory": "sbuf", "dtype": "float32", "shape": [4, 128, "F"],
                      "partition_dim": 1}},
    "program": [{"if": "pid == A or pid == B", "then": [{"for": "t", "range": "T", "body": [
      {"op": "dma_copy", "dst": "s[t % 4]", "src": "x[t]", "queue": "t % 4"}]}]}]
  })";
  auto time = [&](const std::string& a, const std::string& b) {
    const nlohmann::json stats = run_kernel_in_child(kernel, "trn2", {}, {"A=" + a, "B=" + b});
    EXPECT_FALSE(stats.contains("error")) << stats.value("error", "");
    return stats["time"]["kernel_ns"].get<double>();
  };
  const double shared = time("0", "1");
  const double separate = time("0", "2");
  const double alone = time("0", "0");
  // One stack must carry 2 x 64 MiB at <= 725 B/ns: >= 185.1 us.
  EXPECT_GE(shared, 2 * 64 * kMiB / 725);
  EXPECT_GT(shared, 1.03 * separate);
  EXPECT_NEAR(separate, alone, 0.01 * alone);
}

// ---- scale ---------------------------------------------------------------------------------

TEST(Scale, OneGibAllReduceOn64And144ChipsRunsInSeconds) {
  // Message-level granularity: 64 ranks x 64 KangaRing steps x 2 messages, 144 ranks x 286
  // ring steps; a few hundred thousand messages at most.
  BenchmarkPoint ultra = ring_point("trn2-ultraserver", 64, 1ull << 30);
  ultra.algorithm = Algorithm::kAuto;
  const BenchmarkResult a = run(ultra);
  EXPECT_EQ(a.algorithm, Algorithm::kKangaring);
  EXPECT_EQ(a.chips, 64u);
  EXPECT_LT(a.wall_s, 20.0);
  // KangaRing on the 4x4x4 snake: 2 x 32 steps of 16 MiB both ways; the snake's Z hops
  // (64 B/ns) are the slowest links: 52 + 64 x (1.5 + 262.144) = 16925.2 us.
  EXPECT_NEAR(a.time_ns / 1e3, 52 + 64 * (1.5 + 16 * kMiB / 64 / 1e3), 0.001 * a.time_ns / 1e3);

  BenchmarkPoint gen2 = ring_point("trn3-ultraserver-144", 144, 1ull << 30);
  gen2.algorithm = Algorithm::kAuto;
  const BenchmarkResult b = run(gen2);
  EXPECT_EQ(b.algorithm, Algorithm::kRing);
  EXPECT_EQ(b.chips, 144u);
  EXPECT_LT(b.wall_s, 20.0);
  // Ring: 286 steps of ceil(2^30 / 144) B; a chip's switch ports (1280 B/ns) outrun its DMA
  // and reduce rate (16 x 33 = 528 B/ns): 52 + 286 x (1.5 + 7456540.4 / 528 / 1e3) = 4519.9 us,
  // within 1 % (HBM stacks shared by a rank's outgoing and incoming legs add queueing).
  EXPECT_NEAR(b.time_ns / 1e3, 52 + 286 * (1.5 + (1ull << 30) / 144.0 / 528 / 1e3),
              0.01 * b.time_ns / 1e3);
}

}  // namespace
}  // namespace trnsim
