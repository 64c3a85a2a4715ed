// util::Progress: what each style writes, when it stays silent, and the CLI's style choice.
#include "util/progress.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <sstream>

namespace trnsim::util {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;

Progress::Options unit(const char* name, milliseconds silent_for = milliseconds(0)) {
  Progress::Options options;
  options.unit = name;
  options.silent_for = silent_for;
  return options;
}

TEST(Progress, LinesStartWithALineAndEndWithTheCountAndDuration) {
  std::ostringstream out;
  Progress progress("sweep x", 4, 0, ProgressStyle::kLines, out, unit("points"));
  for (int i = 0; i < 4; ++i) progress.advance(i == 2);
  progress.finish();
  const std::string text = out.str();
  EXPECT_EQ(text.rfind("sweep x: 0/4 points (0%), 0.00 points/s, ETA --:--\n", 0), 0u) << text;
  EXPECT_NE(text.find("sweep x: 4/4 points (100%), "), std::string::npos) << text;
  EXPECT_NE(text.find(", done in 0:00, 1 failed\n"), std::string::npos) << text;
  EXPECT_EQ(text.find('\r'), std::string::npos) << "lines never redraw";
}

TEST(Progress, AnUnknownTotalIsSaidSo) {
  std::ostringstream out;
  Progress progress("trnsim run k", 0, 0, ProgressStyle::kLines, out, unit("instructions"));
  EXPECT_EQ(out.str(), "trnsim run k: 0 instructions, 0.00 instructions/s, total not known yet\n");
}

TEST(Progress, ASilentProgressThatNeverDrewWritesNothingAtAll) {
  for (const ProgressStyle style : {ProgressStyle::kLines, ProgressStyle::kBar}) {
    std::ostringstream out;
    Progress progress("trnsim run k", 100, 0, style, out, unit("instructions", hours(1)));
    progress.set_done(50);
    progress.clear();
    progress.finish();
    EXPECT_EQ(out.str(), "");
  }
}

TEST(Progress, QuietWritesNothing) {
  std::ostringstream out;
  Progress progress("k", 3, 0, ProgressStyle::kQuiet, out, unit("points"));
  progress.advance(false);
  progress.finish();
  EXPECT_EQ(out.str(), "");
}

TEST(Progress, TheBarIsRedrawnInPlaceAndClearedOnRequest) {
  std::ostringstream out;
  Progress progress("k", 2, 0, ProgressStyle::kBar, out, unit("points"));
  progress.advance(false);  // the first refresh draws at once
  const std::string first = out.str();
  // 28 columns, half of them filled, the count and the unit.
  EXPECT_EQ(first.rfind("\rk [##############..............] 1/2 points, ", 0), 0u) << first;
  EXPECT_EQ(first.substr(first.size() - 3), "\x1b[K");
  progress.clear();
  EXPECT_EQ(out.str().substr(first.size()), "\r\x1b[K");
  progress.advance(false);
  progress.finish();
  EXPECT_EQ(out.str().back(), '\n') << "finish ends the bar's line";
}

TEST(Progress, ResumedItemsCountAsDoneButNotTowardTheRate) {
  std::ostringstream out;
  Progress progress("s", 10, 6, ProgressStyle::kLines, out, unit("points"));
  EXPECT_EQ(out.str(), "s: 6/10 points (60%), 0.00 points/s, ETA --:--\n");
}

TEST(Progress, DurationsAndCounts) {
  EXPECT_EQ(Progress::format_duration(7.4), "0:07");
  EXPECT_EQ(Progress::format_duration(123), "2:03");
  EXPECT_EQ(Progress::format_duration(3723), "1:02:03");
  EXPECT_EQ(Progress::format_count(0.5), "0.50");
  EXPECT_EQ(Progress::format_count(1234), "1234");
  EXPECT_EQ(Progress::format_count(12345), "12.3 k");
  EXPECT_EQ(Progress::format_count(1.5e6), "1.50 M");
}

TEST(ProgressStyleChoice, NoneAndQuietSilenceExplicitStylesWin) {
  EXPECT_EQ(progress_style("none"), ProgressStyle::kQuiet);
  EXPECT_EQ(progress_style("bar", true), ProgressStyle::kQuiet);
  EXPECT_EQ(progress_style("bar"), ProgressStyle::kBar);
  EXPECT_EQ(progress_style("lines"), ProgressStyle::kLines);
  EXPECT_EQ(progress_style("auto"), default_progress_style());
}

}  // namespace
}  // namespace trnsim::util
