#include "core/deps/region_overlap.hpp"

#include <algorithm>

namespace trnsim::deps {
namespace {

std::int64_t floor_div(std::int64_t numerator, std::int64_t denominator) {
  std::int64_t quotient = numerator / denominator;
  if ((numerator % denominator != 0) && ((numerator < 0) != (denominator < 0))) --quotient;
  return quotient;
}

/// Index of the first run of `p` that ends after `lo`, or p.count if none does.
std::uint64_t first_run_ending_after(const BytePattern& p, std::uint64_t lo) {
  if (p.begin + p.run > lo) return 0;
  const std::uint64_t k = (lo - p.begin - p.run) / p.stride + 1;
  return std::min(k, p.count);
}

/// True when some run of `p` shares a byte with [lo, hi). Precondition: lo < hi.
bool pattern_hits_range(const BytePattern& p, std::uint64_t lo, std::uint64_t hi) {
  if (p.contiguous()) return p.begin < hi && lo < p.end;
  const std::uint64_t k = first_run_ending_after(p, lo);
  return k < p.count && p.begin + k * p.stride < hi;
}

/// Same stride s: run i of a, [a.begin + i*s, + a.run), meets run j of b iff (i - j) * s lies in
/// the open interval (d - a.run, d + b.run), d = b.begin - a.begin; i - j ranges over
/// [-(b.count - 1), a.count - 1].
bool same_stride_overlap(const BytePattern& a, const BytePattern& b) {
  const auto stride = static_cast<std::int64_t>(a.stride);
  const std::int64_t d = static_cast<std::int64_t>(b.begin) - static_cast<std::int64_t>(a.begin);
  const std::int64_t m_lo = floor_div(d - static_cast<std::int64_t>(a.run), stride) + 1;
  const std::int64_t m_hi = floor_div(d + static_cast<std::int64_t>(b.run) - 1, stride);
  const std::int64_t lo = std::max(m_lo, 1 - static_cast<std::int64_t>(b.count));
  const std::int64_t hi = std::min(m_hi, static_cast<std::int64_t>(a.count) - 1);
  return lo <= hi;
}

/// Runs of `p` that share a byte with the window [lo, hi): indices [first, first + n).
struct RunSpan {
  std::uint64_t first = 0;
  std::uint64_t n = 0;
};

RunSpan runs_in_window(const BytePattern& p, std::uint64_t lo, std::uint64_t hi) {
  const std::uint64_t first = first_run_ending_after(p, lo);
  if (hi <= p.begin) return {first, 0};
  const std::uint64_t last = std::min(p.count - 1, (hi - 1 - p.begin) / p.stride);
  return {first, last >= first && first < p.count ? last - first + 1 : 0};
}

}  // namespace

bool patterns_overlap(const BytePattern& a, const BytePattern& b) {
  if (a.end <= b.begin || b.end <= a.begin) return false;
  if (a.contiguous()) return pattern_hits_range(b, a.begin, a.end);
  if (b.contiguous()) return pattern_hits_range(a, b.begin, b.end);
  if (a.stride == b.stride) return same_stride_overlap(a, b);

  // Different strides: test each run of the pattern with fewer runs in the common window
  // against the other pattern exactly.
  const std::uint64_t lo = std::max(a.begin, b.begin);
  const std::uint64_t hi = std::min(a.end, b.end);
  const RunSpan a_runs = runs_in_window(a, lo, hi);
  const RunSpan b_runs = runs_in_window(b, lo, hi);
  const bool walk_a = a_runs.n <= b_runs.n;
  const BytePattern& walked = walk_a ? a : b;
  const BytePattern& other = walk_a ? b : a;
  const RunSpan span = walk_a ? a_runs : b_runs;
  if (span.n > kMaxRunsExamined) return true;  // conservative, see the header
  for (std::uint64_t k = span.first; k < span.first + span.n; ++k) {
    const std::uint64_t run_begin = walked.begin + k * walked.stride;
    if (pattern_hits_range(other, run_begin, run_begin + walked.run)) return true;
  }
  return false;
}

}  // namespace trnsim::deps
