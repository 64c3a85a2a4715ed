// Text formatting and the write-then-rename contract of result files.
#include "report/output_file.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

#include "report_test_support.hpp"
#include "util/error.hpp"

namespace trnsim::report {
namespace {

using testing::read_file;
using testing::ScratchDir;

std::string text_of(const TextBuffer& buffer) {
  return std::string(buffer.view());
}

TEST(TextBuffer, MicrosecondsFromWholeNanosecondsHaveThreeDecimals) {
  TextBuffer out;
  out.us_from_ns(1234567);  // 1,234,567 ns = 1234.567 us
  out << ' ';
  out.us_from_ns(5);  // 0.005 us
  out << ' ';
  out.us_from_ns(0);
  out << ' ';
  out.us_from_ns(-2500);
  EXPECT_EQ(text_of(out), "1234.567 0.005 0.000 -2.500");
}

TEST(TextBuffer, FixedThreeDecimalsIsLocaleFreeAndNeverNegativeZeroOrNan) {
  TextBuffer out;
  out.fixed3(12.0) << ' ';
  out.fixed3(1.23456) << ' ';  // rounds to nearest: 1.235
  out.fixed3(-0.0) << ' ';
  out.fixed3(std::nan("")) << ' ';
  out.fixed3(-3.5);
  EXPECT_EQ(text_of(out), "12.000 1.235 0.000 0.000 -3.500");
}

TEST(TextBuffer, IntegersPrintInFull) {
  TextBuffer out;
  out << std::numeric_limits<std::uint64_t>::max() << ',' << std::int64_t{-7} << ','
      << std::uint8_t{200};
  EXPECT_EQ(text_of(out), "18446744073709551615,-7,200");
}

TEST(TextBuffer, GrowsPastItsInitialCapacity) {
  TextBuffer out;
  const std::string chunk(1000, 'x');
  for (int i = 0; i < 100; ++i) out << chunk;
  EXPECT_EQ(out.size(), 100000u);
  EXPECT_EQ(text_of(out), std::string(100000, 'x'));
}

TEST(TextBuffer, JsonStringsEscapeQuotesBackslashesAndControlCharacters) {
  const std::string raw = "a\"b\\c\nd\te\x01";
  EXPECT_EQ(json_string(raw), "\"a\\\"b\\\\c\\nd\\te\\u0001\"");
  // And a JSON parser reads back the original text.
  EXPECT_EQ(nlohmann::json::parse(json_string(raw)).get<std::string>(), raw);
}

TEST(TextBuffer, CsvFieldsAreQuotedOnlyWhenNeeded) {
  EXPECT_EQ(csv_field("dma_copy /program/0"), "dma_copy /program/0");
  EXPECT_EQ(csv_field("mm, \"main\""), "\"mm, \"\"main\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
}

TEST(RoundNs, RoundsHalfAwayFromZero) {
  EXPECT_EQ(round_ns(1.4999), 1);
  EXPECT_EQ(round_ns(1.5), 2);
  EXPECT_EQ(round_ns(2355.942), 2356);
}

TEST(OutputFile, WritesToTemporaryAndRenamesOnlyOnCommit) {
  ScratchDir dir;
  const std::string path = dir.file("result.json");
  {
    OutputFile file(path, "--trace");
    file.buffer() << "{}";
    EXPECT_TRUE(std::filesystem::exists(path + ".tmp"));
    EXPECT_FALSE(std::filesystem::exists(path));
    file.commit();
  }
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  EXPECT_EQ(read_file(path), "{}");
}

TEST(OutputFile, AnUncommittedFileLeavesNothingBehind) {
  ScratchDir dir;
  const std::string path = dir.file("result.csv");
  {
    OutputFile file(path, "--profile");
    file.buffer() << "a,b\n";
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST(OutputFile, AnUncommittedFileDoesNotReplaceAnOldResult) {
  ScratchDir dir;
  const std::string path = dir.file("result.csv");
  {
    OutputFile old(path, "--profile");
    old.buffer() << "old";
    old.commit();
  }
  {
    OutputFile failed(path, "--profile");
    failed.buffer() << "partial";
  }
  EXPECT_EQ(read_file(path), "old");
}

TEST(OutputFile, AnUncreatableFileIsAnInputErrorNamingTheOption) {
  ScratchDir dir;
  // Missing directories are created; one below a regular file cannot be.
  std::ofstream(dir.file("plain-file")) << "x";
  const std::string path = dir.file("plain-file/result.json");
  try {
    OutputFile file(path, "--trace");
    FAIL() << "expected an InputError";
  } catch (const InputError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("--trace " + path), std::string::npos) << message;
    EXPECT_NE(message.find("cannot create"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace trnsim::report
