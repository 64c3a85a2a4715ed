// Running a prepared kernel on the timing model, as `trnsim run` does: the same statistics,
// byte for byte, and optionally the same result files (docs/outputs.md).
// SystemC elaborates a model once per process: one Simulation (or one simulate() call) per
// process; run further simulations in child processes (e.g. the `trnsim` binary).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "trnsim/kernel.hpp"
#include "trnsim/statistics.hpp"

namespace trnsim {

struct SimulateOptions {
  // Result files, "" = none; each is written only when the run succeeds.
  std::string trace_path;         ///< --trace: Chrome trace-event JSON (ui.perfetto.dev)
  std::string profile_path;       ///< --profile: one CSV row per instruction
  std::string dma_profile_path;   ///< --dma-profile: one CSV row per DMA transfer and packet
  std::string source_lines_path;  ///< --profile-lines: one CSV row per kernel source line
  std::string stats_path;         ///< --stats: the statistics with provenance
  std::string report_path;        ///< --report: a self-contained HTML report
  /// false = --no-run-ahead: every core in step with the SystemC kernel (slower, same results).
  bool run_ahead = true;
  /// --log: "COMPONENT=LEVEL" specs that trace simulator components on stderr (components core,
  /// core.dma, dma, collective; levels trace, debug, info, warn, error, off; README, "Tracing").
  /// Empty: warnings only. A spec naming an unknown component or level is InvalidInput.
  std::vector<std::string> log;
};

/// The model of one run inside a SystemC program of your own (an sc_main): constructing it
/// elaborates the chips, NeuronCores, memory system and HBM stacks of the kernel's config as
/// children of the SystemC top level (modules chip0, chip0.core0, ..., memory_system); you then
/// run the SystemC kernel (sc_core::sc_start()) and read result(). It sets the kernel's time
/// resolution (1 fs): create no sc_time before it. Throws InvalidInput for a bad option or a
/// config whose models do not fit together, and std::logic_error when a model was already built
/// in this process.
class Simulation {
 public:
  explicit Simulation(const Kernel& kernel, const SimulateOptions& options = {});
  ~Simulation();
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  /// After sc_core::sc_start() returned: the statistics (and the result files of the options
  /// written). Throws InvalidInput for an error of the kernel found while it ran (e.g. a
  /// core_barrier not every core reaches) or a result file that cannot be written.
  RunResult result();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// Simulates `kernel` on the config it was prepared for: a Simulation, sc_start() and its
/// result().
RunResult simulate(const Kernel& kernel, const SimulateOptions& options = {});

}  // namespace trnsim
