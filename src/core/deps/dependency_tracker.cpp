#include "core/deps/dependency_tracker.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>

namespace trnsim::deps {

DependencyTracker::DependencyTracker() {
  for (auto& heads : level_head_) heads.fill(kNil);
  candidates_.reserve(64);
}

unsigned DependencyTracker::level_for_extent(std::uint64_t bytes) {
  // Smallest s with bytes <= 2^s, then the first level whose shift reaches s.
  const unsigned log2_ceil = bytes <= 1 ? 0 : static_cast<unsigned>(std::bit_width(bytes - 1));
  if (log2_ceil <= kBaseShift) return 0;
  return std::min(kLevels - 1, (log2_ceil - kBaseShift + kLevelStep - 1) / kLevelStep);
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

  normalized_.clear();
  for (const kernel::Region& region : reads) {
    PendingRegion& pending = normalized_.emplace_back();
    if (normalize(region, pending.region)) {
      pending.level = level_for_extent(pending.region.bytes.end - pending.region.bytes.begin);
      query_read(pending, out);
    } else {
      normalized_.pop_back();
    }
  }
  const std::size_t read_count = normalized_.size();
  for (const kernel::Region& region : writes) {
    PendingRegion& pending = normalized_.emplace_back();
    if (normalize(region, pending.region)) {
      pending.level = level_for_extent(pending.region.bytes.end - pending.region.bytes.begin);
      query_write(pending, out);
    } else {
      normalized_.pop_back();
    }
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
  for (std::size_t i = 0; i < normalized_.size(); ++i) {
    insert_region(normalized_[i], i >= read_count, instr, stream);
  }
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
         buckets_.footprint_bytes() + candidates_.capacity() * sizeof(std::uint32_t) +
         normalized_.capacity() * sizeof(PendingRegion);
}

// ---- queries ------------------------------------------------------------------------------

void DependencyTracker::visit(std::uint32_t record, const NormalRegion& query,
                              std::uint64_t& newest_covering) {
  const RegionRecord& rec = records_[record];
  if (!regions_overlap(rec.region, query)) return;
  candidates_.push_back(record);
  if (rec.id > newest_covering && region_covers(rec.region, query)) newest_covering = rec.id;
}

void DependencyTracker::collect_level(const NormalRegion& query, unsigned group, unsigned level,
                                      const std::uint64_t& stop_below,
                                      std::uint64_t& newest_covering) {
  const std::uint32_t head = level_head_[group][level];
  if (records_[head].id < stop_below) return;  // the level holds nothing newer
  const unsigned shift = shift_of(level);
  const std::uint64_t first = query.bytes.begin >> shift;
  const std::uint64_t last = (query.bytes.end - 1) >> shift;
  const std::uint64_t buckets = last - first + 1;
  const std::uint32_t count = level_count_[group][level];
  if (buckets * 2 >= count) {
    // Fewer records at this level than buckets to probe: scan them all.
    for (std::uint32_t record = head; record != kNil && records_[record].id >= stop_below;
         record = records_[record].level_next) {
      visit(record, query, newest_covering);
    }
    return;
  }
  for (std::uint64_t index = first; index <= last; ++index) {
    std::uint32_t link = buckets_.find(bucket_key(query.space, group, level, index));
    while (link != kNil) {
      const std::uint32_t record = link >> 1;
      if (records_[record].id < stop_below) break;
      // A record's second bucket link, when its first bucket was probed too, was seen there.
      if ((link & 1) == 0 || index == first) visit(record, query, newest_covering);
      link = records_[record].bucket_next[link & 1];
    }
  }
}

void DependencyTracker::collect(const NormalRegion& query, unsigned group,
                                const std::uint64_t& stop_below, std::uint64_t& newest_covering) {
  for (std::uint32_t mask = level_mask_[group]; mask != 0; mask &= mask - 1) {
    collect_level(query, group, static_cast<unsigned>(std::countr_zero(mask)), stop_below,
                  newest_covering);
  }
}

void DependencyTracker::report(std::uint32_t record, DependencyKind kind,
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

void DependencyTracker::query_read(const PendingRegion& query, std::vector<Dependency>& out) {
  // Writers older than the newest writer covering the query are ordered before it (WAW).
  candidates_.clear();
  std::uint64_t covering_writer = 0;
  collect(query.region, group_of(query.region.memory, true), covering_writer, covering_writer);
  for (const std::uint32_t record : candidates_) {
    if (records_[record].id >= covering_writer) {
      report(record, DependencyKind::kReadAfterWrite, out);
    }
  }
}

void DependencyTracker::query_write(const PendingRegion& query, std::vector<Dependency>& out) {
  // A covering writer W orders every older overlapping writer (WAW) and reader (WAR) before it;
  // a covering reader R orders every older overlapping writer before it (RAW).
  candidates_.clear();
  std::uint64_t covering_writer = 0;
  collect(query.region, group_of(query.region.memory, true), covering_writer, covering_writer);
  const std::size_t writer_count = candidates_.size();
  std::uint64_t covering_reader = 0;
  collect(query.region, group_of(query.region.memory, false), covering_writer, covering_reader);
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

namespace {
bool same_region(const NormalRegion& a, const NormalRegion& b) {
  return a.memory == b.memory && a.space == b.space && a.partition_begin == b.partition_begin &&
         a.partition_end == b.partition_end && a.bytes.begin == b.bytes.begin &&
         a.bytes.end == b.bytes.end && a.bytes.run == b.bytes.run &&
         a.bytes.stride == b.bytes.stride && a.bytes.count == b.bytes.count;
}
}  // namespace

void DependencyTracker::supersede_read(const RegionRecord& newer) {
  // The identical read, if indexed, is in the region's first bucket; a few newest links of
  // that bucket are enough to find it in the common case (one engine rereading a tile).
  constexpr int kLinksToLook = 4;
  std::uint32_t link =
      buckets_.find(bucket_key(newer.region.space, newer.group, newer.level, newer.first_bucket));
  for (int seen = 0; link != kNil && seen < kLinksToLook; ++seen) {
    const std::uint32_t record = link >> 1;
    const RegionRecord& older = records_[record];
    if ((link & 1) == 0 && older.stream == newer.stream &&
        same_region(older.region, newer.region)) {
      unindex(record);
      return;
    }
    link = older.bucket_next[link & 1];
  }
}

std::uint32_t DependencyTracker::insert_region(const PendingRegion& pending, bool is_write,
                                               std::uint32_t instr, std::uint32_t stream) {
  const NormalRegion& region = pending.region;
  std::uint32_t record;
  if (free_record_ != kNil) {
    record = free_record_;
    free_record_ = records_[record].next_in_instr;
  } else {
    record = static_cast<std::uint32_t>(records_.size());
    records_.emplace_back();
  }
  RegionRecord& rec = records_[record];
  rec.region = region;
  rec.instr = instr;
  rec.id = instrs_[instr].id;
  rec.is_write = is_write;
  rec.group = static_cast<std::uint8_t>(group_of(region.memory, is_write));
  rec.level = static_cast<std::uint8_t>(pending.level);
  const unsigned shift = shift_of(rec.level);
  rec.first_bucket = region.bytes.begin >> shift;
  rec.bucket_count =
      static_cast<std::uint8_t>(((region.bytes.end - 1) >> shift) - rec.first_bucket + 1);
  rec.stream = stream;
  rec.indexed = true;
  if (!is_write && stream != kUnorderedStream) supersede_read(rec);

  // Instruction's region list.
  rec.next_in_instr = instrs_[instr].first_region;
  instrs_[instr].first_region = record;

  // Level and bucket lists are pushed at the front: ids only grow, so every list stays ordered
  // newest first, which lets collect() stop early.
  std::uint32_t& head = level_head_[rec.group][rec.level];
  rec.level_prev = kNil;
  rec.level_next = head;
  if (head != kNil) records_[head].level_prev = record;
  head = record;
  ++level_count_[rec.group][rec.level];
  level_mask_[rec.group] |= 1u << rec.level;

  for (unsigned slot = 0; slot < rec.bucket_count; ++slot) {
    link_bucket(record, slot,
                bucket_key(region.space, rec.group, rec.level, rec.first_bucket + slot));
  }
  return record;
}

void DependencyTracker::remove_region(std::uint32_t record) {
  if (records_[record].indexed) unindex(record);
  records_[record].instr = kNil;
}

void DependencyTracker::unindex(std::uint32_t record) {
  RegionRecord& rec = records_[record];
  rec.indexed = false;
  for (unsigned slot = 0; slot < rec.bucket_count; ++slot) {
    unlink_bucket(record, slot,
                  bucket_key(rec.region.space, rec.group, rec.level, rec.first_bucket + slot));
  }
  if (rec.level_prev != kNil) {
    records_[rec.level_prev].level_next = rec.level_next;
  } else {
    level_head_[rec.group][rec.level] = rec.level_next;
  }
  if (rec.level_next != kNil) records_[rec.level_next].level_prev = rec.level_prev;
  if (--level_count_[rec.group][rec.level] == 0) level_mask_[rec.group] &= ~(1u << rec.level);
}

void DependencyTracker::link_bucket(std::uint32_t record, unsigned slot, const BucketKey& key) {
  const std::uint32_t link = record << 1 | slot;
  std::uint32_t& head = buckets_.find_or_insert(key);
  RegionRecord& rec = records_[record];
  rec.bucket_prev[slot] = kNil;
  rec.bucket_next[slot] = head;
  if (head != kNil) records_[head >> 1].bucket_prev[head & 1] = link;
  head = link;
}

void DependencyTracker::unlink_bucket(std::uint32_t record, unsigned slot, const BucketKey& key) {
  const RegionRecord& rec = records_[record];
  const std::uint32_t prev = rec.bucket_prev[slot];
  const std::uint32_t next = rec.bucket_next[slot];
  if (next != kNil) records_[next >> 1].bucket_prev[next & 1] = prev;
  if (prev != kNil) {
    records_[prev >> 1].bucket_next[prev & 1] = next;
  } else if (next != kNil) {
    buckets_.set(key, next);
  } else {
    buckets_.take(key);
  }
}

}  // namespace trnsim::deps
