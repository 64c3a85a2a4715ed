// Dependency tracker of one NeuronCore: given instructions in program order with the memory
// regions each reads and writes, says which earlier in-flight instructions each one must wait for
// (read-after-write, write-after-read, write-after-write on overlapping bytes; spec section 7).
// Models only address-based ordering inside one core: engine program order, accumulation groups
// (ordered here anyway through their PSUM writes) and cross-core ordering belong to the dispatcher.
// Overlap is byte-exact except where region_overlap.hpp says it is conservative.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/deps/flat_u32_map.hpp"
#include "core/deps/id_map.hpp"
#include "core/deps/region_overlap.hpp"
#include "kernel/region.hpp"
#include "util/chunked_vector.hpp"

namespace trnsim::deps {

/// Why a consumer waits for a producer. Declared strongest first: when a producer is a
/// dependency for several reasons it is reported once, with the strongest (smallest) kind among
/// the reasons that were not pruned (see DependencyTracker).
enum class DependencyKind : std::uint8_t {
  kReadAfterWrite = 0,   ///< consumer reads bytes the producer writes (true data dependency)
  kWriteAfterWrite = 1,  ///< both write the same bytes
  kWriteAfterRead = 2,   ///< consumer overwrites bytes the producer reads
};

struct Dependency {
  std::uint64_t producer = 0;  ///< id of the earlier, still in-flight instruction
  DependencyKind kind = DependencyKind::kReadAfterWrite;

  bool operator==(const Dependency&) const = default;
};

/// add()'s result when the instruction waits for nothing.
inline constexpr std::uint64_t kNoProducer = ~std::uint64_t{0};

/// add()'s stream for an instruction that may complete out of program order (DMAs).
inline constexpr std::uint32_t kUnorderedStream = ~std::uint32_t{0};

/// Contract. "B depends on A" means B may not start before A has completed. An instruction is
/// in flight from add() until retire(). Precondition of the guarantee: whenever add() is called,
/// no retired instruction has a producer still in flight (true when the caller retires every
/// instruction that completed by the current time, since completion respects dependencies).
///
/// Guarantee: for every in-flight A and later B whose accesses conflict (B reads bytes A writes,
/// B writes bytes A reads or writes), B depends on A directly or through a chain of reported
/// dependencies between in-flight instructions. Direct edges implied that way are pruned when it
/// is cheap to see: for each region R of B, producers older than the newest in-flight writer that
/// covers R (for B's writes, also older writers than the newest reader that covers R) are not
/// reported. So B overwriting a buffer that A wrote and C (after A) read fully waits for C only.
/// Rewritten regions: a write W2 of exactly the region an in-flight write W1 wrote depends on
/// W1 (directly or through a chain), and everything that conflicts with W1 conflicts with W2, so
/// W1 leaves the index when W2 is added and is never reported again (a partial reader of the
/// buffer waits for W2 alone). This keeps a buffer rewritten every iteration (a DMA target far
/// ahead of its consumers) from filling the index with writers.
///
/// Cost per add(): for each region, one lookup in a small cache of recently seen regions (on a
/// miss, normalization and a hash lookup of its buckets), one or a few probes per other occupied
/// index level, plus a visit of each record in the walked buckets that is newer than the newest
/// covering writer (lists are kept newest first, so the walk stops there). retire():
/// O(regions). Memory: O(peak in-flight regions) plus the fixed-size region cache; no allocation
/// once the pools have reached that peak (the `out` vector is the caller's: reuse it).
/// bench/deps_bench.cpp measures it.
///
/// In-order streams. An instruction added with a `stream` (e.g. its engine) promises that the
/// stream's instructions read their inputs in program order: a later one starts after an
/// earlier one ended. Then of the in-flight reads of one identical region by one stream only the
/// newest is kept in the index: a writer that waits for it waits, through the stream's order,
/// for the older readers too. This keeps a tile read by every instruction of an engine (weights,
/// constants) from filling the index with readers.
class DependencyTracker {
 public:
  DependencyTracker();

  /// Registers instruction `id` and appends to `out` the in-flight instructions it must wait
  /// for, each producer once. The order is deterministic (a function of the calls so far) and
  /// callers may depend on it: the NeuronCore attributes a wait to the first producer among
  /// equally late ones. Empty regions are ignored.
  /// @return the largest producer id appended, or kNoProducer when none. Waiting for that one
  ///         alone is enough only if producers complete in id order.
  /// @throws std::invalid_argument if `id` is not greater than every id added before.
  std::uint64_t add(std::uint64_t id, std::span<const kernel::Region> reads,
                    std::span<const kernel::Region> writes, std::vector<Dependency>& out,
                    std::uint32_t stream = kUnorderedStream);

  /// Instruction `id` completed: it orders nothing any more and its state is freed.
  /// @throws std::invalid_argument if `id` is not in flight.
  void retire(std::uint64_t id);

  std::size_t in_flight() const { return id_to_instr_.size(); }
  bool is_in_flight(std::uint64_t id) const { return id_to_instr_.find(id) != kNil; }

  /// Bytes held by the tracker's containers (capacity, not size): bounded by the peak number of
  /// in-flight regions, independent of how many instructions went through.
  std::size_t footprint_bytes() const;

 private:
  /// Index geometry: level l hashes regions into buckets of 2^(kBaseShift + l * kLevelStep)
  /// bytes; each region lives at the finest level whose bucket is at least as long as its byte
  /// extent, so it occupies one or two buckets.
  static constexpr unsigned kBaseShift = 6;
  static constexpr unsigned kLevelStep = 2;
  static constexpr unsigned kLevels = 29;  // kBaseShift + 28 * kLevelStep == 62
  /// Index groups: memory kind x {read, write}.
  static constexpr unsigned kGroups = 6;

  /// A bucket holds the readers and the writers of one memory kind that the index puts in it.
  struct BucketKey {
    std::uint64_t tag = 0;  ///< space << 32 | memory << 8 | level
    std::uint64_t index = 0;
    bool operator==(const BucketKey&) const = default;
  };
  struct BucketKeyHash {
    std::uint64_t operator()(const BucketKey& key) const {
      return key.index ^ (key.tag * 0xC2B2AE3D27D4EB4Full);
    }
  };
  /// A pooled bucket: its index stays valid while the bucket holds a record or is pinned by a
  /// region cache entry. Links are (record << 1 | the record's bucket slot); lists are newest
  /// first.
  struct Bucket {
    BucketKey key;
    std::array<std::uint32_t, 2> head{kNil, kNil};  ///< [is_write]; head[0]: next free bucket
    std::uint32_t pins = 0;                         ///< region cache entries that hold it
  };

  /// The normal form of one region cache fill, shared by the records made from it and the
  /// cache entry while it holds the fill; freed when none of them does any more. Two records
  /// with the same SharedRegion are the same region, which settles most same_region() tests
  /// with one comparison.
  struct SharedRegion {
    NormalRegion region;
    std::uint32_t references = 0;  ///< next free SharedRegion when free
  };

  /// One region of one in-flight instruction: one cache line.
  struct RegionRecord {
    std::uint64_t id = 0;         ///< owning instruction's id
    std::uint32_t shared = kNil;  ///< its SharedRegion
    std::uint32_t instr = kNil;   ///< owning InstrRecord
    std::uint32_t stream = kUnorderedStream;
    std::uint32_t next_in_instr = kNil;  ///< next region of the instruction; free-list link
    std::uint32_t level_prev = kNil;
    std::uint32_t level_next = kNil;
    std::array<std::uint32_t, 2> bucket{kNil, kNil};  ///< pooled buckets it is in
    std::array<std::uint32_t, 2> bucket_prev{kNil, kNil};
    std::array<std::uint32_t, 2> bucket_next{kNil, kNil};
    std::uint8_t bucket_count = 0;
    std::uint8_t level = 0;
    std::uint8_t group = 0;
    bool is_write = false;
    bool indexed = false;  ///< in the level and bucket lists (not superseded by a newer record)
  };
  static_assert(sizeof(RegionRecord) <= 64, "a region record fits a cache line");

  /// The indexed records of one group at one level.
  struct Level {
    std::uint32_t head = kNil;  ///< list of all of them, newest first
    std::uint32_t count = 0;
  };

  /// Region cache: kernels name a few dozen distinct regions over and over (tiles, PSUM banks),
  /// so the normal form and index placement of a recently seen kernel::Region are kept and reused
  /// instead of renormalizing and rehashing it. Direct-mapped on a hash of the raw Region, a
  /// fixed number of entries (memory stays bounded). An entry pins its buckets so the handles stay
  /// valid while the buckets are empty.
  struct RegionCacheEntry {
    kernel::Region raw;
    std::uint32_t shared = kNil;  ///< the fill's SharedRegion (one reference); kNil: empty entry
    std::array<std::uint32_t, 2> bucket{kNil, kNil};
    std::uint8_t bucket_count = 0;
    std::uint8_t level = 0;
  };
  /// 256 entries (32 KiB): several times the distinct regions of the example kernels.
  static constexpr unsigned kRegionCacheBits = 8;

  struct InstrRecord {
    std::uint64_t id = 0;
    std::uint64_t add_stamp = 0;        ///< last add() that reported it
    std::uint32_t out_index = 0;        ///< its position in `out` during that add()
    std::uint32_t first_region = kNil;  ///< region list; next free InstrRecord when free
  };

  static unsigned group_of(kernel::MemoryKind memory, bool is_write) {
    return static_cast<unsigned>(memory) * 2 + (is_write ? 1 : 0);
  }
  static unsigned shift_of(unsigned level) { return kBaseShift + level * kLevelStep; }
  static unsigned level_for_extent(std::uint64_t bytes);
  static BucketKey bucket_key(const NormalRegion& region, unsigned level, std::uint64_t index) {
    return {std::uint64_t{region.space} << 32 | static_cast<unsigned>(region.memory) << 8 | level,
            index};
  }

  /// A new record of instruction `id` for non-empty `region`, not indexed yet, with its normal
  /// form, level and buckets (from the region cache, so its queries walk them without hashing).
  /// The record is appended to prepared_.
  std::uint32_t prepare(const kernel::Region& region, bool is_write, std::uint64_t id,
                        std::uint32_t stream);
  /// Makes `entry` the region cache entry of non-empty `region`: normalizes it, acquires and
  /// pins its buckets, and unpins those of the region it held.
  [[gnu::noinline]] void fill(RegionCacheEntry& entry, const kernel::Region& region);
  /// The pooled bucket of `key`, created empty if absent.
  std::uint32_t acquire_bucket(const BucketKey& key);
  /// Drops a region cache entry's pin of `bucket`, freeing the bucket if nothing uses it.
  void unpin_bucket(std::uint32_t bucket);
  /// Frees bucket `bucket` if it holds no record and no cache entry pins it.
  void release_bucket_if_empty(std::uint32_t bucket);
  const NormalRegion& region_of(const RegionRecord& record) const {
    return shared_regions_[record.shared].region;
  }
  /// Whether records `a` and `b` have the same normal form (the same bytes).
  bool same_region(const RegionRecord& a, const RegionRecord& b) const {
    return a.shared == b.shared || deps::same_region(region_of(a), region_of(b));
  }
  /// A free SharedRegion with one reference.
  std::uint32_t acquire_shared();
  /// Drops one reference of SharedRegion `shared`, freeing it with the last.
  void release_shared(std::uint32_t shared);

  /// Appends to candidates_ the readers (is_write false) or writers of the query's memory that
  /// overlap it, in ascending level order, each level in its list or bucket order; except
  /// records with id < stop_below, which are pruned anyway: every list is ordered newest first,
  /// so the walk of a list ends there. Raises newest_covering to the id of any record covering
  /// the query (the caller may pass the same variable for both to stop at the newest covering
  /// record).
  void collect(const RegionRecord& query, bool is_write, const std::uint64_t& stop_below,
               std::uint64_t& newest_covering);
  /// Walks one bucket list from `link` (see collect()). `skip_second_links`: the records' first
  /// buckets were walked already, so links through a second bucket are not visited again.
  void walk_bucket(std::uint32_t link, bool skip_second_links, const RegionRecord& query,
                   const std::uint64_t& stop_below, std::uint64_t& newest_covering);
  void visit(std::uint32_t record, const RegionRecord& query, std::uint64_t& newest_covering);
  void report(std::uint32_t record, DependencyKind kind, std::vector<Dependency>& out);
  /// Reports the writers `query` reads after; returns the newest writer covering it (0: none).
  std::uint64_t query_read(const RegionRecord& query, std::vector<Dependency>& out);
  void query_write(const RegionRecord& query, std::vector<Dependency>& out);

  /// Indexes prepared `record` as a region of InstrRecord `instr`, in place of the record it
  /// supersedes if any (see superseded_by()).
  void insert_region(std::uint32_t record, std::uint32_t instr);
  /// The indexed record that prepared `newer` supersedes, or kNil: the write of the same region
  /// if `newer` is a write, the read of the same region by the same in-order stream if it is
  /// such a read; only if that record is among the few newest links of `newer`'s first bucket
  /// (the links that will follow `newer` there).
  std::uint32_t superseded_by(const RegionRecord& newer) const;
  /// Indexes prepared `newer` and drops `older` (superseded_by(newer)) from the index. Both are
  /// in the same level and buckets, so `newer` takes over `older`'s place in each list where
  /// `older` is the head (the newest), and goes to the front where it is not.
  void replace(std::uint32_t older, std::uint32_t newer);
  void unindex(std::uint32_t record);
  void remove_region(std::uint32_t record);

  /// Chunked: a core holds a few thousand in flight, and a doubling vector's slack and copies
  /// were a fifth of its memory.
  util::ChunkedVector<RegionRecord> records_;
  std::uint32_t free_record_ = kNil;
  std::vector<InstrRecord> instrs_;
  std::uint32_t free_instr_ = kNil;
  IdMap id_to_instr_;
  FlatU32Map<BucketKey, BucketKeyHash> buckets_;  ///< key -> pooled Bucket
  std::vector<Bucket> bucket_pool_;
  std::uint32_t free_bucket_ = kNil;
  std::vector<RegionCacheEntry> region_cache_;  ///< 2^kRegionCacheBits entries
  std::vector<SharedRegion> shared_regions_;
  std::uint32_t free_shared_ = kNil;

  std::array<std::array<Level, kLevels>, kGroups> levels_{};
  std::array<std::uint32_t, kGroups> level_mask_{};  ///< bit l set: level l is not empty

  std::vector<std::uint32_t> candidates_;  ///< scratch of one query
  std::vector<std::uint32_t> prepared_;    ///< scratch of one add(): its non-empty regions
  /// The first region the add() in progress reads (its SharedRegion, kNil before add() notes
  /// it) and the newest writer covering it, for query_write(). The first read is the one that
  /// matters: an accumulating matmul reads its destination first.
  std::uint32_t first_read_shared_ = kNil;
  std::uint64_t first_read_covering_writer_ = 0;
  std::uint64_t add_stamp_ = 0;
  std::uint64_t last_id_ = 0;
  bool any_added_ = false;
  std::uint64_t newest_ = kNoProducer;  ///< of the add() in progress
};

}  // namespace trnsim::deps
