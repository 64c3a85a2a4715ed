#include "util/strings.hpp"

#include <gtest/gtest.h>

namespace trnsim::util {
namespace {

TEST(EditDistance, ClassicPairs) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("abc", "abc"), 0u);
  EXPECT_EQ(edit_distance("flaw", "lawn"), 2u);
}

TEST(ClosestMatch, SuggestsNearNamesOnly) {
  const std::vector<std::string> keys{"clock_ghz", "rows", "cols"};
  EXPECT_EQ(closest_match("clok_ghz", keys), "clock_ghz");
  EXPECT_EQ(closest_match("colz", keys), "cols");
  EXPECT_EQ(closest_match("bandwidth", keys), "");
  EXPECT_EQ(did_you_mean("row", keys), "; did you mean 'rows'?");
  EXPECT_EQ(did_you_mean("zzzzzzzz", keys), "");
}

}  // namespace
}  // namespace trnsim::util
