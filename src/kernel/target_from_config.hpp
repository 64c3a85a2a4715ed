// Builds the kernel Target from the configuration system's typed parameters.
#pragma once

#include "config/params.hpp"
#include "kernel/target.hpp"

namespace trnsim::kernel {

/// Every Target field from `params`; the HBM address alignment, which the config does not
/// declare, keeps Target's documented default.
Target target_from_params(const config::Params& params);

}  // namespace trnsim::kernel
