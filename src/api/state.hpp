// What the public API's handles (include/trnsim) hold: the internal loaded config and prepared
// kernel. Private to the library; public headers only forward-declare these.
#pragma once

#include <memory>
#include <string>

#include "config/load.hpp"
#include "kernel/prepare.hpp"
#include "kernel/program.hpp"
#include "trnsim/config.hpp"

namespace trnsim::detail {

struct ConfigState {
  config::LoadedConfig loaded;
};

struct KernelState {
  Config config;
  std::shared_ptr<const kernel::Program> program;
  kernel::PreparedKernel prepared;
  std::string hash;  ///< of the kernel text and its param overrides, as `trnsim run` computes it
};

}  // namespace trnsim::detail
