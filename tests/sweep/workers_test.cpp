#include "sweep/workers.hpp"

#include <gtest/gtest.h>

#include <map>

#include "sweep/driver.hpp"

namespace trnsim::sweep {
namespace {

std::map<std::size_t, WorkerOutcome> run_shell(const std::vector<std::string>& scripts,
                                               unsigned parallel, double timeout_s = 0) {
  std::map<std::size_t, WorkerOutcome> outcomes;
  std::size_t next = 0;
  WorkerOptions options;
  options.parallel = parallel;
  options.timeout_s = timeout_s;
  const bool completed = run_workers(
      options,
      [&]() -> std::optional<WorkerTask> {
        if (next >= scripts.size()) return std::nullopt;
        const std::size_t id = next++;
        return WorkerTask{id, {"/bin/sh", "-c", scripts[id]}};
      },
      [&](const WorkerTask& task, WorkerOutcome&& outcome) {
        EXPECT_TRUE(outcomes.emplace(task.id, std::move(outcome)).second) << "reported twice";
      });
  EXPECT_TRUE(completed);
  return outcomes;
}

TEST(Workers, CapturesOutputAndStatus) {
  const auto outcomes = run_shell({"echo out; echo err >&2; exit 3", "kill -9 $$", "exit 0"}, 2);
  ASSERT_EQ(outcomes.size(), 3u);
  EXPECT_EQ(outcomes.at(0).exit_code, 3);
  EXPECT_EQ(outcomes.at(0).out, "out\n");
  EXPECT_EQ(outcomes.at(0).err, "err\n");
  EXPECT_EQ(outcomes.at(1).signal, 9);
  EXPECT_EQ(describe_outcome(outcomes.at(1), 0).rfind("killed by signal 9", 0), 0u);
  EXPECT_EQ(outcomes.at(2).exit_code, 0);
}

TEST(Workers, LargeOutputIsNotTruncated) {
  // 200000 bytes: more than a pipe buffer (64 KiB), so the reader must drain while it runs.
  const auto outcomes = run_shell({"head -c 200000 /dev/zero | tr '\\0' x"}, 1);
  EXPECT_EQ(outcomes.at(0).out, std::string(200000, 'x'));
}

TEST(Workers, TimeoutKillsTheTask) {
  const auto outcomes = run_shell({"sleep 5", "exit 0"}, 2, 0.3);
  EXPECT_TRUE(outcomes.at(0).timed_out);
  EXPECT_FALSE(outcomes.at(1).timed_out);
  EXPECT_EQ(describe_outcome(outcomes.at(0), 0.3), "timed out after 0.3 s");
}

TEST(Workers, ManyTasksFewSlots) {
  std::vector<std::string> scripts;
  for (int i = 0; i < 20; ++i) scripts.push_back("echo " + std::to_string(i));
  const auto outcomes = run_shell(scripts, 3);
  ASSERT_EQ(outcomes.size(), 20u);
  for (const auto& [id, outcome] : outcomes) EXPECT_EQ(outcome.out, std::to_string(id) + "\n");
}

TEST(Workers, InterpretRun) {
  WorkerOutcome outcome;
  outcome.exit_code = 2;
  outcome.err = "trnsim: error: k.json: /params/T: expected an integer\n";
  RunResult result = interpret_run(outcome, 0);
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.error, "k.json: /params/T: expected an integer");

  outcome.exit_code = 0;
  outcome.out = "{\"time\": {\"kernel_us\": 1.5}}";
  result = interpret_run(outcome, 0);
  EXPECT_TRUE(result.ok);
  EXPECT_EQ(result.statistics["time"]["kernel_us"], 1.5);

  outcome.out = "not json";
  EXPECT_FALSE(interpret_run(outcome, 0).ok);

  outcome.exit_code = 70;
  outcome.err = "trnsim: internal error: boom\n";
  EXPECT_EQ(interpret_run(outcome, 0).error, "trnsim run exited with code 70: boom");
}

}  // namespace
}  // namespace trnsim::sweep
