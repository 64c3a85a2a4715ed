#include "sim_harness.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>
#include <stdexcept>

#include "config/load.hpp"
#include "core/simulation.hpp"
#include "core/stream_source.hpp"
#include "kernel/parse.hpp"
#include "kernel/prepare.hpp"
#include "kernel/target_from_config.hpp"
#include "report/report.hpp"

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
    const core::SimulationResult result =
        core::simulate(loaded.params, prepared.cores, [&prepared](std::uint32_t pid) {
          return std::make_unique<core::StreamSource>(prepared, pid);
        });
    report::RunInfo info;
    info.kernel_name = program->name;
    info.config_name = loaded.params.name;
    return report::run_statistics(result, loaded.params, info).dump();
  } catch (const std::exception& e) {
    return nlohmann::json{{"error", e.what()}}.dump();
  }
}

}  // namespace

nlohmann::json simulate_in_child(const SimulationRequest& request) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  const pid_t child = fork();
  if (child < 0) throw std::runtime_error("fork failed");
  if (child == 0) {
    close(fds[0]);
    const std::string out = run_here(request);
    std::size_t written = 0;
    while (written < out.size()) {
      const ssize_t n = write(fds[1], out.data() + written, out.size() - written);
      if (n <= 0) _exit(3);
      written += static_cast<std::size_t>(n);
    }
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  char buffer[65536];
  for (;;) {
    const ssize_t n = read(fds[0], buffer, sizeof(buffer));
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || text.empty()) {
    return nlohmann::json{
        {"error", "child process failed (status " + std::to_string(status) + ")"}};
  }
  return nlohmann::json::parse(text);
}

double kernel_ns(const nlohmann::json& statistics) {
  if (statistics.contains("error")) {
    ADD_FAILURE() << "simulation failed: " << statistics["error"].get<std::string>();
    return -1;
  }
  return statistics["time"]["kernel_ns"].get<double>();
}

}  // namespace trnsim::testing
