// util::ChildProcess and run_child: a started program's output, exit status, environment, stdin
// and working directory, and the executable lookup.
#include "util/child_process.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

namespace trnsim::util {
namespace {

ChildOutcome shell(const std::string& script, ChildLaunch launch = {}) {
  launch.argv = {"/bin/sh", "-c", script};
  return run_child(launch);
}

TEST(RunChild, CapturesOutputAndExitCode) {
  const ChildOutcome outcome = shell("echo out; echo err >&2; exit 3");
  EXPECT_EQ(outcome.exit_code, 3);
  EXPECT_EQ(outcome.signal, 0);
  EXPECT_EQ(outcome.out, "out\n");
  EXPECT_EQ(outcome.err, "err\n");
}

TEST(RunChild, ReportsTheSignalThatEndedTheChild) {
  const ChildOutcome outcome = shell("kill -SEGV $$");
  EXPECT_EQ(outcome.exit_code, -1);
  EXPECT_EQ(outcome.signal, 11);
  EXPECT_EQ(describe_outcome(outcome, 0).rfind("killed by signal 11", 0), 0u);
}

TEST(RunChild, OutputLargerThanAPipeIsComplete) {
  const ChildOutcome outcome = shell("head -c 300000 /dev/zero | tr '\\0' x; echo done >&2");
  EXPECT_EQ(outcome.out, std::string(300000, 'x'));
  EXPECT_EQ(outcome.err, "done\n");
}

TEST(RunChild, EnvironmentEntriesReplaceOrAdd) {
  ::setenv("TRNSIM_CHILD_TEST_KEPT", "kept", 1);
  ::setenv("TRNSIM_CHILD_TEST_REPLACED", "old", 1);
  ChildLaunch launch;
  launch.environment = {"TRNSIM_CHILD_TEST_REPLACED=new", "TRNSIM_CHILD_TEST_ADDED=added"};
  const ChildOutcome outcome = shell(
      "echo $TRNSIM_CHILD_TEST_KEPT $TRNSIM_CHILD_TEST_REPLACED $TRNSIM_CHILD_TEST_ADDED; "
      "env | grep -c TRNSIM_CHILD_TEST_REPLACED",
      launch);
  EXPECT_EQ(outcome.out, "kept new added\n1\n");
}

TEST(RunChild, InputIsTheChildsStdin) {
  ChildLaunch launch;
  launch.input = std::string(200000, 'y') + "\n";
  EXPECT_EQ(shell("wc -c", launch).out, "200001\n");
  // A child that reads none of its input is not a problem for the parent.
  EXPECT_EQ(shell("exit 0", launch).exit_code, 0);
  EXPECT_EQ(shell("cat").out, "");  // no input: /dev/null
}

TEST(RunChild, WorkingDirectory) {
  ChildLaunch launch;
  launch.working_directory = "/";
  EXPECT_EQ(shell("pwd", launch).out, "/\n");
  launch.working_directory = "/no/such/directory";
  const ChildOutcome outcome = shell("pwd", launch);
  EXPECT_EQ(outcome.exit_code, 127);
  EXPECT_NE(outcome.err.find("cannot change to the directory /no/such/directory"),
            std::string::npos);
}

TEST(RunChild, AProgramThatCannotBeExecuted) {
  ChildLaunch launch;
  launch.argv = {"/no/such/program"};
  const ChildOutcome outcome = run_child(launch);
  EXPECT_EQ(outcome.exit_code, 127);
  EXPECT_EQ(outcome.err, "trnsim: error: cannot execute /no/such/program\n");
}

TEST(FindExecutable, SearchesPathOnlyForBareNames) {
  EXPECT_EQ(find_executable("/bin/sh"), std::optional<std::string>("/bin/sh"));
  EXPECT_EQ(find_executable("/no/such/sh"), std::nullopt);
  const std::optional<std::string> sh = find_executable("sh");
  ASSERT_TRUE(sh.has_value());
  EXPECT_TRUE(std::filesystem::path(*sh).is_absolute() || sh->find('/') != std::string::npos);
  EXPECT_EQ(find_executable("trnsim-no-such-command-anywhere"), std::nullopt);
  EXPECT_EQ(find_executable("/etc/passwd"), std::nullopt);  // a file, not executable
}

}  // namespace
}  // namespace trnsim::util
