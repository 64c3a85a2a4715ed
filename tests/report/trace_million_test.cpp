// A trace of more than a million events is valid JSON: written by TraceWriter from hand-made
// timings (no simulation), read back with nlohmann's SAX parser (no DOM, bounded memory), which
// also checks that X slices of each track never overlap. Built with optimisation (see
// CMakeLists.txt) so that reading ~300 MB takes seconds.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "report/trace.hpp"
#include "report_test_support.hpp"

namespace trnsim::report {
namespace {

using nlohmann::json;

/// Counts events and checks per-track ordering of X slices while parsing.
class TraceChecker : public nlohmann::json_sax<json> {
 public:
  std::uint64_t slices = 0;
  std::uint64_t counters = 0;
  std::uint64_t overlaps = 0;
  std::string error;

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t value) override {
    return number(static_cast<double>(value));
  }
  bool number_unsigned(number_unsigned_t value) override {
    return number(static_cast<double>(value));
  }
  bool number_float(number_float_t value, const string_t&) override { return number(value); }
  bool string(string_t& value) override {
    if (depth_ == 3 && key_ == "ph") phase_ = value;
    return true;
  }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override {
    ++depth_;
    if (depth_ == 3) {
      phase_.clear();
      pid_ = tid_ = -1;
      ts_ = dur_ = 0;
    }
    return true;
  }
  bool key(string_t& value) override {
    if (depth_ == 3) key_ = value;
    return true;
  }
  bool end_object() override {
    if (depth_ == 3) {
      if (phase_ == "X") {
        ++slices;
        // Whole ns: timestamps are microseconds with 3 decimals.
        const long start = std::lround(ts_ * 1000);
        const long end = start + std::lround(dur_ * 1000);
        long& last_end = track_end_[{pid_, tid_}];
        if (start < last_end) ++overlaps;
        last_end = std::max(last_end, end);
      } else if (phase_ == "C") {
        ++counters;
      }
    }
    --depth_;
    return true;
  }
  bool start_array(std::size_t) override {
    ++depth_;
    return true;
  }
  bool end_array() override {
    --depth_;
    return true;
  }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& exception) override {
    error = "at byte " + std::to_string(position) + ": " + exception.what();
    return false;
  }

 private:
  bool number(double value) {
    if (depth_ == 3) {
      if (key_ == "pid") pid_ = static_cast<long>(value);
      if (key_ == "tid") tid_ = static_cast<long>(value);
      if (key_ == "ts") ts_ = value;
      if (key_ == "dur") dur_ = value;
    }
    return true;
  }
  int depth_ = 0;  // 1: document, 2: traceEvents, 3: one event
  std::string key_;
  std::string phase_;
  long pid_ = -1;
  long tid_ = -1;
  double ts_ = 0;
  double dur_ = 0;
  std::map<std::pair<long, long>, long> track_end_;
};

TEST(TraceMillion, AMillionEventTraceIsValidJsonWithoutOverlaps) {
  if (std::getenv("TRNSIM_SANITIZER_SUITE") != nullptr) {
    GTEST_SKIP()
        << "a million events take minutes under the sanitizers; the Release suite runs this";
  }
  const testing::GoldenKernel golden;
  testing::ScratchDir dir;
  const std::string path = dir.file("million.json");
  constexpr std::uint64_t kInstructions = 1000000;
  constexpr std::uint64_t kDmaEvery = 100;
  {
    TraceSystem system;
    system.cores = 1;
    system.cores_per_chip = 8;
    TraceWriter writer(path, golden.program(), system, {});
    core::InstructionTiming timing;
    const std::size_t count = golden.instructions.size();
    for (std::uint64_t i = 0; i < kInstructions; ++i) {
      const kernel::Instruction& instruction = golden.instructions[i % count];
      timing.instruction = &instruction;
      timing.start_ns = static_cast<double>(i) * 10.0;
      timing.end_ns = timing.start_ns + 7.5;
      timing.visible_ns = timing.end_ns;
      timing.wait_ns = i % 3 == 0 ? 2.5 : 0.0;
      writer.instruction(timing);
      if (i % kDmaEvery == 0) {
        core::DmaEvent event = core::dma_event_of(0, i, golden.instructions[0]);
        event.start_ns = timing.start_ns;
        event.end_ns = timing.start_ns + 950.0;  // shorter than the gap: no overlap per queue
        writer.dma(event);
      }
    }
    writer.finish(static_cast<double>(kInstructions) * 10.0);
  }
  // Mapped rather than read through a FILE*: nlohmann reads a FILE* one getc at a time.
  const int descriptor = open(path.c_str(), O_RDONLY);
  ASSERT_GE(descriptor, 0);
  const auto size = static_cast<std::size_t>(std::filesystem::file_size(path));
  void* mapped = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, descriptor, 0);
  close(descriptor);
  ASSERT_NE(mapped, MAP_FAILED);
  const char* text = static_cast<const char*>(mapped);
  TraceChecker checker;
  const bool valid = json::sax_parse(text, text + size, &checker);
  munmap(mapped, size);
  EXPECT_TRUE(valid) << checker.error;
  EXPECT_EQ(checker.slices, kInstructions + kInstructions / kDmaEvery);
  EXPECT_GT(checker.counters, 0u);
  EXPECT_EQ(checker.overlaps, 0u);
}

}  // namespace
}  // namespace trnsim::report
