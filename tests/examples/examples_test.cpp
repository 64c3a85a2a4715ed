// Runs every example kernel (examples/kernels/, listed in validation/catalog.hpp) on every
// generation it supports, at reduced sizes, as a `trnsim run --json` child process. Checks that
// it completes, that the FLOPs and HBM bytes equal what the shapes imply (worked out here from
// the params, independently of trnsim), and that no unit is active, or active and waiting for
// dependencies together, longer than the kernel.
// Also: the catalogue lists every file, and every generation it leaves out rejects the kernel.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "sweep/workers.hpp"
#include "validation/catalog.hpp"

namespace trnsim::validation {
namespace {

using std::uint64_t;

const std::string kKernels = std::string(TRNSIM_SOURCE_DIR) + "/examples/kernels/";
const std::vector<std::string> kGenerations = {"trn1", "trn2", "trn3", "trn4"};

struct Expected {
  std::vector<std::pair<std::string, uint64_t>> params;  ///< reduced sizes (--param)
  uint64_t flops = 0;
  uint64_t hbm_read = 0;
  uint64_t hbm_write = 0;
};

/// Matmul FLOPs: 2 * K * M * N.
constexpr uint64_t mm(uint64_t k, uint64_t m, uint64_t n) {
  return 2 * k * m * n;
}

/// What each example's shapes imply at its reduced sizes. Tiles are 128 (pmax, stationary
/// width) and 512 (one PSUM bank of FP32) on every generation.
std::map<std::string, Expected> expectations() {
  std::map<std::string, Expected> e;
  {
    // Causal flash attention, one head of SEQ = 1024, D = 128: 8 query tiles of 128, key
    // blocks of 512; query tile i sees (128 i) // 512 + 1 blocks: 1,1,1,1,2,2,2,2 = 12 blocks.
    // Per block: S = Q K^T (K = 128, M = 128, N = 512) and P V as 4 matmuls (K = 128, M = 128,
    // N = 128). Reads q, k, v (1024 x 128 bf16 each), writes out (1024 x 128 bf16).
    const uint64_t blocks = 12;
    e["flash_attention_fwd.json"] = {{{"SEQ", 1024}, {"HEADS", 1}},
                                     blocks * (mm(128, 128, 512) + 4 * mm(128, 128, 128)),
                                     3 * 1024 * 128 * 2,
                                     1024 * 128 * 2};
  }
  for (const char* file : {"layernorm_v1.json", "layernorm_v2.json"}) {
    // [512, 2048] fp32; gamma and beta broadcast by D / 512 = 4 matmuls each with K = 1,
    // M = 128, N = 512. Reads x, gamma, beta; writes out.
    e[file] = {{{"ROWS", 512}, {"D", 2048}},
               2 * 4 * mm(1, 128, 512),
               512 * 2048 * 4 + 2 * 2048 * 4,
               512 * 2048 * 4};
  }
  {
    // M = 2048, K = 1024, N = 1024 bf16 with blocks 2048 x 1024 x 1024: one block of each.
    // rhs read once (K N), lhsT once per column block (1 x K M), result written once (M N).
    const uint64_t m = 2048, k = 1024, n = 1024;
    e["matmul_bf16_large.json"] = {
        {{"M", m}, {"K", k}, {"N", n}}, mm(k, m, n), (k * n + k * m) * 2, m * n * 2};
    e["matmul_t1_v4_optimized.json"] = e["matmul_bf16_large.json"];
  }
  {
    // FP8 (1 byte): M = 2048, K = 2048 (blocks of 8 double-row tiles of 256), N = 1024.
    const uint64_t m = 2048, k = 2048, n = 1024;
    e["matmul_fp8_double_row.json"] = {
        {{"M", m}, {"K", k}, {"N", n}}, mm(k, m, n), k * n + k * m, m * n * 2};
  }
  {
    // MXFP8: M = 1024 (one row block), N = 2048 (two column blocks of 1024), K = 2048 values.
    // Data: 1 byte per value (4 per 32-bit container); scales: 1 byte per 32 values.
    // lhsT block loaded once: K M + K M / 32; rhs blocks once per row block: K N + K N / 32;
    // result bf16.
    const uint64_t m = 1024, k = 2048, n = 2048;
    e["matmul_mx.json"] = {{{"M", m}, {"K", k}, {"N", n}},
                           mm(k, m, n),
                           k * m + k * m / 32 + k * n + k * n / 32,
                           m * n * 2};
  }
  {
    // v1: every (m, n, k) loads a [128,128] lhsT and a [128,512] rhs tile (bf16).
    const uint64_t m = 256, k = 512, n = 1024;
    const uint64_t steps = (m / 128) * (n / 512) * (k / 128);
    e["matmul_t1_v1_tiled.json"] = {{{"M", m}, {"K", k}, {"N", n}},
                                    mm(k, m, n),
                                    steps * (128 * 128 + 128 * 512) * 2,
                                    m * n * 2};
    // v2: lhsT once (K M), rhs once per row tile of 128 (M / 128 x K N).
    e["matmul_t1_v2_hoisted.json"] = {
        {{"M", m}, {"K", k}, {"N", n}}, mm(k, m, n), (k * m + (m / 128) * k * n) * 2, m * n * 2};
    // v3: lhsT once, rhs once per row block of 256.
    e["matmul_t1_v3_blocked.json"] = {{{"M", 512}, {"K", k}, {"N", 2048}},
                                      mm(k, 512, 2048),
                                      (k * 512 + (512 / 256) * k * 2048) * 2,
                                      512 * 2048 * 2};
  }
  {
    // The format guide's kernel at its defaults: K 512, M 256, N 1024, tiles 128 x 128 x 512,
    // A and B reloaded for every (m, n, k); C float32.
    const uint64_t m = 256, k = 512, n = 1024;
    const uint64_t steps = (m / 128) * (n / 512) * (k / 128);
    e["matmul_tiled.json"] = {{}, mm(k, m, n), steps * (128 * 128 + 128 * 512) * 2, m * n * 4};
  }
  {
    // 4 experts, capacity 2 tiles: expert e gets 1 + (5 e) % 2 tiles = 1, 2, 1, 2 (6 tiles of
    // 128 tokens). D = 256, F = 1024. Weights (D F bf16) once per expert, tokens (D x 128)
    // per tile, outputs (128 x F) per tile.
    const uint64_t d = 256, f = 1024, tiles = 6;
    e["moe_grouped_matmul.json"] = {{{"EXPERTS", 4}, {"CAP_TILES", 2}, {"D", d}, {"F", f}},
                                    tiles * mm(d, 128, f),
                                    4 * d * f * 2 + tiles * d * 128 * 2,
                                    tiles * 128 * f * 2};
  }
  // RMSNorm [512, 1024] bf16: gamma broadcast by 2 matmuls (K 1, M 128, N 512).
  e["rmsnorm.json"] = {
      {{"ROWS", 512}, {"D", 1024}}, 2 * mm(1, 128, 512), 512 * 1024 * 2 + 1024 * 2, 512 * 1024 * 2};
  {
    // 2 channel tiles x 4 states x 2 broadcasts (B and C rows) of K 1, M 128, N LEN = 256.
    // Reads B and C (4 x 256 fp32 each) once; per channel tile delta, u (128 x 256) and
    // A (128 x 4); writes y.
    e["selective_scan.json"] = {{{"CHANNELS", 256}, {"STATES", 4}, {"LEN", 256}},
                                2 * 4 * 2 * mm(1, 128, 256),
                                2 * 4 * 256 * 4 + 2 * (2 * 128 * 256 * 4 + 128 * 4 * 4),
                                256 * 256 * 4};
  }
  e["softmax.json"] = {{{"ROWS", 512}, {"COLS", 1024}}, 0, 512 * 1024 * 4, 512 * 1024 * 4};
  e["transpose_dma.json"] = {{{"R", 256}, {"C", 512}}, 0, 256 * 512 * 2, 256 * 512 * 2};
  e["transpose_tensor_engine.json"] = {{{"R", 256}, {"C", 512}}, 0, 256 * 512 * 4, 256 * 512 * 4};
  // out = a + b over T tiles of [128, F] fp32.
  e["vector_add.json"] = {{{"T", 4}, {"F", 512}}, 0, 2 * 4 * 128 * 512 * 4, 4 * 128 * 512 * 4};
  e["vector_add_single_buffer.json"] = e["vector_add.json"];
  e["vector_add_t3.json"] = {{{"N", 256000}, {"FREE_DIM", 1000}}, 0, 2 * 256000 * 4, 256000 * 4};
  // Collectives at their defaults (2 ranks): no matmul, and no core-issued DMA: the
  // collective-communication cores move the data, which the run reports under /collectives,
  // not in the cores' HBM statistics.
  for (const char* file :
       {"collective_all_reduce.json", "collective_all_gather.json", "collective_permute.json"}) {
    e[file] = {{}, 0, 0, 0};
  }
  // 4 loads of [128, 512] bf16.
  e["dma_load_stream.json"] = {{{"COUNT", 4}, {"F", 512}}, 0, 4 * 128 * 512 * 2, 0};
  e["dma_load_stream_hwdge.json"] = e["dma_load_stream.json"];
  // Collectives only: their traffic is the collective-communication cores' DMA legs, not the
  // kernel's own DMAs, so no core reports HBM bytes (docs/collectives.md).
  e["collective_all_reduce.json"] = {{}, 0, 0, 0};
  e["collective_all_gather.json"] = {{}, 0, 0, 0};
  e["collective_permute.json"] = {{}, 0, 0, 0};
  return e;
}

struct Child {
  int exit_code = -1;
  std::string out;
  std::string err;
};

Child run_trnsim(const std::vector<std::string>& args) {
  sweep::WorkerTask task;
  task.argv = {TRNSIM_BINARY};
  task.argv.insert(task.argv.end(), args.begin(), args.end());
  bool given = false;
  Child child;
  sweep::run_workers(
      {},
      [&]() -> std::optional<sweep::WorkerTask> {
        if (given) return std::nullopt;
        given = true;
        return task;
      },
      [&](const sweep::WorkerTask&, sweep::WorkerOutcome&& outcome) {
        child = {outcome.exit_code, std::move(outcome.out), std::move(outcome.err)};
      });
  return child;
}

std::vector<std::string> param_args(const Expected& expected) {
  std::vector<std::string> args;
  for (const auto& [name, value] : expected.params) {
    args.push_back("--param");
    args.push_back(name + "=" + std::to_string(value));
  }
  return args;
}

TEST(ExampleCatalogue, ListsEveryKernelFileAndHasExpectations) {
  std::set<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(kKernels)) {
    if (entry.path().extension() == ".json") files.insert(entry.path().filename().string());
  }
  std::set<std::string> listed;
  for (const ExampleKernel& kernel : example_kernels()) listed.insert(kernel.file);
  EXPECT_EQ(files, listed) << "examples/kernels/ and validation/catalog.cpp disagree";
  const auto table = expectations();
  for (const std::string& file : files) {
    EXPECT_TRUE(table.count(file)) << file << " has no expected FLOPs/bytes in this test";
  }
}

TEST(ExampleCatalogue, LeftOutGenerationsRejectTheKernel) {
  for (const ExampleKernel& kernel : example_kernels()) {
    for (const std::string& generation : kGenerations) {
      const bool supported = std::find(kernel.generations.begin(), kernel.generations.end(),
                                       generation) != kernel.generations.end();
      if (supported) continue;
      const Child child = run_trnsim({"check", kKernels + kernel.file, "--config", generation});
      EXPECT_EQ(child.exit_code, 2) << kernel.file << " on " << generation;
      EXPECT_NE(child.err.find("op-generation"), std::string::npos)
          << kernel.file << " on " << generation << ": " << child.err;
    }
  }
}

struct Case {
  std::string file;
  std::string generation;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.file << " on " << c.generation;
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const ExampleKernel& kernel : example_kernels()) {
    for (const std::string& generation : kernel.generations) {
      cases.push_back({kernel.file, generation});
    }
  }
  return cases;
}

class ExampleRun : public ::testing::TestWithParam<Case> {};

/// Busy and dependency-wait times are engine time (core/core_stats.hpp): per unit they never
/// overlap, so together they fit in the kernel time, and the waiting-on breakdown adds up to the
/// wait.
void expect_engine_time_within_the_kernel(const nlohmann::json& stats) {
  const double kernel_ns = stats["time"]["kernel_ns"].get<double>();
  for (const nlohmann::json& core : stats["cores"]) {
    for (const auto& [engine, figures] : core["engines"].items()) {
      const double wait_ns = figures["dependency_wait_ns"].get<double>();
      EXPECT_LE(figures["active_ns"].get<double>() + wait_ns, kernel_ns * (1 + 1e-12)) << engine;
      double by_producer_ns = 0;
      for (const auto& [producer, ns] : figures["dependency_wait_by_producer_ns"].items()) {
        by_producer_ns += ns.get<double>();
      }
      EXPECT_NEAR(by_producer_ns, wait_ns, 1e-9 * std::max(1.0, wait_ns)) << engine;
    }
  }
}

TEST_P(ExampleRun, CompletesWithTheImpliedFlopsBytesAndEngineTimes) {
  const Case& c = GetParam();
  const auto table = expectations();
  ASSERT_TRUE(table.count(c.file));
  const Expected& expected = table.at(c.file);
  std::vector<std::string> args = {"run", kKernels + c.file, "--config", c.generation, "--json"};
  const std::vector<std::string> params = param_args(expected);
  args.insert(args.end(), params.begin(), params.end());
  const Child child = run_trnsim(args);
  ASSERT_EQ(child.exit_code, 0) << child.err;
  const nlohmann::json stats = nlohmann::json::parse(child.out);

  EXPECT_EQ(stats["system"]["flops"].get<uint64_t>(), expected.flops);
  uint64_t read = 0;
  uint64_t written = 0;
  for (const nlohmann::json& core : stats["cores"]) {
    read += core["hbm"]["read_bytes"].get<uint64_t>();
    written += core["hbm"]["write_bytes"].get<uint64_t>();
    for (const auto& [engine, figures] : core["engines"].items()) {
      EXPECT_LE(figures["active_pct"].get<double>(), 100.0 + 1e-9) << engine;
      EXPECT_GE(figures["active_pct"].get<double>(), 0.0) << engine;
    }
  }
  EXPECT_EQ(read, expected.hbm_read);
  EXPECT_EQ(written, expected.hbm_write);
  EXPECT_EQ(stats["system"]["hbm_bytes"].get<uint64_t>(), expected.hbm_read + expected.hbm_write);
  EXPECT_GT(stats["time"]["kernel_ns"].get<double>(), 0.0);
  // A kernel cannot beat the Tensor Engine: its ideal time (FLOPs at peak) fits in its time.
  EXPECT_LE(stats["system"]["mfu_pct"].get<double>(), 100.0 + 1e-9);
  expect_engine_time_within_the_kernel(stats);
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string name =
      info.param.file.substr(0, info.param.file.size() - 5) + "_" + info.param.generation;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(EveryGeneration, ExampleRun, ::testing::ValuesIn(all_cases()), case_name);

/// FLOPs of the examples that compute a whole GEMM at their default sizes: 2 K M N, whatever
/// the PE array, since they re-tile the same problem. (Kernels whose matmuls are broadcasts or
/// causal blocks do tile-sized work and are left out.)
std::map<std::string, uint64_t> gemm_flops_at_defaults() {
  const uint64_t t1 = mm(8192, 4096, 8192);  // T1: K 8192, M 4096, N 8192
  // MoE: D 1024, F 2048, 128-token groups per expert 1 + (5 e) % 4 for e = 0..7:
  // 1, 2, 3, 4, 1, 2, 3, 4 = 20 groups of 128 tokens.
  return {{"matmul_t1_v1_tiled.json", t1},
          {"matmul_t1_v2_hoisted.json", t1},
          {"matmul_t1_v3_blocked.json", t1},
          {"matmul_t1_v4_optimized.json", t1},
          {"matmul_bf16_large.json", mm(4096, 4096, 4096)},
          {"matmul_fp8_double_row.json", mm(4096, 4096, 4096)},
          {"matmul_mx.json", mm(4096, 2048, 2048)},
          {"matmul_tiled.json", mm(512, 256, 1024)},
          {"moe_grouped_matmul.json", mm(1024, 20 * 128, 2048)}};
}

class ExampleOnA256Array : public ::testing::TestWithParam<Case> {};

// tensor.rows = 256: every kernel tiled with pmax / gemm_stationary_fmax re-tiles itself and
// still fits the generation's SBUF and PSUM (bytes per partition unchanged). Default sizes,
// transfer DMA model (fast; completion and FLOPs do not depend on the DMA model).
TEST_P(ExampleOnA256Array, CompletesWithTheSameProblem) {
  const Case& c = GetParam();
  const Child child = run_trnsim({"run", kKernels + c.file, "--config", c.generation, "--set",
                                  "tensor.rows=256", "--set", "dma.model=transfer", "--json"});
  ASSERT_EQ(child.exit_code, 0) << child.err;
  const nlohmann::json stats = nlohmann::json::parse(child.out);
  const auto flops = gemm_flops_at_defaults();
  if (flops.count(c.file)) {
    EXPECT_EQ(stats["system"]["flops"].get<uint64_t>(), flops.at(c.file));
  }
  for (const nlohmann::json& core : stats["cores"]) {
    for (const auto& [engine, figures] : core["engines"].items()) {
      EXPECT_LE(figures["active_pct"].get<double>(), 100.0 + 1e-9) << engine;
    }
    // Peak BF16 of a 256 x 256 array: 256 x 256 x 2 FLOP x clock, 4 x the 128 x 128 one.
    EXPECT_NEAR(core["tensor"]["peak_bf16_tflops"].get<double>(),
                256.0 * 256 * 2 * stats["time"]["tensor_clock_ghz"].get<double>() / 1000, 1e-6);
  }
  EXPECT_LE(stats["system"]["mfu_pct"].get<double>(), 100.0 + 1e-9);
}

INSTANTIATE_TEST_SUITE_P(EveryGeneration, ExampleOnA256Array, ::testing::ValuesIn(all_cases()),
                         case_name);

/// TensorE busy time of T1 v4 (trn1, transfer DMA model) on a rows x rows array.
struct TensorWork {
  uint64_t matmuls = 0;
  double active_ns = 0;
};

TensorWork t1_v4_tensor_work(int rows, const std::vector<std::string>& extra) {
  std::vector<std::string> args = {
      "run",   kKernels + "matmul_t1_v4_optimized.json", "--config", "trn1",
      "--set", "tensor.rows=" + std::to_string(rows),    "--set",    "dma.model=transfer",
      "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const Child child = run_trnsim(args);
  EXPECT_EQ(child.exit_code, 0) << child.err;
  if (child.exit_code != 0) return {};
  const nlohmann::json tensor = nlohmann::json::parse(child.out)["cores"][0]["engines"]["tensor"];
  return {tensor["instructions"].get<uint64_t>(), tensor["active_ns"].get<double>()};
}

TEST(ArraySize, T1V4TensorTimeScalesWithTheArea) {
  // M 4096, K 8192, N 8192 in [rows, rows] x [rows, 512] matmuls: (N / 512) (K / rows) (M / rows)
  // of them, each max(min(64, rows), 512) = 512 cycles at 2.8 GHz (LoadStationary overlaps the
  // previous matmul). 64: 16 x 128 x 64 = 131072 matmuls, 131072 x 512 / 2.8 = 23967451 ns;
  // 128: 32768 matmuls, 5991863 ns; 256: 8192 matmuls, 1497966 ns. At 64 x 64 the SBUF
  // accumulator [M, BLOCK_N] takes twice the bytes per partition: TILES_N = 1 fits trn1.
  const TensorWork small = t1_v4_tensor_work(64, {"--param", "TILES_N=1"});
  const TensorWork base = t1_v4_tensor_work(128, {});
  const TensorWork large = t1_v4_tensor_work(256, {});
  EXPECT_EQ(small.matmuls, 131072u);
  EXPECT_EQ(base.matmuls, 32768u);
  EXPECT_EQ(large.matmuls, 8192u);
  // Busy time within 1% of the matmuls' cycles (throttling is off on trn1).
  EXPECT_NEAR(small.active_ns, 23967451, 0.01 * 23967451);
  EXPECT_NEAR(base.active_ns, 5991863, 0.01 * 5991863);
  EXPECT_NEAR(large.active_ns, 1497966, 0.01 * 1497966);
}

}  // namespace
}  // namespace trnsim::validation
