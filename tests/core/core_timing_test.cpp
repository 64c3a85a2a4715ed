// Whole-core timing: concurrency between engines, dependency chains and semaphore latency,
// TensorE LoadStationary/throttling, double buffering. Expected times are worked out by hand
// from the Trainium2 config (configs/trn2.json) and the cost rules in docs/cost-models.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <ostream>
#include <string>

#include "sim_harness.hpp"
#include "trn2_costs.hpp"

namespace trnsim::testing {
namespace {

// Trainium2 numbers used below (configs/trn2.json):
//   VectorE 0.96 GHz, ScalarE 1.2 GHz, TensorE 2.4 GHz, MIN_II 64 cycles,
//   semaphore_latency_ns 50, tensor.pipeline_latency_cycles 256.
// kSemaphoreNs, kVectorAddNs, kScalarCopyNs: trn2_costs.hpp.

std::string kernel_with(const std::string& program) {
  return R"({
    "format": "trnsim-kernel/1", "name": "t",
    "tensors": {
      "x": {"memory": "sbuf", "dtype": "float32", "shape": [128, 2048]},
      "y": {"memory": "sbuf", "dtype": "float32", "shape": [128, 2048]},
      "z": {"memory": "sbuf", "dtype": "float32", "shape": [128, 2048]},
      "u": {"memory": "sbuf", "dtype": "float32", "shape": [128, 2048]},
      "w": {"memory": "sbuf", "dtype": "float32", "shape": [128, 2048]},
      "v": {"memory": "sbuf", "dtype": "float32", "shape": [128, 2048]}
    },
    "program": )" +
         program + "}";
}

TEST(CoreTiming, IndependentEnginesOverlap) {
  const auto stats = simulate_in_child(kernel_with(R"([
      {"op": "tensor_tensor", "dst": "z", "in0": "x", "in1": "y", "alu": "add"},
      {"op": "activation", "dst": "w", "src": "u", "func": "copy"}])"));
  // Independent work on two engines: the total is the longer one, not the sum.
  EXPECT_NEAR(kernel_ns(stats), kVectorAddNs, 0.01);
  EXPECT_NEAR(stats["cores"][0]["engines"]["scalar"]["active_ns"].get<double>(), kScalarCopyNs,
              0.01);
}

TEST(CoreTiming, DependentChainSerialisesWithSemaphoreLatency) {
  const auto stats = simulate_in_child(kernel_with(R"([
      {"op": "tensor_tensor", "dst": "z", "in0": "x", "in1": "y", "alu": "add"},
      {"op": "activation", "dst": "w", "src": "z", "func": "copy"},
      {"op": "tensor_tensor", "dst": "v", "in0": "w", "in1": "y", "alu": "add"}])"));
  // vector -> semaphore -> scalar -> semaphore -> vector.
  const double expected = kVectorAddNs + kSemaphoreNs + kScalarCopyNs + kSemaphoreNs + kVectorAddNs;
  EXPECT_NEAR(kernel_ns(stats), expected, 0.01);
  // The second vector instruction waited on the scalar engine for the scalar copy plus two
  // semaphore hops... measured from when VectorE became free (after its first add).
  EXPECT_NEAR(stats["cores"][0]["engines"]["vector"]["dependency_wait_by_producer_ns"]["scalar"]
                  .get<double>(),
              kSemaphoreNs + kScalarCopyNs + kSemaphoreNs, 0.01);
}

TEST(CoreTiming, WriteAfterReadOrdersAcrossEngines) {
  // ScalarE overwrites x while VectorE still reads it: the copy must wait for the add.
  const auto stats = simulate_in_child(kernel_with(R"([
      {"op": "tensor_tensor", "dst": "z", "in0": "x", "in1": "y", "alu": "add"},
      {"op": "activation", "dst": "x", "src": "u", "func": "copy"}])"));
  EXPECT_NEAR(kernel_ns(stats), kVectorAddNs + kSemaphoreNs + kScalarCopyNs, 0.01);
}

// A tensor_scalar's reduce_dst is a result like its dst: a later reader waits for it.
// tensor_scalar fp32 [128, 2048] with reduce_dst: max(MIN_II, N) + MIN_II = 2112 cycles at
// 0.96 GHz = 2200 ns; the activation reading the column as its bias then starts a semaphore
// later and takes 2048 cycles at 1.2 GHz.
TEST(CoreTiming, AReaderOfReduceDstWaitsForTheTensorScalar) {
  const auto kernel = [](const std::string& bias) {
    return R"({
      "format": "trnsim-kernel/1", "name": "t",
      "tensors": {
        "x": {"memory": "sbuf", "dtype": "float32", "shape": [128, 2048]},
        "y": {"memory": "sbuf", "dtype": "float32", "shape": [128, 2048]},
        "u": {"memory": "sbuf", "dtype": "float32", "shape": [128, 2048]},
        "w": {"memory": "sbuf", "dtype": "float32", "shape": [128, 2048]},
        "sums": {"memory": "sbuf", "dtype": "float32", "shape": [128, 1]},
        "other": {"memory": "sbuf", "dtype": "float32", "shape": [128, 1]}
      },
      "program": [
        {"op": "tensor_scalar", "dst": "y", "src": "x", "op0": "multiply", "operand0": 2,
         "reduce_dst": "sums", "reduce_op": "max"},
        {"op": "activation", "dst": "w", "src": "u", "func": "copy", "bias": ")" +
           bias + R"("}]})";
  };
  constexpr double kReducingNs = 2112 / 0.96;
  const auto dependent = simulate_in_child(kernel("sums"));
  EXPECT_NEAR(kernel_ns(dependent), kReducingNs + kSemaphoreNs + kScalarCopyNs, 0.01);
  EXPECT_NEAR(dependent["cores"][0]["engines"]["scalar"]["dependency_wait_by_producer_ns"]["vector"]
                  .get<double>(),
              kReducingNs + kSemaphoreNs, 0.01);
  // Reading another column, the two overlap.
  EXPECT_NEAR(kernel_ns(simulate_in_child(kernel("other"))), kReducingNs, 0.01);
}

std::string matmul_kernel(int count, bool same_stationary) {
  const std::string stationary = same_stationary ? "s[0]" : "s[i % 2]";
  return R"({
    "format": "trnsim-kernel/1", "name": "mm",
    "tensors": {
      "s": {"memory": "sbuf", "dtype": "bfloat16", "shape": [2, 128, 128], "partition_dim": 1},
      "m": {"memory": "sbuf", "dtype": "bfloat16", "shape": [128, 512]},
      "acc": {"memory": "psum", "dtype": "float32", "shape": [128, 512]}
    },
    "program": [{"for": "i", "range": )" +
         std::to_string(count) + R"(, "body": [
      {"op": "nc_matmul", "dst": "acc", "stationary": ")" +
         stationary + R"(", "moving": "m", "accumulate": "i > 0"}]}]})";
}

TEST(CoreTiming, MatmulStreamWithoutThrottle) {
  const auto stats =
      simulate_in_child(matmul_kernel(64, true), "trn2", {"tensor.throttle_enabled=false"});
  // First LoadStationary 128/4 = 32 cycles, then 64 MultiplyMoving of max(min(64,128), 512) =
  // 512 cycles back to back (stationary reused), then 256 cycles of pipeline latency:
  // (32 + 64*512 + 256) / 2.4 GHz.
  EXPECT_NEAR(kernel_ns(stats), (32 + 64 * 512 + 256) / 2.4, 0.01);
  EXPECT_NEAR(stats["cores"][0]["tensor"]["flops"].get<double>(), 64.0 * 2 * 128 * 128 * 512, 0.5);
}

TEST(CoreTiming, LoadStationaryIsHiddenBehindThePreviousMultiply) {
  // Alternating stationaries: each LS (32 cycles) loads in the background during the previous
  // 512-cycle MM, so only the first LS is exposed: same time as with one stationary.
  const auto stats =
      simulate_in_child(matmul_kernel(64, false), "trn2", {"tensor.throttle_enabled=false"});
  EXPECT_NEAR(kernel_ns(stats), (32 + 64 * 512 + 256) / 2.4, 0.01);
}

TEST(CoreTiming, ThrottleRampsFromHalfRate) {
  const auto stats = simulate_in_child(matmul_kernel(64, true));
  // Work at full rate W = 64*512 / 2.4 = 13653.33 ns starts after the first LS (32 cycles =
  // 13.33 ns, at t0). The limit ramps linearly from 0.5 to 1 over 3000 ns: in those 3000 ns
  // the engine does 3000 * 0.75 = 2250 ns of full-rate work; the remaining W - 2250 ns run at
  // full rate. End = t0 + 3000 + (W - 2250), plus the 256-cycle pipeline latency.
  const double t0 = 32 / 2.4;
  const double work = 64 * 512 / 2.4;
  EXPECT_NEAR(kernel_ns(stats), t0 + 3000 + (work - 2250) + 256 / 2.4, 0.5);
  EXPECT_NEAR(stats["cores"][0]["tensor"]["throttled_ns"].get<double>(), 750, 0.5);
}

TEST(CoreTiming, MatmulsOnDisjointPeTilesRunConcurrently) {
  // Small matmuls occupy a PE tile: rows = the stationary's K partitions, columns = the output
  // partitions (rounded to the 32-PE granularity on Trainium2). Each matmul below costs
  // max(min(64, 32), 256) = 256 cycles; LoadStationary 32/4 = 8 cycles on the one LS unit.
  auto kernel = [](const std::string& second_dst, const std::string& second_rows) {
    return R"({
    "format": "trnsim-kernel/1", "name": "tiles",
    "tensors": {
      "s": {"memory": "sbuf", "dtype": "bfloat16", "shape": [128, 32]},
      "m": {"memory": "sbuf", "dtype": "bfloat16", "shape": [128, 256]},
      "acc": {"memory": "psum", "dtype": "float32", "shape": [128, 512]}
    },
    "program": [
      {"op": "nc_matmul", "dst": "acc[0:32, 0:256]", "stationary": "s[0:32]", "moving": "m[0:32]"},
      {"op": "nc_matmul", "dst": "acc[)" +
           second_dst + R"(]", "stationary": "s[)" + second_rows + R"(]", "moving": "m[)" +
           second_rows + R"(]"}
    ]})";
  };
  // Rows 32-63 x columns 32-63: disjoint from the first tile, so it runs beside it once its LS
  // (after the first LS) is done: end = 8 + 8 + 256 cycles, visible 256 cycles later.
  const auto concurrent =
      simulate_in_child(kernel("32:64, 0:256", "32:64"), "trn2", {"tensor.throttle_enabled=false"});
  EXPECT_NEAR(kernel_ns(concurrent), (16 + 256 + 256) / 2.4, 0.01);
  // Rows 0-31 x columns 0-31 again (other PSUM bytes, so no data dependency): the same PE tile,
  // so it waits for the first; same stationary, so no LS: 8 + 256 + 256 + 256 cycles.
  const auto serialised =
      simulate_in_child(kernel("0:32, 256:512", "0:32"), "trn2", {"tensor.throttle_enabled=false"});
  EXPECT_NEAR(kernel_ns(serialised), (8 + 256 + 256 + 256) / 2.4, 0.01);
}

TEST(CoreTiming, AWholeArrayMatmulWaitsForEveryTileAndEveryTileForIt) {
  // A 32x32-tile matmul, a whole-array one, then a tile on other cells than the first. Throttle
  // off, trn2: each multiply is max(min(64, N_stationary), 256) = 256 cycles.
  //   1. tile (0,0): LS 32/4 = 8 cycles, multiply 8-264.
  //   2. whole array: its LS (128/4 = 32 cycles) loads at 8-40 beside the first multiply; it
  //      needs every cell, so it starts when tile (0,0) is free: 264-520.
  //   3. tile (1,1): LS 8 cycles at 40-48; its cells are busy with the whole-array matmul until
  //      520: multiply 520-776, visible after the 256-cycle pipeline latency, at 1032.
  const std::string kernel = R"({
    "format": "trnsim-kernel/1", "name": "tiles",
    "tensors": {
      "small": {"memory": "sbuf", "dtype": "bfloat16", "shape": [128, 32]},
      "s": {"memory": "sbuf", "dtype": "bfloat16", "shape": [128, 128]},
      "m": {"memory": "sbuf", "dtype": "bfloat16", "shape": [128, 256]},
      "acc": {"memory": "psum", "dtype": "float32", "shape": [128, 512]}
    },
    "program": [
      {"op": "nc_matmul", "dst": "acc[0:32, 0:256]", "stationary": "small[0:32]", "moving": "m[0:32]"},
      {"op": "nc_matmul", "dst": "acc[0:128, 256:512]", "stationary": "s", "moving": "m"},
      {"op": "nc_matmul", "dst": "acc[32:64, 0:256]", "stationary": "small[32:64]", "moving": "m[32:64]"}
    ]})";
  const auto stats = simulate_in_child(kernel, "trn2", {"tensor.throttle_enabled=false"});
  EXPECT_NEAR(kernel_ns(stats), 1032 / 2.4, 0.01);
}

TEST(CoreTiming, DoubleBufferingOverlapsDmaAndCompute) {
  auto vector_add = [](bool double_buffered) {
    const std::string shape =
        double_buffered ? R"([2, 128, "F"], "partition_dim": 1)" : R"([128, "F"])";
    const std::string index = double_buffered ? "[t % 2]" : "";
    return R"({"format": "trnsim-kernel/1", "name": "va", "params": {"T": 8, "F": 2048},
      "tensors": {
        "a": {"memory": "hbm", "dtype": "float32", "shape": ["T", 128, "F"]},
        "b": {"memory": "hbm", "dtype": "float32", "shape": ["T", 128, "F"]},
        "out": {"memory": "hbm", "dtype": "float32", "shape": ["T", 128, "F"]},
        "a_sb": {"memory": "sbuf", "dtype": "float32", "shape": )" +
           shape + R"(},
        "b_sb": {"memory": "sbuf", "dtype": "float32", "shape": )" +
           shape + R"(},
        "c_sb": {"memory": "sbuf", "dtype": "float32", "shape": )" +
           shape + R"(}},
      "program": [{"for": "t", "range": "T", "body": [
        {"op": "dma_copy", "dst": "a_sb)" +
           index + R"(", "src": "a[t]"},
        {"op": "dma_copy", "dst": "b_sb)" +
           index + R"(", "src": "b[t]", "queue": 1},
        {"op": "tensor_tensor", "dst": "c_sb)" +
           index + R"(", "in0": "a_sb)" + index + R"(", "in1": "b_sb)" + index +
           R"(", "alu": "add"},
        {"op": "dma_copy", "dst": "out[t]", "src": "c_sb)" +
           index + R"("}]}]})";
  };
  const auto single = simulate_in_child(vector_add(false));
  const auto doubled = simulate_in_child(vector_add(true));
  const double single_ns = kernel_ns(single);
  const double double_ns = kernel_ns(doubled);
  const double vector_busy = 8 * kVectorAddNs;
  // Single buffering: every add waits for its loads and every load for the previous add, so
  // the vector engine waits on DMA in every iteration: total >= adds + 8 load latencies.
  EXPECT_GT(single_ns, vector_busy + 8 * 450);
  // Double buffering hides the loads behind the adds: clearly faster than single buffering.
  EXPECT_LT(double_ns, 0.8 * single_ns);
  EXPECT_EQ(single["cores"][0]["engines"]["vector"]["instructions"], 8);
  EXPECT_EQ(single["cores"][0]["dma"]["transfers"], 24);
}

}  // namespace
}  // namespace trnsim::testing

namespace trnsim::testing {
namespace {

// The spec's section 8 example (examples/kernels/vector_add.json: T = 8 tiles of [128, 2048]
// fp32, double-buffered; 16 loads and 8 stores of 1 MiB each = 25,165,824 B) on every
// generation. Bounds worked out by hand from each config:
//   DMA bound    = 25,165,824 B / min(16 engines x engine GB/s, core cap GB/s)
//   port bound   = 16,777,216 B read / HBM port GB/s (dma.hbm_port_bandwidth_gbps, per
//                  direction) + the last add + the last store (fixed cost + 1 MiB at
//                  min(port, DMA peak))
//   vector bound = 8 adds x 4096 cycles / vector clock + first load + last store, where a load
//                  or store is the latency 450 ns + 1 MiB at the core's DMA peak.
// The kernel can be no faster than the larger bound; with good overlap it should be within
// 20% of it (the rest: DMA fixed latency at the start and end, a queue's store waiting for its
// add while the loads behind it wait too, descriptors, and in the packet model HBM row misses).
struct GenerationCase {
  const char* config;
  double dma_peak_gbps;  // min(16 x engine_bandwidth_gbps, core_bandwidth_gbps)
  double vector_ghz;
  double hbm_port_gbps;  // dma.hbm_port_bandwidth_gbps
};

void PrintTo(const GenerationCase& c, std::ostream* os) {
  *os << c.config;
}

class SpecExample : public ::testing::TestWithParam<GenerationCase> {};

TEST_P(SpecExample, RunsWithinHandWorkedBounds) {
  const GenerationCase& c = GetParam();
  const double bytes = 25165824.0;
  const double dma_bound = bytes / c.dma_peak_gbps;
  const double one_transfer = 450.0 + 1048576.0 / c.dma_peak_gbps;
  const double vector_bound = 8 * 4096 / c.vector_ghz + 2 * one_transfer;
  const double port_bound = 2 * bytes / 3 / c.hbm_port_gbps + 4096 / c.vector_ghz + 450.0 +
                            1048576.0 / std::min(c.hbm_port_gbps, c.dma_peak_gbps);
  const double bound = std::max({dma_bound, vector_bound, port_bound});
  const std::string kernel = R"({"format": "trnsim-kernel/1", "name": "vector_add",
    "params": {"T": 8, "F": 2048},
    "tensors": {
      "a": {"memory": "hbm", "dtype": "float32", "shape": ["T", 128, "F"]},
      "b": {"memory": "hbm", "dtype": "float32", "shape": ["T", 128, "F"]},
      "out": {"memory": "hbm", "dtype": "float32", "shape": ["T", 128, "F"]},
      "a_sb": {"memory": "sbuf", "dtype": "float32", "shape": [2, 128, "F"], "partition_dim": 1},
      "b_sb": {"memory": "sbuf", "dtype": "float32", "shape": [2, 128, "F"], "partition_dim": 1},
      "c_sb": {"memory": "sbuf", "dtype": "float32", "shape": [2, 128, "F"], "partition_dim": 1}},
    "program": [{"for": "t", "range": "T", "body": [
      {"op": "dma_copy", "dst": "a_sb[t % 2]", "src": "a[t]"},
      {"op": "dma_copy", "dst": "b_sb[t % 2]", "src": "b[t]", "queue": 1},
      {"op": "tensor_tensor", "dst": "c_sb[t % 2]", "in0": "a_sb[t % 2]", "in1": "b_sb[t % 2]",
       "alu": "add"},
      {"op": "dma_copy", "dst": "out[t]", "src": "c_sb[t % 2]"}]}]})";
  const auto stats = simulate_in_child(kernel, c.config);
  const double time = kernel_ns(stats);
  EXPECT_GE(time, bound) << c.config;
  EXPECT_LE(time, 1.2 * bound) << c.config;
  EXPECT_EQ(stats["cores"][0]["hbm"]["read_bytes"].get<double>(), 2 * bytes / 3);
  EXPECT_EQ(stats["cores"][0]["hbm"]["write_bytes"].get<double>(), bytes / 3);
}

// trn1: 16 x 17 = 272 GB/s (core cap 500): DMA bound 92,521 ns; vector 1.12 GHz; HBM port
//   108 GB/s rules: 16,777,216 / 108 = 155,345 ns + 4096 / 1.12 = 3,657 ns + 450 ns +
//   1,048,576 / 108 = 9,709 ns: 169,161 ns.
// trn2: 16 x 23 = 368 (cap 437.5): 68,386 ns; vector 0.96 GHz; port 437.5 (not binding).
// trn3: 16 x 33 = 528 (cap 612.5): 47,663 ns; vector 1.2 GHz; port 612.5 (not binding).
// trn4 (projected): 16 x 132 = 2,112 (cap 2,450): 11,916 ns, so the vector bound rules:
//   8 x 4096 / 1.2 = 27,307 ns + 2 x (450 + 496.5) = 29,200 ns.
INSTANTIATE_TEST_SUITE_P(Generations, SpecExample,
                         ::testing::Values(GenerationCase{"trn1", 272, 1.12, 108},
                                           GenerationCase{"trn2", 368, 0.96, 437.5},
                                           GenerationCase{"trn3", 528, 1.2, 612.5},
                                           GenerationCase{"trn4", 2112, 1.2, 2450}),
                         [](const auto& param_info) {
                           return std::string(param_info.param.config);
                         });

TEST(Determinism, TwoRunsPrintByteIdenticalStatistics) {
  const std::string command = std::string(TRNSIM_BINARY) + " run " + TRNSIM_SOURCE_DIR +
                              "/examples/kernels/vector_add.json --json";
  auto capture = [&command] {
    std::string out;
    FILE* pipe = popen(command.c_str(), "r");
    if (pipe == nullptr) return out;
    char buffer[4096];
    std::size_t n;
    while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) out.append(buffer, n);
    pclose(pipe);
    return out;
  };
  const std::string first = capture();
  const std::string second = capture();
  ASSERT_FALSE(first.empty());
  EXPECT_EQ(first, second);
}

}  // namespace
}  // namespace trnsim::testing

namespace trnsim::testing {
namespace {

// NC-v2 (Trainium1): VectorE and GpSimdE cannot access SBUF at the same time (hardware-facts.md
// §7), so two independent instructions on them serialise; from NC-v3 on they overlap.
TEST(CoreTiming, SharedSbufPortSerialisesVectorAndGpSimdOnTrainium1) {
  const std::string kernel = R"({"format": "trnsim-kernel/1", "name": "ports",
    "tensors": {
      "x": {"memory": "sbuf", "dtype": "float32", "shape": [128, 2048]},
      "y": {"memory": "sbuf", "dtype": "float32", "shape": [128, 2048]},
      "z": {"memory": "sbuf", "dtype": "float32", "shape": [128, 2048]},
      "i": {"memory": "sbuf", "dtype": "int32", "shape": [128, 2048]}},
    "program": [
      {"op": "tensor_tensor", "dst": "z", "in0": "x", "in1": "y", "alu": "add"},
      {"op": "iota", "dst": "i", "expr": "p * 2048 + f"}]})";
  // trn1: add = 2N = 4096 cycles at 1.12 GHz = 3657.14 ns; iota = 150 + N = 2198 cycles at
  // 1.4 GHz = 1570 ns, which must wait for the add's SBUF access.
  EXPECT_NEAR(kernel_ns(simulate_in_child(kernel, "trn1")), 4096 / 1.12 + 2198 / 1.4, 0.01);
  // trn2: the two overlap; the add (4096 cycles at 0.96 GHz) is the longer one.
  EXPECT_NEAR(kernel_ns(simulate_in_child(kernel, "trn2")), 4096 / 0.96, 0.01);
}

// The spec lets any engine trigger a DMA, TensorE included ("trigger": "tensor"). The trigger
// is one issue slot on the triggering queue; the transfer itself does not depend on who
// triggered it, so an isolated DMA takes the same time from every trigger engine.
TEST(CoreTiming, DmaTriggeredFromAnyEngineTakesTheSameTime) {
  auto kernel = [](const std::string& trigger) {
    return R"({"format": "trnsim-kernel/1", "name": "trigger",
      "tensors": {"a": {"memory": "hbm", "dtype": "bfloat16", "shape": [128, 512]},
                  "b": {"memory": "sbuf", "dtype": "bfloat16", "shape": [128, 512]}},
      "program": [{"op": "dma_copy", "dst": "b", "src": "a", "trigger": ")" +
           trigger + R"("}]})";
  };
  const auto from_sync = simulate_in_child(kernel("sync"));
  const double expected = kernel_ns(from_sync);
  EXPECT_GT(expected, 0.0);
  for (const std::string trigger : {"tensor", "vector", "scalar", "gpsimd"}) {
    const auto stats = simulate_in_child(kernel(trigger));
    EXPECT_DOUBLE_EQ(kernel_ns(stats), expected) << trigger;
    EXPECT_EQ(stats["cores"][0]["engines"][trigger]["instructions"].get<int>(), 1) << trigger;
  }
}

// DMAs start in the order they become ready, not in the order they were triggered: B (128 KiB
// per partition row, ~7 us alone), triggered after A but independent, starts while A (a small
// store) waits for a VectorE memset of ~2 us. The kernel then ends when B alone would end: A
// ends at the memset plus its own short time, well before. Were B held behind A, it would start
// after the memset and end ~2 us later.
TEST(CoreTiming, ADmaReadyEarlierIsNotHeldBehindOneTriggeredBeforeIt) {
  auto kernel = [](bool with_a) {
    const std::string a = R"({"op": "memset", "dst": "t", "value": 0.0},
        {"op": "dma_copy", "dst": "out", "src": "t[:, 0:32]"},)";
    return R"({"format": "trnsim-kernel/1", "name": "order",
      "tensors": {"t": {"memory": "sbuf", "dtype": "float32", "shape": [128, 2048]},
                  "out": {"memory": "hbm", "dtype": "float32", "shape": [128, 32]},
                  "x": {"memory": "hbm", "dtype": "bfloat16", "shape": [128, 8192]},
                  "y": {"memory": "sbuf", "dtype": "bfloat16", "shape": [128, 8192]}},
      "program": [)" +
           (with_a ? a : std::string()) +
           R"({"op": "dma_copy", "dst": "y", "src": "x", "queue": 1}]})";
  };
  for (const std::string model : {"transfer", "packet"}) {
    const std::vector<std::string> sets = {"dma.model=" + model};
    const double b_alone = kernel_ns(simulate_in_child(kernel(false), "trn2", sets));
    const auto both = simulate_in_child(kernel(true), "trn2", sets);
    const double memset_ns = both["cores"][0]["engines"]["vector"]["active_ns"].get<double>();
    // Long enough to tell the two orders apart, short enough that A ends well before B.
    ASSERT_GT(memset_ns, 1500.0) << model;
    ASSERT_LT(memset_ns, b_alone / 2) << model;
    // A's 16 KiB on the shared engines may delay B by about a descriptor (~100 ns, 1.7% of B);
    // held behind A, B would end a memset (> 1.5 us) later.
    EXPECT_GE(kernel_ns(both), b_alone - 1.0) << model;
    EXPECT_LT(kernel_ns(both), b_alone + 0.25 * memset_ns) << model;
  }
}

// A DMA on TensorE's queue uses no PE cell, even in a fetch-buffer slot a matmul used before.
// With a one-instruction fetch buffer and no fetch latency, the DMA trigger is fetched into the
// slot each matmul frees when it starts. Throttle off, trn2, transfer DMA model: the first matmul
// is LS 128/4 = 32 cycles then a 512-cycle multiply on the whole array; the second (same
// stationary, no LS) waits for the first's cells: 544-1056. The DMA is fetched when the second
// matmul starts (544) and issues in order after it, at 544 cycles, not
// when the cells are free (1056). The DMA alone takes D from its trigger, so it ends at 544 / 2.4
// ns + D, after the second matmul's result (1056 + 256 cycles).
TEST(CoreTiming, DmaOnTensorQueueDoesNotWaitForPeCells) {
  const std::vector<std::string> sets = {"tensor.throttle_enabled=false",
                                         "sequencer.fetch_buffer_instructions=1",
                                         "sequencer.fetch_latency_ns=0", "dma.model=transfer"};
  auto kernel = [](const std::string& program) {
    return R"({"format": "trnsim-kernel/1", "name": "queue",
      "tensors": {"a": {"memory": "hbm", "dtype": "bfloat16", "shape": [128, 2048]},
                  "b": {"memory": "sbuf", "dtype": "bfloat16", "shape": [128, 2048]},
                  "s": {"memory": "sbuf", "dtype": "bfloat16", "shape": [128, 128]},
                  "m": {"memory": "sbuf", "dtype": "bfloat16", "shape": [128, 512]},
                  "acc": {"memory": "psum", "dtype": "float32", "shape": [2, 128, 512],
                          "partition_dim": 1}},
      "program": [)" +
           program + "]}";
  };
  const std::string dma = R"({"op": "dma_copy", "dst": "b", "src": "a", "trigger": "tensor"})";
  const double dma_alone = kernel_ns(simulate_in_child(kernel(dma), "trn2", sets));
  const auto stats = simulate_in_child(
      kernel(R"({"op": "nc_matmul", "dst": "acc[0]", "stationary": "s", "moving": "m"},
                {"op": "nc_matmul", "dst": "acc[1]", "stationary": "s", "moving": "m"}, )" +
             dma),
      "trn2", sets);
  ASSERT_GT(dma_alone, 1312 / 2.4);
  EXPECT_NEAR(kernel_ns(stats), 544 / 2.4 + dma_alone, 0.01);
}

}  // namespace
}  // namespace trnsim::testing
