// Embedding trnsim in a SystemC program of your own (docs/embedding.md): this sc_main loads a
// generation config and a JSON kernel, elaborates the model (trnsim::Simulation), runs the
// SystemC kernel itself and prints the kernel's time and a few statistics, using only the
// public API (<trnsim/...>). With --fixed-hbm-ns it first plugs in its own HBM model, a
// trivial fixed-latency TLM-2.0 target (FixedLatencyHbm below), in place of the built-in one.
// With --vector-cost-scale X it times VectorE with a cost model of its own: the built-in
// analytic cycles times X (what if VectorE were X times slower?).
//   embed_example [KERNEL.json [CONFIG]] [--json] [--log COMPONENT=LEVEL]... [--fixed-hbm-ns NS]
//                 [--vector-cost-scale X]
// Defaults: examples/kernels/vector_add.json on trn2. --json prints the whole statistics
// document instead, the same as `trnsim run KERNEL --config CONFIG --json`; --log traces a
// simulator component on stderr, as trnsim's --log does. SystemC's own main() prints its banner
// on stderr before calling sc_main unless SC_COPYRIGHT_MESSAGE=DISABLE is in the environment.
#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <systemc>
#include <tlm>
#include <trnsim/trnsim.hpp>
#include <vector>

namespace {

/// An HBM stack whose every transaction completes a fixed time after it is issued, whatever
/// its size and however many are in flight: no bandwidth limit, no banks.
class FixedLatencyHbm : public trnsim::HbmTarget {
 public:
  tlm_utils::simple_target_socket<FixedLatencyHbm> socket;

  FixedLatencyHbm(sc_core::sc_module_name name, double latency_ns)
      : trnsim::HbmTarget(name), socket("socket"), latency_(latency_ns, sc_core::SC_NS) {
    socket.register_b_transport(this, &FixedLatencyHbm::b_transport);
  }

  tlm::tlm_target_socket<>& target_socket() override { return socket; }

  // Its statistics appear in memory_system.hbm.stacks[] (trnsim/stats.hpp): names carry their
  // units.
  void add_statistics(trnsim::stats::Group& stack, double /*elapsed_ns*/) const override {
    if (requests_ == 0) return;
    stack.add("requests", requests_, trnsim::stats::Unit::kCount);
    stack.add("read_bytes", read_bytes_, trnsim::stats::Unit::kBytes);
    stack.add("write_bytes", write_bytes_, trnsim::stats::Unit::kBytes);
    stack.add("latency_ns", latency_.to_seconds() * 1e9, trnsim::stats::Unit::kNs);
  }

 private:
  // `delay` comes in as the issue time and goes out as the completion, both relative to
  // sc_time_stamp() (the contract in trnsim/hbm_target.hpp).
  void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
    delay += latency_;
    ++requests_;
    (payload.is_write() ? write_bytes_ : read_bytes_) += payload.get_data_length();
    payload.set_response_status(tlm::TLM_OK_RESPONSE);
  }

  sc_core::sc_time latency_;
  std::uint64_t requests_ = 0;
  std::uint64_t read_bytes_ = 0;
  std::uint64_t write_bytes_ = 0;
};

}  // namespace

int sc_main(int argc, char* argv[]) {
  std::vector<std::string> positional;
  bool json = false;
  double fixed_hbm_ns = -1;
  double vector_cost_scale = -1;
  trnsim::SimulateOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    if (argument == "--json") {
      json = true;
    } else if (argument == "--log" && i + 1 < argc) {
      options.log.push_back(argv[++i]);
    } else if (argument == "--fixed-hbm-ns" && i + 1 < argc) {
      fixed_hbm_ns = std::atof(argv[++i]);
    } else if (argument == "--vector-cost-scale" && i + 1 < argc) {
      vector_cost_scale = std::atof(argv[++i]);
    } else {
      positional.push_back(argument);
    }
  }
  const std::string kernel_path =
      positional.size() > 0 ? positional[0] : "examples/kernels/vector_add.json";
  const std::string config_name = positional.size() > 1 ? positional[1] : "trn2";
  std::vector<std::string> overrides;
  if (fixed_hbm_ns >= 0) {
    // Registered before the config loads: the config checks hbm.model against the known models.
    trnsim::register_hbm_model(
        "fixed_latency",
        [fixed_hbm_ns](sc_core::sc_module_name name, const trnsim::HbmTargetSpec& /*spec*/) {
          return std::make_unique<FixedLatencyHbm>(name, fixed_hbm_ns);
        });
    // HBM targets exist under the packet-level DMA model only.
    overrides.push_back("dma.model=packet");
    overrides.push_back("hbm.model=fixed_latency");
  }
  if (vector_cost_scale >= 0) {
    // A cost model is a pure function of what the engine knows of an instruction (CostQuery),
    // here of the built-in model's answer.
    trnsim::register_cost_model("vector", "scaled",
                                [vector_cost_scale](const trnsim::CostQuery& query) {
                                  trnsim::EngineCycles cycles = query.analytic;
                                  cycles.cycles = static_cast<std::uint64_t>(
                                      static_cast<double>(cycles.cycles) * vector_cost_scale + 0.5);
                                  return cycles;
                                });
    overrides.push_back("vector.cost_model=scaled");
  }
  try {
    const trnsim::Config config = trnsim::Config::load(config_name, overrides);
    const trnsim::Kernel kernel = trnsim::Kernel::load(kernel_path, config);
    trnsim::Simulation simulation(kernel, options);  // the modules exist from here on
    sc_core::sc_start();
    const trnsim::RunResult result = simulation.result();
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
    for (const auto& stack : statistics["memory_system"]["hbm"]["stacks"]) {
      std::cout << "hbm stack " << stack["stack"] << ": " << stack["read_bytes"] << " B read, "
                << stack["write_bytes"] << " B written\n";
    }
  } catch (const trnsim::InvalidInput& error) {
    std::cerr << "embed_example: " << error.what() << "\n";
    return 2;
  }
  return 0;
}
