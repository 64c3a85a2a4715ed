// GpSimdE costs: start_cycles + streamed element passes at one 32-bit element per partition per
// lane-cycle (hardware-facts.md §6, §13; docs/cost-models.md "GpSimdE").
#include "core/cost/cost_helpers.hpp"
#include "core/cost/cost_model.hpp"

namespace trnsim::cost {
namespace {

/// tensor_partition_reduce (cost not published, hardware-facts.md §13): one pass reads each
/// processor's partitions and reduces them, one more combines the processors' partial rows.
/// Assumed.
constexpr double kPartitionReducePasses = 2;

}  // namespace

EngineCost gpsimd_cost(const kernel::Instruction& instruction, const config::Params& params,
                       const CostContext& /*context*/) {
  using kernel::Opcode;
  using kernel::Slot;
  if (instruction.engine != kernel::Engine::kGpSimd) {
    detail::unsupported(instruction, "gpsimd_cost");
  }
  const config::GpSimdEngineParams& gpsimd = params.gpsimd;
  double passes = 1;  // element streams per element of the main operand
  switch (instruction.opcode) {
    case Opcode::kIota:          // 150 + N (hardware-facts.md §13)
    case Opcode::kAffineSelect:  // ~150 + N
    case Opcode::kTensorCopy:    // one input stream (assumed like iota)
    case Opcode::kTensorScalar:  // scalar operands are per partition, not streamed
    case Opcode::kMemset:        // one output stream
      passes = 1;
      break;
    case Opcode::kTensorTensor:  // two input streams share the 512-bit read interface
      passes = 2;
      break;
    case Opcode::kTensorPartitionReduce:
      passes = kPartitionReducePasses;
      break;
    case Opcode::kDmaCopy:
    case Opcode::kDmaTranspose:
    case Opcode::kNcMatmul:
    case Opcode::kNcMatmulMx:
    case Opcode::kNcTranspose:
    case Opcode::kActivation:
    case Opcode::kScalarTensorTensor:
    case Opcode::kTensorReduce:
    case Opcode::kTensorTensorScan:
    case Opcode::kBnStats:
    case Opcode::kBnAggr:
    case Opcode::kReciprocal:
    case Opcode::kExponential:
    case Opcode::kSelect:
    case Opcode::kCoreBarrier:
    case Opcode::kAllReduce:
    case Opcode::kAllGather:
    case Opcode::kReduceScatter:
    case Opcode::kAllToAll:
    case Opcode::kSend:
    case Opcode::kRecv:
      detail::unsupported(instruction, "gpsimd_cost");
  }
  const kernel::AccessPattern& main =
      instruction.src().used() ? instruction.src() : instruction.dst();
  // lanes 32-bit lanes serve sbuf.partitions partitions: 128 / 128 = 1 element per partition
  // per cycle (each processor reads <= 32 bits per partition per cycle, hardware-facts.md §6).
  const double elements_per_partition_cycle =
      static_cast<double>(gpsimd.lanes) / params.sbuf.partitions;
  const bool slow =
      detail::any_slow_stride(instruction, params, {Slot::kDst, Slot::kSrc, Slot::kIn1});
  const double work = static_cast<double>(main.elements_per_partition()) * passes *
                      (slow ? 2.0 : 1.0) / elements_per_partition_cycle;
  return detail::make_cost(
      static_cast<std::uint64_t>(gpsimd.start_cycles) + detail::ceil_cycles(work),
      gpsimd.clock_ghz);
}

}  // namespace trnsim::cost
