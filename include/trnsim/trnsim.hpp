// trnsim as a library: load a generation config, load a JSON kernel for it, simulate it and read
// the statistics; plug in a model of your own (docs/embedding.md). Link the CMake target
// trnsim::trnsim (find_package(trnsim)).
#pragma once

#include <string>

#include "trnsim/config.hpp"
#include "trnsim/error.hpp"
#include "trnsim/hbm_target.hpp"
#include "trnsim/kernel.hpp"
#include "trnsim/models.hpp"
#include "trnsim/simulate.hpp"
#include "trnsim/statistics.hpp"

namespace trnsim {

/// The library's version ("0.1.0"), as the statistics' provenance reports it.
std::string version();

}  // namespace trnsim
