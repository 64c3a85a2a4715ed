// DependencyTracker on hand-built instruction streams; every expected list is derived in the
// comments from which bytes each instruction touches.
#include "core/deps/dependency_tracker.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>
#include <stdexcept>
#include <vector>

#include "test_regions.hpp"

namespace trnsim::deps {

void PrintTo(const Dependency& dep, std::ostream* os) {
  static const char* const kNames[] = {"RAW", "WAW", "WAR"};
  *os << "{" << dep.producer << " " << kNames[static_cast<int>(dep.kind)] << "}";
}

namespace {

using test_regions::hbm;
using test_regions::psum;
using test_regions::sbuf;
using Regions = std::vector<kernel::Region>;
constexpr DependencyKind kRaw = DependencyKind::kReadAfterWrite;
constexpr DependencyKind kWar = DependencyKind::kWriteAfterRead;
constexpr DependencyKind kWaw = DependencyKind::kWriteAfterWrite;
using Deps = std::vector<Dependency>;

/// Adds an instruction and returns its dependencies sorted by producer id.
Deps add(DependencyTracker& tracker, std::uint64_t id, const Regions& reads,
         const Regions& writes) {
  Deps out;
  tracker.add(id, reads, writes, out);
  std::sort(out.begin(), out.end(),
            [](const Dependency& a, const Dependency& b) { return a.producer < b.producer; });
  return out;
}

TEST(DependencyTracker, ReadAfterWrite) {
  DependencyTracker tracker;
  EXPECT_EQ(add(tracker, 0, {}, {sbuf(0, 128, 0, 1024)}), Deps{});
  // [512,1024) lies inside what 0 wrote.
  EXPECT_EQ(add(tracker, 1, {sbuf(0, 128, 512, 512)}, {}), (Deps{{0, kRaw}}));
}

TEST(DependencyTracker, WriteAfterRead) {
  DependencyTracker tracker;
  EXPECT_EQ(add(tracker, 0, {sbuf(0, 128, 0, 1024)}, {}), Deps{});
  EXPECT_EQ(add(tracker, 1, {}, {sbuf(0, 128, 1000, 100)}), (Deps{{0, kWar}}));
}

TEST(DependencyTracker, WriteAfterWrite) {
  DependencyTracker tracker;
  EXPECT_EQ(add(tracker, 0, {}, {hbm(4096, 4096)}), Deps{});
  EXPECT_EQ(add(tracker, 1, {}, {hbm(0, 4097)}), (Deps{{0, kWaw}}));  // shares byte 4096
}

TEST(DependencyTracker, ReadsDoNotOrderReads) {
  DependencyTracker tracker;
  EXPECT_EQ(add(tracker, 0, {sbuf(0, 128, 0, 1024)}, {}), Deps{});
  EXPECT_EQ(add(tracker, 1, {sbuf(0, 128, 0, 1024)}, {}), Deps{});
}

TEST(DependencyTracker, DisjointPartitionsBytesMemoriesAndSpacesAreIndependent) {
  DependencyTracker tracker;
  add(tracker, 0, {}, {sbuf(0, 64, 0, 1024)});
  EXPECT_EQ(add(tracker, 1, {sbuf(64, 128, 0, 1024)}, {}), Deps{});             // partitions
  EXPECT_EQ(add(tracker, 2, {sbuf(0, 64, 1024, 1024)}, {}), Deps{});            // bytes
  EXPECT_EQ(add(tracker, 3, {psum(0, 64, 0, 1024)}, {}), Deps{});               // memory
  EXPECT_EQ(add(tracker, 4, {sbuf(0, 64, 0, 1024, 0, 1, 1)}, {}), Deps{});      // other core
  EXPECT_EQ(add(tracker, 5, {hbm(0, 1024)}, {hbm(0, 1024, 0, 1, 1)}), Deps{});  // HBM 0 vs 1
  EXPECT_EQ(add(tracker, 6, {}, {hbm(0, 1024, 0, 1, 1)}), (Deps{{5, kWaw}}));
}

TEST(DependencyTracker, InterleavedHbmTilesAreIndependent) {
  // Tiles of A[512, 512] bf16 (row pitch 1024 bytes): tile (k, m) is 128 rows of 256 bytes
  // from k * 128 * 1024 + m * 256, stride 1024. Tiles m = 0 and m = 1 interleave without sharing.
  auto tile = [](std::uint64_t k, std::uint64_t m) {
    return hbm(k * 128 * 1024 + m * 256, 256, 1024, 128);
  };
  DependencyTracker tracker;
  add(tracker, 0, {}, {tile(0, 0)});
  EXPECT_EQ(add(tracker, 1, {tile(0, 1)}, {}), Deps{});
  EXPECT_EQ(add(tracker, 2, {tile(1, 0)}, {}), Deps{});  // rows 128..255: after tile(0, 0)
  EXPECT_EQ(add(tracker, 3, {tile(0, 0)}, {}), (Deps{{0, kRaw}}));
  // One row of tile (0, 0) read as a contiguous range: row 5 is [5120, 5376).
  EXPECT_EQ(add(tracker, 4, {hbm(5120, 256)}, {}), (Deps{{0, kRaw}}));
  // The gap between rows 5 and 6 of tile (0, 0): [5376, 6144) belongs to tiles m = 1, 2, 3.
  EXPECT_EQ(add(tracker, 5, {hbm(5376, 768)}, {}), Deps{});
}

TEST(DependencyTracker, StridedPatternsDependOnlyWhenTheyShareBytes) {
  DependencyTracker tracker;
  // Even 64-byte halves of each 128-byte period, 16 periods.
  add(tracker, 0, {}, {sbuf(0, 128, 0, 64, 128, 16)});
  EXPECT_EQ(add(tracker, 1, {sbuf(0, 128, 64, 64, 128, 16)}, {}), Deps{});  // odd halves
  EXPECT_EQ(add(tracker, 2, {sbuf(0, 128, 32, 64, 128, 16)}, {}), (Deps{{0, kRaw}}));
  // Stride 64: the first run [32,48) lies in the even half [0,64).
  EXPECT_EQ(add(tracker, 3, {sbuf(0, 128, 32, 16, 64, 32)}, {}), (Deps{{0, kRaw}}));
  // Runs [64,96) mod 128 (same stride) and [64,96) mod 256 (stride 256): in the odd halves.
  EXPECT_EQ(add(tracker, 4, {sbuf(0, 128, 64, 32, 128, 16)}, {}), Deps{});
  EXPECT_EQ(add(tracker, 5, {sbuf(0, 128, 64, 32, 256, 8)}, {}), Deps{});
}

TEST(DependencyTracker, BoundingBoxFallbackIsConservative) {
  DependencyTracker tracker;
  add(tracker, 0, {}, {sbuf(0, 128, 0, 64, 128, 16)});
  // A producer that could not express odd halves emits their bounding box [64, 2048): the
  // tracker must (and does) order it after 0, though the real bytes are disjoint.
  EXPECT_EQ(add(tracker, 1, {sbuf(0, 128, 64, 1984)}, {}), (Deps{{0, kRaw}}));
  // Different strides with more than 64 runs each in the common window: assumed to overlap.
  // Writer: [0,32) mod 128 x 1000; reader: [32,64) mod 64 x 2000: truly disjoint.
  add(tracker, 2, {}, {sbuf(0, 1, 1 << 20, 32, 128, 1000)});
  EXPECT_EQ(add(tracker, 3, {sbuf(0, 1, (1 << 20) + 32, 32, 64, 2000)}, {}), (Deps{{2, kRaw}}));
}

TEST(DependencyTracker, RetireRemovesOrdering) {
  DependencyTracker tracker;
  add(tracker, 0, {}, {sbuf(0, 128, 0, 1024)});
  add(tracker, 1, {sbuf(0, 128, 0, 1024)}, {});
  EXPECT_EQ(tracker.in_flight(), 2u);
  tracker.retire(0);
  EXPECT_FALSE(tracker.is_in_flight(0));
  EXPECT_EQ(add(tracker, 2, {sbuf(0, 128, 0, 1024)}, {}), Deps{});  // writer 0 is done
  EXPECT_EQ(add(tracker, 3, {}, {sbuf(0, 128, 0, 8)}), (Deps{{1, kWar}, {2, kWar}}));
  tracker.retire(1);
  tracker.retire(2);
  tracker.retire(3);
  EXPECT_EQ(tracker.in_flight(), 0u);
  EXPECT_EQ(add(tracker, 4, {sbuf(0, 128, 0, 1024)}, {sbuf(0, 128, 0, 1024)}), Deps{});
}

TEST(DependencyTracker, OneEntryPerProducerWithTheStrongestKind) {
  // An accumulating matmul reads and writes its PSUM tile: against the previous matmul that is
  // both RAW and WAW, reported once as RAW.
  DependencyTracker tracker;
  const kernel::Region acc = psum(0, 128, 0, 2048);
  EXPECT_EQ(add(tracker, 0, {sbuf(0, 128, 0, 1024)}, {acc}), Deps{});
  EXPECT_EQ(add(tracker, 1, {sbuf(0, 128, 1024, 1024), acc}, {acc}), (Deps{{0, kRaw}}));
  // Matmul 2 again: 1 covers the tile and was ordered after 0, so only 1 is reported.
  EXPECT_EQ(add(tracker, 2, {sbuf(0, 128, 2048, 1024), acc}, {acc}), (Deps{{1, kRaw}}));
  // 3 reads and overwrites the tile: 2 is its RAW, WAW and WAR producer, reported once as RAW.
  EXPECT_EQ(add(tracker, 3, {acc}, {acc}), (Deps{{2, kRaw}}));
}

TEST(DependencyTracker, PartialOverlapsKeepEveryWriter) {
  DependencyTracker tracker;
  add(tracker, 0, {}, {sbuf(0, 128, 0, 512)});
  add(tracker, 1, {}, {sbuf(0, 128, 512, 512)});
  // Bytes [0,512) come from 0 and [512,1024) from 1: both are needed.
  EXPECT_EQ(add(tracker, 2, {sbuf(0, 128, 0, 1024)}, {}), (Deps{{0, kRaw}, {1, kRaw}}));
  // Writer 3 over [0,1024): reader 2 covers it and already waits for 0 and 1.
  EXPECT_EQ(add(tracker, 3, {}, {sbuf(0, 128, 0, 1024)}), (Deps{{2, kWar}}));
  // Reader 5 over [0,1024) needs 4 for [256,512) and 3, the newest covering writer, for the
  // rest; 0 and 1 are older than 3 and pruned.
  add(tracker, 4, {}, {sbuf(0, 128, 256, 256)});
  EXPECT_EQ(add(tracker, 5, {sbuf(0, 128, 0, 1024)}, {}), (Deps{{3, kRaw}, {4, kRaw}}));
}

TEST(DependencyTracker, DoubleBufferedVectorAddGivesWarChains) {
  // The vector_add example of spec section 8 with F = 2048 float32: each SBUF buffer holds
  // 2048 * 4 = 8192 bytes per partition; a_sb, b_sb, c_sb are [2, 128, F] at 0, 16384, 32768,
  // buffer t % 2 at + (t % 2) * 8192. HBM tiles are 128 * 8192 = 1 MiB. Per t, ids 4t..4t+3:
  //   4t   dma   a[t] -> a_sb[t%2]
  //   4t+1 dma   b[t] -> b_sb[t%2]
  //   4t+2 add   a_sb[t%2] + b_sb[t%2] -> c_sb[t%2]
  //   4t+3 dma   c_sb[t%2] -> out[t]
  // Nothing retires. For t >= 2 the loads overwrite the buffer that add 4(t-2)+2 read (WAR); the
  // load 4(t-2) that last wrote it is older than that covering reader, so it is pruned.
  constexpr std::uint64_t kTile = 1 << 20;
  constexpr std::uint64_t kBuffer = 8192;
  auto on_chip = [&](std::uint64_t base, std::uint64_t t) {
    return sbuf(0, 128, base + (t % 2) * kBuffer, kBuffer);
  };
  DependencyTracker tracker;
  for (std::uint64_t t = 0; t < 6; ++t) {
    const std::uint64_t id = 4 * t;
    const Deps load_a = add(tracker, id, {hbm(0 * 8 * kTile + t * kTile, kTile)}, {on_chip(0, t)});
    const Deps load_b =
        add(tracker, id + 1, {hbm(1 * 8 * kTile + t * kTile, kTile)}, {on_chip(16384, t)});
    const Deps vadd = add(tracker, id + 2, {on_chip(0, t), on_chip(16384, t)}, {on_chip(32768, t)});
    const Deps store =
        add(tracker, id + 3, {on_chip(32768, t)}, {hbm(2 * 8 * kTile + t * kTile, kTile)});
    if (t < 2) {
      EXPECT_EQ(load_a, Deps{}) << t;
      EXPECT_EQ(load_b, Deps{}) << t;
      EXPECT_EQ(vadd, (Deps{{id, kRaw}, {id + 1, kRaw}})) << t;
    } else {
      EXPECT_EQ(load_a, (Deps{{id - 6, kWar}})) << t;
      EXPECT_EQ(load_b, (Deps{{id - 6, kWar}})) << t;
      // c_sb[t%2] was last read by store 4(t-2)+3 = id - 5.
      EXPECT_EQ(vadd, (Deps{{id - 5, kWar}, {id, kRaw}, {id + 1, kRaw}})) << t;
    }
    EXPECT_EQ(store, (Deps{{id + 2, kRaw}})) << t;
  }
}

Deps add_on_stream(DependencyTracker& tracker, std::uint64_t id, const Regions& reads,
                   const Regions& writes, std::uint32_t stream) {
  Deps out;
  tracker.add(id, reads, writes, out, stream);
  std::sort(out.begin(), out.end(),
            [](const Dependency& a, const Dependency& b) { return a.producer < b.producer; });
  return out;
}

TEST(DependencyTracker, InOrderStreamKeepsOnlyItsNewestReadOfARegion) {
  // 0 and 1 read the same tile on stream 7 (one engine, in order), 2 reads it on stream 8 and 3
  // on no stream (a DMA). A write to it waits for 1 (which waits, by stream order, for 0), 2
  // and 3; 0 is no longer reported.
  DependencyTracker tracker;
  const kernel::Region tile = sbuf(0, 128, 0, 1024);
  EXPECT_EQ(add_on_stream(tracker, 0, {tile}, {}, 7), Deps{});
  EXPECT_EQ(add_on_stream(tracker, 1, {tile}, {}, 7), Deps{});
  EXPECT_EQ(add_on_stream(tracker, 2, {tile}, {}, 8), Deps{});
  EXPECT_EQ(add(tracker, 3, {tile}, {}), Deps{});
  EXPECT_EQ(add(tracker, 4, {}, {sbuf(0, 128, 512, 64)}), (Deps{{1, kWar}, {2, kWar}, {3, kWar}}));
  // A different region read on the stream does not replace the tile's reader: 5 reads the
  // first half ([0, 512), which 4 does not write), and 6's write of that half waits for 1, 2
  // and 3 (the tile) and 5.
  EXPECT_EQ(add_on_stream(tracker, 5, {sbuf(0, 128, 0, 512)}, {}, 7), Deps{});
  EXPECT_EQ(add(tracker, 6, {}, {sbuf(0, 128, 0, 512)}),
            (Deps{{1, kWar}, {2, kWar}, {3, kWar}, {5, kWar}}));
  // Retiring the superseded reader (0) and then 1 leaves the other readers: 7 writes
  // [900, 908), inside the tile only.
  tracker.retire(0);
  tracker.retire(1);
  EXPECT_EQ(add(tracker, 7, {}, {sbuf(0, 128, 900, 8)}), (Deps{{2, kWar}, {3, kWar}}));
}

TEST(DependencyTracker, ReturnsTheNewestProducer) {
  DependencyTracker tracker;
  std::vector<Dependency> out;
  const Regions none;
  const Regions x = {sbuf(0, 128, 0, 64)};
  const Regions y = {sbuf(0, 128, 64, 64)};
  EXPECT_EQ(tracker.add(10, none, x, out), kNoProducer);
  EXPECT_EQ(tracker.add(11, none, y, out), kNoProducer);
  const Regions both = {sbuf(0, 128, 0, 128)};
  EXPECT_EQ(tracker.add(12, both, none, out), 11u);
  EXPECT_EQ(out.size(), 2u);  // appended, never cleared
}

TEST(DependencyTracker, EmptyRegionsAreIgnored) {
  DependencyTracker tracker;
  add(tracker, 0, {}, {sbuf(0, 128, 0, 1024)});
  EXPECT_EQ(add(tracker, 1, {sbuf(0, 128, 0, 0)}, {sbuf(3, 3, 0, 1024)}), Deps{});
  tracker.retire(1);
}

TEST(DependencyTracker, MoreRegionsInOneInstructionThanTheRegionCacheHolds) {
  // 1000 distinct 64-byte tiles, each in its own index bucket: the tracker's region cache (256
  // entries) evicts entries, unpinning their buckets, while the same add() still has to index
  // earlier tiles in them.
  DependencyTracker tracker;
  Regions tiles;
  for (std::uint64_t i = 0; i < 1000; ++i) tiles.push_back(sbuf(0, 128, i * 64, 64));
  EXPECT_EQ(add(tracker, 0, {}, tiles), Deps{});
  EXPECT_EQ(add(tracker, 1, tiles, {}), (Deps{{0, kRaw}}));
  tracker.retire(0);
  EXPECT_EQ(add(tracker, 2, {}, {tiles[999]}), (Deps{{1, kWar}}));
  // Writing tile 999 again waits for 2 only: 2 covers it and is newer than the reader 1.
  for (std::uint64_t i = 0; i < 1000; ++i) {
    EXPECT_EQ(add(tracker, 3 + i, {}, {tiles[i]}),
              (Deps{{i == 999 ? 2u : 1u, i == 999 ? kWaw : kWar}}))
        << "tile " << i;
  }
}

TEST(DependencyTracker, RejectsMisuse) {
  DependencyTracker tracker;
  add(tracker, 5, {}, {});
  EXPECT_THROW(add(tracker, 5, {}, {}), std::invalid_argument);
  EXPECT_THROW(add(tracker, 4, {}, {}), std::invalid_argument);
  EXPECT_THROW(tracker.retire(6), std::invalid_argument);
  tracker.retire(5);
  EXPECT_THROW(tracker.retire(5), std::invalid_argument);
}

}  // namespace
}  // namespace trnsim::deps
