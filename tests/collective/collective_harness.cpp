#include "collective_harness.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "collective/collective_system.hpp"
#include "config/load.hpp"
#include "core/stream_source.hpp"
#include "kernel/parse.hpp"
#include "kernel/prepare.hpp"
#include "kernel/target_from_config.hpp"
#include "report/report.hpp"
#include "system/simulation.hpp"
#include "util/child_process.hpp"
#include "util/error.hpp"

namespace trnsim::testing {

namespace {

std::string run_here(const std::string& kernel_json, const std::string& config,
                     const std::vector<std::string>& sets, const std::vector<std::string>& params) {
  try {
    const config::LoadedConfig loaded = config::load_config(config, sets);
    kernel::ParseOptions options;
    for (const auto& p : params) options.param_overrides.push_back(kernel::parse_param_override(p));
    auto program = std::make_shared<const kernel::Program>(
        kernel::parse_program_text(kernel_json, "<test>", options));
    const kernel::PreparedKernel prepared =
        kernel::prepare_kernel(program, kernel::target_from_params(loaded.params));
    auto log = std::make_shared<collective::CollectiveLog>();
    system::SimulationResult result;
    try {
      result = system::simulate(
          loaded.params, prepared.cores,
          [&prepared](std::uint32_t pid) {
            return std::make_unique<core::StreamSource>(prepared, pid);
          },
          {}, collective::backend_factory(log));
    } catch (const trnsim::InputError&) {
      collective::rethrow_if_failed(*log);
      throw;
    }
    collective::rethrow_if_failed(*log);
    report::RunInfo info;
    info.kernel_name = program->name;
    info.config_name = loaded.params.name;
    collective::add_statistics(result.statistics.group("collectives"), *log);
    const nlohmann::json stats = report::run_statistics(result, loaded.params, info);
    return stats.dump();
  } catch (const std::exception& e) {
    return nlohmann::json{{"error", e.what()}}.dump();
  }
}

}  // namespace

nlohmann::json run_kernel_in_child(const std::string& kernel_json, const std::string& config,
                                   const std::vector<std::string>& sets,
                                   const std::vector<std::string>& params) {
  int status = 0;
  const std::optional<std::string> text =
      util::run_in_child([&] { return run_here(kernel_json, config, sets, params); }, status);
  if (!text) {
    return nlohmann::json{
        {"error", "child process failed (status " + std::to_string(status) + ")"}};
  }
  return nlohmann::json::parse(*text);
}

double collective_us(const nlohmann::json& statistics) {
  if (statistics.contains("error")) {
    ADD_FAILURE() << "simulation failed: " << statistics["error"].get<std::string>();
    return -1;
  }
  const auto& operations = statistics["collectives"]["operations"];
  if (operations.empty()) {
    ADD_FAILURE() << "no collective ran";
    return -1;
  }
  double joined = operations[0]["joined_ns"].get<double>();
  double end = 0;
  for (const auto& op : operations) {
    joined = std::min(joined, op["joined_ns"].get<double>());
    end = std::max(end, op["end_ns"].get<double>());
  }
  return (end - joined) / 1e3;
}

}  // namespace trnsim::testing
