// Per-engine instruction streams: each engine fetches and runs its own stream and waits only for
// its own order and true dependencies, never for another engine's stream; the instruction fetch
// model (fetch buffer depth, fetch latency, fetch rate). Expected times are worked out by hand
// from the configs (configs/trn1.json, configs/trn2.json) and the rules in docs/cost-models.md
// ("Instruction fetch").
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sim_harness.hpp"
#include "trn2_costs.hpp"

namespace trnsim::testing {
namespace {

// Trainium2 (configs/trn2.json): VectorE 0.96 GHz, MIN_II 64 cycles; ScalarE 1.2 GHz; TensorE
// 2.4 GHz, LoadStationary 128 / 4 = 32 cycles, pipeline latency 256 cycles; semaphore 50 ns.
// kSemaphoreNs, kVectorAddNs, kScalarCopyNs: trn2_costs.hpp.
// tensor_scalar fp32 [128, 64]: max(MIN_II, N) = 64 cycles at 0.96 GHz.
constexpr double kShortVectorNs = 64 / 0.96;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The worked example: 10,000 BF16 matmuls [128x128] x [128x512] (one stationary, so one
// LoadStationary) with, in the first 400 iterations, an independent fp32 [128, 2048] VectorE add.
// Trainium1 (no throttle), TensorE 2.8 GHz: LoadStationary 32 cycles, then 512 cycles per
// matmul back to back, then the 256-cycle pipeline latency of the last one:
// 32 + 10,000 x 512 + 256 = 5,120,288 cycles = 1,828,674.3 ns. The adds (400 x 4096 cycles at
// VectorE's clock) run beside the matmuls on their own stream: the kernel takes the matmuls' time.
TEST(EngineStreams, VectorAddsRunBesideMatmulsAndAddNothing) {
  const std::string kernel = read_file(std::string(TRNSIM_SOURCE_DIR) +
                                       "/tests/core/kernels/matmuls_beside_vector_adds.json");
  const double matmuls_ns = (32 + 10000.0 * 512 + 256) / 2.8;
  const auto alone = simulate_in_child(kernel, "trn1", {}, {"A=0"});
  const auto both = simulate_in_child(kernel, "trn1", {}, {"A=400"});
  EXPECT_NEAR(kernel_ns(alone), matmuls_ns, 0.01);
  EXPECT_NEAR(kernel_ns(both), matmuls_ns, 0.01);
  EXPECT_EQ(both["cores"][0]["engines"]["vector"]["instructions"].get<int>(), 400);
  // TensorE never waited for anything.
  for (const auto& [producer, wait] :
       both["cores"][0]["engines"]["tensor"]["dependency_wait_by_producer_ns"].items()) {
    EXPECT_EQ(wait.get<double>(), 0.0) << producer;
  }
}

// A simulator bound, not the hardware: with at most 64 instructions in flight, the program walk
// cannot hand the adds' engine its next add before the matmuls ahead of it in program order
// retire, and the adds (longer than the matmuls) hold the matmuls back in turn.
TEST(EngineStreams, AnInFlightBoundTooSmallCouplesTheStreams) {
  const std::string kernel = read_file(std::string(TRNSIM_SOURCE_DIR) +
                                       "/tests/core/kernels/matmuls_beside_vector_adds.json");
  const auto bounded =
      simulate_in_child(kernel, "trn1", {"sequencer.max_in_flight_instructions=64"}, {"A=400"});
  EXPECT_GT(kernel_ns(bounded), (32 + 10000.0 * 512 + 256) / 2.8 * 1.05);
}

std::string short_vector_ops(int count) {
  std::string program;
  for (int i = 0; i < count; ++i) {
    if (i > 0) program += ",";
    program += R"({"op": "tensor_scalar", "dst": "y[)" + std::to_string(i) +
               R"(]", "src": "x", "op0": "multiply", "operand0": 2.0})";
  }
  return R"({"format": "trnsim-kernel/1", "name": "fetch",
    "tensors": {"x": {"memory": "sbuf", "dtype": "float32", "shape": [128, 64]},
                "y": {"memory": "sbuf", "dtype": "float32", "shape": [)" +
         std::to_string(count) + R"(, 128, 64], "partition_dim": 1}},
    "program": [)" +
         program + "]}";
}

// A dependency chain across engines, with a long independent TensorE stream between its links
// in program order: VectorE add (0 - 4266.7 ns) -> semaphore -> ScalarE copy. ScalarE's copy
// waits only for the add: it starts at 4266.7 + 50 ns whatever TensorE has queued (300 matmuls,
// 64,120.8 ns with the throttle off: (32 + 300 x 512 + 256) cycles at 2.4 GHz).
TEST(EngineStreams, ADependencyChainAcrossEnginesWaitsOnlyForItsProducers) {
  std::string matmuls;
  for (int i = 0; i < 300; ++i) {
    matmuls += R"({"op": "nc_matmul", "dst": "acc", "stationary": "s", "moving": "m"},)";
  }
  const std::string kernel = R"({"format": "trnsim-kernel/1", "name": "chain",
    "tensors": {"x": {"memory": "sbuf", "dtype": "float32", "shape": [128, 2048]},
                "y": {"memory": "sbuf", "dtype": "float32", "shape": [128, 2048]},
                "z": {"memory": "sbuf", "dtype": "float32", "shape": [128, 2048]},
                "w": {"memory": "sbuf", "dtype": "float32", "shape": [128, 2048]},
                "s": {"memory": "sbuf", "dtype": "bfloat16", "shape": [128, 128]},
                "m": {"memory": "sbuf", "dtype": "bfloat16", "shape": [128, 512]},
                "acc": {"memory": "psum", "dtype": "float32", "shape": [128, 512]}},
    "program": [
      {"op": "tensor_tensor", "dst": "z", "in0": "x", "in1": "y", "alu": "add"},)" +
                             matmuls + R"(
      {"op": "activation", "dst": "w", "src": "z", "func": "copy"}]})";
  const auto stats = simulate_in_child(kernel, "trn2", {"tensor.throttle_enabled=false"});
  EXPECT_NEAR(kernel_ns(stats), (32 + 300.0 * 512 + 256) / 2.4, 0.01);
  const auto& scalar = stats["cores"][0]["engines"]["scalar"];
  // Fetched when the kernel starts, so it waited from 0 for the add and the semaphore.
  EXPECT_NEAR(scalar["dependency_wait_by_producer_ns"]["vector"].get<double>(),
              kVectorAddNs + kSemaphoreNs, 0.01);
  EXPECT_NEAR(scalar["active_ns"].get<double>(), kScalarCopyNs, 0.01);
}

// Fetch buffer depth and latency: 16 independent short VectorE instructions (66.7 ns each), a
// 4-instruction fetch buffer and a 1000 ns fetch latency (fetch rate unbounded). The launch
// fills the buffer with instructions 0-3: they run at 0, 66.7, 133.3, 200 ns. Instruction 4+j
// is fetched 1000 ns after instruction j started, so each group of four starts 1000 ns after the
// one before: the last group at 3000 ns, its last instruction ends at 3000 + 4 x 66.7 ns.
TEST(EngineStreams, FetchLatencyShowsWhenTheBufferRunsDry) {
  const auto stats =
      simulate_in_child(short_vector_ops(16), "trn2",
                        {"sequencer.fetch_buffer_instructions=4", "sequencer.fetch_latency_ns=1000",
                         "sequencer.fetch_instructions_per_ns=1000"});
  EXPECT_NEAR(kernel_ns(stats), 3000 + 4 * kShortVectorNs, 0.01);
}

// Fetch rate: 8 instructions, a 4-instruction buffer, no latency, one instruction per 500 ns.
// Instructions 0-3 come with the launch (0 - 266.7 ns); 4, 5, 6, 7 arrive at 500, 1000, 1500,
// 2000 ns: the last ends at 2000 + 66.7 ns.
TEST(EngineStreams, FetchRateBoundsAStreamOfShortInstructions) {
  const auto stats =
      simulate_in_child(short_vector_ops(8), "trn2",
                        {"sequencer.fetch_buffer_instructions=4", "sequencer.fetch_latency_ns=0",
                         "sequencer.fetch_instructions_per_ns=0.002"});
  EXPECT_NEAR(kernel_ns(stats), 2000 + kShortVectorNs, 0.01);
}

// The default fetch model (64-deep buffer, 100 ns latency) hides fetch behind instructions of
// at least 100 / 64 ns: 200 short VectorE instructions take 200 x 66.7 ns.
TEST(EngineStreams, DefaultFetchIsHiddenBehindShortInstructions) {
  const auto stats = simulate_in_child(short_vector_ops(200), "trn2");
  EXPECT_NEAR(kernel_ns(stats), 200 * kShortVectorNs, 0.01);
}

}  // namespace
}  // namespace trnsim::testing
