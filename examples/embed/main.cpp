// Embedding trnsim: loads a generation config and a JSON kernel, simulates the kernel and prints
// its time and a few statistics, using only the public API (<trnsim/...>, docs/embedding.md).
//   embed_example [KERNEL.json [CONFIG]] [--json] [--log COMPONENT=LEVEL]...
// Defaults: examples/kernels/vector_add.json on trn2. --json prints the whole statistics
// document instead, the same as `trnsim run KERNEL --config CONFIG --json`; --log traces a
// simulator component on stderr, as trnsim's --log does.
#include <cstdlib>
#include <iostream>
#include <string>
#include <trnsim/trnsim.hpp>
#include <vector>

int main(int argc, char* argv[]) {
  std::vector<std::string> positional;
  bool json = false;
  trnsim::SimulateOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    if (argument == "--json") {
      json = true;
    } else if (argument == "--log" && i + 1 < argc) {
      options.log.push_back(argv[++i]);
    } else {
      positional.push_back(argument);
    }
  }
  const std::string kernel_path =
      positional.size() > 0 ? positional[0] : "examples/kernels/vector_add.json";
  const std::string config_name = positional.size() > 1 ? positional[1] : "trn2";
  // SystemC prints its banner on standard output unless told not to.
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 0);
  try {
    const trnsim::Config config = trnsim::Config::load(config_name);
    const trnsim::Kernel kernel = trnsim::Kernel::load(kernel_path, config);
    const trnsim::RunResult result = trnsim::simulate(kernel, options);
    const nlohmann::json& statistics = result.statistics;
    if (json) {
      std::cout << statistics.dump(2) << "\n";
      return 0;
    }
    std::cout << "kernel " << kernel.name() << " on " << config.name() << " (trnsim "
              << trnsim::version() << ")\n"
              << "kernel_ns " << statistics["time"]["kernel_ns"] << "\n"
              << "instructions " << result.instructions << "\n"
              << "hbm_bytes " << statistics["system"]["hbm_bytes"] << "\n"
              << "bottleneck " << statistics["cores"][0]["bottleneck"].get<std::string>() << "\n";
  } catch (const trnsim::InvalidInput& error) {
    std::cerr << "embed_example: " << error.what() << "\n";
    return 2;
  }
  return 0;
}
