// The `instant` cost model of every compute engine: each instruction keeps its engine busy for one
// cycle of the engine's clock, with no LoadStationary and no pipeline latency. Not a model of
// any hardware: the what-if "this engine costs nothing", which bounds how much of a kernel's time
// the engine's work sets (the kernel still waits for DMAs, other engines and semaphores).
#include "core/cost/cost_helpers.hpp"
#include "core/cost/cost_model.hpp"

namespace trnsim::cost {

EngineCost instant_cost(const kernel::Instruction& instruction, const config::Params& params,
                        const CostContext& /*context*/) {
  if (!kernel::engine_info(instruction.engine).compute) {
    detail::unsupported(instruction, "instant_cost");
  }
  EngineCost cost;
  cost.cycles = 1;
  cost.ns = 1.0 / engine_clock_ghz(instruction.engine, params);
  return cost;
}

}  // namespace trnsim::cost
