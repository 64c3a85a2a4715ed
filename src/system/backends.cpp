#include "system/backends.hpp"

#include <map>
#include <utility>

#include "config/schema.hpp"
#include "dma/flow_model.hpp"
#include "dma/packet_memory_system.hpp"
#include "dma/transfer_model.hpp"
#include "memory/hbm_stack.hpp"
#include "memory/ideal_hbm.hpp"
#include "util/error.hpp"
#include "util/strings.hpp"

namespace trnsim::system {

namespace {

struct Registry {
  std::map<std::string, DmaModel> dma;
  std::map<std::string, HbmModel> hbm;
};

/// The built-in models, keyed by the names config/params.hpp declares for them.
Registry builtins() {
  Registry registry;
  registry.dma["packet"] = {
      [](const config::Params& params, std::uint32_t cores, const HbmTargetFactory& make_stack) {
        return std::make_unique<dma::PacketMemorySystem>("memory_system", params, cores,
                                                         make_stack);
      },
      true};
  registry.dma["flow"] = {[](const config::Params& params, std::uint32_t cores,
                             const HbmTargetFactory& /*make_stack*/) {
                            return std::make_unique<dma::FlowLevelDma>("memory_system", params,
                                                                       cores);
                          },
                          false};
  registry.dma["transfer"] = {[](const config::Params& params, std::uint32_t cores,
                                 const HbmTargetFactory& /*make_stack*/) {
                                return std::make_unique<dma::TransferLevelDma>(params, cores);
                              },
                              false};
  registry.hbm["banked"] = [](sc_core::sc_module_name name, const HbmTargetSpec& /*spec*/,
                              const config::Params& params) {
    return std::make_unique<memory::HbmStack>(name, params.hbm);
  };
  registry.hbm["ideal"] = [](sc_core::sc_module_name name, const HbmTargetSpec& /*spec*/,
                             const config::Params& params) {
    return std::make_unique<memory::IdealHbmStack>(name, params.hbm);
  };
  return registry;
}

Registry& registry() {
  static Registry instance = builtins();
  return instance;
}

template <class Map>
std::vector<std::string> names_of(const Map& map) {
  std::vector<std::string> names;
  for (const auto& entry : map) names.push_back(entry.first);
  return names;
}

template <class Map>
const typename Map::mapped_type& find_model(const Map& map, const config::Params& params,
                                            const std::string& key, const std::string& name) {
  const auto found = map.find(name);
  if (found == map.end()) {
    throw InputError("config '" + params.name + "': " + key,
                     "expected one of " + util::join(names_of(map), ", ") + ", found '" + name +
                         "' (no model of that name is registered)");
  }
  return found->second;
}

}  // namespace

void register_dma_model(const std::string& name, DmaModel model) {
  registry().dma[name] = std::move(model);
  config::add_model_name("dma.model", name);
}

void register_hbm_model(const std::string& name, HbmModel model) {
  registry().hbm[name] = std::move(model);
  config::add_model_name("hbm.model", name);
}

std::vector<std::string> dma_model_names() {
  return names_of(registry().dma);
}

std::vector<std::string> hbm_model_names() {
  return names_of(registry().hbm);
}

std::unique_ptr<core::DmaBackend> build_memory_system(const config::Params& params,
                                                      std::uint32_t cores) {
  const DmaModel& dma = find_model(registry().dma, params, "dma.model", params.dma.model);
  const HbmModel& hbm = find_model(registry().hbm, params, "hbm.model", params.hbm.model);
  // A model without HBM targets has the default model's timing built in.
  if (!dma.uses_hbm_model && params.hbm.model != config::HbmParams{}.model) {
    throw InputError("config '" + params.name + "': hbm.model",
                     "an HBM model only under dma.model = packet (the " + params.dma.model +
                         " model computes HBM time itself), found hbm.model = '" +
                         params.hbm.model + "' with dma.model = '" + params.dma.model + "'");
  }
  const HbmTargetFactory make_stack = [&hbm, &params](sc_core::sc_module_name name,
                                                      const HbmTargetSpec& spec) {
    return hbm(name, spec, params);
  };
  return dma.build(params, cores, make_stack);
}

}  // namespace trnsim::system
