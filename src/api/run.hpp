// One timed run of a prepared kernel, as `trnsim run` (cli/run_command.cpp) and the public
// trnsim::Simulation (api/simulate.cpp) both do it: the result files (report/run_outputs.hpp)
// with the run's provenance, the collectives' log, the elaborated model, and at the end the
// statistics document. Private to the library and the command line.
//
// Sequence: construct (elaborates the model and opens the result files), run the SystemC kernel
// (sc_core::sc_start(), by the caller), then finish() once.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "collective/collective_system.hpp"
#include "config/load.hpp"
#include "core/instruction_source.hpp"
#include "kernel/prepare.hpp"
#include "kernel/program.hpp"
#include "report/report.hpp"
#include "report/run_outputs.hpp"
#include "system/simulation.hpp"
#include "trnsim/statistics.hpp"

namespace trnsim::api {

/// What is run: the loaded config and the kernel, with the hash its provenance reports.
struct RunInputs {
  const config::LoadedConfig& config;
  const kernel::Program& program;
  const kernel::PreparedKernel& prepared;
  std::string kernel_hash;
  std::string version;  ///< trnsim's version, for the provenance
};

/// How it is run.
struct RunSettings {
  report::RunOutputOptions outputs;
  system::RunAhead run_ahead = system::RunAhead::kOn;
  /// Wraps each core's instruction source (e.g. to count progress); identity when empty.
  std::function<std::unique_ptr<core::InstructionSource>(std::unique_ptr<core::InstructionSource>)>
      wrap_source;
  core::ExecuteHook execute;  ///< functional execution (--numerics), or none
};

class Run {
 public:
  /// Opens the result files and elaborates the model. Throws InputError (a config whose models
  /// do not fit together, an output path that cannot be written).
  Run(const RunInputs& inputs, const RunSettings& settings);
  ~Run();
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;

  /// After the SystemC kernel ran: throws the error that stopped the run (a collective's first:
  /// it explains a stop that shows as cores that never finished), else gathers the statistics,
  /// lets `amend` add to them, adds the busiest source lines, moves the result files into
  /// place and returns the run's figures and statistics document.
  RunResult finish(
      const std::function<void(const RunResult& run, nlohmann::json& statistics)>& amend = {});

 private:
  const config::Params& params_;
  report::RunInfo info_;
  report::RunOutputs outputs_;
  std::shared_ptr<collective::CollectiveLog> collectives_;
  std::optional<system::System> model_;
};

}  // namespace trnsim::api
