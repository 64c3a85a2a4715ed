// Runs one simulation in a forked child process (SystemC elaborates once per process) and
// returns its statistics JSON, so one test binary can run many simulations.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "system/simulation.hpp"

namespace trnsim::testing {

struct SimulationRequest {
  std::string kernel_json;          ///< kernel document text
  std::string config = "trn2";      ///< built-in name or file
  std::vector<std::string> sets;    ///< config overrides
  std::vector<std::string> params;  ///< kernel param overrides
  system::RunAhead run_ahead = system::RunAhead::kOn;
};

/// The statistics JSON of the run (report::run_statistics) plus, under "simulator", the
/// wake-up counts of system::SimulationResult; or {"error": message} when the kernel or config
/// is invalid.
nlohmann::json simulate_in_child(const SimulationRequest& request);
inline nlohmann::json simulate_in_child(const std::string& kernel_json,
                                        const std::string& config = "trn2",
                                        const std::vector<std::string>& sets = {},
                                        const std::vector<std::string>& params = {}) {
  SimulationRequest request;
  request.kernel_json = kernel_json;
  request.config = config;
  request.sets = sets;
  request.params = params;
  return simulate_in_child(request);
}

/// Kernel time of the run in ns; fails the calling test when the run reported an error.
double kernel_ns(const nlohmann::json& statistics);

}  // namespace trnsim::testing
