// The SystemC module tree of a simulation: every chip is a top-level module, its NeuronCores its
// children, and each core's engines and DMA dispatcher the core's children, each with its own
// process (chip0.core0.tensor.sequencer). Read from inside a running simulation (the observer's
// first call), in a child process: SystemC elaborates once per process.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <systemc>
#include <vector>

#include "config/load.hpp"
#include "core/stream_source.hpp"
#include "kernel/parse.hpp"
#include "kernel/prepare.hpp"
#include "kernel/target_from_config.hpp"
#include "system/simulation.hpp"
#include "util/child_process.hpp"

namespace trnsim::testing {
namespace {

void list_objects(const std::vector<sc_core::sc_object*>& objects, std::string& out) {
  for (const sc_core::sc_object* object : objects) {
    out += object->name();
    out += ' ';
    out += object->kind();
    out += '\n';
    list_objects(object->get_child_objects(), out);
  }
}

/// "NAME KIND" lines of every SystemC object while a `cores`-core system of `config` runs one
/// memset per core.
std::string object_tree(const std::string& config, int cores) {
  int status = 0;
  const std::optional<std::string> text = util::run_in_child(
      [&]() -> std::string {
        try {
          const config::LoadedConfig loaded = config::load_config(config, {});
          auto program = std::make_shared<const kernel::Program>(kernel::parse_program_text(
              R"({"format": "trnsim-kernel/1", "name": "tree", "cores": )" + std::to_string(cores) +
                  R"(,
                "tensors": {"t": {"memory": "sbuf", "dtype": "float32", "shape": [128, 64]}},
                "program": [{"op": "memset", "dst": "t", "value": 0}]})",
              "<test>", {}));
          const kernel::PreparedKernel prepared =
              kernel::prepare_kernel(program, kernel::target_from_params(loaded.params));
          std::string tree;
          system::simulate(
              loaded.params, prepared.cores,
              [&](std::uint32_t pid) {
                return std::make_unique<core::StreamSource>(prepared, pid);
              },
              [&](const core::InstructionTiming&) {
                if (tree.empty()) list_objects(sc_core::sc_get_top_level_objects(), tree);
              });
          return tree;
        } catch (const std::exception& e) {
          return e.what();
        }
      },
      status);
  return text.value_or("child failed with status " + std::to_string(status));
}

TEST(ModuleTree, EnginesAndTheDmaDispatcherAreChildModulesOfTheirCore) {
  const std::string tree = object_tree("trn2", 1);
  for (const std::string engine : {"tensor", "vector", "scalar", "gpsimd", "sync"}) {
    EXPECT_NE(tree.find("chip0.core0." + engine + " sc_module\n"), std::string::npos) << engine;
    EXPECT_NE(tree.find("chip0.core0." + engine + ".sequencer sc_method_process\n"),
              std::string::npos)
        << engine;
  }
  EXPECT_NE(tree.find("chip0.core0.dma sc_module\n"), std::string::npos);
  EXPECT_NE(tree.find("chip0.core0.dma.dispatcher sc_method_process\n"), std::string::npos);
  EXPECT_NE(tree.find("chip0.core0.dispatcher sc_method_process\n"), std::string::npos);
  EXPECT_NE(tree.find("chip0 sc_module\n"), std::string::npos) << tree;
}

TEST(ModuleTree, CoresAreNumberedWithinTheirChip) {
  // trn2-48xl: 16 chips of 8 NeuronCores, so cores 8 and 9 are the first two of the second chip.
  const std::string tree = object_tree("trn2-48xl", 10);
  EXPECT_NE(tree.find("chip0.core7.tensor sc_module\n"), std::string::npos) << tree;
  EXPECT_NE(tree.find("chip1.core0.tensor sc_module\n"), std::string::npos);
  EXPECT_NE(tree.find("chip1.core1.sync sc_module\n"), std::string::npos);
  EXPECT_EQ(tree.find("chip1.core2"), std::string::npos);
  EXPECT_EQ(tree.find("chip0.core8"), std::string::npos);
}

}  // namespace
}  // namespace trnsim::testing
