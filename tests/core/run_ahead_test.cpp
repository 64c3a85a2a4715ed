// NeuronCore::run_ahead(): a single-core system runs ahead of the SystemC kernel when nothing
// else is pending. It must change nothing but the simulator's speed: every example kernel gives
// the same statistics with it and without it, on every generation and with both DMA models.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sim_harness.hpp"

namespace trnsim::testing {
namespace {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> example_kernels() {
  std::vector<std::string> names;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(TRNSIM_SOURCE_DIR) + "/examples/kernels")) {
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

struct Variant {
  const char* config;
  const char* dma_model;
};

class RunAheadExample : public ::testing::TestWithParam<std::string> {};

TEST_P(RunAheadExample, GivesTheSameStatisticsAsRunningInStep) {
  // The sanitizer suite (scripts/test.sh --sanitize) leaves out the two full-size T1 matmuls
  // (about a minute there): the Release suite compares them, and the other examples take the
  // same code paths under the sanitizers.
  if (std::getenv("TRNSIM_SANITIZER_SUITE") != nullptr &&
      (GetParam() == "matmul_t1_v1_tiled" || GetParam() == "matmul_t1_v2_hoisted")) {
    GTEST_SKIP() << "sanitizer suite: the Release suite compares this full-size kernel";
  }
  const std::string kernel =
      read_file(std::string(TRNSIM_SOURCE_DIR) + "/examples/kernels/" + GetParam() + ".json");
  ASSERT_FALSE(kernel.empty());
  for (const Variant variant :
       {Variant{"trn1", "transfer"}, Variant{"trn2", "packet"}, Variant{"trn2", "transfer"},
        Variant{"trn3", "transfer"}, Variant{"trn4", "transfer"}}) {
    SCOPED_TRACE(std::string(variant.config) + " dma.model=" + variant.dma_model);
    SimulationRequest request;
    request.kernel_json = kernel;
    request.config = variant.config;
    request.sets = {std::string("dma.model=") + variant.dma_model};
    nlohmann::json ahead = simulate_in_child(request);
    request.run_ahead = system::RunAhead::kOff;
    nlohmann::json in_step = simulate_in_child(request);
    if (ahead.contains("error") || in_step.contains("error")) {
      EXPECT_EQ(ahead, in_step);  // the same bad input fails the same way
      continue;
    }
    EXPECT_EQ(in_step["simulator"]["wakes_run_ahead"], 0);
    ahead.erase("simulator");
    in_step.erase("simulator");
    EXPECT_EQ(ahead.dump(), in_step.dump());
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, RunAheadExample, ::testing::ValuesIn(example_kernels()),
                         [](const auto& param_info) { return param_info.param; });

// More DMAs in flight than the dispatcher's ring of in-flight instructions holds (4096): the
// dispatcher waits for ring slots, for DMAs and for matmuls that wait for their stationary's
// LoadStationary, while the engines and the DMA dispatcher run ahead.
TEST(RunAhead, GivesTheSameStatisticsWhenTheDispatcherWaitsForRingSlots) {
  const std::string kernel = R"({
    "format": "trnsim-kernel/1", "name": "ring_full", "params": {"N": 300, "D": 20},
    "tensors": {
      "x": {"memory": "hbm", "dtype": "bfloat16", "shape": ["N", "D", 128, 128]},
      "xs": {"memory": "sbuf", "dtype": "bfloat16", "shape": [2, "D", 128, 128], "partition_dim": 2},
      "s": {"memory": "sbuf", "dtype": "bfloat16", "shape": [2, 128, 128], "partition_dim": 1},
      "m": {"memory": "sbuf", "dtype": "bfloat16", "shape": [128, 512]},
      "acc": {"memory": "psum", "dtype": "float32", "shape": [2, 128, 512], "partition_dim": 1}},
    "program": [{"for": "i", "range": "N", "body": [
      {"for": "j", "range": "D", "body": [
        {"op": "dma_copy", "dst": "xs[i % 2, j]", "src": "x[i, j]", "queue": "j % 16"}]},
      {"op": "activation", "dst": "s[i % 2]", "src": "xs[i % 2, D - 1]", "func": "exp"},
      {"op": "nc_matmul", "dst": "acc[i % 2]", "stationary": "s[i % 2]", "moving": "m"}]}]
  })";
  for (const char* model : {"transfer", "packet"}) {
    SCOPED_TRACE(model);
    SimulationRequest request;
    request.kernel_json = kernel;
    request.sets = {std::string("dma.model=") + model};
    nlohmann::json ahead = simulate_in_child(request);
    request.run_ahead = system::RunAhead::kOff;
    nlohmann::json in_step = simulate_in_child(request);
    ASSERT_FALSE(ahead.contains("error")) << ahead.dump();
    EXPECT_GT(ahead["simulator"]["wakes_run_ahead"].get<std::uint64_t>(), 0u);
    ahead.erase("simulator");
    in_step.erase("simulator");
    EXPECT_EQ(ahead.dump(), in_step.dump());
  }
}

// The comparison above means something only if running ahead happens: on one core, with the
// transfer-level DMA model, the engines' and the DMA dispatcher's wake-ups almost never need the
// kernel. Several cores whose DMA model has a process of its own (packet) do not run ahead: the
// model's process may act on any core at any time.
TEST(RunAhead, HappensOnOneCoreAndNotOnSeveralWithAModelProcess) {
  const std::string vector_add =
      read_file(std::string(TRNSIM_SOURCE_DIR) + "/examples/kernels/vector_add.json");
  SimulationRequest request;
  request.kernel_json = vector_add;
  request.sets = {"dma.model=transfer"};
  const nlohmann::json one_core = simulate_in_child(request);
  ASSERT_FALSE(one_core.contains("error")) << one_core.dump();
  const auto ahead = one_core["simulator"]["wakes_run_ahead"].get<std::uint64_t>();
  const auto through = one_core["simulator"]["wakes_through_kernel"].get<std::uint64_t>();
  EXPECT_GT(ahead, 10 * through);

  nlohmann::json two_cores = nlohmann::json::parse(vector_add);
  two_cores["cores"] = 2;
  request.kernel_json = two_cores.dump();
  request.sets = {"dma.model=packet"};
  const nlohmann::json cores = simulate_in_child(request);
  ASSERT_FALSE(cores.contains("error")) << cores.dump();
  EXPECT_EQ(cores["simulator"]["wakes_run_ahead"], 0);
  EXPECT_GT(cores["simulator"]["wakes_through_kernel"].get<std::uint64_t>(), 0u);
}

// Groups of cores that run ahead together (core::RunGroup): each core loads, multiplies and
// stores its own tiles (per-core HBM tensors). With the transfer-level DMA model a core's DMA
// timing depends only on the cores of its home HBM stack: on Trainium1 (here trn1-32xl: two
// chips for four cores) a stack per core, on Trainium2 one per two cores, whose DMAs submitted at
// one time pass the stack in core order. Each group runs all its wake-ups ahead of the kernel,
// and the statistics are the same as in step, with every core's instructions interleaved in
// time order by the kernel.
std::string per_core_tiles(const char* extra_statement = "") {
  return std::string(R"({
    "format": "trnsim-kernel/1", "name": "per_core_tiles", "params": {"T": 40, "C": 4},
    "cores": "C",
    "tensors": {
      "x": {"memory": "hbm", "dtype": "bfloat16", "shape": ["T", 128, 512], "per_core": true},
      "w": {"memory": "hbm", "dtype": "bfloat16", "shape": [128, 128]},
      "out": {"memory": "hbm", "dtype": "float32", "shape": ["T", 128, 512], "per_core": true},
      "w_sb": {"memory": "sbuf", "dtype": "bfloat16", "shape": [128, 128]},
      "x_sb": {"memory": "sbuf", "dtype": "bfloat16", "shape": [2, 128, 512], "partition_dim": 1},
      "y_sb": {"memory": "sbuf", "dtype": "float32", "shape": [2, 128, 512], "partition_dim": 1},
      "acc": {"memory": "psum", "dtype": "float32", "shape": [2, 128, 512], "partition_dim": 1}},
    "program": [
      {"op": "dma_copy", "dst": "w_sb", "src": "w"},
      {"for": "t", "range": "T", "body": [
        {"op": "dma_copy", "dst": "x_sb[t % 2]", "src": "x[t]", "queue": "t % 4"},
        {"op": "nc_matmul", "dst": "acc[t % 2]", "stationary": "w_sb", "moving": "x_sb[t % 2]"},
        {"op": "activation", "dst": "y_sb[t % 2]", "src": "acc[t % 2]", "func": "gelu"},
        {"op": "dma_copy", "dst": "out[t]", "src": "y_sb[t % 2]", "queue": "4 + t % 4"}]})") +
         extra_statement + "]}";
}

struct GroupCase {
  const char* config;
  const char* dma_model;
  const char* extra_statement;
  bool runs_ahead;
};

TEST(RunAhead, GroupsOfCoresRunAheadAndGiveTheSameStatistics) {
  const char* barrier = R"(, {"op": "core_barrier"})";
  for (const GroupCase& variant : {
           // A stack per core, DMA timing computed at submission.
           GroupCase{"trn1-32xl", "transfer", "", true},
           // Two cores share each HBM stack: each pair runs ahead together, the DMAs the two
           // submit at one time passing their stack in core order either way.
           GroupCase{"trn2", "transfer", "", true},
           // The flow model keeps the cores of each stack in a partition of their own, which
           // the group drives.
           GroupCase{"trn1-32xl", "flow", "", true},
           GroupCase{"trn2", "flow", "", true},
           // The packet model moves data in processes of its own.
           GroupCase{"trn1-32xl", "packet", "", false},
           // A barrier's release comes from the last core to arrive.
           GroupCase{"trn1-32xl", "transfer", barrier, false},
           GroupCase{"trn2", "flow", barrier, false},
       }) {
    SCOPED_TRACE(std::string(variant.config) + " dma.model=" + variant.dma_model +
                 (*variant.extra_statement != 0 ? " with a core_barrier" : ""));
    SimulationRequest request;
    request.kernel_json = per_core_tiles(variant.extra_statement);
    request.config = variant.config;
    request.sets = {std::string("dma.model=") + variant.dma_model};
    nlohmann::json ahead = simulate_in_child(request);
    request.run_ahead = system::RunAhead::kOff;
    nlohmann::json in_step = simulate_in_child(request);
    ASSERT_FALSE(ahead.contains("error")) << ahead.dump();
    ASSERT_EQ(ahead["cores"].size(), 4u);
    const auto run_ahead = ahead["simulator"]["wakes_run_ahead"].get<std::uint64_t>();
    const auto through = ahead["simulator"]["wakes_through_kernel"].get<std::uint64_t>();
    if (variant.runs_ahead) {
      // Only the processes' first runs and what a run leaves for the next go through the
      // kernel: a few per core.
      EXPECT_GT(run_ahead, 50 * through);
    } else {
      EXPECT_EQ(run_ahead, 0u);
    }
    ahead.erase("simulator");
    in_step.erase("simulator");
    EXPECT_EQ(ahead.dump(), in_step.dump());
  }
}

}  // namespace
}  // namespace trnsim::testing
