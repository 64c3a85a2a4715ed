// Models of your own, selected by name from the config like the built-in ones: today the HBM
// stack's timing (hbm.model; the interface and its contract are in trnsim/hbm_target.hpp).
#pragma once

#include <string>

#include "trnsim/hbm_target.hpp"

namespace trnsim {

/// Makes `name` a value of `hbm.model`: under dma.model = packet, every HBM stack of a config
/// that selects it is built by `factory`. Registering a name again replaces its factory (also
/// the built-in `banked`). Call before loading a config that names it (Config::load checks the
/// name) and from one thread.
void register_hbm_model(const std::string& name, HbmTargetFactory factory);

}  // namespace trnsim
