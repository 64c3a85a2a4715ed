// The one table of the kernel format's opcodes (docs/kernel-format.md): each opcode's name, the
// engines that may run it (its default first), its attributes as kernels spell them, and the
// traits other blocks ask about (a matmul, a DMA, a collective). Parsing, validation, the
// instruction stream, the cores and the reports read their answers here; the cost models switch
// over Opcode without a default, so a new opcode does not compile until each engine that may
// run it has a cost (docs/architecture.md, "Extending trnsim").
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>

#include "kernel/instruction.hpp"

namespace trnsim::kernel {

/// How an attribute's JSON value is read.
enum class AttrKind : std::uint8_t {
  kOperand,          // access pattern string
  kOperandOrNumber,  // access pattern string, number, or integer expression
  kNumber,           // number or integer expression
  kInt,              // integer expression
  kBool,             // true/false or integer expression
  kAlu,
  kFunc,
  kCmp,
  kDge,
  kTrigger,
  kAlgorithm,
  kPerfMode,
  kCoreList,  // "all" or a list of integer expressions
  kAxes,      // integer or list of integers (expressions)
  kPattern,   // affine expression over p, f, f0..f3
};

/// One attribute of an instruction statement.
struct AttrSpec {
  std::string_view key;
  AttrKind kind;
  bool required;
  Slot slot;  ///< where an operand goes (kOperand, kOperandOrNumber); kDst otherwise
};

/// What an opcode is, beyond the engines that run it.
enum class Trait : std::uint8_t {
  kNone,
  kMatmul,      ///< nc_matmul, nc_matmul_mx: PE array, PSUM accumulation
  kDma,         ///< dma_copy, dma_transpose: run by the DMA engines
  kCollective,  ///< all_reduce, all_gather, reduce_scatter, all_to_all
};

inline constexpr std::size_t kMaxOpcodeEngines = 3;
inline constexpr std::size_t kMaxOpcodeAttrs = 10;

struct OpcodeInfo {
  Opcode opcode = Opcode::kTensorCopy;
  std::string_view name;  ///< as kernels spell it
  std::array<Engine, kMaxOpcodeEngines> engine_list{};
  std::uint8_t engine_count = 0;
  std::array<AttrSpec, kMaxOpcodeAttrs> attr_list{};
  std::uint8_t attr_count = 0;
  Trait trait = Trait::kNone;

  /// The engines that may run it, the default first.
  constexpr std::span<const Engine> engines() const { return {engine_list.data(), engine_count}; }
  /// Its attributes besides "op" and "engine".
  constexpr std::span<const AttrSpec> attrs() const { return {attr_list.data(), attr_count}; }
};

namespace detail {

constexpr OpcodeInfo op(Opcode opcode, std::string_view name, std::initializer_list<Engine> engines,
                        std::span<const AttrSpec> attrs, Trait trait = Trait::kNone) {
  OpcodeInfo info;
  info.opcode = opcode;
  info.name = name;
  for (const Engine engine : engines) info.engine_list[info.engine_count++] = engine;
  for (const AttrSpec& attr : attrs) info.attr_list[info.attr_count++] = attr;
  info.trait = trait;
  return info;
}
constexpr OpcodeInfo op(Opcode opcode, std::string_view name, std::initializer_list<Engine> engines,
                        std::initializer_list<AttrSpec> attrs, Trait trait = Trait::kNone) {
  return op(opcode, name, engines, std::span<const AttrSpec>(attrs.begin(), attrs.size()), trait);
}

inline constexpr AttrSpec kDst{"dst", AttrKind::kOperand, true, Slot::kDst};
inline constexpr AttrSpec kSrc{"src", AttrKind::kOperand, true, Slot::kSrc};
inline constexpr AttrSpec kDmaAttrs[] = {kDst,
                                         kSrc,
                                         {"queue", AttrKind::kInt, false, Slot::kDst},
                                         {"trigger", AttrKind::kTrigger, false, Slot::kDst},
                                         {"dge", AttrKind::kDge, false, Slot::kDst}};
inline constexpr AttrSpec kMatmulAttrs[] = {
    kDst,
    {"stationary", AttrKind::kOperand, true, Slot::kStationary},
    {"moving", AttrKind::kOperand, true, Slot::kSrc},
    {"accumulate", AttrKind::kBool, false, Slot::kDst},
    {"perf_mode", AttrKind::kPerfMode, false, Slot::kDst},
    {"is_transpose", AttrKind::kBool, false, Slot::kDst}};
inline constexpr AttrSpec kMxAttrs[] = {kDst,
                                        {"stationary", AttrKind::kOperand, true, Slot::kStationary},
                                        {"moving", AttrKind::kOperand, true, Slot::kSrc},
                                        {"stationary_scale", AttrKind::kOperand, true, Slot::kAux0},
                                        {"moving_scale", AttrKind::kOperand, true, Slot::kAux1},
                                        {"accumulate", AttrKind::kBool, false, Slot::kDst}};
inline constexpr AttrSpec kCollectiveAttrs[] = {
    kDst,
    kSrc,
    {"alu", AttrKind::kAlu, false, Slot::kDst},
    {"group", AttrKind::kCoreList, false, Slot::kDst},
    {"algorithm", AttrKind::kAlgorithm, false, Slot::kDst}};

}  // namespace detail

/// Every opcode, in the order of Opcode.
inline constexpr std::array<OpcodeInfo, kOpcodeCount> kOpcodes = [] {
  using detail::kDst;
  using detail::kSrc;
  using detail::op;
  using detail::kDmaAttrs;
  using detail::kMatmulAttrs;
  using detail::kMxAttrs;
  using detail::kCollectiveAttrs;
  return std::array<OpcodeInfo, kOpcodeCount>{
      op(Opcode::kDmaCopy, "dma_copy", {Engine::kDma}, kDmaAttrs, Trait::kDma),
      op(Opcode::kDmaTranspose, "dma_transpose", {Engine::kDma}, kDmaAttrs, Trait::kDma),
      op(Opcode::kNcMatmul, "nc_matmul", {Engine::kTensor}, kMatmulAttrs, Trait::kMatmul),
      op(Opcode::kNcMatmulMx, "nc_matmul_mx", {Engine::kTensor}, kMxAttrs, Trait::kMatmul),
      op(Opcode::kNcTranspose, "nc_transpose", {Engine::kTensor, Engine::kVector}, {kDst, kSrc}),
      op(Opcode::kActivation, "activation", {Engine::kScalar},
         {kDst,
          kSrc,
          {"func", AttrKind::kFunc, true, Slot::kDst},
          {"scale", AttrKind::kOperandOrNumber, false, Slot::kAux1},
          {"bias", AttrKind::kOperandOrNumber, false, Slot::kAux0},
          {"reduce_dst", AttrKind::kOperand, false, Slot::kReduceDst}}),
      op(Opcode::kTensorTensor, "tensor_tensor", {Engine::kVector, Engine::kGpSimd},
         {kDst,
          {"in0", AttrKind::kOperand, true, Slot::kSrc},
          {"in1", AttrKind::kOperand, true, Slot::kIn1},
          {"alu", AttrKind::kAlu, true, Slot::kDst}}),
      op(Opcode::kTensorScalar, "tensor_scalar",
         {Engine::kVector, Engine::kScalar, Engine::kGpSimd},
         {kDst,
          kSrc,
          {"op0", AttrKind::kAlu, true, Slot::kDst},
          {"operand0", AttrKind::kOperandOrNumber, true, Slot::kAux0},
          {"op1", AttrKind::kAlu, false, Slot::kDst},
          {"operand1", AttrKind::kOperandOrNumber, false, Slot::kAux1},
          {"reverse0", AttrKind::kBool, false, Slot::kDst},
          {"reverse1", AttrKind::kBool, false, Slot::kDst},
          {"reduce_dst", AttrKind::kOperand, false, Slot::kReduceDst},
          {"reduce_op", AttrKind::kAlu, false, Slot::kDst}}),
      op(Opcode::kScalarTensorTensor, "scalar_tensor_tensor", {Engine::kVector},
         {kDst,
          {"data", AttrKind::kOperand, true, Slot::kSrc},
          {"op0", AttrKind::kAlu, true, Slot::kDst},
          {"operand0", AttrKind::kOperandOrNumber, true, Slot::kAux0},
          {"op1", AttrKind::kAlu, true, Slot::kDst},
          {"in1", AttrKind::kOperand, true, Slot::kIn1}}),
      op(Opcode::kTensorReduce, "tensor_reduce", {Engine::kVector},
         {kDst,
          kSrc,
          {"alu", AttrKind::kAlu, true, Slot::kDst},
          {"axis", AttrKind::kAxes, false, Slot::kDst},
          {"negate", AttrKind::kBool, false, Slot::kDst},
          {"keepdims", AttrKind::kBool, false, Slot::kDst}}),
      op(Opcode::kTensorPartitionReduce, "tensor_partition_reduce", {Engine::kGpSimd},
         {kDst, kSrc, {"alu", AttrKind::kAlu, true, Slot::kDst}}),
      op(Opcode::kTensorTensorScan, "tensor_tensor_scan", {Engine::kVector},
         {kDst,
          {"in0", AttrKind::kOperand, true, Slot::kSrc},
          {"in1", AttrKind::kOperand, true, Slot::kIn1},
          {"initial", AttrKind::kOperandOrNumber, true, Slot::kAux0},
          {"op0", AttrKind::kAlu, true, Slot::kDst},
          {"op1", AttrKind::kAlu, true, Slot::kDst}}),
      op(Opcode::kTensorCopy, "tensor_copy", {Engine::kVector, Engine::kScalar, Engine::kGpSimd},
         {kDst, kSrc}),
      op(Opcode::kMemset, "memset", {Engine::kVector, Engine::kGpSimd},
         {kDst, {"value", AttrKind::kNumber, true, Slot::kDst}}),
      op(Opcode::kIota, "iota", {Engine::kGpSimd},
         {kDst, {"expr", AttrKind::kPattern, true, Slot::kDst}}),
      op(Opcode::kAffineSelect, "affine_select", {Engine::kGpSimd},
         {kDst,
          kSrc,
          {"pred", AttrKind::kPattern, true, Slot::kDst},
          {"cmp", AttrKind::kCmp, false, Slot::kDst},
          {"fill", AttrKind::kNumber, false, Slot::kDst}}),
      op(Opcode::kBnStats, "bn_stats", {Engine::kVector}, {kDst, kSrc}),
      op(Opcode::kBnAggr, "bn_aggr", {Engine::kVector}, {kDst, kSrc}),
      op(Opcode::kReciprocal, "reciprocal", {Engine::kVector}, {kDst, kSrc}),
      op(Opcode::kExponential, "exponential", {Engine::kVector},
         {kDst,
          kSrc,
          {"max", AttrKind::kOperandOrNumber, false, Slot::kAux0},
          {"reduce_dst", AttrKind::kOperand, false, Slot::kReduceDst}}),
      op(Opcode::kSelect, "select", {Engine::kVector},
         {kDst,
          {"pred", AttrKind::kOperand, true, Slot::kSrc},
          {"on_true", AttrKind::kOperandOrNumber, true, Slot::kIn1},
          {"on_false", AttrKind::kOperandOrNumber, true, Slot::kAux0}}),
      op(Opcode::kCoreBarrier, "core_barrier", {Engine::kSync},
         {{"cores", AttrKind::kCoreList, false, Slot::kDst}}),
      op(Opcode::kAllReduce, "all_reduce", {Engine::kCollective}, kCollectiveAttrs,
         Trait::kCollective),
      op(Opcode::kAllGather, "all_gather", {Engine::kCollective}, kCollectiveAttrs,
         Trait::kCollective),
      op(Opcode::kReduceScatter, "reduce_scatter", {Engine::kCollective}, kCollectiveAttrs,
         Trait::kCollective),
      op(Opcode::kAllToAll, "all_to_all", {Engine::kCollective}, kCollectiveAttrs,
         Trait::kCollective),
      op(Opcode::kSend, "send", {Engine::kCollective},
         {kSrc, {"peer", AttrKind::kInt, true, Slot::kDst}}),
      op(Opcode::kRecv, "recv", {Engine::kCollective},
         {kDst, {"peer", AttrKind::kInt, true, Slot::kDst}}),
  };
}();

constexpr bool opcodes_in_enum_order() {
  for (std::size_t i = 0; i < kOpcodeCount; ++i) {
    if (kOpcodes[i].opcode != static_cast<Opcode>(i) || kOpcodes[i].engine_count == 0) return false;
  }
  return true;
}
static_assert(opcodes_in_enum_order(), "kOpcodes lists every opcode once, in enum order");

/// The entry of `op`.
constexpr const OpcodeInfo& opcode_info(Opcode op) {
  return kOpcodes[static_cast<std::size_t>(op)];
}

constexpr bool is_matmul(Opcode op) {
  return opcode_info(op).trait == Trait::kMatmul;
}
constexpr bool is_dma(Opcode op) {
  return opcode_info(op).trait == Trait::kDma;
}
constexpr bool is_collective(Opcode op) {
  return opcode_info(op).trait == Trait::kCollective;
}

}  // namespace trnsim::kernel
