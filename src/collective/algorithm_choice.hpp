// Which algorithm a collective runs: the kernel's, or for `auto` the config's
// collective.algorithm; `auto` there picks by message size as the Neuron runtime documents for
// Trainium2 (hardware-facts.md §11.5: Mesh up to collective.mesh_max_bytes, RDH up to
// collective.rdh_max_bytes, KangaRing above when collective.kangaring, else Ring; all_to_all:
// Mesh up to mesh_max_bytes, else Ring), and Hierarchical when the ranks span several EFA
// domains evenly. An algorithm that cannot run the operation (AlgorithmModel::supports) falls
// back to Ring (all_to_all: pairwise exchange). Pure.
#pragma once

#include <cstdint>

#include "collective/schedule.hpp"
#include "config/params.hpp"

namespace trnsim::collective {

/// The algorithm `operation` over `ranks` ranks with a message of `bytes` runs when `requested`
/// (kAuto or explicit). `domains` = EFA domains the ranks span; `even_domains` = each holds the
/// same number of ranks.
Algorithm choose_algorithm(Operation operation, Algorithm requested, std::uint64_t bytes,
                           std::uint32_t ranks, std::uint32_t domains, bool even_domains,
                           const config::CollectiveParams& params);

}  // namespace trnsim::collective
