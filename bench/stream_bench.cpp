// Speed of the lazy instruction stream (kernel/stream.hpp): dynamic instructions per second and
// peak resident memory while walking >= 10 million instructions of two kernels:
//   vector_add  spec section 8 (3 DMAs + 1 vector op per tile, loop-dependent operands)
//   matmul      3-deep tiled matmul nest (DMA tiles, nc_matmul with "k > 0" accumulation)
// Usage: stream_bench [repetitions of the outer loop, default 312500 (10 M instructions)]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <string>

#include "kernel/parse.hpp"
#include "kernel/prepare.hpp"
#include "kernel/stream.hpp"

namespace {

using trnsim::kernel::Instruction;
using trnsim::kernel::InstructionStream;

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

long peak_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;  // KiB on Linux
}

// R repetitions x T = 8 tiles x 4 instructions.
const char* kVectorAdd = R"({
  "format": "trnsim-kernel/1", "name": "vector_add_repeated",
  "params": {"R": 1, "T": 8, "F": 2048},
  "tensors": {
    "a":    {"memory": "hbm",  "dtype": "float32", "shape": ["T", 128, "F"]},
    "b":    {"memory": "hbm",  "dtype": "float32", "shape": ["T", 128, "F"]},
    "out":  {"memory": "hbm",  "dtype": "float32", "shape": ["T", 128, "F"]},
    "a_sb": {"memory": "sbuf", "dtype": "float32", "shape": [2, 128, "F"], "partition_dim": 1},
    "b_sb": {"memory": "sbuf", "dtype": "float32", "shape": [2, 128, "F"], "partition_dim": 1},
    "c_sb": {"memory": "sbuf", "dtype": "float32", "shape": [2, 128, "F"], "partition_dim": 1}
  },
  "program": [{"for": "r", "range": "R", "body": [
    {"for": "t", "range": "T", "body": [
      {"op": "dma_copy", "dst": "a_sb[t % 2]", "src": "a[t]"},
      {"op": "dma_copy", "dst": "b_sb[t % 2]", "src": "b[t]", "queue": 1},
      {"op": "tensor_tensor", "dst": "c_sb[t % 2]", "in0": "a_sb[t % 2]", "in1": "b_sb[t % 2]", "alu": "add"},
      {"op": "dma_copy", "dst": "out[t]", "src": "c_sb[t % 2]"}]}]}]
})";

// R repetitions x (2 x 2 x (4 x 3 + 2)) = 56 instructions.
const char* kMatmul = R"({
  "format": "trnsim-kernel/1", "name": "matmul_repeated",
  "params": {"R": 1, "K": 512, "M": 256, "N": 1024, "TK": "pmax", "TM": "gemm_stationary_fmax", "TN": 512},
  "tensors": {
    "A":    {"memory": "hbm",  "dtype": "bfloat16", "shape": ["K", "M"]},
    "B":    {"memory": "hbm",  "dtype": "bfloat16", "shape": ["K", "N"]},
    "C":    {"memory": "hbm",  "dtype": "float32",  "shape": ["M", "N"]},
    "a_sb": {"memory": "sbuf", "dtype": "bfloat16", "shape": [2, "TK", "TM"], "partition_dim": 1},
    "b_sb": {"memory": "sbuf", "dtype": "bfloat16", "shape": [2, "TK", "TN"], "partition_dim": 1},
    "acc":  {"memory": "psum", "dtype": "float32",  "shape": ["TM", "TN"]},
    "c_sb": {"memory": "sbuf", "dtype": "float32",  "shape": ["TM", "TN"]}
  },
  "program": [{"for": "r", "range": "R", "body": [
    {"for": "m", "range": "M // TM", "body": [
      {"for": "n", "range": "N // TN", "body": [
        {"for": "k", "range": "K // TK", "body": [
          {"op": "dma_copy", "dst": "a_sb[k % 2]", "src": "A[k*TK:(k+1)*TK, m*TM:(m+1)*TM]"},
          {"op": "dma_copy", "dst": "b_sb[k % 2]", "src": "B[k*TK:(k+1)*TK, n*TN:(n+1)*TN]", "queue": 1},
          {"op": "nc_matmul", "dst": "acc", "stationary": "a_sb[k % 2]", "moving": "b_sb[k % 2]",
           "accumulate": "k > 0"}]},
        {"op": "tensor_copy", "dst": "c_sb", "src": "acc"},
        {"op": "dma_copy", "dst": "C[m*TM:(m+1)*TM, n*TN:(n+1)*TN]", "src": "c_sb"}]}]}]}]
})";

void run(const char* label, const char* text, long repetitions) {
  trnsim::kernel::ParseOptions options;
  options.param_overrides.push_back({"R", std::to_string(repetitions)});
  auto program = std::make_shared<const trnsim::kernel::Program>(
      trnsim::kernel::parse_program_text(text, label, options));
  const auto kernel = trnsim::kernel::prepare_kernel(program, trnsim::kernel::Target{});
  const long rss_before = peak_rss_kib();
  InstructionStream stream(kernel, 0);
  Instruction instruction;
  std::uint64_t checksum = 0;
  const auto start = std::chrono::steady_clock::now();
  const double cpu_start = cpu_seconds();
  while (stream.next(instruction)) checksum += instruction.reads[0].byte_begin;
  const double cpu = cpu_seconds() - cpu_start;
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto count = static_cast<double>(stream.issued());
  std::printf(
      "%-10s %.0f instructions: %.3f s CPU (%.2f M instructions/s), %.3f s wall "
      "(%.2f M/s); peak RSS %ld KiB (%ld KiB before walking; checksum %llu)\n",
      label, count, cpu, count / cpu / 1e6, wall, count / wall / 1e6, peak_rss_kib(), rss_before,
      static_cast<unsigned long long>(checksum % 1000));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
    std::printf("usage: stream_bench [REPETITIONS]\n");
    return 0;
  }
  long repetitions = 312500;  // 312500 x 32 = 10 M
  if (argc > 1) {
    char* end = nullptr;
    repetitions = std::strtol(argv[1], &end, 10);
    if (*end != '\0' || argv[1][0] == '\0') repetitions = 0;
  }
  if (repetitions <= 0) {
    std::fprintf(stderr,
                 "stream_bench: command line: REPETITIONS: expected a positive integer, found "
                 "'%s'\nusage: stream_bench [REPETITIONS]\n",
                 argv[1]);
    return 2;
  }
  try {
    run("vector_add", kVectorAdd, repetitions);
    run("matmul", kMatmul, repetitions * 32 / 56 + 1);  // >= 10 M as well
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stream_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
