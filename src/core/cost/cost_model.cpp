// Dispatch over engines and the placeholder DMA time (docs/cost-models.md "DMA placeholder").
#include "core/cost/cost_model.hpp"

#include <algorithm>
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
    default:
      detail::unsupported(instruction, "engine_cost");
  }
}

double dma_simple_ns(const kernel::Instruction& instruction, const config::Params& params) {
  using kernel::Opcode;
  if (instruction.opcode != Opcode::kDmaCopy && instruction.opcode != Opcode::kDmaTranspose) {
    detail::unsupported(instruction, "dma_simple_ns");
  }
  const config::DmaParams& dma = params.dma;
  const kernel::AccessPattern& src = instruction.src();
  const kernel::AccessPattern& dst = instruction.dst();
  // A transfer spreads over the engines owning its on-chip partitions: engines_per_core engines
  // share sbuf.partitions partitions (16 engines x 8 partitions, facts.md §9.2).
  std::uint64_t engines = static_cast<std::uint64_t>(dma.engines_per_core);
  const kernel::AccessPattern* on_chip = dst.on_chip() ? &dst : (src.on_chip() ? &src : nullptr);
  if (on_chip != nullptr) {
    engines = std::clamp<std::uint64_t>(
        detail::ceil_div(std::uint64_t{on_chip->partitions} * engines,
                         static_cast<std::uint64_t>(params.sbuf.partitions)),
        1, engines);
  }
  double bandwidth = std::min(static_cast<double>(engines) * dma.engine_bandwidth_gbps,
                              dma.core_bandwidth_gbps);  // GB/s = bytes/ns
  if (instruction.opcode == Opcode::kDmaTranspose) {
    bandwidth *= src.on_chip() ? dma.transpose_efficiency_sbuf : dma.transpose_efficiency_hbm;
  }
  double fixed_ns = dma.fixed_cost_ns;
  if (instruction.dge == kernel::DgeMode::kHwdge) fixed_ns += dma.hwdge_cost_ns;
  if (instruction.dge == kernel::DgeMode::kSwdge) fixed_ns += dma.swdge_cost_ns;
  const auto bytes = static_cast<double>(std::max(src.bytes(), dst.bytes()));
  return fixed_ns + bytes / bandwidth;
}

}  // namespace trnsim::cost
