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
