#include "collective_harness.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <stdexcept>

#include "collective/collective_system.hpp"
#include "config/load.hpp"
#include "core/simulation.hpp"
#include "kernel/parse.hpp"
#include "kernel/prepare.hpp"
#include "kernel/stream.hpp"
#include "kernel/target_from_config.hpp"
#include "report/report.hpp"
#include "util/error.hpp"

namespace trnsim::testing {

namespace {

class StreamSource final : public core::InstructionSource {
 public:
  StreamSource(const kernel::PreparedKernel& kernel, std::uint32_t pid) : stream_(kernel, pid) {}
  bool next(kernel::Instruction& out) override { return stream_.next(out); }
  std::span<const std::uint32_t> core_group(std::uint32_t id) const override {
    return stream_.core_group(id);
  }

 private:
  kernel::InstructionStream stream_;
};

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
    core::SimulationResult result;
    try {
      result = core::simulate(
          loaded.params, prepared.cores,
          [&prepared](std::uint32_t pid) { return std::make_unique<StreamSource>(prepared, pid); },
          {}, collective::backend_factory(log));
    } catch (const trnsim::InputError&) {
      collective::rethrow_if_failed(*log);
      throw;
    }
    collective::rethrow_if_failed(*log);
    report::RunInfo info;
    info.kernel_name = program->name;
    info.config_name = loaded.params.name;
    nlohmann::json stats = report::run_statistics(result, loaded.params, info);
    stats["collectives"] = collective::statistics(*log);
    return stats.dump();
  } catch (const std::exception& e) {
    return nlohmann::json{{"error", e.what()}}.dump();
  }
}

}  // namespace

nlohmann::json run_kernel_in_child(const std::string& kernel_json, const std::string& config,
                                   const std::vector<std::string>& sets,
                                   const std::vector<std::string>& params) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  const pid_t child = fork();
  if (child < 0) throw std::runtime_error("fork failed");
  if (child == 0) {
    close(fds[0]);
    const std::string out = run_here(kernel_json, config, sets, params);
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
