#include "core/deps/dependency_tracker.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>

namespace trnsim::deps {

namespace {

bool same_raw_region(const kernel::Region& a, const kernel::Region& b) {
  return a.byte_begin == b.byte_begin && a.run_bytes == b.run_bytes &&
         a.partition_begin == b.partition_begin && a.partition_end == b.partition_end &&
         a.space == b.space && a.memory == b.memory && a.stride_bytes == b.stride_bytes &&
         a.count == b.count;
}

/// Top `bits` bits of a Fibonacci hash of the fields that tell one core's regions apart: where
/// a region starts and how long its runs are. The space rarely varies within one core's tracker,
/// and the stride and count rarely differ alone; regions that collide only miss the cache.
std::size_t region_hash(const kernel::Region& region, unsigned bits) {
  const std::uint64_t mixed = region.byte_begin ^ region.run_bytes << 20 ^
                              std::uint64_t{region.partition_begin} << 36 ^
                              std::uint64_t{region.partition_end} << 44 ^
                              std::uint64_t{static_cast<std::uint8_t>(region.memory)} << 62;
  return static_cast<std::size_t>((mixed * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

}  // namespace

DependencyTracker::DependencyTracker() : region_cache_(std::size_t{1} << kRegionCacheBits) {
  candidates_.reserve(64);
}

unsigned DependencyTracker::level_for_extent(std::uint64_t bytes) {
  // Smallest s with bytes <= 2^s, then the first level whose shift reaches s.
  const unsigned log2_ceil = bytes <= 1 ? 0 : static_cast<unsigned>(std::bit_width(bytes - 1));
  if (log2_ceil <= kBaseShift) return 0;
  return std::min(kLevels - 1, (log2_ceil - kBaseShift + kLevelStep - 1) / kLevelStep);
}

std::uint32_t DependencyTracker::acquire_shared() {
  std::uint32_t shared = free_shared_;
  if (shared != kNil) {
    free_shared_ = shared_regions_[shared].references;
  } else {
    shared = static_cast<std::uint32_t>(shared_regions_.size());
    shared_regions_.emplace_back();
  }
  shared_regions_[shared].references = 1;
  return shared;
}

[[gnu::always_inline]] inline void DependencyTracker::release_shared(std::uint32_t shared) {
  SharedRegion& entry = shared_regions_[shared];
  if (--entry.references > 0) return;
  entry.references = free_shared_;
  free_shared_ = shared;
}

void DependencyTracker::fill(RegionCacheEntry& entry, const kernel::Region& region) {
  const std::array<std::uint32_t, 2> evicted = entry.bucket;
  const unsigned evicted_count = entry.bucket_count;
  const std::uint32_t evicted_shared = entry.shared;
  entry.raw = region;
  entry.shared = acquire_shared();
  NormalRegion& normal = shared_regions_[entry.shared].region;
  normalize(region, normal);
  const BytePattern& bytes = normal.bytes;
  const unsigned level = level_for_extent(bytes.end - bytes.begin);
  const unsigned shift = shift_of(level);
  const std::uint64_t first = bytes.begin >> shift;
  entry.level = static_cast<std::uint8_t>(level);
  entry.bucket_count = static_cast<std::uint8_t>(((bytes.end - 1) >> shift) - first + 1);
  entry.bucket = {kNil, kNil};
  for (unsigned slot = 0; slot < entry.bucket_count; ++slot) {
    entry.bucket[slot] = acquire_bucket(bucket_key(normal, level, first + slot));
    ++bucket_pool_[entry.bucket[slot]].pins;
  }
  // Unpinned after the new pins, so a bucket the new region shares is not freed and recreated.
  for (unsigned slot = 0; slot < evicted_count; ++slot) unpin_bucket(evicted[slot]);
  if (evicted_shared != kNil) release_shared(evicted_shared);
}

[[gnu::always_inline]] inline std::uint32_t DependencyTracker::prepare(const kernel::Region& region,
                                                                       bool is_write,
                                                                       std::uint64_t id,
                                                                       std::uint32_t stream) {
  RegionCacheEntry& entry = region_cache_[region_hash(region, kRegionCacheBits)];
  // An empty entry's raw region touches no byte, so it matches no region prepared here.
  if (!same_raw_region(entry.raw, region)) [[unlikely]] {
    fill(entry, region);
  }
  if (free_record_ == kNil) {
    free_record_ = static_cast<std::uint32_t>(records_.size());
    records_.emplace_back();
  }
  const std::uint32_t record = free_record_;
  RegionRecord& rec = records_[record];
  free_record_ = rec.next_in_instr;
  rec.shared = entry.shared;
  ++shared_regions_[entry.shared].references;
  rec.id = id;
  rec.stream = stream;
  rec.is_write = is_write;
  rec.indexed = false;
  rec.group = static_cast<std::uint8_t>(group_of(region.memory, is_write));
  rec.level = entry.level;
  rec.bucket_count = entry.bucket_count;
  rec.bucket = entry.bucket;
  prepared_.push_back(record);
  return record;
}

std::uint64_t DependencyTracker::add(std::uint64_t id, std::span<const kernel::Region> reads,
                                     std::span<const kernel::Region> writes,
                                     std::vector<Dependency>& out, std::uint32_t stream) {
  if (any_added_ && id <= last_id_) {
    throw std::invalid_argument("DependencyTracker::add: instruction id " + std::to_string(id) +
                                " is not greater than the previous id " + std::to_string(last_id_));
  }
  any_added_ = true;
  last_id_ = id;
  ++add_stamp_;
  newest_ = kNoProducer;

  // Every prepared region is inserted below, so its buckets do not stay empty (unpin_bucket()
  // does not free them meanwhile).
  prepared_.clear();
  first_read_shared_ = kNil;
  for (const kernel::Region& region : reads) {
    if (touches_no_byte(region)) continue;
    const RegionRecord& query = records_[prepare(region, false, id, stream)];
    // A read waits for writers only: none of its memory in flight, nothing to query.
    const unsigned writers = group_of(region.memory, true);
    const std::uint64_t covering_writer = level_mask_[writers] != 0 ? query_read(query, out) : 0;
    if (first_read_shared_ == kNil) {
      first_read_shared_ = query.shared;
      first_read_covering_writer_ = covering_writer;
    }
  }
  for (const kernel::Region& region : writes) {
    if (!touches_no_byte(region)) query_write(records_[prepare(region, true, id, stream)], out);
  }

  std::uint32_t instr;
  if (free_instr_ != kNil) {
    instr = free_instr_;
    free_instr_ = instrs_[instr].first_region;
  } else {
    instr = static_cast<std::uint32_t>(instrs_.size());
    instrs_.emplace_back();
  }
  instrs_[instr] = InstrRecord{id, 0, 0, kNil};
  id_to_instr_.insert(id, instr);
  // Registered after the queries so an instruction never depends on itself.
  for (const std::uint32_t record : prepared_) insert_region(record, instr);
  return newest_;
}

void DependencyTracker::retire(std::uint64_t id) {
  const std::uint32_t instr = id_to_instr_.take(id);
  if (instr == kNil) {
    throw std::invalid_argument("DependencyTracker::retire: instruction id " + std::to_string(id) +
                                " is not in flight");
  }
  std::uint32_t record = instrs_[instr].first_region;
  while (record != kNil) {
    const std::uint32_t next = records_[record].next_in_instr;
    remove_region(record);
    records_[record].next_in_instr = free_record_;
    free_record_ = record;
    record = next;
  }
  instrs_[instr].first_region = free_instr_;
  free_instr_ = instr;
}

std::size_t DependencyTracker::footprint_bytes() const {
  return sizeof(*this) + records_.capacity() * sizeof(RegionRecord) +
         instrs_.capacity() * sizeof(InstrRecord) + id_to_instr_.footprint_bytes() +
         buckets_.footprint_bytes() + bucket_pool_.capacity() * sizeof(Bucket) +
         region_cache_.capacity() * sizeof(RegionCacheEntry) +
         shared_regions_.capacity() * sizeof(SharedRegion) +
         candidates_.capacity() * sizeof(std::uint32_t) +
         prepared_.capacity() * sizeof(std::uint32_t);
}

// ---- queries ------------------------------------------------------------------------------

[[gnu::always_inline]] inline void DependencyTracker::visit(std::uint32_t record,
                                                            const RegionRecord& query,
                                                            std::uint64_t& newest_covering) {
  const RegionRecord& rec = records_[record];
  // The same region recurs constantly (buffers rewritten and reread): it overlaps and covers.
  if (same_region(rec, query)) {
    candidates_.push_back(record);
    if (rec.id > newest_covering) newest_covering = rec.id;
    return;
  }
  if (!regions_overlap(region_of(rec), region_of(query))) return;
  candidates_.push_back(record);
  if (rec.id > newest_covering && region_covers(region_of(rec), region_of(query))) {
    newest_covering = rec.id;
  }
}

[[gnu::always_inline]] inline void DependencyTracker::walk_bucket(std::uint32_t link,
                                                                  bool skip_second_links,
                                                                  const RegionRecord& query,
                                                                  const std::uint64_t& stop_below,
                                                                  std::uint64_t& newest_covering) {
  while (link != kNil) {
    const std::uint32_t record = link >> 1;
    if (records_[record].id < stop_below) break;
    if (!skip_second_links || (link & 1) == 0) visit(record, query, newest_covering);
    link = records_[record].bucket_next[link & 1];
  }
}

[[gnu::always_inline]] inline void DependencyTracker::collect(const RegionRecord& query,
                                                              bool is_write,
                                                              const std::uint64_t& stop_below,
                                                              std::uint64_t& newest_covering) {
  const NormalRegion& region = region_of(query);
  const unsigned group = group_of(region.memory, is_write);
  for (std::uint32_t mask = level_mask_[group]; mask != 0; mask &= mask - 1) {
    const auto level = static_cast<unsigned>(std::countr_zero(mask));
    const Level& entry = levels_[group][level];
    if (records_[entry.head].id < stop_below) continue;  // the level holds nothing newer
    // Probing the query's buckets at this level is worth it when they are fewer than half the
    // level's records; otherwise the level's list is scanned.
    if (level == query.level) {
      if (query.bucket_count == 1 || query.bucket_count * 2 < entry.count) {
        // The query's own buckets, acquired by prepare(): no hashing. A single bucket lists, in
        // scan order, every record of the level that overlaps the query, so it also replaces
        // the scan.
        walk_bucket(bucket_pool_[query.bucket[0]].head[is_write], false, query, stop_below,
                    newest_covering);
        if (query.bucket_count == 2) {
          walk_bucket(bucket_pool_[query.bucket[1]].head[is_write], true, query, stop_below,
                      newest_covering);
        }
        continue;
      }
    } else {
      const unsigned shift = shift_of(level);
      const std::uint64_t first = region.bytes.begin >> shift;
      const std::uint64_t last = (region.bytes.end - 1) >> shift;
      if ((last - first + 1) * 2 < entry.count) {
        for (std::uint64_t index = first; index <= last; ++index) {
          const std::uint32_t bucket = buckets_.find(bucket_key(region, level, index));
          if (bucket != kNil) {
            walk_bucket(bucket_pool_[bucket].head[is_write], index != first, query, stop_below,
                        newest_covering);
          }
        }
        continue;
      }
    }
    for (std::uint32_t record = entry.head; record != kNil && records_[record].id >= stop_below;
         record = records_[record].level_next) {
      visit(record, query, newest_covering);
    }
  }
}

[[gnu::always_inline]] inline void DependencyTracker::report(std::uint32_t record,
                                                             DependencyKind kind,
                                                             std::vector<Dependency>& out) {
  InstrRecord& instr = instrs_[records_[record].instr];
  if (instr.add_stamp == add_stamp_) {
    Dependency& existing = out[instr.out_index];
    existing.kind = std::min(existing.kind, kind);
    return;
  }
  instr.add_stamp = add_stamp_;
  instr.out_index = static_cast<std::uint32_t>(out.size());
  out.push_back({instr.id, kind});
  if (newest_ == kNoProducer || instr.id > newest_) newest_ = instr.id;
}

std::uint64_t DependencyTracker::query_read(const RegionRecord& query,
                                            std::vector<Dependency>& out) {
  // Writers older than the newest writer covering the query are ordered before it (WAW).
  candidates_.clear();
  std::uint64_t covering_writer = 0;
  collect(query, true, covering_writer, covering_writer);
  for (const std::uint32_t record : candidates_) {
    if (records_[record].id >= covering_writer) {
      report(record, DependencyKind::kReadAfterWrite, out);
    }
  }
  return covering_writer;
}

void DependencyTracker::query_write(const RegionRecord& query, std::vector<Dependency>& out) {
  // A covering writer W orders every older overlapping writer (WAW) and reader (WAR) before it;
  // a covering reader R orders every older overlapping writer before it (RAW).
  candidates_.clear();
  std::uint64_t covering_writer = 0;
  // When this instruction's first read is the same region (an accumulation), that read's
  // query reported, as RAW (the stronger kind), every writer this one would report as WAW
  // (writer_cutoff >= covering_writer): only their cutoff is needed.
  if (query.shared == first_read_shared_) {
    covering_writer = first_read_covering_writer_;
  } else {
    collect(query, true, covering_writer, covering_writer);
  }
  const std::size_t writer_count = candidates_.size();
  std::uint64_t covering_reader = 0;
  collect(query, false, covering_writer, covering_reader);
  const std::uint64_t writer_cutoff = std::max(covering_writer, covering_reader);
  for (std::size_t i = 0; i < candidates_.size(); ++i) {
    const std::uint32_t record = candidates_[i];
    const std::uint64_t id = records_[record].id;
    if (i < writer_count) {
      if (id >= writer_cutoff) report(record, DependencyKind::kWriteAfterWrite, out);
    } else if (id >= covering_writer) {
      report(record, DependencyKind::kWriteAfterRead, out);
    }
  }
}

// ---- index maintenance --------------------------------------------------------------------

[[gnu::always_inline]] inline std::uint32_t DependencyTracker::superseded_by(
    const RegionRecord& newer) const {
  // The identical region, if indexed, is in the region's first bucket; a few newest links of
  // that bucket are enough to find it in the common case (a buffer rewritten every iteration,
  // one engine rereading a tile).
  constexpr int kLinksToLook = 4;
  std::uint32_t link = bucket_pool_[newer.bucket[0]].head[newer.is_write];
  for (int seen = 0; link != kNil && seen < kLinksToLook; ++seen) {
    const std::uint32_t record = link >> 1;
    const RegionRecord& older = records_[record];
    if ((link & 1) == 0 && (newer.is_write || older.stream == newer.stream) &&
        same_region(older, newer)) {
      return record;
    }
    link = older.bucket_next[link & 1];
  }
  return kNil;
}

[[gnu::always_inline]] inline void DependencyTracker::replace(std::uint32_t older,
                                                              std::uint32_t newer) {
  RegionRecord& old = records_[older];
  RegionRecord& rec = records_[newer];
  old.indexed = false;
  // The level's count and mask stay as they are: one record in, one out.
  Level& level = levels_[rec.group][rec.level];
  rec.level_prev = kNil;
  if (old.level_prev == kNil) {
    rec.level_next = old.level_next;
    if (rec.level_next != kNil) records_[rec.level_next].level_prev = newer;
  } else {
    records_[old.level_prev].level_next = old.level_next;
    if (old.level_next != kNil) records_[old.level_next].level_prev = old.level_prev;
    rec.level_next = level.head;
    records_[level.head].level_prev = newer;
  }
  level.head = newer;

  const auto replace_in_bucket = [&](unsigned slot) {
    const std::uint32_t link = newer << 1 | slot;
    std::uint32_t& head = bucket_pool_[rec.bucket[slot]].head[rec.is_write];
    rec.bucket_prev[slot] = kNil;
    const std::uint32_t prev = old.bucket_prev[slot];
    const std::uint32_t next = old.bucket_next[slot];
    if (prev == kNil) {
      rec.bucket_next[slot] = next;
      if (next != kNil) records_[next >> 1].bucket_prev[next & 1] = link;
    } else {
      records_[prev >> 1].bucket_next[prev & 1] = next;
      if (next != kNil) records_[next >> 1].bucket_prev[next & 1] = prev;
      rec.bucket_next[slot] = head;
      records_[head >> 1].bucket_prev[head & 1] = link;
    }
    head = link;
  };
  replace_in_bucket(0);
  if (rec.bucket_count == 2) replace_in_bucket(1);
}

[[gnu::always_inline]] inline std::uint32_t DependencyTracker::acquire_bucket(
    const BucketKey& key) {
  std::uint32_t& slot = buckets_.find_or_insert(key);
  if (slot == kNil) {
    std::uint32_t bucket;
    if (free_bucket_ != kNil) {
      bucket = free_bucket_;
      free_bucket_ = bucket_pool_[bucket].head[0];
    } else {
      bucket = static_cast<std::uint32_t>(bucket_pool_.size());
      bucket_pool_.emplace_back();
    }
    bucket_pool_[bucket] = Bucket{key, {kNil, kNil}, 0};
    slot = bucket;
  }
  return slot;
}

void DependencyTracker::unpin_bucket(std::uint32_t bucket) {
  --bucket_pool_[bucket].pins;
  // A region prepared in the add() in progress may be about to go into it.
  for (const std::uint32_t record : prepared_) {
    const std::array<std::uint32_t, 2>& used = records_[record].bucket;
    if (used[0] == bucket || used[1] == bucket) return;
  }
  release_bucket_if_empty(bucket);
}

void DependencyTracker::release_bucket_if_empty(std::uint32_t bucket) {
  Bucket& entry = bucket_pool_[bucket];
  if (entry.head[0] != kNil || entry.head[1] != kNil || entry.pins != 0) return;
  buckets_.take(entry.key);
  entry.head[0] = free_bucket_;
  free_bucket_ = bucket;
}

[[gnu::always_inline]] inline void DependencyTracker::insert_region(std::uint32_t record,
                                                                    std::uint32_t instr) {
  RegionRecord& rec = records_[record];
  rec.instr = instr;
  rec.indexed = true;

  // Instruction's region list.
  rec.next_in_instr = instrs_[instr].first_region;
  instrs_[instr].first_region = record;

  if (rec.is_write || rec.stream != kUnorderedStream) {
    const std::uint32_t older = superseded_by(rec);
    if (older != kNil) {
      replace(older, record);
      return;
    }
  }

  // Level and bucket lists are pushed at the front: ids only grow, so every list stays ordered
  // newest first, which lets collect() stop early.
  Level& level = levels_[rec.group][rec.level];
  rec.level_prev = kNil;
  rec.level_next = level.head;
  if (level.head != kNil) records_[level.head].level_prev = record;
  level.head = record;
  ++level.count;
  level_mask_[rec.group] |= 1u << rec.level;

  const auto push_to_bucket = [&](unsigned slot) {
    const std::uint32_t link = record << 1 | slot;
    std::uint32_t& head = bucket_pool_[rec.bucket[slot]].head[rec.is_write];
    rec.bucket_prev[slot] = kNil;
    rec.bucket_next[slot] = head;
    if (head != kNil) records_[head >> 1].bucket_prev[head & 1] = link;
    head = link;
  };
  push_to_bucket(0);
  if (rec.bucket_count == 2) push_to_bucket(1);
}

void DependencyTracker::remove_region(std::uint32_t record) {
  if (records_[record].indexed) unindex(record);
  records_[record].instr = kNil;
  release_shared(records_[record].shared);
  records_[record].shared = kNil;
}

void DependencyTracker::unindex(std::uint32_t record) {
  RegionRecord& rec = records_[record];
  rec.indexed = false;
  for (unsigned slot = 0; slot < rec.bucket_count; ++slot) {
    const std::uint32_t prev = rec.bucket_prev[slot];
    const std::uint32_t next = rec.bucket_next[slot];
    if (next != kNil) records_[next >> 1].bucket_prev[next & 1] = prev;
    if (prev != kNil) {
      records_[prev >> 1].bucket_next[prev & 1] = next;
    } else {
      bucket_pool_[rec.bucket[slot]].head[rec.is_write] = next;
      if (next == kNil) release_bucket_if_empty(rec.bucket[slot]);
    }
  }
  if (rec.level_prev != kNil) {
    records_[rec.level_prev].level_next = rec.level_next;
  } else {
    levels_[rec.group][rec.level].head = rec.level_next;
  }
  if (rec.level_next != kNil) records_[rec.level_next].level_prev = rec.level_prev;
  if (--levels_[rec.group][rec.level].count == 0) level_mask_[rec.group] &= ~(1u << rec.level);
}

}  // namespace trnsim::deps
