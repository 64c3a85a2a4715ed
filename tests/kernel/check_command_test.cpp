// `trnsim check` as a user runs it: a child process, its exit status, stdout and stderr.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace {

struct Result {
  int status = -1;
  std::string out;
  std::string err;
};

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

/// `trnsim SUBCOMMAND DIRECTORY/ARGUMENTS`, DIRECTORY relative to the source tree.
Result run_trnsim(const std::string& subcommand, const std::string& arguments,
                  const std::string& directory) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("trnsim_check_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string command = std::string(TRNSIM_BINARY) + " " + subcommand + " " +
                              TRNSIM_SOURCE_DIR + "/" + directory + "/" + arguments + " >" +
                              (dir / "out").string() + " 2>" + (dir / "err").string();
  const int raw = std::system(command.c_str());
  Result result;
  result.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  result.out = slurp(dir / "out");
  result.err = slurp(dir / "err");
  std::filesystem::remove_all(dir);
  return result;
}

/// `trnsim check DIRECTORY/ARGUMENTS`.
Result run_check(const std::string& arguments, const std::string& directory = "examples/kernels") {
  return run_trnsim("check", arguments, directory);
}

TEST(CheckCommand, ValidKernelPrintsCountsAndExitsZero) {
  const Result r = run_check("vector_add.json");
  EXPECT_EQ(r.status, 0) << r.err;
  // 8 tiles x (3 DMAs + 1 add); HBM: 3 tensors x 8 tiles x 128 x 2048 x 4 B = 24 MiB.
  EXPECT_NE(r.out.find("dynamic instructions: 32\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("per engine: vector 8 dma 24"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("per op: dma_copy 24 tensor_tensor 8"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("HBM bytes moved: 25165824 (24.00 MiB)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("a_sb    sbuf    float32"), std::string::npos) << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST(CheckCommand, JsonOutput) {
  const Result r = run_check("matmul_tiled.json --json --param N=2048");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  // N = 2048: m 2 x n 4 x (4 k x 3 + 2) = 112 instructions, 32 matmuls of 2 x 128 x 128 x 512.
  EXPECT_EQ(doc["instructions"]["total"], 112);
  EXPECT_EQ(doc["instructions"]["per_op"]["nc_matmul"], 32);
  EXPECT_EQ(doc["flops"], 2ull * 512 * 256 * 2048);
  EXPECT_EQ(doc["params"]["N"], 2048);
  EXPECT_EQ(doc["tensors"][5]["name"], "acc");
  EXPECT_EQ(doc["tensors"][5]["memory"], "psum");
}

TEST(CheckCommand, InvalidKernelExitsTwoWithOneMessage) {
  const Result r = run_check("matmul_tiled.json --param TN=1024");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("trnsim: error: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("mm /program/0/body/0/body/0/body/2/moving (m=0, n=0, k=0): tile-limit: "
                       "moving free size N = 1024 exceeds the limit of 512 for a float32 dst on "
                       "NeuronCore-v3"),
            std::string::npos)
      << r.err;
}

// Explicit patterns NAME.ap(...) with loop expressions: T = 4 tiles of [128, 32] float32.
// 1 broadcast load + 4 x (load, transpose, add, store) = 17 instructions: 9 DMAs, 8 vector.
// HBM: the row read by 128 partitions (128 x 32 x 4 B = 16384, every element read counts),
// then per tile 16384 B read and 16384 B written: 16384 + 4 x 32768 = 147456 B.
TEST(CheckCommand, ExplicitPatternsInALoop) {
  const Result r = run_check("explicit_patterns.json", "tests/kernel/kernels");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("dynamic instructions: 17\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("per engine: vector 8 dma 9"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("per op: dma_copy 9 tensor_tensor 4 tensor_copy 4"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("HBM bytes moved: 147456 (144.00 KiB)"), std::string::npos) << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;
}

// tensor_scalar with reduce_dst (tests/kernel/kernels/tensor_scalar_reduce.json): T = 4 tiles
// of [128, 512] float32, each loaded, scaled and row-reduced (vector), biased by its row maxima
// (scalar) and stored: 16 instructions, 8 DMAs; HBM 4 x 2 x 262144 B = 2 MiB.
TEST(CheckCommand, TensorScalarReduceChecksAndRuns) {
  const Result check = run_check("tensor_scalar_reduce.json", "tests/kernel/kernels");
  ASSERT_EQ(check.status, 0) << check.err;
  EXPECT_NE(check.out.find("dynamic instructions: 16\n"), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("per engine: vector 4 scalar 4 dma 8"), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("HBM bytes moved: 2097152 (2.00 MiB)"), std::string::npos) << check.out;
  const Result run =
      run_trnsim("run", "tensor_scalar_reduce.json --json -c trn2", "tests/kernel/kernels");
  ASSERT_EQ(run.status, 0) << run.err;
  const auto stats = nlohmann::json::parse(run.out);
  const auto& scalar = stats["cores"][0]["engines"]["scalar"];
  EXPECT_EQ(scalar["instructions"], 4);
  // Each activation reads the row maxima its tile's tensor_scalar writes into reduce_dst.
  EXPECT_GT(scalar["dependency_wait_by_producer_ns"]["vector"].get<double>(), 0.0);
}

}  // namespace
