#include "kernel/instruction.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernel/opcodes.hpp"

namespace trnsim::kernel {
namespace {

template <typename Enum, std::size_t N>
using NameTable = std::array<std::pair<std::string_view, Enum>, N>;

template <typename Enum, std::size_t N>
std::string_view name_of(const NameTable<Enum, N>& table, Enum value) {
  for (const auto& [name, entry] : table) {
    if (entry == value) return name;
  }
  return "?";
}

template <typename Enum, std::size_t N>
std::optional<Enum> find_name(const NameTable<Enum, N>& table, std::string_view name) {
  for (const auto& [entry_name, entry] : table) {
    if (entry_name == name) return entry;
  }
  return std::nullopt;
}

// The first entry for a value is its canonical name; later entries are aliases.
constexpr NameTable<DType, kDTypeCount + 5> kDTypeNames{{
    {"float32", DType::kFloat32},
    {"tfloat32", DType::kTFloat32},
    {"bfloat16", DType::kBFloat16},
    {"float16", DType::kFloat16},
    {"float8_e4m3", DType::kFloat8E4M3},
    {"float8_e5m2", DType::kFloat8E5M2},
    {"float8_e4m3fn", DType::kFloat8E4M3Fn},
    {"float8_e8m0fnu", DType::kFloat8E8M0Fnu},
    {"int8", DType::kInt8},
    {"int16", DType::kInt16},
    {"int32", DType::kInt32},
    {"uint8", DType::kUInt8},
    {"uint16", DType::kUInt16},
    {"uint32", DType::kUInt32},
    {"bool", DType::kBool},
    {"float8_e4m3fn_x4", DType::kFloat8E4M3FnX4},
    {"float8_e5m2_x4", DType::kFloat8E5M2X4},
    {"float4_e2m1fn_x4", DType::kFloat4E2M1FnX4},
    {"fp32", DType::kFloat32},
    {"bf16", DType::kBFloat16},
    {"fp16", DType::kFloat16},
    {"fp8_e4m3", DType::kFloat8E4M3},
    {"fp8_e5m2", DType::kFloat8E5M2},
}};

constexpr NameTable<AluOp, 34> kAluNames{{
    {"none", AluOp::kNone},
    {"bypass", AluOp::kBypass},
    {"add", AluOp::kAdd},
    {"subtract", AluOp::kSubtract},
    {"multiply", AluOp::kMultiply},
    {"divide", AluOp::kDivide},
    {"max", AluOp::kMax},
    {"min", AluOp::kMin},
    {"power", AluOp::kPower},
    {"mod", AluOp::kMod},
    {"abs_max", AluOp::kAbsMax},
    {"abs_min", AluOp::kAbsMin},
    {"average", AluOp::kAverage},
    {"bitwise_and", AluOp::kBitwiseAnd},
    {"bitwise_or", AluOp::kBitwiseOr},
    {"bitwise_xor", AluOp::kBitwiseXor},
    {"invert", AluOp::kInvert},
    {"left_shift", AluOp::kLeftShift},
    {"right_shift", AluOp::kRightShift},
    {"logical_and", AluOp::kLogicalAnd},
    {"logical_or", AluOp::kLogicalOr},
    {"logical_xor", AluOp::kLogicalXor},
    {"equal", AluOp::kEqual},
    {"not_equal", AluOp::kNotEqual},
    {"greater", AluOp::kGreater},
    {"greater_equal", AluOp::kGreaterEqual},
    {"less", AluOp::kLess},
    {"less_equal", AluOp::kLessEqual},
    // aliases (NKI spellings and common short forms)
    {"maximum", AluOp::kMax},
    {"minimum", AluOp::kMin},
    {"sub", AluOp::kSubtract},
    {"mul", AluOp::kMultiply},
    {"and", AluOp::kLogicalAnd},
    {"or", AluOp::kLogicalOr},
}};

constexpr NameTable<CompareOp, 6> kCompareNames{{
    {"eq", CompareOp::kEq},
    {"ne", CompareOp::kNe},
    {"ge", CompareOp::kGe},
    {"gt", CompareOp::kGt},
    {"le", CompareOp::kLe},
    {"lt", CompareOp::kLt},
}};

constexpr NameTable<ActivationFunc, 27> kActivationNames{{
    {"copy", ActivationFunc::kCopy},
    {"abs", ActivationFunc::kAbs},
    {"arctan", ActivationFunc::kArctan},
    {"erf", ActivationFunc::kErf},
    {"erf_dx", ActivationFunc::kErfDx},
    {"exp", ActivationFunc::kExp},
    {"gelu", ActivationFunc::kGelu},
    {"gelu_dx", ActivationFunc::kGeluDx},
    {"gelu_apprx_tanh", ActivationFunc::kGeluApprxTanh},
    {"gelu_apprx_sigmoid", ActivationFunc::kGeluApprxSigmoid},
    {"gelu_apprx_sigmoid_dx", ActivationFunc::kGeluApprxSigmoidDx},
    {"log", ActivationFunc::kLog},
    {"mish", ActivationFunc::kMish},
    {"prelu", ActivationFunc::kPrelu},
    {"reciprocal", ActivationFunc::kReciprocal},
    {"relu", ActivationFunc::kRelu},
    {"rsqrt", ActivationFunc::kRsqrt},
    {"sigmoid", ActivationFunc::kSigmoid},
    {"sign", ActivationFunc::kSign},
    {"silu", ActivationFunc::kSilu},
    {"silu_dx", ActivationFunc::kSiluDx},
    {"sin", ActivationFunc::kSin},
    {"softplus", ActivationFunc::kSoftplus},
    {"sqrt", ActivationFunc::kSqrt},
    {"square", ActivationFunc::kSquare},
    {"tanh", ActivationFunc::kTanh},
    {"identity", ActivationFunc::kCopy},
}};

constexpr NameTable<DgeMode, 3> kDgeNames{{
    {"none", DgeMode::kNone},
    {"hwdge", DgeMode::kHwdge},
    {"swdge", DgeMode::kSwdge},
}};

/// Collective algorithms by id: the built-in ones (CollectiveAlgorithm's enumerators, in order),
/// then those registered at run time (add_collective_algorithm_name).
std::vector<std::string>& algorithm_names() {
  static std::vector<std::string> names{"auto", "ring", "mesh", "rdh", "kangaring", "hierarchical"};
  return names;
}

}  // namespace

std::string_view opcode_name(Opcode op) {
  return static_cast<std::size_t>(op) < kOpcodeCount ? opcode_info(op).name : "?";
}
std::optional<Opcode> opcode_from_name(std::string_view name) {
  for (std::size_t i = 0; i < kOpcodeCount; ++i) {
    if (opcode_info(static_cast<Opcode>(i)).name == name) return static_cast<Opcode>(i);
  }
  return std::nullopt;
}
std::string_view engine_name(Engine engine) {
  return static_cast<std::size_t>(engine) < kEngineCount ? engine_info(engine).name : "?";
}
std::optional<Engine> engine_from_name(std::string_view name) {
  for (std::size_t i = 0; i < kEngineCount; ++i) {
    if (kEngines[i].name == name) return static_cast<Engine>(i);
  }
  return std::nullopt;
}
std::string_view dtype_name(DType dtype) {
  return name_of(kDTypeNames, dtype);
}
std::optional<DType> dtype_from_name(std::string_view name) {
  return find_name(kDTypeNames, name);
}
std::string_view alu_op_name(AluOp op) {
  return name_of(kAluNames, op);
}
std::optional<AluOp> alu_op_from_name(std::string_view name) {
  if (name == "none") return std::nullopt;
  return find_name(kAluNames, name);
}
std::string_view compare_op_name(CompareOp op) {
  return name_of(kCompareNames, op);
}
std::optional<CompareOp> compare_op_from_name(std::string_view name) {
  return find_name(kCompareNames, name);
}
std::string_view activation_func_name(ActivationFunc func) {
  return name_of(kActivationNames, func);
}
std::optional<ActivationFunc> activation_func_from_name(std::string_view name) {
  return find_name(kActivationNames, name);
}
std::string_view dge_mode_name(DgeMode mode) {
  return name_of(kDgeNames, mode);
}
std::optional<DgeMode> dge_mode_from_name(std::string_view name) {
  return find_name(kDgeNames, name);
}
std::string_view collective_algorithm_name(CollectiveAlgorithm algorithm) {
  const auto id = static_cast<std::size_t>(algorithm);
  return id < algorithm_names().size() ? std::string_view(algorithm_names()[id]) : "?";
}
std::optional<CollectiveAlgorithm> collective_algorithm_from_name(std::string_view name) {
  const std::vector<std::string>& names = algorithm_names();
  for (std::size_t id = 0; id < names.size(); ++id) {
    if (names[id] == name) return static_cast<CollectiveAlgorithm>(id);
  }
  return std::nullopt;
}
std::size_t collective_algorithm_count() {
  return algorithm_names().size();
}
CollectiveAlgorithm add_collective_algorithm_name(std::string_view name) {
  if (const auto existing = collective_algorithm_from_name(name)) return *existing;
  constexpr std::size_t kMaxAlgorithms = 256;  // an id is a std::uint8_t
  if (algorithm_names().size() == kMaxAlgorithms) {
    throw std::logic_error("kernel::add_collective_algorithm_name: too many algorithms");
  }
  algorithm_names().emplace_back(name);
  return static_cast<CollectiveAlgorithm>(algorithm_names().size() - 1);
}

std::uint64_t AccessPattern::contiguous_run_elements() const {
  std::uint64_t run = 1;
  for (int d = static_cast<int>(rank) - 1; d >= 0; --d) {
    if (sizes[d] == 1) continue;
    if (strides[d] != static_cast<std::int64_t>(run)) break;
    run *= sizes[d];
  }
  return run;
}

std::uint8_t AccessPattern::logical_shape(
    std::array<std::uint64_t, kMaxPatternDims + 1>& shape) const {
  std::uint8_t out = 0;
  for (std::uint8_t d = 0; d <= rank; ++d) {
    if (on_chip() && d == partition_axis) shape[out++] = partitions;
    if (d < rank) shape[out++] = sizes[d];
  }
  return out;
}

Region AccessPattern::region() const {
  Region region;
  region.memory = memory;
  region.space = space;
  region.partition_begin = partition_start;
  region.partition_end = partition_start + partitions;
  const std::uint64_t element_bytes = dtype_bytes(dtype);

  // Merge the innermost dimensions that form one contiguous run.
  std::uint64_t run = 1;
  int d = static_cast<int>(rank) - 1;
  for (; d >= 0; --d) {
    if (sizes[d] == 1) continue;
    if (strides[d] != static_cast<std::int64_t>(run)) break;
    run *= sizes[d];
  }
  // What is left: exactly one dimension with a positive stride at least the run -> exact runs.
  int outer = -1;
  int outer_count = 0;
  for (int e = d; e >= 0; --e) {
    if (sizes[e] == 1) continue;
    outer = e;
    ++outer_count;
  }
  if (outer_count == 0) {
    region.byte_begin = offset;
    region.run_bytes = run * element_bytes;
    region.stride_bytes = region.run_bytes;
    region.count = 1;
    return region;
  }
  if (outer_count == 1 && strides[outer] >= static_cast<std::int64_t>(run)) {
    region.byte_begin = offset;
    region.run_bytes = run * element_bytes;
    region.stride_bytes = static_cast<std::uint64_t>(strides[outer]) * element_bytes;
    region.count = sizes[outer];
    if (region.stride_bytes == region.run_bytes) {  // adjacent runs: one run
      region.run_bytes *= region.count;
      region.count = 1;
    }
    return region;
  }
  // Bounding box of all touched elements.
  std::int64_t lowest = 0;
  std::int64_t highest = 0;
  for (std::uint8_t e = 0; e < rank; ++e) {
    const std::int64_t span = static_cast<std::int64_t>(sizes[e] - 1) * strides[e];
    if (span < 0) {
      lowest += span;
    } else {
      highest += span;
    }
  }
  region.byte_begin = offset + static_cast<std::uint64_t>(lowest) * element_bytes;
  region.run_bytes = static_cast<std::uint64_t>(highest - lowest + 1) * element_bytes;
  region.stride_bytes = region.run_bytes;
  region.count = 1;
  return region;
}

bool is_compact(const Instruction& instruction) {
  for (const AccessPattern& pattern : instruction.operands) {
    if (!pattern.used() && pattern != AccessPattern{}) return false;
  }
  for (std::size_t i = instruction.num_reads; i < instruction.reads.size(); ++i) {
    if (instruction.reads[i] != Region{}) return false;
  }
  for (std::size_t i = instruction.num_writes; i < instruction.writes.size(); ++i) {
    if (instruction.writes[i] != Region{}) return false;
  }
  return true;
}

void assign_compact(Instruction& to, const Instruction& from) {
  static_assert(std::is_trivially_copyable_v<Instruction> &&
                std::is_standard_layout_v<Instruction>);
  // Layout: [identity][operands][reads][writes][num_reads ... end]. Any field added before the
  // operands or after the writes is copied with its neighbours.
  constexpr std::size_t kOperands = offsetof(Instruction, operands);
  constexpr std::size_t kReads = offsetof(Instruction, reads);
  constexpr std::size_t kWrites = offsetof(Instruction, writes);
  constexpr std::size_t kTail = offsetof(Instruction, num_reads);
  static_assert(kReads == kOperands + sizeof(Instruction::operands) &&
                kWrites == kReads + sizeof(Instruction::reads) &&
                kTail == kWrites + sizeof(Instruction::writes));
  auto* to_bytes = reinterpret_cast<unsigned char*>(&to);
  const auto* from_bytes = reinterpret_cast<const unsigned char*>(&from);
  for (std::size_t slot = 0; slot < from.operands.size(); ++slot) {
    if (from.operands[slot].used()) {
      to.operands[slot] = from.operands[slot];
    } else if (to.operands[slot].used()) {
      to.operands[slot] = AccessPattern{};
    }
  }
  const std::size_t reads = from.num_reads > to.num_reads ? from.num_reads : to.num_reads;
  for (std::size_t i = 0; i < reads; ++i) {
    to.reads[i] = i < from.num_reads ? from.reads[i] : Region{};
  }
  const std::size_t writes = from.num_writes > to.num_writes ? from.num_writes : to.num_writes;
  for (std::size_t i = 0; i < writes; ++i) {
    to.writes[i] = i < from.num_writes ? from.writes[i] : Region{};
  }
  std::memcpy(to_bytes, from_bytes, kOperands);
  std::memcpy(to_bytes + kTail, from_bytes + kTail, sizeof(Instruction) - kTail);
}

}  // namespace trnsim::kernel
