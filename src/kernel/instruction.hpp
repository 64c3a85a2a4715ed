// One dynamic instruction as the timing model consumes it: opcode, executing engine, operands as
// resolved access patterns (concrete addresses, no expressions left), attributes as enums, the
// numbers cost models need, and the byte regions it reads and writes (dependency tracking).
// Compact and trivially copyable: no strings, no heap. Names and source text stay in the Program;
// an Instruction only refers to its statement by index (see SourceRef and Program::location()).
// Leaves out data values: trnsim models time, not numerics.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "kernel/region.hpp"

namespace trnsim::kernel {

/// "hbm", "sbuf", "psum" (kernel-format spelling of region.hpp's MemoryKind).
using address::memory_kind_name;

// ---------------------------------------------------------------------------------------------
// Enumerations. Each has a *_name() returning the kernel-format spelling and, where the kernel
// names it, a *_from_name() returning std::nullopt for an unknown name (aliases accepted).

/// Every op of the kernel format (docs/kernel-format.md section 7), in table order.
enum class Opcode : std::uint8_t {
  kDmaCopy,
  kDmaTranspose,
  kNcMatmul,
  kNcMatmulMx,
  kNcTranspose,
  kActivation,
  kTensorTensor,
  kTensorScalar,
  kScalarTensorTensor,
  kTensorReduce,
  kTensorPartitionReduce,
  kTensorTensorScan,
  kTensorCopy,
  kMemset,
  kIota,
  kAffineSelect,
  kBnStats,
  kBnAggr,
  kReciprocal,
  kExponential,
  kSelect,
  kCoreBarrier,
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kSend,
  kRecv,
};
inline constexpr std::size_t kOpcodeCount = static_cast<std::size_t>(Opcode::kRecv) + 1;
std::string_view opcode_name(Opcode op);
std::optional<Opcode> opcode_from_name(std::string_view name);

/// The unit that executes an instruction. kSync issues core_barrier; kDma runs dma_copy and
/// dma_transpose (triggered by Instruction::dma_trigger); kCollective runs collectives and
/// send/recv on the collective-communication cores.
enum class Engine : std::uint8_t { kTensor, kVector, kScalar, kGpSimd, kSync, kDma, kCollective };
inline constexpr std::size_t kEngineCount = static_cast<std::size_t>(Engine::kCollective) + 1;

/// The one table of engines: what each is, for every block that asks.
struct EngineInfo {
  std::string_view name;  ///< as kernels and statistics spell it
  /// A compute engine of the NeuronCore: its own instruction stream, a cost model, SBUF/PSUM data
  /// paths (TensorE, VectorE, ScalarE, GpSimdE).
  bool compute = false;
  /// Triggered by another engine's sequencer and run out of order on units of its own, completing
  /// later (the DMA engines, the collective-communication cores).
  bool triggered = false;
};
inline constexpr std::array<EngineInfo, kEngineCount> kEngines{{
    {"tensor", true, false},
    {"vector", true, false},
    {"scalar", true, false},
    {"gpsimd", true, false},
    {"sync", false, false},
    {"dma", false, true},
    {"collective", false, true},
}};
constexpr const EngineInfo& engine_info(Engine engine) {
  return kEngines[static_cast<std::size_t>(engine)];
}
std::string_view engine_name(Engine engine);  ///< "tensor", "vector", "scalar", "gpsimd", ...
std::optional<Engine> engine_from_name(std::string_view name);

/// Element types (NKI names). The *_x4 types are packed MX containers: one element of the
/// container type holds 4 values (dtype_bytes() is the container size).
enum class DType : std::uint8_t {
  kFloat32,
  kTFloat32,
  kBFloat16,
  kFloat16,
  kFloat8E4M3,
  kFloat8E5M2,
  kFloat8E4M3Fn,
  kFloat8E8M0Fnu,
  kInt8,
  kInt16,
  kInt32,
  kUInt8,
  kUInt16,
  kUInt32,
  kBool,
  kFloat8E4M3FnX4,
  kFloat8E5M2X4,
  kFloat4E2M1FnX4,
};
inline constexpr std::size_t kDTypeCount = static_cast<std::size_t>(DType::kFloat4E2M1FnX4) + 1;
std::string_view dtype_name(DType dtype);                     ///< NKI name, e.g. "bfloat16"
std::optional<DType> dtype_from_name(std::string_view name);  ///< also fp32, bf16, fp16, fp8_*

/// Bytes of one element (for packed x4 types: of one 4-value container).
constexpr std::uint32_t dtype_bytes(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
    case DType::kTFloat32:
    case DType::kInt32:
    case DType::kUInt32:
    case DType::kFloat8E4M3FnX4:
    case DType::kFloat8E5M2X4:
      return 4;
    case DType::kBFloat16:
    case DType::kFloat16:
    case DType::kInt16:
    case DType::kUInt16:
    case DType::kFloat4E2M1FnX4:
      return 2;
    case DType::kFloat8E4M3:
    case DType::kFloat8E5M2:
    case DType::kFloat8E4M3Fn:
    case DType::kFloat8E8M0Fnu:
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kBool:
      return 1;
  }
  return 0;
}
/// Values per element: 4 for the packed MX types, 1 otherwise.
constexpr std::uint32_t dtype_values_per_element(DType dtype) {
  return dtype == DType::kFloat8E4M3FnX4 || dtype == DType::kFloat8E5M2X4 ||
                 dtype == DType::kFloat4E2M1FnX4
             ? 4
             : 1;
}
constexpr bool dtype_is_packed_mx(DType dtype) {
  return dtype_values_per_element(dtype) == 4;
}
/// FP8 family (not the x4 containers, not the E8M0 scale type).
constexpr bool dtype_is_fp8(DType dtype) {
  return dtype == DType::kFloat8E4M3 || dtype == DType::kFloat8E5M2 ||
         dtype == DType::kFloat8E4M3Fn;
}
constexpr bool dtype_is_integer(DType dtype) {
  return dtype == DType::kInt8 || dtype == DType::kInt16 || dtype == DType::kInt32 ||
         dtype == DType::kUInt8 || dtype == DType::kUInt16 || dtype == DType::kUInt32 ||
         dtype == DType::kBool;
}

/// Arithmetic/logic operation of an instruction (`alu`, `op0`, `op1`; NKI nl.* names).
enum class AluOp : std::uint8_t {
  kNone,  ///< attribute absent (e.g. no op1)
  kBypass,
  kAdd,
  kSubtract,
  kMultiply,
  kDivide,
  kMax,
  kMin,
  kPower,
  kMod,
  kAbsMax,
  kAbsMin,
  kAverage,
  kBitwiseAnd,
  kBitwiseOr,
  kBitwiseXor,
  kInvert,
  kLeftShift,
  kRightShift,
  kLogicalAnd,
  kLogicalOr,
  kLogicalXor,
  kEqual,
  kNotEqual,
  kGreater,
  kGreaterEqual,
  kLess,
  kLessEqual,
};
std::string_view alu_op_name(AluOp op);
std::optional<AluOp> alu_op_from_name(std::string_view name);  ///< aliases: maximum, minimum...

/// Comparison of affine_select (`cmp`): pred(p, f) CMP 0 keeps src, else fill.
enum class CompareOp : std::uint8_t { kEq, kNe, kGe, kGt, kLe, kLt };
std::string_view compare_op_name(CompareOp op);
std::optional<CompareOp> compare_op_from_name(std::string_view name);

/// Scalar Engine activation functions (NKI names, hardware-facts.md section 5).
enum class ActivationFunc : std::uint8_t {
  kCopy,
  kAbs,
  kArctan,
  kErf,
  kErfDx,
  kExp,
  kGelu,
  kGeluDx,
  kGeluApprxTanh,
  kGeluApprxSigmoid,
  kGeluApprxSigmoidDx,
  kLog,
  kMish,
  kPrelu,
  kReciprocal,
  kRelu,
  kRsqrt,
  kSigmoid,
  kSign,
  kSilu,
  kSiluDx,
  kSin,
  kSoftplus,
  kSqrt,
  kSquare,
  kTanh,
};
std::string_view activation_func_name(ActivationFunc func);
std::optional<ActivationFunc> activation_func_from_name(std::string_view name);

/// DMA descriptor generation mode (`dge`).
enum class DgeMode : std::uint8_t { kNone, kHwdge, kSwdge };
std::string_view dge_mode_name(DgeMode mode);
std::optional<DgeMode> dge_mode_from_name(std::string_view name);

/// Collective algorithm (`algorithm`): an id, the built-in algorithms named below, then those
/// the collective model registers (collective/algorithms.hpp) with ids from kRegistered on.
enum class CollectiveAlgorithm : std::uint8_t {
  kAuto,
  kRing,
  kMesh,
  kRdh,
  kKangaring,
  kHierarchical,
  kRegistered,  ///< the first id of a registered algorithm
};
std::string_view collective_algorithm_name(CollectiveAlgorithm algorithm);
std::optional<CollectiveAlgorithm> collective_algorithm_from_name(std::string_view name);
/// The number of algorithm ids, `auto` included.
std::size_t collective_algorithm_count();
/// The id of `name`, added after the known ones if it is new (the kernel attribute then accepts
/// it).
CollectiveAlgorithm add_collective_algorithm_name(std::string_view name);

/// How a scalar-like operand (scale, bias, operand0/1) is given.
enum class ScalarKind : std::uint8_t {
  kNone,       ///< absent
  kImmediate,  ///< a number (value in the *_value field)
  kTensor,     ///< a [P,1] access pattern (in the slot named in Instruction's table)
};

// ---------------------------------------------------------------------------------------------
// Operands.

/// Rank limit of an access pattern: HBM patterns up to 5 dimensions; on-chip patterns are a
/// partition range plus up to 4 free dimensions (hardware-facts.md section 7).
inline constexpr std::size_t kMaxPatternDims = 5;
inline constexpr std::size_t kMaxFreeDims = 4;
inline constexpr std::uint32_t kNoTensor = 0xFFFFFFFFu;

/// A resolved operand: which bytes of which memory, in which order.
/// On-chip (SBUF/PSUM): partitions [partition_start, partition_start + partitions) and in each
/// partition the same free pattern: element (i0..i{rank-1}) at byte
/// offset + (sum_d i_d * strides[d]) * dtype_bytes(dtype).
/// HBM: partition_start = 0, partitions = 1 and the whole pattern is in sizes/strides, with
/// `offset` the byte address (in the owning chip's HBM address space) of element (0,...,0).
struct AccessPattern {
  MemoryKind memory = MemoryKind::kSbuf;
  DType dtype = DType::kFloat32;
  std::uint8_t rank = 0;  ///< number of used entries in sizes/strides (0 = one element)
  /// On-chip: position of the partition dimension in logical_shape() (0..rank); HBM: unused (0).
  std::uint8_t partition_axis = 0;
  std::uint32_t tensor = kNoTensor;   ///< index into Program::tensors; kNoTensor = slot unused
  std::uint32_t space = 0;            ///< on-chip: global core index; HBM: chip index
  std::uint32_t partition_start = 0;  ///< first partition (on-chip); 0 for HBM
  std::uint32_t partitions = 1;       ///< partition count (on-chip); 1 for HBM
  std::uint64_t offset = 0;  ///< bytes: offset inside each partition (on-chip) or HBM address
  std::array<std::uint32_t, kMaxPatternDims> sizes{};  ///< elements per dimension, outer first
  /// Elements between neighbours per dim; 0 re-reads the same elements (an explicit-pattern
  /// broadcast, never written).
  std::array<std::int64_t, kMaxPatternDims> strides{};

  bool used() const { return tensor != kNoTensor; }
  bool on_chip() const { return memory != MemoryKind::kHbm; }
  /// Elements touched in each partition (HBM: in total): the product of sizes.
  std::uint64_t elements_per_partition() const {
    std::uint64_t n = 1;
    for (std::uint8_t d = 0; d < rank; ++d) n *= sizes[d];
    return n;
  }
  /// Total elements over all partitions.
  std::uint64_t elements() const { return elements_per_partition() * partitions; }
  /// Total bytes touched (all partitions).
  std::uint64_t bytes() const { return elements() * dtype_bytes(dtype); }
  /// True when the innermost dimension is unit-stride (or the pattern is a single element).
  bool innermost_contiguous() const {
    return rank == 0 || sizes[rank - 1] == 1 || strides[rank - 1] == 1;
  }
  /// Elements of the longest contiguous run at the start of the pattern: innermost dimensions
  /// merged while each is exactly as long as the next outer stride.
  std::uint64_t contiguous_run_elements() const;
  /// Logical shape (on-chip: partitions inserted at partition_axis); returns the rank.
  std::uint8_t logical_shape(std::array<std::uint64_t, kMaxPatternDims + 1>& shape) const;
  /// Bytes touched, as a Region: exact when the pattern is one run or runs at a constant
  /// positive stride, otherwise (stride 0, strides out of order) its bounding box
  /// (conservative, region.hpp).
  Region region() const;

  bool operator==(const AccessPattern&) const = default;
};

/// Meaning of each operand slot per op ("-" = unused). An operand that may be a number is a slot
/// only when it is a tensor; its *_kind says which (Instruction attributes):
/// scale_kind/scale_value: activation scale; bias_kind/bias_value: activation bias;
/// operand0_kind/operand0_value: tensor_scalar and scalar_tensor_tensor operand0,
/// tensor_tensor_scan initial, exponential max, select on_true;
/// operand1_kind/operand1_value: tensor_scalar operand1, select on_false.
///
/// | op | kDst | kSrc | kIn1 | kStationary | kAux0 | kAux1 | kReduceDst |
/// |---|---|---|---|---|---|---|---|
/// | dma_copy, dma_transpose, tensor_copy, nc_transpose, reciprocal, bn_stats, bn_aggr,
/// tensor_reduce, tensor_partition_reduce | dst | src | - | - | - | - | - | | nc_matmul | dst |
/// moving | - | stationary | - | - | - | | nc_matmul_mx | dst | moving | - | stationary |
/// stationary_scale | moving_scale | - | | activation | dst | src | - | - | bias | scale |
/// reduce_dst | | tensor_tensor | dst | in0 | in1 | - | - | - | - | | tensor_scalar | dst | src | -
/// | - | operand0 | operand1 | reduce_dst | | scalar_tensor_tensor | dst | data | in1 | - |
/// operand0 | - | - | | tensor_tensor_scan | dst | in0 | in1 | - | initial | - | - | | memset, iota
/// | dst | - | - |
/// - | - | - | - | | affine_select | dst | src | - | - | - | - | - | | exponential | dst | src | -
/// | - | max | - | reduce_dst | | select | dst | pred | on_true | - | on_false | - | - | |
/// core_barrier | - | - | - | - | - | - | - | | all_reduce, all_gather, reduce_scatter, all_to_all
/// | dst | src | - | - | - | - | - | | send | - | src | - | - | - | - | - | | recv | dst | - | - |
/// - | - | - | - |
enum class Slot : std::uint8_t { kDst, kSrc, kIn1, kStationary, kAux0, kAux1, kReduceDst };
inline constexpr std::size_t kSlotCount = 7;

/// Deepest nesting of statement bodies ('for' and 'if' inside one another), docs "Limits".
inline constexpr std::size_t kMaxStatementNesting = 100;
/// Most iterations of one loop (each time it is entered) whose body issues instructions, and
/// most instructions one core issues (docs/kernel-format.md, "Limits").
inline constexpr std::uint64_t kMaxLoopTrips = 1'000'000'000;
inline constexpr std::uint64_t kMaxDynamicInstructions = 1'000'000'000;

/// Where a dynamic instruction came from: the statement (index into Program::statements, which
/// holds its label, JSON pointer and enclosing loop names) and the values of the enclosing loop
/// variables, outermost first. Formatted on demand by Program::location().
inline constexpr std::size_t kMaxLoopDepth = 8;
struct SourceRef {
  std::uint32_t statement = 0;
  std::uint8_t depth = 0;  ///< number of enclosing loops = used entries of loop_values
  std::array<std::int64_t, kMaxLoopDepth> loop_values{};

  bool operator==(const SourceRef&) const = default;
};

inline constexpr std::uint32_t kAllCores = 0xFFFFFFFFu;  ///< core_group: every core of the kernel
inline constexpr std::size_t kMaxReads = 6;
inline constexpr std::size_t kMaxWrites = 2;

struct Instruction {
  // --- identity -------------------------------------------------------------------------------
  Opcode opcode = Opcode::kTensorCopy;
  Engine engine = Engine::kVector;  ///< executing engine
  std::uint32_t pid = 0;            ///< issuing core, global index
  std::uint64_t sequence = 0;       ///< 0-based index of this instruction in its core's stream
  SourceRef source;
  /// Nonzero: every instruction of the same stream with this key has the same content apart from
  /// `sequence` and `source`, so pure functions of an instruction (costs, PE tiles) may be
  /// memoised by it. 0: no such promise (built by hand, or shifted to new addresses).
  std::uint64_t content_key = 0;
  /// Nonzero: every instruction of the same stream with this key has the same content apart
  /// from `sequence`, `source`, `content_key`, the operands' `offset`s (and with them the
  /// regions) and `dma_queue`: the instructions built from one full build by moving its
  /// addresses. A full build's family key is its content key. 0: no such promise.
  std::uint64_t family_key = 0;

  // --- operands -------------------------------------------------------------------------------
  std::array<AccessPattern, kSlotCount> operands{};  ///< by Slot; unused slots have !used()
  const AccessPattern& operand(Slot slot) const { return operands[static_cast<std::size_t>(slot)]; }
  AccessPattern& operand(Slot slot) { return operands[static_cast<std::size_t>(slot)]; }
  const AccessPattern& dst() const { return operand(Slot::kDst); }
  const AccessPattern& src() const { return operand(Slot::kSrc); }

  // --- dependency regions: what this instruction reads and writes -----------------------------
  std::array<Region, kMaxReads> reads{};  ///< an accumulating matmul also reads its dst
  std::array<Region, kMaxWrites> writes{};
  std::uint8_t num_reads = 0;
  std::uint8_t num_writes = 0;

  // --- derived numbers for cost models ---------------------------------------------------------
  /// Elements per partition of the main input (kSrc; memset/iota: of dst). For nc_matmul: the
  /// moving free size N (values, per partition; for double_row: per row of the pair).
  std::uint64_t elements_per_partition = 0;
  std::uint32_t partitions = 0;     ///< partitions of the main input (kSrc; memset/iota: dst)
  std::uint64_t flops = 0;          ///< nc_matmul(_mx): 2*K*M*N (K, M, N in values); others 0
  std::uint64_t bytes_read = 0;     ///< sum of bytes() of the operands read
  std::uint64_t bytes_written = 0;  ///< sum of bytes() of the operands written
  std::uint64_t hbm_bytes = 0;      ///< bytes read from plus bytes written to HBM

  // --- attributes (meaningful only for the ops named) -----------------------------------------
  /// tensor_tensor, tensor_reduce, partition_reduce, collectives; tensor_scalar with reduce_dst:
  /// its reduce_op (kNone without reduce_dst)
  AluOp alu = AluOp::kNone;
  AluOp op0 = AluOp::kNone;  ///< tensor_scalar, scalar_tensor_tensor, tensor_tensor_scan
  AluOp op1 = AluOp::kNone;  ///< tensor_scalar (kNone if absent), scalar_tensor_tensor, scan
  ActivationFunc func = ActivationFunc::kCopy;   ///< activation
  CompareOp cmp = CompareOp::kGe;                ///< affine_select
  ScalarKind scale_kind = ScalarKind::kNone;     ///< activation scale (tensor: kAux1)
  ScalarKind bias_kind = ScalarKind::kNone;      ///< activation bias (tensor: kAux0)
  ScalarKind operand0_kind = ScalarKind::kNone;  ///< see Slot (tensor: kAux0; select: kIn1)
  ScalarKind operand1_kind = ScalarKind::kNone;  ///< see Slot (tensor: kAux1; select: kAux0)
  bool accumulate = false;    ///< nc_matmul(_mx): true adds to the accumulation group
  bool double_row = false;    ///< nc_matmul perf_mode "double_row"
  bool is_transpose = false;  ///< nc_matmul is_transpose
  bool reverse0 = false;      ///< tensor_scalar: operand0 op0 src instead of src op0 operand0
  bool reverse1 = false;
  bool negate = false;                 ///< tensor_reduce
  bool keepdims = false;               ///< tensor_reduce
  std::uint8_t reduce_axes = 0;        ///< tensor_reduce: bit d set = free axis d reduced
  std::uint8_t dma_queue = 0;          ///< dma_*: queue 0-15
  Engine dma_trigger = Engine::kSync;  ///< dma_*: engine whose sequencer triggers the DMA
  DgeMode dge = DgeMode::kNone;        ///< dma_*
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kAuto;  ///< collectives
  double scale_value = 1.0;                                    ///< activation scale when kImmediate
  double bias_value = 0.0;                                     ///< activation bias when kImmediate
  double operand0_value = 0.0;  ///< when operand0_kind == kImmediate (see Slot)
  double operand1_value = 0.0;  ///< when operand1_kind == kImmediate (see Slot)
  double fill_value = 0.0;      ///< memset value, affine_select fill
  /// core_barrier `cores` / collective `group`: kAllCores, or an index into the stream's core
  /// groups (InstructionStream::core_group(id) lists the global core indices).
  std::uint32_t core_group = kAllCores;
  std::uint32_t peer = 0;  ///< send/recv: global index of the other core

  /// Field by field (arrays in full, stale entries past rank/depth included).
  bool operator==(const Instruction&) const = default;
};

/// True when `instruction` is in compact form: every unused operand slot and every region past
/// num_reads / num_writes is default-constructed. The instruction stream produces only such
/// instructions (tests check it over the example kernels).
bool is_compact(const Instruction& instruction);

/// `to = from` for instructions in compact form, touching only the operand slots and regions
/// either of them uses (a queue entry is written once per simulated instruction; most
/// instructions use 2-3 of the 7 slots). Both must be in compact form; `to` then equals `from`.
void assign_compact(Instruction& to, const Instruction& from);

}  // namespace trnsim::kernel
