// VectorE costs: max(MIN_II, work) + fixed extras + dependent overhead, with the per-op work of
// hardware-facts.md §13 and the NC-v3+ BF16 performance modes of §4 (docs/cost-models.md
// "VectorE").
#include <algorithm>

#include "core/cost/cost_helpers.hpp"
#include "core/cost/cost_model.hpp"

namespace trnsim::cost {
namespace {

using kernel::AccessPattern;
using kernel::AluOp;
using kernel::Instruction;
using kernel::MemoryKind;
using kernel::Opcode;
using kernel::Slot;

bool in_sbuf(const AccessPattern& pattern) {
  return pattern.memory == MemoryKind::kSbuf;
}

/// tensor_copy / tensor_scalar speed-up (hardware-facts.md §4): BF16/FP16 in and out, both in SBUF
/// with a unit-stride innermost dimension -> bf16_fast_copy_speedup (4x); BF16/FP16 otherwise
/// (strided or one side in PSUM) -> bf16_2x_speedup; any other dtype -> 1.
double copy_speedup(const Instruction& instruction, const config::VectorEngineParams& vector) {
  const AccessPattern& src = instruction.src();
  const AccessPattern& dst = instruction.dst();
  if (!detail::is_half_float(src.dtype) || !detail::is_half_float(dst.dtype)) return 1;
  const bool fast =
      in_sbuf(src) && in_sbuf(dst) && src.innermost_contiguous() && dst.innermost_contiguous();
  return fast ? vector.bf16_fast_copy_speedup : vector.bf16_2x_speedup;
}

/// tensor_tensor element work per element of in0 (hardware-facts.md §13, §4).
double tensor_tensor_work(const Instruction& instruction,
                          const config::VectorEngineParams& vector) {
  const AccessPattern& in0 = instruction.src();
  const AccessPattern& in1 = instruction.operand(Slot::kIn1);
  const AccessPattern& dst = instruction.dst();
  const bool psum_and_sbuf = in0.memory != in1.memory && in0.on_chip() && in1.on_chip();
  const bool both_sbuf = in_sbuf(in0) && in_sbuf(in1);
  const bool all_bf16 =
      detail::is_bf16(in0.dtype) && detail::is_bf16(in1.dtype) && detail::is_bf16(dst.dtype);
  const bool fast_alu = instruction.alu == AluOp::kAdd || instruction.alu == AluOp::kSubtract ||
                        instruction.alu == AluOp::kMultiply;
  const bool unit_stride =
      in0.innermost_contiguous() && in1.innermost_contiguous() && dst.innermost_contiguous();
  const double passes =
      (psum_and_sbuf || (all_bf16 && fast_alu && both_sbuf && unit_stride)) ? 1.0 : 2.0;
  const bool all_half = detail::is_half_float(in0.dtype) && detail::is_half_float(in1.dtype) &&
                        detail::is_half_float(dst.dtype);
  const double speedup = (both_sbuf && all_half) ? vector.bf16_2x_speedup : 1.0;
  return passes / speedup;
}

/// scalar_tensor_tensor: N if data, in1, dst are BF16, op0 and op1 are subtract/multiply and N is
/// even; else 2N (hardware-facts.md §13).
double scalar_tensor_tensor_work(const Instruction& instruction, std::uint64_t n) {
  auto fast_op = [](AluOp op) { return op == AluOp::kSubtract || op == AluOp::kMultiply; };
  const bool fast = detail::is_bf16(instruction.src().dtype) &&
                    detail::is_bf16(instruction.operand(Slot::kIn1).dtype) &&
                    detail::is_bf16(instruction.dst().dtype) && fast_op(instruction.op0) &&
                    fast_op(instruction.op1) && n % 2 == 0;
  return fast ? 1.0 : 2.0;
}

/// select streams pred, on_true and on_false; SBUF and PSUM are read through separate ports, so
/// the passes are the larger count of streamed inputs in one memory (this reproduces
/// tensor_copy_predicated's N / 2N rule of hardware-facts.md §13).
double select_passes(const Instruction& instruction) {
  int sbuf = 0;
  int psum = 0;
  for (Slot slot : {Slot::kSrc, Slot::kIn1, Slot::kAux0}) {
    const AccessPattern& pattern = instruction.operand(slot);
    if (!pattern.used()) continue;
    (pattern.memory == MemoryKind::kPsum ? psum : sbuf) += 1;
  }
  return std::max({sbuf, psum, 1});
}

}  // namespace

EngineCost vector_cost(const Instruction& instruction, const config::Params& params,
                       const CostContext& context) {
  if (instruction.engine != kernel::Engine::kVector) {
    detail::unsupported(instruction, "vector_cost");
  }
  const config::VectorEngineParams& vector = params.vector;
  const AccessPattern& main = instruction.src().used() ? instruction.src() : instruction.dst();
  const std::uint64_t n = main.elements_per_partition();
  const auto elements = static_cast<double>(n);
  double per_element = 1;   // work cycles per element of the main input, before stride
  std::uint64_t extra = 0;  // fixed cycles added after the MIN_II floor
  bool select_stream = false;
  switch (instruction.opcode) {
    case Opcode::kTensorCopy:
    case Opcode::kTensorScalar:
      per_element = 1.0 / copy_speedup(instruction, vector);
      // tensor_scalar_reduce: the free-axis reduction into reduce_dst is read out of the
      // accumulator after the stream, MIN_II more cycles (NKI ISA reference).
      if (instruction.operand(Slot::kReduceDst).used()) {
        extra += static_cast<std::uint64_t>(vector.min_ii_cycles);
      }
      break;
    case Opcode::kTensorTensor:
      per_element = tensor_tensor_work(instruction, vector);
      break;
    case Opcode::kScalarTensorTensor:
      per_element = scalar_tensor_tensor_work(instruction, n);
      break;
    case Opcode::kTensorReduce: {
      const bool half = detail::is_bf16(instruction.src().dtype) &&
                        detail::is_bf16(instruction.dst().dtype) &&
                        (instruction.alu == AluOp::kAdd || instruction.alu == AluOp::kMax);
      per_element = half ? 0.5 : 1.0;
      break;
    }
    case Opcode::kTensorTensorScan:
      per_element = 2;
      break;
    case Opcode::kReciprocal:
      per_element = 8;
      break;
    case Opcode::kBnStats:
    case Opcode::kNcTranspose:
      per_element = 1;
      break;
    case Opcode::kBnAggr:
      per_element = 13.0 / 3.0;
      break;
    case Opcode::kMemset:
      per_element = (instruction.fill_value == 0 && detail::is_half_float(instruction.dst().dtype))
                        ? 0.5
                        : 1.0;
      break;
    case Opcode::kSelect:
      per_element = select_passes(instruction);
      select_stream = true;
      break;
    case Opcode::kExponential:
      // exponential_speedup x the element rate of ScalarE activation(exp), converted to VectorE
      // cycles; reduce_dst adds an accumulator read-out of MIN_II like tensor_scalar_reduce.
      per_element = vector.clock_ghz / (params.scalar.clock_ghz * vector.exponential_speedup);
      if (instruction.operand(Slot::kReduceDst).used()) {
        extra += static_cast<std::uint64_t>(vector.min_ii_cycles);
      }
      break;
    case Opcode::kDmaCopy:
    case Opcode::kDmaTranspose:
    case Opcode::kNcMatmul:
    case Opcode::kNcMatmulMx:
    case Opcode::kActivation:
    case Opcode::kTensorPartitionReduce:
    case Opcode::kIota:
    case Opcode::kAffineSelect:
    case Opcode::kCoreBarrier:
    case Opcode::kAllReduce:
    case Opcode::kAllGather:
    case Opcode::kReduceScatter:
    case Opcode::kAllToAll:
    case Opcode::kSend:
    case Opcode::kRecv:
      detail::unsupported(instruction, "vector_cost");
  }
  const bool slow =
      select_stream
          ? detail::any_slow_stride(instruction, params,
                                    {Slot::kDst, Slot::kSrc, Slot::kIn1, Slot::kAux0})
          : detail::any_slow_stride(instruction, params, {Slot::kDst, Slot::kSrc, Slot::kIn1});
  const double work = elements * per_element * (slow ? 2.0 : 1.0);
  std::uint64_t cycles =
      std::max(static_cast<std::uint64_t>(vector.min_ii_cycles), detail::ceil_cycles(work)) + extra;
  if (context.depends_on_recent) {
    cycles += static_cast<std::uint64_t>(vector.dependent_overhead_cycles);
  }
  return detail::make_cost(cycles, vector.clock_ghz);
}

}  // namespace trnsim::cost
