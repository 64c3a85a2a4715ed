// Runs a kernel with the collective backend in a forked child process (SystemC elaborates once
// per process) and returns its statistics JSON with the "collectives" section, as `trnsim run
// --json` prints them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace trnsim::testing {

/// Statistics of the run, or {"error": message} when the kernel, config or a collective is
/// invalid.
nlohmann::json run_kernel_in_child(const std::string& kernel_json, const std::string& config,
                                   const std::vector<std::string>& sets = {},
                                   const std::vector<std::string>& params = {});

/// Time of the run's collectives: first rank joining to last rank done, in us.
double collective_us(const nlohmann::json& statistics);

}  // namespace trnsim::testing
