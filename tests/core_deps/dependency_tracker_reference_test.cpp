// DependencyTracker against a brute-force model of exactly what it reports: the same producers,
// each with the same kind, as the pruning rules in its header comment, on random streams where
// identical regions recur (the case the index is tuned for) and reads go to in-order streams.
// The oracle test (dependency_tracker_random_test.cpp) checks that no dependency is missed; this
// one pins the reported set, which the simulator's timing depends on.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <deque>
#include <map>
#include <random>
#include <vector>

#include "core/deps/dependency_tracker.hpp"
#include "test_regions.hpp"

namespace trnsim::deps {
namespace {

/// The tracker's pruning, computed over every indexed region of every in-flight instruction.
class ReferenceTracker {
 public:
  /// Same arguments and result as DependencyTracker::add; `out` gets the dependencies sorted by
  /// producer.
  std::uint64_t add(std::uint64_t id, const std::vector<kernel::Region>& reads,
                    const std::vector<kernel::Region>& writes, std::uint32_t stream,
                    std::vector<Dependency>& out) {
    std::map<std::uint64_t, DependencyKind> deps;
    auto note = [&](std::uint64_t producer, DependencyKind kind) {
      const auto [it, inserted] = deps.emplace(producer, kind);
      if (!inserted) it->second = std::min(it->second, kind);
    };
    std::vector<Record> added;
    for (const bool is_write : {false, true}) {
      for (const kernel::Region& region : is_write ? writes : reads) {
        Record query{};
        if (!normalize(region, query.region)) continue;
        // Newest covering writer; for a write also the newest covering reader.
        const std::uint64_t covering_writer = newest_covering(query.region, true);
        const std::uint64_t writer_cutoff =
            is_write ? std::max(covering_writer, newest_covering(query.region, false))
                     : covering_writer;
        for (const Record& rec : records_) {
          if (!rec.indexed || !regions_overlap(rec.region, query.region)) continue;
          if (rec.is_write && rec.id >= writer_cutoff) {
            note(rec.id,
                 is_write ? DependencyKind::kWriteAfterWrite : DependencyKind::kReadAfterWrite);
          } else if (!rec.is_write && is_write && rec.id >= covering_writer) {
            note(rec.id, DependencyKind::kWriteAfterRead);
          }
        }
        query.id = id;
        query.stream = stream;
        query.is_write = is_write;
        added.push_back(query);
      }
    }
    for (const Record& rec : added) insert(rec);
    out.clear();
    for (const auto& [producer, kind] : deps) out.push_back({producer, kind});
    return out.empty() ? kNoProducer : out.back().producer;
  }

  void retire(std::uint64_t id) {
    std::erase_if(records_, [id](const Record& rec) { return rec.id == id; });
  }

 private:
  struct Record {
    NormalRegion region;
    std::uint64_t id = 0;
    std::uint32_t stream = kUnorderedStream;
    bool is_write = false;
    bool indexed = true;
  };

  // The tracker's index geometry, which decides which identical reads an in-order stream
  // supersedes (see supersede()): buckets of 2^(6 + 2 * level) bytes, the finest level whose
  // bucket holds the region's byte extent, 29 levels.
  static unsigned shift_of(const NormalRegion& region) {
    const std::uint64_t bytes = region.bytes.end - region.bytes.begin;
    const unsigned log2_ceil = bytes <= 1 ? 0 : static_cast<unsigned>(std::bit_width(bytes - 1));
    const unsigned level = log2_ceil <= 6 ? 0 : std::min(28u, (log2_ceil - 6 + 1) / 2);
    return 6 + 2 * level;
  }

  std::uint64_t newest_covering(const NormalRegion& query, bool writers) const {
    std::uint64_t newest = 0;
    for (const Record& rec : records_) {
      if (rec.indexed && rec.is_write == writers && region_covers(rec.region, query)) {
        newest = std::max(newest, rec.id);
      }
    }
    return newest;
  }

  /// Indexes `rec`. A write drops the identical write, and a read on an in-order stream the
  /// identical read of the same stream, if that is among the 4 newest indexed records of the
  /// same kind (read or write), memory, space and level whose buckets include the new record's
  /// first bucket (DependencyTracker, "Rewritten regions" and "In-order streams").
  void insert(const Record& rec) {
    if (rec.is_write || rec.stream != kUnorderedStream) {
      const unsigned shift = shift_of(rec.region);
      const std::uint64_t bucket = rec.region.bytes.begin >> shift;
      int seen = 0;
      for (auto it = records_.rbegin(); it != records_.rend() && seen < 4; ++it) {
        Record& older = *it;
        if (!older.indexed || older.is_write != rec.is_write ||
            older.region.memory != rec.region.memory || older.region.space != rec.region.space ||
            shift_of(older.region) != shift || (older.region.bytes.begin >> shift) > bucket ||
            ((older.region.bytes.end - 1) >> shift) < bucket) {
          continue;
        }
        ++seen;
        if ((rec.is_write || older.stream == rec.stream) && same_region(older.region, rec.region)) {
          older.indexed = false;
          break;
        }
      }
    }
    records_.push_back(rec);
  }

  std::vector<Record> records_;  ///< in insertion order
};

kernel::Region random_region(std::mt19937_64& rng) {
  auto uniform = [&](std::uint64_t lo, std::uint64_t hi) {
    return test_regions::uniform(rng, lo, hi);
  };
  kernel::Region r;
  r.memory = test_regions::random_memory(rng, 5, 3);
  r.space = uniform(0, 9) == 0 ? 1 : 0;
  if (r.memory != kernel::MemoryKind::kHbm) {
    r.partition_begin = uniform(0, 3) == 0 ? static_cast<std::uint32_t>(uniform(0, 100)) : 0;
    r.partition_end = 128;
  }
  // Sizes across several index levels; some strided, some spanning two buckets.
  r.run_bytes = std::uint64_t{1} << uniform(0, 14);
  if (uniform(0, 3) == 0) r.run_bytes += uniform(1, 200);
  if (uniform(0, 3) == 0) {
    r.count = uniform(2, 40);
    r.stride_bytes = r.run_bytes + uniform(0, 3) * uniform(1, r.run_bytes);
  }
  r.byte_begin = uniform(0, 3) == 0 ? uniform(0, 1 << 16) : uniform(0, 64) * 1024;
  return r;
}

/// Random stream: `pool` regions recur (double buffers, accumulators, weights), the rest are
/// fresh; reads go to in-order streams 0-2 or none; retirement picks one of the 8 oldest or,
/// sometimes, any in-flight instruction.
void run_against_reference(std::uint64_t seed, int steps) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](std::uint64_t lo, std::uint64_t hi) {
    return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng);
  };
  std::vector<kernel::Region> pool;
  for (std::uint64_t n = uniform(2, 12); n > 0; --n) pool.push_back(random_region(rng));
  auto pick = [&] {
    return uniform(0, 4) != 0 ? pool[uniform(0, pool.size() - 1)] : random_region(rng);
  };
  const std::size_t window = uniform(4, 300);

  DependencyTracker tracker;
  ReferenceTracker reference;
  std::deque<std::uint64_t> live;
  std::vector<kernel::Region> reads;
  std::vector<kernel::Region> writes;
  std::vector<Dependency> got;
  std::vector<Dependency> expected;
  std::uint64_t id = 0;
  std::uint64_t reported = 0;
  for (int step = 0; step < steps; ++step) {
    reads.clear();
    writes.clear();
    for (std::uint64_t n = uniform(0, 3); n > 0; --n) reads.push_back(pick());
    for (std::uint64_t n = uniform(0, 1) + (uniform(0, 9) == 0); n > 0; --n) {
      writes.push_back(pick());
    }
    const std::uint32_t stream =
        uniform(0, 3) == 0 ? kUnorderedStream : static_cast<std::uint32_t>(uniform(0, 2));
    got.clear();
    const std::uint64_t newest = tracker.add(id, reads, writes, got, stream);
    const std::uint64_t expected_newest = reference.add(id, reads, writes, stream, expected);
    std::sort(got.begin(), got.end(),
              [](const Dependency& a, const Dependency& b) { return a.producer < b.producer; });
    ASSERT_EQ(got, expected) << "seed " << seed << " step " << step << " id " << id;
    ASSERT_EQ(newest, expected_newest) << "seed " << seed << " id " << id;
    reported += got.size();
    live.push_back(id);
    id += 1 + (uniform(0, 7) == 0 ? uniform(1, 3) : 0);
    while (live.size() > window || (!live.empty() && uniform(0, 7) == 0)) {
      const std::size_t index = uniform(0, 9) != 0
                                    ? uniform(0, std::min<std::size_t>(7, live.size() - 1))
                                    : uniform(0, live.size() - 1);
      tracker.retire(live[index]);
      reference.retire(live[index]);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(index));
    }
  }
  EXPECT_GT(reported, static_cast<std::uint64_t>(steps) / 4);  // not a vacuous stream
}

TEST(DependencyTrackerReference, ReportsExactlyTheReferenceSetOnRecurringRegions) {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) run_against_reference(seed, 1500);
}

}  // namespace
}  // namespace trnsim::deps
