// Byte-exact overlap and containment tests between kernel::Regions, used by DependencyTracker.
//
// Exact: partition ranges; contiguous vs contiguous; contiguous vs strided; strided vs strided with
// the same stride (offsets compared modulo the stride); strided vs strided with different strides
// when either pattern has at most kMaxRunsExamined runs inside the two patterns' common byte
// window. Conservative (reports an overlap that may not exist): different strides with more runs
// than that in the common window of both patterns. Never reports "no overlap" for regions that
// share a byte. Assumes byte offsets and extents below 2^62 (far above any SBUF, PSUM or HBM
// address).
#pragma once

#include <cstdint>

#include "kernel/region.hpp"

namespace trnsim::deps {

/// Runs examined per pattern before a different-stride comparison gives up and reports overlap.
inline constexpr std::uint64_t kMaxRunsExamined = 64;

/// A per-partition byte pattern: `count` runs of `run` bytes, the k-th at `begin + k * stride`.
/// Normal form: count == 1 (then stride == run) whenever the union of the runs is contiguous,
/// otherwise count > 1 and stride > run. `end` is one past the last byte.
struct BytePattern {
  std::uint64_t begin = 0;
  std::uint64_t run = 0;
  std::uint64_t stride = 0;
  std::uint64_t count = 0;
  std::uint64_t end = 0;

  bool contiguous() const { return count == 1; }
};

/// A Region in the tracker's normal form.
struct NormalRegion {
  kernel::MemoryKind memory = kernel::MemoryKind::kHbm;
  std::uint32_t space = 0;
  std::uint32_t partition_begin = 0;
  std::uint32_t partition_end = 0;
  BytePattern bytes;
};

/// True when `region` touches no byte: run_bytes == 0, count == 0 or an empty partition range.
inline bool touches_no_byte(const kernel::Region& region) {
  return region.run_bytes == 0 || region.count == 0 ||
         region.partition_end <= region.partition_begin;
}

/// Writes the normal form of `region` to `out`. Returns false (and leaves `out` unspecified) when
/// the region touches no byte (touches_no_byte()).
/// Runs that overlap each other (stride < run) are merged into their contiguous union.
/// Inline: the tracker calls it for every region of every instruction.
inline bool normalize(const kernel::Region& region, NormalRegion& out) {
  if (touches_no_byte(region)) return false;
  out.memory = region.memory;
  out.space = region.space;
  out.partition_begin = region.partition_begin;
  out.partition_end = region.partition_end;
  BytePattern& bytes = out.bytes;
  bytes.begin = region.byte_begin;
  if (region.count == 1 || region.stride_bytes <= region.run_bytes) {
    // One run, or runs that touch or overlap: the union is [begin, byte_end()).
    bytes.end = region.byte_end();
    bytes.run = bytes.end - bytes.begin;
    bytes.stride = bytes.run;
    bytes.count = 1;
  } else {
    bytes.run = region.run_bytes;
    bytes.stride = region.stride_bytes;
    bytes.count = region.count;
    bytes.end = region.byte_end();
  }
  return true;
}

/// True when some byte lies in both patterns (conservative only as stated in the file comment).
bool patterns_overlap(const BytePattern& a, const BytePattern& b);

/// True when `a` and `b` are the same normal form, hence the same bytes.
inline bool same_region(const NormalRegion& a, const NormalRegion& b) {
  return a.bytes.begin == b.bytes.begin && a.bytes.end == b.bytes.end &&
         a.partition_begin == b.partition_begin && a.partition_end == b.partition_end &&
         a.space == b.space && a.memory == b.memory && a.bytes.run == b.bytes.run &&
         a.bytes.stride == b.bytes.stride && a.bytes.count == b.bytes.count;
}

/// True when the regions may share a byte: same memory and space, intersecting partition ranges,
/// overlapping byte patterns. Inline: the tracker calls it for every candidate it visits.
inline bool regions_overlap(const NormalRegion& a, const NormalRegion& b) {
  if (a.memory != b.memory || a.space != b.space || a.partition_begin >= b.partition_end ||
      b.partition_begin >= a.partition_end || a.bytes.end <= b.bytes.begin ||
      b.bytes.end <= a.bytes.begin) {
    return false;
  }
  return (a.bytes.contiguous() && b.bytes.contiguous()) || patterns_overlap(a.bytes, b.bytes);
}

/// True only if every byte of `inner` is in `outer` (sound, not complete: it may answer false for
/// some containments, e.g. strided inside strided when inner's stride is not a multiple of
/// outer's).
inline bool region_covers(const NormalRegion& outer, const NormalRegion& inner) {
  if (outer.memory != inner.memory || outer.space != inner.space ||
      outer.partition_begin > inner.partition_begin || outer.partition_end < inner.partition_end) {
    return false;
  }
  const BytePattern& o = outer.bytes;
  const BytePattern& i = inner.bytes;
  if (i.begin < o.begin || i.end > o.end) return false;
  if (o.contiguous()) return true;
  // Outer is strided (stride > run). Inner's first byte sits `offset` bytes into an outer period;
  // given i.end <= o.end, inner's runs then all land inside outer runs when:
  const std::uint64_t offset = (i.begin - o.begin) % o.stride;
  if (i.contiguous()) return offset + (i.end - i.begin) <= o.run;
  return i.stride % o.stride == 0 && offset + i.run <= o.run;
}

}  // namespace trnsim::deps
