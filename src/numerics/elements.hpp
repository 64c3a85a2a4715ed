// Element values of access patterns: decoding and encoding one element of each element type,
// and reading (gather) and writing (scatter) all elements of a kernel::AccessPattern in its
// logical order, the row-major order of AccessPattern::logical_shape() (on-chip patterns with
// the partition dimension at its partition_axis).
//
// Values travel as double, which holds every value of every supported type exactly. Encoding
// rounds: floating-point types to nearest, ties to even (float_formats.hpp; float32 by the host's
// IEEE conversion); integer types to the nearest integer, ties to even, saturating at the
// type's range, NaN giving 0 (the hardware's float-to-integer rule is not published, so this is
// a choice). bool stores 1 for any nonzero value.
// Leaves out: the packed MX types (float8_e4m3fn_x4, float8_e5m2_x4, float4_e2m1fn_x4) and
// float8_e8m0fnu, which encode_element / decode_element reject (is_supported is false).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "kernel/instruction.hpp"
#include "numerics/memory_image.hpp"

namespace trnsim::numerics {

/// True when elements of `dtype` can be decoded and encoded.
bool is_supported(kernel::DType dtype);

/// The value of the element of `dtype` stored little-endian at `bytes`.
double decode_element(kernel::DType dtype, const std::uint8_t* bytes);

/// Stores `value`, rounded to `dtype` (see the header comment), little-endian at `bytes`.
void encode_element(kernel::DType dtype, double value, std::uint8_t* bytes);

/// The element type NumPy's .npy description `descr` names, for the types NumPy and trnsim share
/// (float16, float32, the 8-32 bit integers, bool); nullopt otherwise (float64 included).
std::optional<kernel::DType> dtype_of_npy(std::string_view descr);

/// The .npy description of `dtype` for those same types; nullopt for the others.
std::optional<std::string_view> npy_descr_of(kernel::DType dtype);

/// `value` rounded to what an element of `dtype` holds (decode(encode(value))).
double round_to(kernel::DType dtype, double value);

/// A read of bytes that nothing wrote: the first such element of a pattern.
struct UnwrittenElement {
  SpaceKey where;
  std::uint64_t address = 0;  ///< byte address of the element (in its partition, on-chip)
  std::uint64_t index = 0;    ///< its position in the pattern's logical order
};

/// Calls visit(key, address) for every element of `pattern` in logical order: the space
/// (memory, chip or core, partition) and byte address of each.
template <class Visit>
void for_each_element(const kernel::AccessPattern& pattern, Visit&& visit) {
  struct Dim {
    std::uint64_t size;
    std::int64_t stride_bytes;  ///< 0 for the partition dimension
    bool partition;
  };
  Dim dims[kernel::kMaxPatternDims + 1];
  std::size_t count = 0;
  const auto element_bytes = static_cast<std::int64_t>(kernel::dtype_bytes(pattern.dtype));
  for (std::uint8_t d = 0; d <= pattern.rank; ++d) {
    if (pattern.on_chip() && d == pattern.partition_axis) {
      dims[count++] = Dim{pattern.partitions, 0, true};
    }
    if (d < pattern.rank)
      dims[count++] = Dim{pattern.sizes[d], pattern.strides[d] * element_bytes, false};
  }
  std::uint64_t total = 1;
  for (std::size_t d = 0; d < count; ++d) total *= dims[d].size;
  if (total == 0) return;
  std::uint64_t index[kernel::kMaxPatternDims + 1] = {};
  SpaceKey key{pattern.memory, pattern.space, pattern.on_chip() ? pattern.partition_start : 0};
  std::int64_t address = static_cast<std::int64_t>(pattern.offset);
  for (std::uint64_t n = 0; n < total; ++n) {
    visit(key, static_cast<std::uint64_t>(address));
    // Odometer: advance the innermost dimension, carrying outwards.
    for (std::size_t d = count; d-- > 0;) {
      if (++index[d] < dims[d].size) {
        if (dims[d].partition) {
          ++key.partition;
        } else {
          address += dims[d].stride_bytes;
        }
        break;
      }
      index[d] = 0;
      if (dims[d].partition) {
        key.partition = pattern.partition_start;
      } else {
        address -= dims[d].stride_bytes * static_cast<std::int64_t>(dims[d].size - 1);
      }
    }
  }
}

/// Calls visit(key, address, count) for runs of `count` elements of `pattern` that follow one
/// another in logical order and in memory (the innermost dimension when it is a free dimension
/// of stride 1; otherwise runs of one element), covering every element in logical order.
template <class Visit>
void for_each_run(const kernel::AccessPattern& pattern, Visit&& visit) {
  const bool innermost_free = !(pattern.on_chip() && pattern.partition_axis == pattern.rank);
  if (pattern.rank == 0 || !innermost_free || pattern.strides[pattern.rank - 1] != 1 ||
      pattern.sizes[pattern.rank - 1] <= 1) {
    for_each_element(pattern, [&](const SpaceKey& key, std::uint64_t address) {
      visit(key, address, std::uint64_t{1});
    });
    return;
  }
  kernel::AccessPattern outer = pattern;
  const std::uint64_t run = pattern.sizes[pattern.rank - 1];
  outer.sizes[pattern.rank - 1] = 1;
  for_each_element(outer,
                   [&](const SpaceKey& key, std::uint64_t address) { visit(key, address, run); });
}

/// The values of every element of `pattern`, in logical order, into `values` (resized). Returns
/// the first element whose bytes were not all written before, if any (its value is read as if
/// the bytes were zero).
std::optional<UnwrittenElement> gather(const MemoryImage& image,
                                       const kernel::AccessPattern& pattern,
                                       std::vector<double>& values);

/// The raw bytes of every element of `pattern`, in logical order (dtype_bytes each): for copies
/// without a cast, which keep every bit (NaN payloads, packed MX containers). Returns the first
/// element whose bytes were not all written before, as gather() does.
std::optional<UnwrittenElement> gather_bytes(const MemoryImage& image,
                                             const kernel::AccessPattern& pattern,
                                             std::vector<std::uint8_t>& bytes);

/// Writes raw element bytes (logical order) into the elements of `pattern`.
void scatter_bytes(MemoryImage& image, const kernel::AccessPattern& pattern,
                   std::span<const std::uint8_t> bytes);

/// The value of packed MX element `index` (0-3) of a container of `dtype` (float8_e4m3fn_x4,
/// float8_e5m2_x4: byte `index`; float4_e2m1fn_x4: bits 4 index .. 4 index + 3 of the 16-bit
/// container), not yet scaled.
double mx_value(kernel::DType dtype, std::uint32_t container, unsigned index);

/// Writes `values` (one per element, logical order; size must equal pattern.elements()) into
/// the elements of `pattern`, each rounded to the pattern's dtype. A later element written to
/// the same bytes wins.
void scatter(MemoryImage& image, const kernel::AccessPattern& pattern,
             std::span<const double> values);

}  // namespace trnsim::numerics
