// Which environments make an executable run again with the huge-page heap tunables
// (util/huge_pages.hpp). The re-execution itself: tests/cli/huge_pages_test.py.
#include "util/huge_pages.hpp"

#include <gtest/gtest.h>

namespace trnsim::util {
namespace {

TEST(HugePages, AProcessWithoutTunablesRunsAgainWithThem) {
  const auto tunables = huge_page_tunables(nullptr, nullptr, nullptr);
  ASSERT_TRUE(tunables.has_value());
  EXPECT_EQ(
      *tunables,
      "glibc.malloc.hugetlb=1:glibc.malloc.top_pad=67108864:glibc.malloc.mmap_threshold=33554432");
  EXPECT_TRUE(huge_page_tunables(nullptr, "1", "/usr/lib/libfoo.so").has_value());
}

TEST(HugePages, TheUsersTunablesTheOptOutAndValgrindKeepTheProcessAsItIs) {
  EXPECT_FALSE(huge_page_tunables("glibc.malloc.check=0", nullptr, nullptr).has_value());
  EXPECT_FALSE(huge_page_tunables("", nullptr, nullptr).has_value());
  EXPECT_FALSE(huge_page_tunables(nullptr, "0", nullptr).has_value());
  EXPECT_FALSE(huge_page_tunables(
                   nullptr, nullptr,
                   "/usr/libexec/valgrind/vgpreload_core-amd64-linux.so:/usr/libexec/valgrind/"
                   "vgpreload_memcheck-amd64-linux.so")
                   .has_value());
}

}  // namespace
}  // namespace trnsim::util
