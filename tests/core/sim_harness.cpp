#include "sim_harness.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <optional>

#include "config/load.hpp"
#include "core/stream_source.hpp"
#include "kernel/parse.hpp"
#include "kernel/prepare.hpp"
#include "kernel/target_from_config.hpp"
#include "report/report.hpp"
#include "system/simulation.hpp"
#include "util/child_process.hpp"

namespace trnsim::testing {

namespace {

std::string run_here(const SimulationRequest& request) {
  try {
    const config::LoadedConfig loaded = config::load_config(request.config, request.sets);
    kernel::ParseOptions options;
    for (const auto& p : request.params) {
      options.param_overrides.push_back(kernel::parse_param_override(p));
    }
    auto program = std::make_shared<const kernel::Program>(
        kernel::parse_program_text(request.kernel_json, "<test>", options));
    const kernel::PreparedKernel prepared =
        kernel::prepare_kernel(program, kernel::target_from_params(loaded.params));
    const system::SimulationResult result = system::simulate(
        loaded.params, prepared.cores,
        [&prepared](std::uint32_t pid) {
          return std::make_unique<core::StreamSource>(prepared, pid);
        },
        {}, {}, {}, request.run_ahead);
    report::RunInfo info;
    info.kernel_name = program->name;
    info.config_name = loaded.params.name;
    nlohmann::json statistics = report::run_statistics(result, loaded.params, info);
    statistics["simulator"] = {{"wakes_run_ahead", result.wakes_run_ahead},
                               {"wakes_through_kernel", result.wakes_through_kernel}};
    return statistics.dump();
  } catch (const std::exception& e) {
    return nlohmann::json{{"error", e.what()}}.dump();
  }
}

}  // namespace

nlohmann::json simulate_in_child(const SimulationRequest& request) {
  int status = 0;
  const std::optional<std::string> text =
      util::run_in_child([&request] { return run_here(request); }, status);
  if (!text) {
    return nlohmann::json{
        {"error", "child process failed (status " + std::to_string(status) + ")"}};
  }
  return nlohmann::json::parse(*text);
}

double kernel_ns(const nlohmann::json& statistics) {
  if (statistics.contains("error")) {
    ADD_FAILURE() << "simulation failed: " << statistics["error"].get<std::string>();
    return -1;
  }
  return statistics["time"]["kernel_ns"].get<double>();
}

}  // namespace trnsim::testing
