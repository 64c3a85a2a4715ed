// TensorE costs: nc_matmul = LoadStationary + MultiplyMoving, nc_matmul_mx, nc_transpose
// (hardware-facts.md §3.2-3.5, §13; docs/cost-models.md "TensorE").
#include <algorithm>

#include "core/cost/cost_helpers.hpp"
#include "core/cost/cost_model.hpp"

namespace trnsim::cost {
namespace {

using kernel::AccessPattern;
using kernel::DType;
using kernel::Instruction;
using kernel::Opcode;
using kernel::Slot;

bool is_fp32(DType dtype) {
  return dtype == DType::kFloat32;
}

/// Rate factor of hardware-facts.md §7 for one streamed operand: 2 when its innermost stride is too
/// large.
double stride_factor(const Instruction& instruction, const config::Params& params, Slot slot) {
  return detail::any_slow_stride(instruction, params, {slot}) ? 2.0 : 1.0;
}

/// The matmul cost rule (hardware-facts.md §3.2), shared by matmul, MX matmul and transpose:
///   MM = dtype_factor * max(min(mm_min_ii, columns), moving_stream)
///   LS = dtype_factor * stationary_stream / load_stationary_speedup
/// columns: PE columns used (= output partitions = stationary free size); the streams are in
/// BF16-equivalent cycles per partition (values / rate x stride factor).
EngineCost matmul_rule(const config::TensorEngineParams& tensor, double columns,
                       double moving_stream, double stationary_stream, double dtype_factor,
                       const CostContext& context) {
  const double mm =
      dtype_factor *
      std::max(std::min(static_cast<double>(tensor.mm_min_ii_cycles), columns), moving_stream);
  const double ls = dtype_factor * stationary_stream / tensor.load_stationary_speedup;
  EngineCost cost = detail::make_cost(detail::ceil_cycles(mm), tensor.clock_ghz);
  cost.load_stationary_cycles = context.stationary_reused ? 0 : detail::ceil_cycles(ls);
  cost.latency_cycles = static_cast<std::uint64_t>(tensor.pipeline_latency_cycles);
  return cost;
}

/// Values per partition of an operand (x4 MX containers hold 4 values each).
double values_per_partition(const AccessPattern& pattern) {
  return static_cast<double>(pattern.elements_per_partition() *
                             kernel::dtype_values_per_element(pattern.dtype));
}

/// Throughput relative to BF16 of the data streamed: FP8 double row (hardware-facts.md §3.4: K =
/// 256 in the time of BF16 K = 128, i.e. the [K, 2, F] operands stream at 2 values per cycle) and
/// MX (§3.5: 4x; a mixed MXFP8/MXFP4 pair runs at the slower rate). 1 otherwise.
double matmul_rate(const Instruction& instruction, const config::TensorEngineParams& tensor) {
  if (instruction.opcode == Opcode::kNcMatmulMx) {
    if (!tensor.mx_supported) detail::unsupported(instruction, "tensor_cost(nc_matmul_mx)");
    auto rate_of = [&tensor](DType dtype) {
      return dtype == DType::kFloat4E2M1FnX4 ? tensor.mxfp4_speedup : tensor.mx_speedup;
    };
    return std::min(rate_of(instruction.operand(Slot::kStationary).dtype),
                    rate_of(instruction.src().dtype));
  }
  if (instruction.double_row) {
    if (!tensor.double_row_supported) detail::unsupported(instruction, "tensor_cost(double_row)");
    return tensor.fp8_double_row_speedup;
  }
  return 1;
}

EngineCost matmul_cost(const Instruction& instruction, const config::Params& params,
                       const CostContext& context) {
  const config::TensorEngineParams& tensor = params.tensor;
  const AccessPattern& stationary = instruction.operand(Slot::kStationary);
  const AccessPattern& moving = instruction.src();
  const double rate = matmul_rate(instruction, tensor);
  // An FP32 (not TF32) input makes the matmul FP32 (the validator requires both); transpose mode
  // makes FP32 transpose_fp32_mode_speedup times faster (hardware-facts.md §3.1-3.3).
  double dtype_factor = 1;
  if (is_fp32(stationary.dtype) || is_fp32(moving.dtype)) {
    dtype_factor = tensor.fp32_cost_factor;
    if (instruction.is_transpose) dtype_factor /= tensor.transpose_fp32_mode_speedup;
  }
  const auto columns = static_cast<double>(instruction.dst().partitions);
  const double moving_stream =
      values_per_partition(moving) / rate * stride_factor(instruction, params, Slot::kSrc);
  const double stationary_stream = values_per_partition(stationary) / rate *
                                   stride_factor(instruction, params, Slot::kStationary);
  return matmul_rule(tensor, columns, moving_stream, stationary_stream, dtype_factor, context);
}

/// Transpose of src [P, F] = matmul with src as stationary (F columns) and a [P, P] identity as
/// moving: max(P, min(mm_min_ii, F)) (hardware-facts.md §3.3). FP32 always uses transpose mode.
EngineCost transpose_cost(const Instruction& instruction, const config::Params& params,
                          const CostContext& context) {
  const config::TensorEngineParams& tensor = params.tensor;
  const AccessPattern& src = instruction.src();
  const auto free = static_cast<double>(src.elements_per_partition());
  const double dtype_factor =
      is_fp32(src.dtype) ? tensor.fp32_cost_factor / tensor.transpose_fp32_mode_speedup : 1.0;
  return matmul_rule(tensor, free, static_cast<double>(src.partitions),
                     free * stride_factor(instruction, params, Slot::kSrc), dtype_factor, context);
}

/// [begin, begin + count) rounded out to multiples of `granularity`, clipped to `limit`.
void round_out(std::uint32_t begin, std::uint32_t count, std::uint32_t granularity,
               std::uint32_t limit, std::uint32_t& out_begin, std::uint32_t& out_count) {
  const std::uint32_t first = begin / granularity * granularity;
  const std::uint32_t end = std::min(
      static_cast<std::uint32_t>(detail::ceil_div(begin + count, granularity) * granularity),
      limit);
  out_begin = std::min(first, limit);
  out_count = end > out_begin ? end - out_begin : 0;
}

/// What the PE array does for `instruction`: the one switch over every opcode in this file, so
/// an opcode added to the tensor engine does not compile until it has a cost here.
/// `cost_function` names the caller in the error for an instruction the array does not run.
enum class PeWork { kMatmul, kTranspose };
PeWork pe_work(const Instruction& instruction, const char* cost_function) {
  if (instruction.engine != kernel::Engine::kTensor) {
    detail::unsupported(instruction, cost_function);
  }
  switch (instruction.opcode) {
    case Opcode::kNcMatmul:
    case Opcode::kNcMatmulMx:
      return PeWork::kMatmul;
    case Opcode::kNcTranspose:
      return PeWork::kTranspose;
    case Opcode::kDmaCopy:
    case Opcode::kDmaTranspose:
    case Opcode::kActivation:
    case Opcode::kTensorTensor:
    case Opcode::kTensorScalar:
    case Opcode::kScalarTensorTensor:
    case Opcode::kTensorReduce:
    case Opcode::kTensorPartitionReduce:
    case Opcode::kTensorTensorScan:
    case Opcode::kTensorCopy:
    case Opcode::kMemset:
    case Opcode::kIota:
    case Opcode::kAffineSelect:
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
      break;
  }
  detail::unsupported(instruction, cost_function);  // the ops above, or no op at all
}

}  // namespace

EngineCost tensor_cost(const Instruction& instruction, const config::Params& params,
                       const CostContext& context) {
  return pe_work(instruction, "tensor_cost") == PeWork::kMatmul
             ? matmul_cost(instruction, params, context)
             : transpose_cost(instruction, params, context);
}

PeTile pe_tile(const Instruction& instruction, const config::Params& params) {
  const config::TensorEngineParams& tensor = params.tensor;
  const auto granularity = static_cast<std::uint32_t>(tensor.pe_tile_granularity);
  const auto rows = static_cast<std::uint32_t>(tensor.rows);
  const auto cols = static_cast<std::uint32_t>(tensor.cols);
  const AccessPattern* row_source = pe_work(instruction, "pe_tile") == PeWork::kMatmul
                                        ? &instruction.operand(Slot::kStationary)
                                        : &instruction.src();
  PeTile tile;
  round_out(row_source->partition_start, row_source->partitions, granularity, rows, tile.row_begin,
            tile.rows);
  const bool full_columns = instruction.opcode == Opcode::kNcMatmulMx || instruction.double_row;
  if (full_columns) {
    tile.col_begin = 0;
    tile.cols = cols;
  } else {
    const AccessPattern& dst = instruction.dst();
    round_out(dst.partition_start, dst.partitions, granularity, cols, tile.col_begin, tile.cols);
  }
  return tile;
}

}  // namespace trnsim::cost
