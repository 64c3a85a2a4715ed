// ScalarE costs: activation max(MIN_II, N) (+ accumulator read-out with reduce_dst), tensor_copy
// (NC-v3+) and tensor_scalar (NC-v4+) with the NC-v4 BF16 speed-up (hardware-facts.md §5, §13;
// docs/cost-models.md "ScalarE").
#include <algorithm>

#include "core/cost/cost_helpers.hpp"
#include "core/cost/cost_model.hpp"

namespace trnsim::cost {

EngineCost scalar_cost(const kernel::Instruction& instruction, const config::Params& params,
                       const CostContext& context) {
  using kernel::Slot;
  if (instruction.engine != kernel::Engine::kScalar) {
    detail::unsupported(instruction, "scalar_cost");
  }
  const config::ScalarEngineParams& scalar = params.scalar;
  const kernel::AccessPattern& src = instruction.src();
  const kernel::AccessPattern& dst = instruction.dst();
  double per_element = 1;
  std::uint64_t extra = 0;
  switch (instruction.opcode) {
    case kernel::Opcode::kActivation:
      // Same cost with or without scale/bias (hardware-facts.md §5).
      if (instruction.operand(Slot::kReduceDst).used()) {
        extra += static_cast<std::uint64_t>(scalar.accumulator_read_cycles);
      }
      if (context.activation_table_switch) {
        extra += static_cast<std::uint64_t>(scalar.table_switch_cycles);
      }
      break;
    case kernel::Opcode::kTensorCopy:
    case kernel::Opcode::kTensorScalar:
      if (detail::is_half_float(src.dtype) && detail::is_half_float(dst.dtype)) {
        per_element = 1.0 / scalar.bf16_speedup;
      }
      break;
    case kernel::Opcode::kDmaCopy:
    case kernel::Opcode::kDmaTranspose:
    case kernel::Opcode::kNcMatmul:
    case kernel::Opcode::kNcMatmulMx:
    case kernel::Opcode::kNcTranspose:
    case kernel::Opcode::kTensorTensor:
    case kernel::Opcode::kScalarTensorTensor:
    case kernel::Opcode::kTensorReduce:
    case kernel::Opcode::kTensorPartitionReduce:
    case kernel::Opcode::kTensorTensorScan:
    case kernel::Opcode::kMemset:
    case kernel::Opcode::kIota:
    case kernel::Opcode::kAffineSelect:
    case kernel::Opcode::kBnStats:
    case kernel::Opcode::kBnAggr:
    case kernel::Opcode::kReciprocal:
    case kernel::Opcode::kExponential:
    case kernel::Opcode::kSelect:
    case kernel::Opcode::kCoreBarrier:
    case kernel::Opcode::kAllReduce:
    case kernel::Opcode::kAllGather:
    case kernel::Opcode::kReduceScatter:
    case kernel::Opcode::kAllToAll:
    case kernel::Opcode::kSend:
    case kernel::Opcode::kRecv:
      detail::unsupported(instruction, "scalar_cost");
  }
  const bool slow = detail::any_slow_stride(instruction, params, {Slot::kDst, Slot::kSrc});
  const double work =
      static_cast<double>(src.elements_per_partition()) * per_element * (slow ? 2.0 : 1.0);
  std::uint64_t cycles =
      std::max(static_cast<std::uint64_t>(scalar.min_ii_cycles), detail::ceil_cycles(work)) + extra;
  if (context.depends_on_recent) {
    cycles += static_cast<std::uint64_t>(scalar.dependent_overhead_cycles);
  }
  return detail::make_cost(cycles, scalar.clock_ghz);
}

}  // namespace trnsim::cost
