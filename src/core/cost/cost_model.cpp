// Dispatch over engines.
#include "core/cost/cost_model.hpp"

#include <stdexcept>
#include <string>

#include "core/cost/cost_helpers.hpp"

namespace trnsim::cost {

namespace detail {

void unsupported(const kernel::Instruction& instruction, const char* cost_function) {
  throw std::logic_error(std::string("internal error: ") + cost_function + " cannot cost op '" +
                         std::string(kernel::opcode_name(instruction.opcode)) + "' on engine '" +
                         std::string(kernel::engine_name(instruction.engine)) +
                         "' (the kernel validator should have rejected it)");
}

}  // namespace detail

double engine_clock_ghz(kernel::Engine engine, const config::Params& params) {
  switch (engine) {
    case kernel::Engine::kTensor:
      return params.tensor.clock_ghz;
    case kernel::Engine::kVector:
      return params.vector.clock_ghz;
    case kernel::Engine::kScalar:
      return params.scalar.clock_ghz;
    case kernel::Engine::kGpSimd:
      return params.gpsimd.clock_ghz;
    case kernel::Engine::kSync:
    case kernel::Engine::kDma:
    case kernel::Engine::kCollective:
      break;
  }
  throw std::logic_error("internal error: engine_clock_ghz: '" +
                         std::string(kernel::engine_name(engine)) + "' is not a compute engine");
}

EngineCost engine_cost(const kernel::Instruction& instruction, const config::Params& params,
                       const CostContext& context) {
  switch (instruction.engine) {
    case kernel::Engine::kTensor:
      return tensor_cost(instruction, params, context);
    case kernel::Engine::kVector:
      return vector_cost(instruction, params, context);
    case kernel::Engine::kScalar:
      return scalar_cost(instruction, params, context);
    case kernel::Engine::kGpSimd:
      return gpsimd_cost(instruction, params, context);
    case kernel::Engine::kSync:
    case kernel::Engine::kDma:
    case kernel::Engine::kCollective:
      break;
  }
  detail::unsupported(instruction, "engine_cost");  // the ops above, or no op at all
}

}  // namespace trnsim::cost
