// Simulator speed: simulated instructions per wall-second and peak RSS of one whole run.
// Usage: sim_bench KERNEL.json [CONFIG] [--param N=V]... [--set KEY=VALUE]... [--no-run-ahead]
// Prints one line of numbers (see docs/performance.md); not a test. Rates are per wall-second
// and per CPU-second of the simulation (the VM's host can take the CPU away: wall time then
// grows and CPU time does not).
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "config/load.hpp"
#include "core/stream_source.hpp"
#include "kernel/parse.hpp"
#include "kernel/prepare.hpp"
#include "kernel/target_from_config.hpp"
#include "system/simulation.hpp"
#include "util/error.hpp"
#include "util/huge_pages.hpp"

namespace {

/// CPU time of this process (user and system), in seconds.
double cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

constexpr const char* kUsage =
    "usage: sim_bench KERNEL.json [CONFIG] [--param N=V]... [--set KEY=VALUE]... "
    "[--no-run-ahead]";

int run(int argc, char** argv) {
  using namespace trnsim;
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    std::fprintf(argc < 2 ? stderr : stdout, "%s\n", kUsage);
    return argc < 2 ? kExitInvalidInput : kExitOk;
  }
  std::string config_name = "trn2";
  kernel::ParseOptions options;
  std::vector<std::string> sets;
  system::RunAhead run_ahead = system::RunAhead::kOn;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--param" && i + 1 < argc) {
      options.param_overrides.push_back(kernel::parse_param_override(argv[++i]));
    } else if (arg == "--set" && i + 1 < argc) {
      sets.emplace_back(argv[++i]);
    } else if (arg == "--no-run-ahead") {
      run_ahead = system::RunAhead::kOff;
    } else if (arg.starts_with("--")) {
      throw InputError("command line", "unknown option or missing value: '" + arg + "'\n" + kUsage);
    } else {
      config_name = arg;
    }
  }
  const config::LoadedConfig config = config::load_config(config_name, sets);
  auto program =
      std::make_shared<const kernel::Program>(kernel::parse_program_file(argv[1], options));
  const kernel::PreparedKernel prepared =
      kernel::prepare_kernel(program, kernel::target_from_params(config.params));
  const auto begin = std::chrono::steady_clock::now();
  const double cpu_begin = cpu_seconds();
  const system::SimulationResult result = system::simulate(
      config.params, prepared.cores,
      [&prepared](std::uint32_t pid) {
        return std::make_unique<trnsim::core::StreamSource>(prepared, pid);
      },
      {}, {}, {}, run_ahead);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  const double cpu = cpu_seconds() - cpu_begin;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf(
      "%s on %s: %llu instructions in %.3f s wall = %.3f M instr/s (%.3f s CPU = %.3f M "
      "instr/CPU-s); simulated %.1f us; peak RSS %.1f MiB; %.1f%% of wake-ups run ahead\n",
      program->name.c_str(), config.params.name.c_str(),
      static_cast<unsigned long long>(result.instructions), seconds,
      static_cast<double>(result.instructions) / seconds / 1e6, cpu,
      static_cast<double>(result.instructions) / std::max(cpu, 1e-9) / 1e6, result.kernel_ns / 1e3,
      static_cast<double>(usage.ru_maxrss) / 1024.0,
      100.0 * static_cast<double>(result.wakes_run_ahead) /
          static_cast<double>(
              std::max<std::uint64_t>(1, result.wakes_run_ahead + result.wakes_through_kernel)));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  trnsim::util::prefer_huge_pages(argv);
  try {
    return run(argc, argv);
  } catch (const trnsim::InputError& error) {
    std::fprintf(stderr, "sim_bench: %s\n", error.what());
    return trnsim::kExitInvalidInput;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "sim_bench: internal error: %s\n", error.what());
    return trnsim::kExitInternal;
  }
}
