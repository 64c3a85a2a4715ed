// `trnsim config ...` run as a child process: output on stdout, errors on stderr, exit codes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "config/describe.hpp"
#include "config/load.hpp"

namespace trnsim::config {
namespace {

using ::testing::HasSubstr;

struct ChildRun {
  int exit_code = -1;
  std::string output;  ///< stdout (and stderr when asked)
};

ChildRun run_trnsim(const std::string& arguments, bool merge_stderr = false) {
  const std::string command = std::string("'") + TRNSIM_BINARY + "' " + arguments +
                              (merge_stderr ? " 2>&1" : " 2>/dev/null");
  ChildRun run;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  std::array<char, 4096> buffer{};
  std::size_t count = 0;
  while ((count = fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    run.output.append(buffer.data(), count);
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

TEST(ConfigCli, ListShowsEveryBuiltinWithItsDescription) {
  const ChildRun run = run_trnsim("config list");
  ASSERT_EQ(run.exit_code, 0);
  for (const auto& name : builtin_config_names()) {
    EXPECT_THAT(run.output, HasSubstr(name + " ")) << name;
    EXPECT_THAT(run.output, HasSubstr(builtin_config_description(name)));
  }
}

TEST(ConfigCli, ShowPrintsEffectiveJsonWithOverrides) {
  const ChildRun run =
      run_trnsim("config show trn2 --set tensor.clock_ghz=2.8 --set vector.min_ii_cycles=32");
  ASSERT_EQ(run.exit_code, 0);
  const auto json = nlohmann::json::parse(run.output);
  EXPECT_DOUBLE_EQ(json["tensor"]["clock_ghz"].get<double>(), 2.8);
  EXPECT_EQ(json["vector"]["min_ii_cycles"].get<int>(), 32);
  EXPECT_EQ(
      run.output,
      load_config("trn2", {"tensor.clock_ghz=2.8", "vector.min_ii_cycles=32"}).effective.dump(2) +
          "\n");
}

TEST(ConfigCli, ExplainDiffAndReference) {
  const ChildRun explain = run_trnsim("config explain trn3");
  ASSERT_EQ(explain.exit_code, 0);
  EXPECT_THAT(explain.output, HasSubstr("tensor.mx_supported"));
  const ChildRun diff = run_trnsim("config diff trn2 trn3");
  ASSERT_EQ(diff.exit_code, 0);
  EXPECT_EQ(diff.output, diff_table(load_config("trn2"), load_config("trn3")));
  const ChildRun reference = run_trnsim("config reference");
  ASSERT_EQ(reference.exit_code, 0);
  EXPECT_EQ(reference.output, reference_markdown());
}

TEST(ConfigCli, BadInputExitsWithCode2AndOneMessage) {
  const ChildRun run = run_trnsim("config show trn2 --set tensr.clock_ghz=3", true);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.output,
            "trnsim: error: --set tensr.clock_ghz=3: unknown parameter 'tensr.clock_ghz'; did "
            "you mean 'tensor.clock_ghz'?\n");
  const ChildRun missing = run_trnsim("config show", true);
  EXPECT_EQ(missing.exit_code, 2);
}

TEST(ConfigCli, ADerivedKeyIsRefusedWithExitCode2NamingTheKnob) {
  const ChildRun run = run_trnsim("run '" TRNSIM_SOURCE_DIR
                                  "/examples/kernels/vector_add.json' --set "
                                  "sbuf.partitions=256",
                                  true);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.output, HasSubstr("trnsim: error: --set sbuf.partitions=256: sbuf.partitions is "
                                    "derived (sbuf.partitions = tensor.rows; "));
  EXPECT_THAT(run.output, HasSubstr("set tensor.rows instead\n"));
}

TEST(ConfigCli, AnInformationalKeyWarnsOnStderrAndRuns) {
  const ChildRun run = run_trnsim("config show trn2 --set name=labelled", true);
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_THAT(run.output, HasSubstr("trnsim: warning: --set name=labelled: name is informational "
                                    "(a label: it names the config in outputs); it changes no "
                                    "simulated result\n"));
}

}  // namespace
}  // namespace trnsim::config
