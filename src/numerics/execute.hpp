// What an instruction does to values: the functional semantics of the kernel ops, applied to a
// MemoryImage. Arithmetic is in float32, as the engines compute (operands are decoded exactly,
// each result is rounded once to float32 and then to the destination's type on store);
// nc_matmul accumulates in float32 into PSUM (products of the inputs' values, summed over the
// contraction dimension in ascending partition order; the hardware's summation order is not
// published).
//
// Semantics per op (NKI ISA names; `x` an input element, per partition p where noted; a
// reduce_dst [P, 1] receives the reduction of each partition's float32 results):
//   dma_copy, tensor_copy   dst = src, element by element in logical order (a cast on store;
//                           without a cast, bit for bit)
//   dma_transpose           dst[B, A] = src[A, B] (src 2-D once size-1 dimensions are dropped)
//   memset                  dst = value
//   tensor_tensor           dst = in0 op in1
//   tensor_scalar           dst = (x op0 a0) op1 a1; a0, a1 numbers or [P, 1] tiles (per p);
//                           reverse0/1 swap each op's operands; reduce_dst: reduce_op
//   scalar_tensor_tensor    dst = (x op0 a0) op1 in1 (reverse0/1 as above)
//   tensor_tensor_scan      per p, r[i] = (in0[i] op0 r[i-1]) op1 in1[i], r[-1] = initial
//   activation              dst = func(x * scale + bias); scale, bias numbers or [P, 1] tiles;
//                           reduce_dst: add
//   exponential             dst = exp(x - max); reduce_dst: add
//   select                  dst = pred != 0 ? on_true : on_false (tiles or numbers)
//   reciprocal              dst = 1 / x
//   nc_matmul               dst[M, N] (+)= stationary[K, M]^T moving[K, N] (accumulate: add
//                           to what dst holds); double_row: [K/2, 2, M] and [K/2, 2, N]
//   nc_matmul_mx            as nc_matmul on dequantised MX values: packed value j of partition
//                           p is K index 4 p + j, times 2^(e - 127) for the uint8 exponent e of
//                           its 32-value group g (partitions 8 g .. 8 g + 7), found in partition
//                           32 (g / 4) + g % 4 of the scale tile; e = 255 is NaN
//   nc_transpose            dst[F, P] = src[P, F]
//   tensor_reduce           dst = op over the free axes in reduce_axes (negate: times -1)
//   tensor_partition_reduce dst[f] = op over p of src[p, f] (average: the mean)
//   bn_stats                per p: (count, mean, sum of squared deviations) of the even-indexed
//                           and of the odd-indexed elements: [P, 6] (NKI's layout of three
//                           values each; their order within a triple is not published)
//   bn_aggr                 per p: (mean, variance) of all counted elements from [P, 3k]
//                           triples, merged pairwise (Chan, Golub and LeVeque)
//   iota                    dst = expr(p, f, f0..f3) (integers, cast on store)
//   affine_select           dst = pred(p, f, f0..f3) CMP 0 ? src : fill
//   core_barrier            nothing (it orders cores)
// Collectives over a group of n ranks (src, dst of each rank; element-wise op in float32, in
// rank order): all_reduce dst_i = op_j src_j; all_gather dst_i = src_0 ... src_{n-1}
// concatenated; reduce_scatter dst_i = chunk i of op_j src_j; all_to_all chunk j of dst_i =
// chunk i of src_j. send/recv: the receiver's dst = the sender's src.
// Activation functions use their textbook definitions in float64, rounded to float32 (the
// hardware's approximations are not published): gelu = x Phi(x) with the error function,
// gelu_apprx_tanh = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), gelu_apprx_sigmoid =
// x sigmoid(1.702 x), silu = x sigmoid(x), softplus = log(1 + e^x), mish = x tanh(softplus x),
// and the *_dx functions their derivatives.
// Leaves out (unsupported_reason says which): prelu, other arithmetic on packed MX types,
// float8_e8m0fnu values, is_transpose matmuls.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kernel/instruction.hpp"
#include "numerics/elements.hpp"
#include "numerics/memory_image.hpp"

namespace trnsim::numerics {

/// Empty when execute() models `instruction`, else what it lacks a model for: the op ("iota"),
/// an attribute ("activation with reduce_res") or an element type ("element type ...").
std::optional<std::string> unsupported_reason(const kernel::Instruction& instruction);

/// What an instruction's execution noticed.
struct ExecutionNotes {
  /// The first element read whose bytes nothing wrote, and the operand slot it belongs to.
  std::optional<UnwrittenElement> unwritten;
  kernel::Slot unwritten_slot = kernel::Slot::kSrc;
  /// Index (logical order of dst) of the first non-finite value stored, if an input had none.
  std::optional<std::uint64_t> first_non_finite;
};

/// The value of an iota `expr` or affine_select `pred` at one element of dst: p its partition
/// (0 for the first of dst), f its index within the partition (logical order) and free[d] its
/// index along free dimension d of dst's pattern.
using PatternFunction =
    std::function<std::int64_t(std::uint32_t p, std::uint64_t f, const std::uint64_t* free)>;

/// Applies a collective (all_reduce, all_gather, reduce_scatter, all_to_all) once every member of
/// its group joined: `members` holds each member's instruction in rank order (the group's order).
/// Returns the notes of each member.
std::vector<ExecutionNotes> execute_collective(std::span<const kernel::Instruction* const> members,
                                               MemoryImage& image);

/// Applies a matched send (its src) and recv (its dst): dst = src element by element.
ExecutionNotes execute_transfer(const kernel::Instruction& send, const kernel::Instruction& recv,
                                MemoryImage& image);

/// Applies `instruction` to `image`. Precondition: !unsupported_reason(instruction); iota and
/// affine_select need `pattern` (their expression, which the instruction does not carry).
ExecutionNotes execute(const kernel::Instruction& instruction, MemoryImage& image,
                       const PatternFunction& pattern = {});

}  // namespace trnsim::numerics
