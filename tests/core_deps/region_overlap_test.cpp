// Byte-pattern overlap and containment, each expectation worked out by listing the runs.
#include "core/deps/region_overlap.hpp"

#include <gtest/gtest.h>

#include "test_regions.hpp"

namespace trnsim::deps {
namespace {

using test_regions::hbm;
using test_regions::psum;
using test_regions::sbuf;

NormalRegion normal(const kernel::Region& region) {
  NormalRegion out;
  EXPECT_TRUE(normalize(region, out));
  return out;
}

bool overlap(const kernel::Region& a, const kernel::Region& b) {
  const bool ab = regions_overlap(normal(a), normal(b));
  EXPECT_EQ(ab, regions_overlap(normal(b), normal(a))) << "overlap must be symmetric";
  return ab;
}

TEST(Normalize, EmptyRegionsAreRejected) {
  NormalRegion out;
  EXPECT_FALSE(normalize(sbuf(0, 128, 0, 0), out));           // run_bytes == 0
  EXPECT_FALSE(normalize(sbuf(5, 5, 0, 64), out));            // no partition
  EXPECT_FALSE(normalize(sbuf(0, 128, 0, 64, 128, 0), out));  // count == 0
}

TEST(Normalize, TouchingOrOverlappingRunsBecomeOneRun) {
  // 4 runs of 64 bytes every 64 bytes from 100: [100, 356).
  NormalRegion touching = normal(sbuf(0, 1, 100, 64, 64, 4));
  EXPECT_EQ(touching.bytes.count, 1u);
  EXPECT_EQ(touching.bytes.begin, 100u);
  EXPECT_EQ(touching.bytes.end, 356u);
  // 3 runs of 64 bytes every 16 bytes from 0: last run [32, 96), union [0, 96).
  NormalRegion overlapping = normal(sbuf(0, 1, 0, 64, 16, 3));
  EXPECT_EQ(overlapping.bytes.count, 1u);
  EXPECT_EQ(overlapping.bytes.end, 96u);
  // 3 runs of 8 every 32 from 0: strided, end = 2 * 32 + 8 = 72.
  NormalRegion strided = normal(sbuf(0, 1, 0, 8, 32, 3));
  EXPECT_EQ(strided.bytes.count, 3u);
  EXPECT_EQ(strided.bytes.end, 72u);
}

TEST(RegionsOverlap, ContiguousRangesAreHalfOpen) {
  EXPECT_TRUE(overlap(sbuf(0, 128, 0, 1024), sbuf(0, 128, 1023, 1)));
  EXPECT_FALSE(overlap(sbuf(0, 128, 0, 1024), sbuf(0, 128, 1024, 1024)));
}

TEST(RegionsOverlap, PartitionsMemoriesAndSpacesSeparate) {
  EXPECT_FALSE(overlap(sbuf(0, 64, 0, 1024), sbuf(64, 128, 0, 1024)));
  EXPECT_TRUE(overlap(sbuf(0, 65, 0, 1024), sbuf(64, 128, 0, 1024)));
  EXPECT_FALSE(overlap(sbuf(0, 128, 0, 1024), psum(0, 128, 0, 1024)));
  EXPECT_FALSE(overlap(sbuf(0, 128, 0, 1024, 0, 1, 0), sbuf(0, 128, 0, 1024, 0, 1, 1)));
  EXPECT_FALSE(overlap(hbm(0, 4096, 0, 1, 0), hbm(0, 4096, 0, 1, 1)));
}

TEST(RegionsOverlap, ContiguousAgainstStrided) {
  // Runs of 16 every 64 from 0: [0,16) [64,80) [128,144) [192,208).
  const kernel::Region strided = sbuf(0, 1, 0, 16, 64, 4);
  EXPECT_FALSE(overlap(strided, sbuf(0, 1, 16, 48)));    // [16,64): a gap
  EXPECT_FALSE(overlap(strided, sbuf(0, 1, 144, 48)));   // [144,192): a gap
  EXPECT_TRUE(overlap(strided, sbuf(0, 1, 79, 2)));      // [79,81) hits [64,80)
  EXPECT_TRUE(overlap(strided, sbuf(0, 1, 20, 45)));     // [20,65) hits [64,80)
  EXPECT_FALSE(overlap(strided, sbuf(0, 1, 208, 100)));  // after the last run
}

TEST(RegionsOverlap, SameStrideComparesOffsetsModuloStride) {
  // Even halves [0,64) [128,192)... against odd halves [64,128) [192,256)...: disjoint.
  EXPECT_FALSE(overlap(sbuf(0, 128, 0, 64, 128, 16), sbuf(0, 128, 64, 64, 128, 16)));
  // Shift the odd halves down by 1 byte: [63,127) hits [0,64) at byte 63.
  EXPECT_TRUE(overlap(sbuf(0, 128, 0, 64, 128, 16), sbuf(0, 128, 63, 64, 128, 16)));
  // Same phase but b starts after a's last run: a = [0,64)+k*128, k<4, ends at 448;
  // b starts at 512.
  EXPECT_FALSE(overlap(sbuf(0, 1, 0, 64, 128, 4), sbuf(0, 1, 512, 64, 128, 4)));
  // b's first run [384,448) is a's last run (k = 3).
  EXPECT_TRUE(overlap(sbuf(0, 1, 0, 64, 128, 4), sbuf(0, 1, 384, 64, 128, 4)));
  // Unequal runs, stride 100, 5 runs each: a = [0,16) mod 100; b = [20,100) mod 100 fills a's
  // gaps exactly; [10,90) mod 100 meets a at [10,16); [20,101) mod 100 meets a's run [100,116).
  EXPECT_FALSE(overlap(sbuf(0, 1, 0, 16, 100, 5), sbuf(0, 1, 20, 80, 100, 5)));
  EXPECT_TRUE(overlap(sbuf(0, 1, 0, 16, 100, 5), sbuf(0, 1, 10, 80, 100, 5)));
  EXPECT_TRUE(overlap(sbuf(0, 1, 0, 16, 100, 5), sbuf(0, 1, 20, 81, 100, 5)));  // [20,101)
  // Same phase, b = [0,448) box entirely before a = [1024,1472) box.
  EXPECT_FALSE(overlap(sbuf(0, 1, 1024, 64, 128, 4), sbuf(0, 1, 0, 64, 128, 4)));
}

TEST(RegionsOverlap, DifferentStridesExactForFewRuns) {
  // a: [0,32) mod 128; b: [32,64) mod 64 = [32,64) [96,128) [160,192)...: never in [0,32) mod 128.
  EXPECT_FALSE(overlap(sbuf(0, 1, 0, 32, 128, 8), sbuf(0, 1, 32, 32, 64, 16)));
  // b': runs of 32 every 96 from 32: [32,64) [128,160) -> meets a's [128,160).
  EXPECT_TRUE(overlap(sbuf(0, 1, 0, 32, 128, 8), sbuf(0, 1, 32, 32, 96, 10)));
}

TEST(RegionsOverlap, DifferentStridesWithManyRunsAreConservative) {
  // Same disjoint pair as above but 1000 and 2000 runs: more than kMaxRunsExamined (64) runs of
  // each in the common window, so the test reports an overlap that does not exist.
  EXPECT_TRUE(overlap(sbuf(0, 1, 0, 32, 128, 1000), sbuf(0, 1, 32, 32, 64, 2000)));
}

TEST(RegionCovers, ContiguousAndStridedContainment) {
  const NormalRegion whole = normal(sbuf(0, 128, 0, 4096));
  EXPECT_TRUE(region_covers(whole, normal(sbuf(0, 128, 0, 4096))));
  EXPECT_TRUE(region_covers(whole, normal(sbuf(10, 20, 100, 64, 256, 4))));
  EXPECT_FALSE(region_covers(whole, normal(sbuf(0, 128, 4000, 200))));  // ends at 4200
  EXPECT_FALSE(region_covers(normal(sbuf(1, 128, 0, 4096)), normal(sbuf(0, 128, 0, 64))));
  EXPECT_FALSE(region_covers(whole, normal(psum(0, 128, 0, 64))));

  // Runs of 64 every 256 from 0: [0,64) [256,320) [512,576) [768,832).
  const NormalRegion strided = normal(sbuf(0, 1, 0, 64, 256, 4));
  EXPECT_TRUE(region_covers(strided, normal(sbuf(0, 1, 272, 48))));        // [272,320) in run 1
  EXPECT_FALSE(region_covers(strided, normal(sbuf(0, 1, 300, 48))));       // [300,348) leaves run 1
  EXPECT_TRUE(region_covers(strided, normal(sbuf(0, 1, 8, 32, 256, 4))));  // same stride
  EXPECT_TRUE(region_covers(strided, normal(sbuf(0, 1, 8, 32, 512, 2))));  // stride 2x
  EXPECT_FALSE(region_covers(strided, normal(sbuf(0, 1, 40, 32, 256, 2))));  // [40,72) leaves
  EXPECT_FALSE(region_covers(strided, normal(sbuf(0, 1, 0, 64, 256, 5))));   // a 5th run
  EXPECT_TRUE(region_covers(strided, normal(sbuf(0, 1, 768, 64))));          // exactly run 3
}

}  // namespace
}  // namespace trnsim::deps
