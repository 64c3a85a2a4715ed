// nccom-test-style benchmarks: one collective of one size over a number of ranks (logical cores
// of system.lnc physical cores, `ranks_per_chip` per chip in chip order), either driven straight
// into the backend over a bandwidth-server DMA/HBM model (fast) or as a synthetic kernel through
// system::simulate(). Sizes follow nccom-test (all-reduce, reduce-scatter, all-to-all input;
// all-gather output; permute message). SystemC elaborates once per process: run_point() once
// per process, or run_point_in_child(). Leaves out everything but the one collective.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collective/schedule.hpp"
#include "config/params.hpp"
#include "kernel/instruction.hpp"

namespace trnsim::collective {

struct BenchmarkPoint {
  std::string config = "trn2";
  std::vector<std::string> sets;  ///< config overrides "a.b=v"
  Operation operation = Operation::kAllReduce;
  Algorithm algorithm = Algorithm::kAuto;
  std::uint32_t ranks = 2;
  std::uint64_t bytes = 1024;  ///< requested; rounded to a multiple the operation can split
  kernel::DType dtype = kernel::DType::kFloat32;
  std::uint32_t ranks_per_chip = 0;  ///< 0 = chip.cores / system.lnc
  /// true: drive the backend directly, without NeuronCores, over a bandwidth-server DMA/HBM model
  /// (per-core DMA rate, per-stack HBM rate): fast at any size. false: the synthetic kernel
  /// through system::simulate() and its DMA/HBM model, the path of every kernel run.
  bool direct = true;
};

struct BenchmarkResult {
  std::uint64_t bytes = 0;     ///< size used (nccom-test "size")
  std::uint64_t elements = 0;  ///< nccom-test "count"
  double time_ns = 0;          ///< first rank joining to last rank done
  Algorithm algorithm = Algorithm::kRing;
  std::uint32_t steps = 0;
  std::uint32_t chips = 0;  ///< chips the ranks occupy
  double algbw_gibps = 0;   ///< bytes / time, GiB/s (nccom-test's "GB/s" columns are GiB/s)
  double busbw_gibps = 0;   ///< algbw x bus_bandwidth_factor
  double wall_s = 0;        ///< host time of the simulation
  std::string error;        ///< set instead of the numbers when the point is invalid
};

/// Size actually used for `point` (requested size rounded down to what splits evenly, at least
/// one element per rank and LNC lane).
std::uint64_t benchmark_bytes(const BenchmarkPoint& point, const config::Params& params);
/// Global physical core indices of the ranks (LNC lanes consecutive).
std::vector<std::uint32_t> benchmark_cores(const BenchmarkPoint& point,
                                           const config::Params& params);
/// The synthetic kernel of `point` (kernel-format JSON text). Throws InputError when the ranks
/// do not fit the configured system.
std::string benchmark_kernel(const BenchmarkPoint& point, const config::Params& params);

/// Simulates `point` in this process (at most once per process; `point.direct` chooses the
/// path). Throws InputError.
BenchmarkResult run_point(const BenchmarkPoint& point);
/// Simulates `point` in a forked child; bad input comes back in BenchmarkResult::error.
BenchmarkResult run_point_in_child(const BenchmarkPoint& point);

/// "1KiB" -> 1024 (B, K/KiB/KB, M/MiB/MB, G/GiB/GB: binary multiples, as nccom-test).
std::uint64_t parse_size(const std::string& text);
/// "1KiB:1GiB" (x2 steps), "1KiB:1GiB:4" (x4), "1KiB,64KiB" or one size.
std::vector<std::uint64_t> parse_sizes(const std::string& text);
/// "1.0 GiB"-style short text: exact binary units when divisible, else bytes.
std::string format_size(std::uint64_t bytes);

}  // namespace trnsim::collective
