// The benchmark programs (bench/) are tools users run: a bad command line, kernel or config gets
// one located message on stderr and exit code 2 (kExitInvalidInput), never a crash.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

#include "util/error.hpp"

namespace trnsim {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct ChildRun {
  int exit_code = -1;
  std::string stderr_text;
};

ChildRun run(const std::string& binary, const std::string& arguments) {
  // stdout is discarded: only the message on stderr counts.
  const std::string command = "'" + binary + "' " + arguments + " 2>&1 >/dev/null";
  ChildRun result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer{};
  std::size_t count = 0;
  while ((count = fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    result.stderr_text.append(buffer.data(), count);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

/// stdout of a run that must succeed (stderr discarded).
std::string run_for_output(const std::string& binary, const std::string& arguments) {
  const std::string command = "'" + binary + "' " + arguments + " 2>/dev/null";
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return output;
  std::array<char, 4096> buffer{};
  std::size_t count = 0;
  while ((count = fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    output.append(buffer.data(), count);
  const int status = pclose(pipe);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command;
  return output;
}

void expect_rejected(const ChildRun& result, const std::string& message) {
  EXPECT_EQ(result.exit_code, kExitInvalidInput) << result.stderr_text;
  EXPECT_THAT(result.stderr_text, HasSubstr(message));
  EXPECT_THAT(result.stderr_text, Not(HasSubstr("terminate called")));
}

TEST(BenchCli, SimBenchRejectsBadInput) {
  expect_rejected(run(SIM_BENCH, ""), "usage: sim_bench");
  expect_rejected(run(SIM_BENCH, "no-such-kernel.json"),
                  "no-such-kernel.json: cannot open the kernel file");
  const std::string kernel = std::string(TRNSIM_SOURCE_DIR) + "/bench/kernels/mixed.json";
  expect_rejected(run(SIM_BENCH, kernel + " --bogus"),
                  "unknown option or missing value: '--bogus'");
  expect_rejected(run(SIM_BENCH, kernel + " no-such-config"), "no file named 'no-such-config'");
  expect_rejected(run(SIM_BENCH, kernel + " trn2 --param T=x"), "--param T: in expression 'x'");
}

TEST(BenchCli, OtherBenchesRejectBadInput) {
  expect_rejected(run(DMA_BENCH, "no-such-scenario"), "unknown scenario 'no-such-scenario'");
  expect_rejected(run(DMA_BENCH, "curve trn2 7"), "BYTES_PER_PARTITION");
  expect_rejected(run(DMA_BENCH, "stream no-such-config"), "no file named 'no-such-config'");
  expect_rejected(run(DEPS_BENCH, "many"), "COUNT: expected a positive integer, found 'many'");
  expect_rejected(run(DEPS_BENCH, "10 bogus"), "found 'bogus'");
  expect_rejected(run(STREAM_BENCH, "-3"), "REPETITIONS: expected a positive integer");
  expect_rejected(run(STREAM_BENCH, "12abc"), "found '12abc'");
  expect_rejected(run(FLAT_BENCH, "100 many"), "N: expected a positive integer, found 'many'");
}

TEST(BenchCli, HelpIsNotAnError) {
  EXPECT_EQ(run(SIM_BENCH, "--help").exit_code, kExitOk);
  EXPECT_EQ(run(DMA_BENCH, "--help").exit_code, kExitOk);
  EXPECT_EQ(run(DEPS_BENCH, "--help").exit_code, kExitOk);
  EXPECT_EQ(run(STREAM_BENCH, "-h").exit_code, kExitOk);
  EXPECT_EQ(run(FLAT_BENCH, "--help").exit_code, kExitOk);
}

TEST(BenchCli, FlatBenchChecksTheStatementsItGenerates) {
  // 200 statements: one output tile (64 x 3 + 2 = 194) and 6 of the next.
  EXPECT_THAT(run_for_output(FLAT_BENCH, "200"), HasSubstr("flat 200 statements"));
}

TEST(BenchCli, SimBenchSaysHowManyWakeUpsRanAhead) {
  const std::string kernel = std::string(TRNSIM_SOURCE_DIR) + "/bench/kernels/mixed.json";
  const std::string ahead =
      run_for_output(SIM_BENCH, kernel + " trn2 --param T=50 --set dma.model=transfer");
  EXPECT_THAT(ahead, HasSubstr("% of wake-ups run ahead"));
  EXPECT_THAT(ahead, Not(HasSubstr("; 0.0% of wake-ups run ahead")));
  const std::string in_step = run_for_output(
      SIM_BENCH, kernel + " trn2 --param T=50 --set dma.model=transfer --no-run-ahead");
  EXPECT_THAT(in_step, HasSubstr("; 0.0% of wake-ups run ahead"));
}

}  // namespace
}  // namespace trnsim
