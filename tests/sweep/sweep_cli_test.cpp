// End-to-end tests of `trnsim sweep`, `compare` and `regress`: they run the trnsim binary, as a
// user would, on the small example kernel vector_add (T tiles of [128, F] float32).
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "sweep/results.hpp"
#include "sweep/run_request.hpp"
#include "test_support.hpp"

extern char** environ;

namespace trnsim::sweep {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;
using testing::read_file;
using testing::ScratchDir;
using testing::write_file;

const std::string kTrnsim = TRNSIM_BINARY;
const std::string kVectorAdd = std::string(TRNSIM_SOURCE_DIR) + "/examples/kernels/vector_add.json";

/// The sanitizer suite (scripts/test.sh --sanitize) leaves out the sweeps of many points, -j 1
/// against -j 2 and the resume after SIGKILL: they repeat the worker, result and resume paths
/// the other sweeps here take, at minutes under the sanitizers. The Release suite runs them.
bool in_sanitizer_suite() {
  return std::getenv("TRNSIM_SANITIZER_SUITE") != nullptr;
}

struct Output {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// Runs trnsim with `args` in `dir`, capturing stdout and stderr.
Output trnsim(const ScratchDir& dir, const std::vector<std::string>& args) {
  std::string command = "cd " + quote(dir.file("")) + " && " + quote(kTrnsim);
  for (const std::string& arg : args) command += " " + quote(arg);
  command += " >" + quote(dir.file("stdout.txt")) + " 2>" + quote(dir.file("stderr.txt"));
  const int status = std::system(command.c_str());
  Output output;
  output.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  output.out = read_file(dir.file("stdout.txt"));
  output.err = read_file(dir.file("stderr.txt"));
  return output;
}

/// Starts trnsim in the background in `dir` (output discarded); returns its pid.
pid_t spawn_trnsim(const ScratchDir& dir, const std::vector<std::string>& args) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<std::string> argv = {kTrnsim};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> pointers;
  for (std::string& arg : argv) pointers.push_back(arg.data());
  pointers.push_back(nullptr);
  const std::string cwd = dir.file("");
  const std::string saved = std::filesystem::current_path().string();
  std::filesystem::current_path(cwd);
  pid_t pid = -1;
  const int error = posix_spawn(&pid, kTrnsim.c_str(), &actions, nullptr, pointers.data(), environ);
  std::filesystem::current_path(saved);
  posix_spawn_file_actions_destroy(&actions);
  EXPECT_EQ(error, 0);
  return pid;
}

std::size_t complete_lines(const std::string& path) {
  const std::string text = read_file(path);
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

/// Waits until `path` has at least `lines` complete lines (or 60 s pass).
void wait_for_lines(const std::string& path, std::size_t lines) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (complete_lines(path) < lines && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

/// vector_add with T x F x dma.fixed_cost_ns: 4 x 3 x 3 = 36 points.
const std::string kSpec36 = R"({
  "format": "trnsim-sweep/1",
  "kernel": {"file": ")" + kVectorAdd +
                            R"(", "params": {"T": [1, 2, 3, 4], "F": [128, 256, 512]}},
  "axes": [{"set": "dma.fixed_cost_ns", "values": [650, 1300, 2600]}],
  "metrics": ["time_us", "bottleneck"]})";

TEST(SweepCli, FiftyPointSweepMatchesIndividualRuns) {
  if (in_sanitizer_suite()) GTEST_SKIP() << "sanitizer suite: the Release suite runs this sweep";
  ScratchDir dir;
  // 5 values of T x 2 of F x 5 fixed DMA costs = 50 points.
  write_file(dir.file("spec.json"), R"({
    "kernel": {"file": ")" + kVectorAdd +
                                        R"(", "params": {"T": [1, 2, 3, 4, 5], "F": [128, 256]}},
    "config": "trn2",
    "axes": [{"set": "dma.fixed_cost_ns", "values": [500, 1000, 1300, 2000, 4000]}],
    "metrics": ["time_us", "/time/kernel_ns", "mfu_pct", "hbm_gbps", "dma_active_pct",
                "bottleneck", "/cores/0/bottleneck"]})");
  const Output sweep =
      trnsim(dir, {"sweep", "spec.json", "-j", "2", "--progress", "none", "-o", "r.jsonl"});
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  EXPECT_NE(sweep.out.find("50 points; 50 ran now, 0 resumed, 0 failed"), std::string::npos)
      << sweep.out;
  const std::vector<Record> records = read_results(dir.file("r.jsonl")).records;
  ASSERT_EQ(records.size(), 50u);
  for (std::size_t i = 0; i < records.size(); ++i) {
    const Record& record = records[i];
    ASSERT_EQ(record["index"], i);
    ASSERT_EQ(record["status"], "ok") << record.dump();
    const Output run =
        trnsim(dir, {"run", kVectorAdd, "--config", "trn2", "--set",
                     "dma.fixed_cost_ns=" + value_text(record["values"]["dma.fixed_cost_ns"]),
                     "--param", "T=" + value_text(record["values"]["T"]), "--param",
                     "F=" + value_text(record["values"]["F"]), "--json"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const json stats = json::parse(run.out);
    const Record& metrics = record["metrics"];
    EXPECT_EQ(metrics["time_us"], stats["time"]["kernel_us"]) << i;
    EXPECT_EQ(metrics["/time/kernel_ns"], stats["time"]["kernel_ns"]) << i;
    EXPECT_EQ(metrics["mfu_pct"], stats["system"]["mfu_pct"]) << i;
    EXPECT_EQ(metrics["hbm_gbps"], stats["system"]["hbm_achieved_gbps"]) << i;
    EXPECT_EQ(metrics["dma_active_pct"], stats["cores"][0]["engines"]["dma"]["active_pct"]) << i;
    const std::string line = stats["cores"][0]["bottleneck"].get<std::string>();
    EXPECT_EQ(metrics["/cores/0/bottleneck"], line) << i;
    EXPECT_EQ(metrics["bottleneck"], line.substr(0, line.find(':'))) << i;
    EXPECT_EQ(record["kernel_hash"], stats["provenance"]["kernel"]["hash"]) << i;
  }
  // The config hash is that of `trnsim config show` for the same overrides.
  const Output show = trnsim(dir, {"config", "show", "trn2", "--set", "dma.fixed_cost_ns=2000"});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_EQ(records[3]["values"]["dma.fixed_cost_ns"], 2000);
  EXPECT_EQ(records[3]["config_hash"], config_hash(ordered_json::parse(show.out)));
}

TEST(SweepCli, ResultsIdenticalForOneAndManyJobs) {
  if (in_sanitizer_suite()) GTEST_SKIP() << "sanitizer suite: the Release suite runs this sweep";
  ScratchDir dir;
  write_file(dir.file("spec.json"), kSpec36);
  ASSERT_EQ(trnsim(dir, {"sweep", "spec.json", "-j", "1", "--progress", "none", "-o", "a.jsonl"})
                .exit_code,
            0);
  ASSERT_EQ(trnsim(dir, {"sweep", "spec.json", "-j", "3", "--progress", "none", "-o", "b.jsonl",
                         "--csv", "b.csv"})
                .exit_code,
            0);
  EXPECT_EQ(read_file(dir.file("a.jsonl")), read_file(dir.file("b.jsonl")));
  EXPECT_EQ(complete_lines(dir.file("a.jsonl")), 36u);
  // CSV: a header and one line per point.
  EXPECT_EQ(complete_lines(dir.file("b.csv")), 37u);
  const Output exported = trnsim(dir, {"sweep", "export", "a.jsonl"});
  EXPECT_EQ(exported.out, read_file(dir.file("b.csv")));
}

TEST(SweepCli, KilledSweepResumesToTheSameResults) {
  if (in_sanitizer_suite()) {
    GTEST_SKIP() << "sanitizer suite: InterruptedSweepExits130AndResumes resumes there";
  }
  ScratchDir dir;
  write_file(dir.file("spec.json"), kSpec36);
  ASSERT_EQ(trnsim(dir, {"sweep", "spec.json", "-j", "2", "--progress", "none", "-o", "ref.jsonl"})
                .exit_code,
            0);

  const pid_t pid =
      spawn_trnsim(dir, {"sweep", "spec.json", "-j", "1", "--progress", "none", "-o", "r.jsonl"});
  wait_for_lines(dir.file("r.jsonl"), 5);
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the sweep ended before it was killed";
  const std::size_t before = complete_lines(dir.file("r.jsonl"));
  ASSERT_GE(before, 5u);
  ASSERT_LT(before, 36u);
  // As if the kill had landed in the middle of writing a line.
  write_file(dir.file("r.jsonl"), read_file(dir.file("r.jsonl")) + R"({"index":7,"kern)");

  const Output refused = trnsim(dir, {"sweep", "spec.json", "-o", "r.jsonl"});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("pass --resume"), std::string::npos) << refused.err;

  const Output resumed = trnsim(
      dir, {"sweep", "spec.json", "-j", "2", "--progress", "none", "-o", "r.jsonl", "--resume"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.out.find(fmt::format("{} ran now, {} resumed", 36 - before, before)),
            std::string::npos)
      << resumed.out;
  EXPECT_NE(resumed.err.find("dropping an incomplete last line"), std::string::npos);
  EXPECT_EQ(read_file(dir.file("r.jsonl")), read_file(dir.file("ref.jsonl")));
}

TEST(SweepCli, InterruptedSweepExits130AndResumes) {
  ScratchDir dir;
  write_file(dir.file("spec.json"), kSpec36);
  ASSERT_EQ(trnsim(dir, {"sweep", "spec.json", "-j", "2", "--progress", "none", "-o", "ref.jsonl"})
                .exit_code,
            0);
  const pid_t pid =
      spawn_trnsim(dir, {"sweep", "spec.json", "-j", "2", "--progress", "none", "-o", "r.jsonl"});
  wait_for_lines(dir.file("r.jsonl"), 3);
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  ASSERT_EQ(trnsim(dir, {"sweep", "spec.json", "--progress", "none", "-o", "r.jsonl", "--resume"})
                .exit_code,
            0);
  EXPECT_EQ(read_file(dir.file("r.jsonl")), read_file(dir.file("ref.jsonl")));
}

TEST(SweepCli, UnionOfShardsEqualsTheFullSweep) {
  if (in_sanitizer_suite()) GTEST_SKIP() << "sanitizer suite: the Release suite runs this sweep";
  ScratchDir dir;
  write_file(dir.file("spec.json"), kSpec36);
  ASSERT_EQ(trnsim(dir, {"sweep", "spec.json", "-j", "2", "--progress", "none", "-o", "ref.jsonl"})
                .exit_code,
            0);
  std::vector<std::string> shards;
  for (int i = 0; i < 3; ++i) {
    const Output shard = trnsim(dir, {"sweep", "spec.json", "--shard", fmt::format("{}/3", i), "-j",
                                      "2", "--progress", "none"});
    ASSERT_EQ(shard.exit_code, 0) << shard.err;
    shards.push_back(fmt::format("spec.shard-{}-of-3.jsonl", i));
    // 36 points in 3 round-robin shards: 12 each, indices i, i + 3, ...
    const auto records = read_results(dir.file(shards.back())).records;
    ASSERT_EQ(records.size(), 12u);
    EXPECT_EQ(records[1]["index"], i + 3);
  }
  Output merged = trnsim(dir, {"sweep", "merge", shards[2], shards[0], shards[1], "-o",
                               "merged.jsonl", "--spec", "spec.json"});
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  EXPECT_EQ(read_file(dir.file("merged.jsonl")), read_file(dir.file("ref.jsonl")));

  // Two shards of three: a third of the points are missing.
  merged = trnsim(
      dir, {"sweep", "merge", shards[0], shards[1], "-o", "partial.jsonl", "--spec", "spec.json"});
  EXPECT_EQ(merged.exit_code, 1);
  EXPECT_NE(merged.err.find("12 of 36 points missing: 2, 5, 8"), std::string::npos) << merged.err;
}

TEST(SweepCli, BadSpecGivesOneClearError) {
  ScratchDir dir;
  write_file(dir.file("spec.json"), R"({"kernel": ")" + kVectorAdd + R"(",
    "axes": [{"set": "dma.fixed_cost", "values": [650, 1300]}]})");
  const Output output = trnsim(dir, {"sweep", "spec.json", "--progress", "none"});
  EXPECT_EQ(output.exit_code, 2);
  EXPECT_EQ(output.out, "");
  EXPECT_EQ(output.err,
            "trnsim: error: spec.json: /axes/0/set: unknown config parameter 'dma.fixed_cost'; "
            "did you mean 'dma.fixed_cost_ns'? (see `trnsim config explain`)\n");
  EXPECT_FALSE(std::filesystem::exists(dir.file("spec.results.jsonl")));
}

TEST(SweepCli, FailingPointsAreRecordedAndTheSweepGoesOn) {
  ScratchDir dir;
  write_file(dir.file("spec.json"), R"({"kernel": ")" + kVectorAdd + R"(",
    "axes": [{"configs": ["trn2", "missing.json"]}, {"param": "F", "values": [256, 16384]}],
    "metrics": ["time_us"]})");
  const Output output = trnsim(dir, {"sweep", "spec.json", "--progress", "none", "-j", "2"});
  ASSERT_EQ(output.exit_code, 0) << output.err;
  EXPECT_NE(output.out.find("4 points; 4 ran now, 0 resumed, 3 failed"), std::string::npos)
      << output.out;
  const auto records = read_results(dir.file("spec.results.jsonl")).records;
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[0]["status"], "ok");
  // F=16384 float32: a_sb, b_sb and c_sb need 3 x 2 x 16384 x 4 B = 384 KiB per partition, more
  // than a trn2 SBUF partition (192 KiB): the worker rejects the kernel.
  EXPECT_EQ(records[1]["status"], "error");
  EXPECT_NE(records[1]["error"].get<std::string>().find("vector_add.json"), std::string::npos);
  EXPECT_EQ(records[1]["metrics"], Record::object());
  // A config that does not load fails before any worker starts.
  EXPECT_EQ(records[2]["status"], "error");
  EXPECT_NE(records[2]["error"].get<std::string>().find("missing.json"), std::string::npos)
      << records[2]["error"];
}

TEST(SweepCli, PlotWritesAnSvg) {
  ScratchDir dir;
  write_file(dir.file("spec.json"), kSpec36);
  ASSERT_EQ(trnsim(dir, {"sweep", "spec.json", "-j", "2", "--progress", "none"}).exit_code, 0);
  const Output plot =
      trnsim(dir, {"sweep", "plot", "spec.results.jsonl", "--x", "T", "--y", "time_us", "--by", "F",
                   "--where", "dma.fixed_cost_ns=1300", "-o", "plot.svg"});
  ASSERT_EQ(plot.exit_code, 0) << plot.err;
  const std::string svg = read_file(dir.file("plot.svg"));
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  // One line per F (3), 4 points each.
  std::size_t lines = 0;
  for (auto at = svg.find("<polyline"); at != std::string::npos;
       at = svg.find("<polyline", at + 1)) {
    ++lines;
  }
  EXPECT_EQ(lines, 3u);
  EXPECT_NE(plot.err.find("plotted 12 points"), std::string::npos) << plot.err;
}

TEST(SweepCli, RegressCatchesATenPercentChangeAndPassesAnUnchangedRun) {
  ScratchDir dir;
  write_file(dir.file("baseline.json"), R"({"format": "trnsim-baseline/1", "cases": [
    {"kernel": ")" + kVectorAdd + R"(", "config": "trn2", "params": {"T": 2, "F": 256},
     "metrics": {"time_us": {"expected": null, "rel": 0.05}, "bottleneck": {"expected": null}}}]})");
  Output output = trnsim(dir, {"regress", "baseline.json", "--update"});
  ASSERT_EQ(output.exit_code, 0) << output.out << output.err;
  const ordered_json updated = ordered_json::parse(read_file(dir.file("baseline.json")));
  const ordered_json& time = updated["cases"][0]["metrics"]["time_us"];
  ASSERT_TRUE(time["expected"].is_number());
  EXPECT_EQ(time["rel"], 0.05);

  output = trnsim(dir, {"regress", "baseline.json"});
  EXPECT_EQ(output.exit_code, 0) << output.out;
  EXPECT_NE(output.out.find("2 unchanged"), std::string::npos) << output.out;
  EXPECT_NE(output.out.find("PASS"), std::string::npos) << output.out;

  // The baseline says 10% slower than this build: now 1/1.1 - 1 = -9.09%, beyond 5%.
  ordered_json slower = updated;
  slower["cases"][0]["metrics"]["time_us"]["expected"] = time["expected"].get<double>() * 1.1;
  write_file(dir.file("slower.json"), slower.dump());
  output = trnsim(dir, {"regress", "slower.json"});
  EXPECT_EQ(output.exit_code, 1);
  EXPECT_NE(output.out.find("-9.09%"), std::string::npos) << output.out;
  EXPECT_NE(output.out.find("FAIL"), std::string::npos) << output.out;

  // The baseline says 10% faster: now +10%.
  ordered_json faster = updated;
  faster["cases"][0]["metrics"]["time_us"]["expected"] = time["expected"].get<double>() / 1.1;
  write_file(dir.file("faster.json"), faster.dump());
  output = trnsim(dir, {"regress", "faster.json"});
  EXPECT_EQ(output.exit_code, 1);
  EXPECT_NE(output.out.find("+10.00%"), std::string::npos) << output.out;
}

TEST(SweepCli, CompareSaysWhyAKernelIsInvalidOnAConfig) {
  ScratchDir dir;
  // 64 KiB of usable SBUF per partition; vector_add with F=4096 needs 3 x 2 x 4096 x 4 B = 96 KiB.
  write_file(dir.file("small.json"),
             R"({"extends": "trn2", "name": "small", "sbuf": {"usable_partition_bytes": 65536}})");
  const Output output = trnsim(dir, {"compare", kVectorAdd, "--configs", "trn2,small.json",
                                     "--param", "T=2", "--param", "F=4096", "--svg", "c.svg"});
  // The table and chart are written; a config on which the kernel failed is a failed check.
  ASSERT_EQ(output.exit_code, 1) << output.err;
  EXPECT_NE(output.err.find("the kernel failed on 1 of 2 configs"), std::string::npos)
      << output.err;
  EXPECT_NE(output.out.find("invalid [1]"), std::string::npos) << output.out;
  EXPECT_NE(output.out.find("[1] invalid on small.json: "), std::string::npos) << output.out;
  EXPECT_NE(output.out.find("speedup vs trn2"), std::string::npos) << output.out;
  EXPECT_NE(read_file(dir.file("c.svg")).find("n/a"), std::string::npos);
}

}  // namespace
}  // namespace trnsim::sweep
