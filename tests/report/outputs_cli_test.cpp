// Whole runs of the trnsim binary (child processes: SystemC elaborates once per process) with
// --trace, --profile, --dma-profile and --stats: golden files, determinism, the documented CSV
// contract, non-overlapping trace tracks, provenance, and no file left by a failed run.
//
// Golden files live in tests/golden/outputs/. After an intended change of the timing model,
// the config or the formats, regenerate them with one command: scripts/regen-golden.sh [BUILD]
// (which runs this test with TRNSIM_REGEN_GOLDEN=1) and review the diff.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "report/profile.hpp"
#include "report_test_support.hpp"

namespace trnsim::report {
namespace {

using nlohmann::json;
using testing::csv_split;
using testing::documented_columns;
using testing::kGoldenKernel;
using testing::lines_of;
using testing::read_file;
using testing::run_trnsim;
using testing::ScratchDir;

const std::string kGoldenDir = std::string(TRNSIM_SOURCE_DIR) + "/tests/golden/outputs";

/// The four result files of one run of the golden kernel, by golden file name.
std::map<std::string, std::string> run_golden_kernel(const ScratchDir& dir) {
  const std::map<std::string, std::string> files{
      {"outputs_small.trace.json", dir.file("trace.json")},
      {"outputs_small.profile.csv", dir.file("profile.csv")},
      {"outputs_small.dma_profile.csv", dir.file("dma_profile.csv")},
      {"outputs_small.stats.json", dir.file("stats.json")},
  };
  const testing::CommandResult result = run_trnsim(
      std::string("run ") + kGoldenKernel + " --trace " + files.at("outputs_small.trace.json") +
      " --profile " + files.at("outputs_small.profile.csv") + " --dma-profile " +
      files.at("outputs_small.dma_profile.csv") + " --stats " +
      files.at("outputs_small.stats.json"));
  EXPECT_EQ(result.exit_code, 0) << result.output;
  std::map<std::string, std::string> contents;
  for (const auto& [golden, path] : files) contents[golden] = read_file(path);
  return contents;
}

/// Where two texts first differ, as "line N: expected ... / found ...".
std::string first_difference(const std::string& expected, const std::string& found) {
  const std::vector<std::string> a = lines_of(expected);
  const std::vector<std::string> b = lines_of(found);
  for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const std::string left = i < a.size() ? a[i] : "<end of file>";
    const std::string right = i < b.size() ? b[i] : "<end of file>";
    if (left != right) {
      return "line " + std::to_string(i + 1) + ":\n  golden: " + left + "\n  now:    " + right;
    }
  }
  return "(line endings differ)";
}

TEST(GoldenOutputs, SmallKernelMatchesTheGoldenFiles) {
  ScratchDir dir;
  const std::map<std::string, std::string> outputs = run_golden_kernel(dir);
  if (std::getenv("TRNSIM_REGEN_GOLDEN") != nullptr) {
    std::filesystem::create_directories(kGoldenDir);
    for (const auto& [name, text] : outputs) {
      std::ofstream(kGoldenDir + "/" + name, std::ios::binary) << text;
    }
    GTEST_SKIP() << "regenerated the golden files in " << kGoldenDir;
  }
  for (const auto& [name, text] : outputs) {
    const std::string golden = read_file(kGoldenDir + "/" + name);
    EXPECT_FALSE(golden.empty()) << kGoldenDir << "/" << name << " is missing";
    EXPECT_TRUE(golden == text)
        << name << " differs from the golden file at " << first_difference(golden, text)
        << "\nIf the change is intended, regenerate: scripts/regen-golden.sh [BUILD_DIR]";
  }
}

TEST(GoldenOutputs, TwoRunsGiveByteIdenticalFiles) {
  ScratchDir first_dir("_1");
  ScratchDir second_dir("_2");
  const std::map<std::string, std::string> first = run_golden_kernel(first_dir);
  const std::map<std::string, std::string> second = run_golden_kernel(second_dir);
  for (const auto& [name, text] : first) EXPECT_TRUE(text == second.at(name)) << name;
}

class RunOutputsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    outputs_ = run_golden_kernel(dir_);
    trace_ = json::parse(outputs_.at("outputs_small.trace.json"));
    stats_ = json::parse(outputs_.at("outputs_small.stats.json"));
  }
  ScratchDir dir_;
  std::map<std::string, std::string> outputs_;
  json trace_;
  json stats_;
};

TEST_F(RunOutputsTest, TheTraceHasOneSlicePerInstructionAndNoOverlapPerTrack) {
  std::uint64_t instruction_slices = 0;
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::vector<std::pair<long, long>>> tracks;
  std::map<std::uint64_t, std::string> processes;
  for (const json& event : trace_["traceEvents"]) {
    if (event["ph"] == "M" && event["name"] == "process_name") {
      processes[event["pid"]] = event["args"]["name"];
    }
    if (event["ph"] != "X") continue;
    const std::string category = event["cat"];
    if (category != "dma_transfer" && category != "dma_packet") ++instruction_slices;
    const long start = std::lround(event["ts"].get<double>() * 1000);
    tracks[{event["pid"], event["tid"]}].emplace_back(
        start, start + std::lround(event["dur"].get<double>() * 1000));
  }
  EXPECT_EQ(instruction_slices, stats_["system"]["instructions"].get<std::uint64_t>());
  for (auto& [track, slices] : tracks) {
    std::sort(slices.begin(), slices.end());
    for (std::size_t i = 1; i < slices.size(); ++i) {
      EXPECT_LE(slices[i - 1].second, slices[i].first)
          << "pid " << track.first << " tid " << track.second;
    }
  }
  // The golden kernel runs on 2 cores of one Trainium2 chip.
  EXPECT_EQ(processes[0], "NeuronCore 0 (chip 0, pid 0)");
  EXPECT_EQ(processes[1], "NeuronCore 1 (chip 0, pid 1)");
  EXPECT_EQ(trace_["otherData"]["trnsim"]["kernel"]["name"], "outputs_small");
}

TEST_F(RunOutputsTest, CsvFilesFollowTheDocumentedColumns) {
  const std::vector<std::string> profile = lines_of(outputs_.at("outputs_small.profile.csv"));
  ASSERT_FALSE(profile.empty());
  EXPECT_EQ(csv_split(profile[0]), documented_columns("`--profile` columns"));
  EXPECT_EQ(profile.size() - 1, stats_["system"]["instructions"].get<std::uint64_t>());
  for (std::size_t i = 1; i < profile.size(); ++i) {
    EXPECT_EQ(csv_split(profile[i]).size(), profile_columns().size()) << profile[i];
  }
  const std::vector<std::string> dma = lines_of(outputs_.at("outputs_small.dma_profile.csv"));
  ASSERT_FALSE(dma.empty());
  EXPECT_EQ(csv_split(dma[0]), documented_columns("`--dma-profile` columns"));
  for (std::size_t i = 1; i < dma.size(); ++i) {
    EXPECT_EQ(csv_split(dma[i]).size(), dma_profile_columns().size()) << dma[i];
  }
}

TEST_F(RunOutputsTest, StatsCarryProvenanceAndTheSameStatisticsAsJsonOutput) {
  EXPECT_EQ(stats_["format"], "trnsim-stats/1");
  const json& provenance = stats_["provenance"];
  const testing::CommandResult version = run_trnsim("--version");
  EXPECT_EQ(version.output, "trnsim " + provenance["trnsim_version"].get<std::string>() + "\n");
  EXPECT_EQ(provenance["kernel"]["name"], "outputs_small");
  EXPECT_EQ(provenance["kernel"]["file"], kGoldenKernel);
  EXPECT_EQ(provenance["kernel"]["params"], json({{"T", 2}}));
  const std::regex hash("[0-9a-f]{16}");
  EXPECT_TRUE(std::regex_match(provenance["kernel"]["hash"].get<std::string>(), hash));
  const json& config = provenance["config"];
  EXPECT_EQ(config["name"], "trn2");
  EXPECT_TRUE(std::regex_match(config["hash"].get<std::string>(), hash));
  // The resolved config in full: what `trnsim config show trn2` prints.
  ASSERT_TRUE(config["resolved"].is_object());
  EXPECT_TRUE(config["resolved"]["tensor"].contains("clock_ghz"));
  EXPECT_TRUE(config["resolved"]["hbm"].is_object());

  // One source of truth: everything but the provenance equals `trnsim run --json`.
  const testing::CommandResult json_run =
      run_trnsim(std::string("run ") + kGoldenKernel + " --json");
  ASSERT_EQ(json_run.exit_code, 0) << json_run.output;
  const json statistics = json::parse(json_run.output);
  for (const auto& [key, value] : statistics.items()) {
    if (key == "provenance") continue;
    EXPECT_EQ(stats_[key], value) << key;
  }
  EXPECT_EQ(stats_["provenance"]["kernel"], statistics["provenance"]["kernel"]);
}

TEST(RunOutputsFailures, AFailedRunLeavesNoOutputFile) {
  ScratchDir dir;
  const std::string trace = dir.file("trace.json");
  const std::string profile = dir.file("profile.csv");
  const std::string stats = dir.file("stats.json");
  // Fails in its last iteration, after instructions have been traced.
  const testing::CommandResult result =
      run_trnsim("run tests/report/kernels/fails_midway.json --trace " + trace + " --profile " +
                 profile + " --stats " + stats);
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("out of bounds"), std::string::npos) << result.output;
  for (const std::string& path : {trace, profile, stats}) {
    EXPECT_FALSE(std::filesystem::exists(path)) << path;
    EXPECT_FALSE(std::filesystem::exists(path + ".tmp")) << path;
  }
}

TEST(RunOutputsFailures, BadOptionsAreOneClearMessage) {
  ScratchDir dir;
  testing::CommandResult result = run_trnsim(std::string("run ") + kGoldenKernel + " --trace " +
                                             dir.file("t.json") + " --trace-window 5:3");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.output.find("--trace-window 5:3: expected the end after the begin"),
            std::string::npos)
      << result.output;

  const std::string unwritable = dir.file("no/such/dir/t.json");
  result = run_trnsim(std::string("run ") + kGoldenKernel + " --trace " + unwritable);
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.output.find("--trace " + unwritable + ": cannot create"), std::string::npos)
      << result.output;
}

TEST(RunOutputsOptions, LimitAndWindowRestrictTheTrace) {
  ScratchDir dir;
  const std::string path = dir.file("t.json");
  testing::CommandResult result =
      run_trnsim(std::string("run ") + kGoldenKernel + " --trace " + path + " --trace-limit 5");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  json trace = json::parse(read_file(path));
  EXPECT_EQ(trace["otherData"]["slices_written"], 5);
  EXPECT_GT(trace["otherData"]["slices_dropped_by_limit"].get<int>(), 0);

  // The golden kernel's first instructions are DMA triggers at 0-6 ns; later ones start in
  // microseconds. A window of [0, 0.01] us keeps only the early ones.
  result = run_trnsim(std::string("run ") + kGoldenKernel + " --trace " + path +
                      " --trace-window :0.01");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  trace = json::parse(read_file(path));
  for (const json& event : trace["traceEvents"]) {
    if (event["ph"] == "X") {
      EXPECT_LE(event["ts"].get<double>(), 0.01) << event.dump();
    }
  }
  EXPECT_GT(trace["otherData"]["slices_outside_window"].get<int>(), 0);
}

}  // namespace
}  // namespace trnsim::report
