// Collective algorithms by name: each builds the step schedule of the operations it supports
// from the Schedule's building blocks. The built-in ones (Ring, Mesh, RDH, KangaRing,
// Hierarchical) are one file each in collective/algorithms/; a new algorithm is a new file
// there and a register_algorithm() call, after which kernels name it in a collective's
// `algorithm` attribute and configs in `collective.algorithm`. Pure: no timing, no SystemC.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include "collective/schedule.hpp"

namespace trnsim::collective {

struct AlgorithmModel {
  /// Whether it can run `operation` over `ranks` ranks (`even_domains`: every EFA domain holds
  /// as many of them); where it cannot, the collective runs Ring.
  std::function<bool(Operation operation, std::uint32_t ranks, bool even_domains)> supports;
  /// Adds the steps of the schedule's operation (schedule.operation(), schedule.ranks())
  /// moving a message of `bytes` (the nccom-test size, schedule.hpp).
  std::function<void(Schedule& schedule, std::uint64_t bytes, const RankLayout& layout)> build;
};

/// Registers `model` under `name` and returns its id; the name becomes a value of the kernel
/// attribute `algorithm` and of the config key `collective.algorithm`. Registering a name
/// again replaces its model. Call it before loading the configs and kernels that name it.
Algorithm register_algorithm(std::string_view name, AlgorithmModel model);

/// The model of `algorithm`; null for kAuto and for an id nothing registered.
const AlgorithmModel* algorithm_model(Algorithm algorithm);

// The built-in algorithms (collective/algorithms/*.cpp).
AlgorithmModel ring_algorithm();
AlgorithmModel mesh_algorithm();
AlgorithmModel rdh_algorithm();
AlgorithmModel kangaring_algorithm();
AlgorithmModel hierarchical_algorithm();

}  // namespace trnsim::collective
