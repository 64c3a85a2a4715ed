// The `instant` cost model of every compute engine: each instruction keeps its engine busy for one
// cycle of the engine's clock, with no LoadStationary and no pipeline latency. Not a model of
// any hardware: the what-if "this engine costs nothing", which bounds how much of a kernel's time
// the engine's work sets (the kernel still waits for DMAs, other engines and semaphores).
#include "core/cost/cost_helpers.hpp"
#include "core/cost/cost_model.hpp"

namespace trnsim::cost {

EngineCost instant_cost(const kernel::Instruction& instruction, const config::Params& params,
                        const CostContext& /*context*/) {
  double cycle_ns = 0;
  switch (instruction.engine) {
    case kernel::Engine::kTensor:
      cycle_ns = params.tensor.cycle_ns();
      break;
    case kernel::Engine::kVector:
      cycle_ns = params.vector.cycle_ns();
      break;
    case kernel::Engine::kScalar:
      cycle_ns = params.scalar.cycle_ns();
      break;
    case kernel::Engine::kGpSimd:
      cycle_ns = params.gpsimd.cycle_ns();
      break;
    case kernel::Engine::kSync:
    case kernel::Engine::kDma:
    case kernel::Engine::kCollective:
      detail::unsupported(instruction, "instant_cost");
  }
  EngineCost cost;
  cost.cycles = 1;
  cost.ns = cycle_ns;
  return cost;
}

}  // namespace trnsim::cost
