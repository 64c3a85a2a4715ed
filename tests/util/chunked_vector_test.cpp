// ChunkedVector: indexes like a vector, keeps its elements in place as it grows, and holds at
// most one chunk more than it uses.
#include "util/chunked_vector.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace trnsim::util {
namespace {

TEST(ChunkedVector, GrowsByChunksWithoutMovingItsElements) {
  ChunkedVector<std::uint64_t, 4> values;  // chunks of 16
  EXPECT_TRUE(values.empty());
  std::vector<const std::uint64_t*> addresses;
  for (std::uint64_t i = 0; i < 100; ++i) {
    values.emplace_back() = i * 3;
    addresses.push_back(&values[i]);
  }
  EXPECT_EQ(values.size(), 100u);
  EXPECT_EQ(values.capacity(), 112u);  // 7 chunks of 16
  for (std::uint64_t i = 0; i < 100; ++i) {
    EXPECT_EQ(values[i], i * 3);
    EXPECT_EQ(&values[i], addresses[i]);
  }
  const ChunkedVector<std::uint64_t, 4>& view = values;
  EXPECT_EQ(view[99], 297u);
}

}  // namespace
}  // namespace trnsim::util
