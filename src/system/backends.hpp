// The model's pluggable parts by the name a config selects them with (Ramulator-style): the
// memory system's granularity (`dma.model`: packet, flow, transfer) and the timing model of an
// HBM stack (`hbm.model`: banked, ideal). A built-in alternative is a new file with its class, one
// entry in the table of builtins() (backends.cpp) and its name among the config choice's
// models (config/params.hpp, FieldMeta::choosing); a program that embeds trnsim registers its
// own at run time (trnsim::register_hbm_model, docs/embedding.md).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config/params.hpp"
#include "core/dma_backend.hpp"
#include "trnsim/hbm_target.hpp"

namespace trnsim::system {

/// Builds the target of one HBM stack for a config.
using HbmModel = std::function<std::unique_ptr<HbmTarget>(
    sc_core::sc_module_name name, const HbmTargetSpec& spec, const config::Params& params)>;

/// A memory system: the DMA backend of every core of a run.
struct DmaModel {
  /// Builds it for `cores` cores; `make_stack` builds its HBM stacks when it models them.
  std::function<std::unique_ptr<core::DmaBackend>(const config::Params& params, std::uint32_t cores,
                                                  const HbmTargetFactory& make_stack)>
      build;
  /// Whether it builds its HBM stacks with make_stack (hbm.model applies to it).
  bool uses_hbm_model = false;
};

/// Registers `model` as `dma.model` = `name` (replacing one of that name) and makes configs
/// accept the name. Not thread-safe: call before configs load.
void register_dma_model(const std::string& name, DmaModel model);
/// Registers `model` as `hbm.model` = `name` (replacing one of that name), likewise.
void register_hbm_model(const std::string& name, HbmModel model);

/// The registered names, sorted.
std::vector<std::string> dma_model_names();
std::vector<std::string> hbm_model_names();

/// The memory system `params` selects: dma.model, its HBM stacks from hbm.model. Throws
/// InputError for a name nothing registered (a config loaded before its model was registered)
/// or an hbm.model other than the built-in one with a DMA model that has no HBM stacks.
std::unique_ptr<core::DmaBackend> build_memory_system(const config::Params& params,
                                                      std::uint32_t cores);

}  // namespace trnsim::system
