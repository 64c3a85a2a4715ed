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
  // Every dependency arrow has both ends, each inside a slice of its track (whole ns).
  std::map<std::uint64_t, std::vector<const json*>> flows;
  for (const json& event : trace_["traceEvents"]) {
    if (event["ph"] == "s" || event["ph"] == "f") flows[event["id"]].push_back(&event);
  }
  EXPECT_FALSE(flows.empty());
  for (const auto& [id, ends] : flows) {
    ASSERT_EQ(ends.size(), 2u) << "flow " << id;
    EXPECT_EQ((*ends[0])["ph"], "s") << "flow " << id;
    EXPECT_EQ((*ends[1])["ph"], "f") << "flow " << id;
    for (const json* end : ends) {
      const long ts = std::lround((*end)["ts"].get<double>() * 1000);
      const auto& slices = tracks[{(*end)["pid"], (*end)["tid"]}];
      EXPECT_TRUE(std::any_of(slices.begin(), slices.end(),
                              [&](const std::pair<long, long>& slice) {
                                return slice.first <= ts && ts <= slice.second;
                              }))
          << "flow " << id << " end at " << ts << " ns outside every slice of its track";
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
  // A hash is 16 lowercase hex digits.
  const auto is_hash = [](const std::string& text) {
    return text.size() == 16 && text.find_first_not_of("0123456789abcdef") == std::string::npos;
  };
  EXPECT_TRUE(is_hash(provenance["kernel"]["hash"].get<std::string>()));
  const json& config = provenance["config"];
  EXPECT_EQ(config["name"], "trn2");
  EXPECT_TRUE(is_hash(config["hash"].get<std::string>()));
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
  const std::string lines = dir.file("lines.csv");
  // Fails in its last iteration, after instructions have been traced.
  const testing::CommandResult result =
      run_trnsim("run tests/report/kernels/fails_midway.json --trace " + trace + " --profile " +
                 profile + " --stats " + stats + " --profile-lines " + lines);
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("out of bounds"), std::string::npos) << result.output;
  for (const std::string& path : {trace, profile, stats, lines}) {
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

  // Missing directories are created; one below a regular file cannot be.
  std::ofstream(dir.file("plain-file")) << "x";
  const std::string unwritable = dir.file("plain-file/dir/t.json");
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

/// Rows of a CSV text as column name -> value.
std::vector<std::map<std::string, std::string>> csv_rows(const std::string& text) {
  const std::vector<std::string> lines = lines_of(text);
  std::vector<std::map<std::string, std::string>> rows;
  if (lines.empty()) return rows;
  const std::vector<std::string> header = csv_split(lines[0]);
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::vector<std::string> fields = csv_split(lines[i]);
    std::map<std::string, std::string> row;
    for (std::size_t c = 0; c < header.size() && c < fields.size(); ++c) row[header[c]] = fields[c];
    rows.push_back(row);
  }
  return rows;
}

// tests/report/kernels/source_lines.json: kern.py:10 has two memsets (vector, gpsimd), kern.py:12
// an add run 3 times by the loop of kern.py:11, kern.py:13 a DMA store.
TEST(SourceAttribution, ProfilesTraceAndSummaryNameTheSourceLines) {
  ScratchDir dir;
  const std::string kernel = "tests/report/kernels/source_lines.json";
  const testing::CommandResult result =
      run_trnsim("run " + kernel + " --profile-lines " + dir.file("lines.csv") + " --profile " +
                 dir.file("profile.csv") + " --dma-profile " + dir.file("dma.csv") + " --trace " +
                 dir.file("trace.json") + " --stats " + dir.file("stats.json"));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const auto lines = csv_rows(read_file(dir.file("lines.csv")));
  const auto profile = csv_rows(read_file(dir.file("profile.csv")));
  const auto dma = csv_rows(read_file(dir.file("dma.csv")));
  EXPECT_EQ(csv_split(lines_of(read_file(dir.file("lines.csv")))[0]),
            documented_columns("`--profile-lines` columns"));

  // The profiles cite the source line where the statement has one.
  std::map<std::string, int> profile_rows;
  for (const auto& row : profile) ++profile_rows[row.at("nki_source_location")];
  EXPECT_EQ(profile_rows,
            (std::map<std::string, int>{{"kern.py:10", 2}, {"kern.py:12", 3}, {"kern.py:13", 1}}));
  ASSERT_EQ(dma.size(), 1u + std::count_if(dma.begin(), dma.end(), [](const auto& row) {
                          return row.at("kind") == "packet";
                        }));
  for (const auto& row : dma) EXPECT_EQ(row.at("nki_source_location"), "kern.py:13");

  // Per line: the profile rows' durations and waits summed; the store by its transfer, and its
  // wait from the trigger's end to the transfer's issue.
  ASSERT_EQ(lines.size(), 3u);
  std::map<std::string, std::map<std::string, std::string>> by_source;
  for (const auto& row : lines) by_source[row.at("source")] = row;
  for (const std::string line : {"kern.py:10", "kern.py:12"}) {
    double busy = 0;
    double wait = 0;
    double first_start = 1e300;
    double last_end = 0;
    for (const auto& row : profile) {
      if (row.at("nki_source_location") != line) continue;
      busy += std::stod(row.at("duration_ns"));
      wait += std::stod(row.at("evt_wait_time_ns"));
      first_start = std::min(first_start, std::stod(row.at("start_ts")));
      last_end = std::max(last_end, std::stod(row.at("end_ts")));
    }
    const auto& row = by_source.at(line);
    EXPECT_NEAR(std::stod(row.at("busy_ns")), busy, 0.01) << line;
    EXPECT_NEAR(std::stod(row.at("wait_ns")), wait, 0.01) << line;
    EXPECT_NEAR(std::stod(row.at("first_start_ns")), first_start, 0.001) << line;
    EXPECT_NEAR(std::stod(row.at("last_end_ns")), last_end, 0.001) << line;
  }
  EXPECT_EQ(by_source.at("kern.py:10").at("instructions"), "2");
  EXPECT_EQ(by_source.at("kern.py:12").at("instructions"), "3");
  EXPECT_EQ(by_source.at("kern.py:13").at("instructions"), "1");
  EXPECT_EQ(by_source.at("kern.py:12").at("engines"), "vector");
  EXPECT_EQ(by_source.at("kern.py:13").at("engines"), "dma");
  EXPECT_EQ(by_source.at("kern.py:10").at("label"), "memset /program/0");
  EXPECT_EQ(by_source.at("kern.py:13").at("label"), "store");
  const auto transfer = std::find_if(dma.begin(), dma.end(),
                                     [](const auto& row) { return row.at("kind") == "transfer"; });
  ASSERT_NE(transfer, dma.end());
  const auto trigger = std::find_if(profile.begin(), profile.end(), [](const auto& row) {
    return row.at("nki_source_location") == "kern.py:13";
  });
  EXPECT_NEAR(std::stod(by_source.at("kern.py:13").at("busy_ns")),
              std::stod(transfer->at("duration_ns")), 0.002);
  EXPECT_NEAR(std::stod(by_source.at("kern.py:13").at("wait_ns")),
              std::stod(transfer->at("issue_ts")) - std::stod(trigger->at("end_ts")), 0.002);
  // Sorted by busy time; busy_pct of the kernel time.
  const json stats = json::parse(read_file(dir.file("stats.json")));
  const double kernel_ns = stats["time"]["kernel_ns"].get<double>();
  for (std::size_t i = 0; i < lines.size(); ++i) {
    EXPECT_NEAR(std::stod(lines[i].at("busy_pct")),
                std::stod(lines[i].at("busy_ns")) / kernel_ns * 100, 0.001);
    if (i > 0) {
      EXPECT_GE(std::stod(lines[i - 1].at("busy_ns")), std::stod(lines[i].at("busy_ns")));
    }
  }
  // The statistics carry the same rows.
  ASSERT_EQ(stats["source_lines"].size(), 3u);
  EXPECT_EQ(stats["source_lines"][0]["source"], lines[0].at("source"));
  EXPECT_EQ(stats["source_lines"][0]["instructions"], std::stoi(lines[0].at("instructions")));

  // Trace: slices of statements with a source carry it.
  std::map<std::string, int> traced;
  const json trace = json::parse(read_file(dir.file("trace.json")));
  for (const json& event : trace["traceEvents"]) {
    if (event["ph"] == "X" && event["args"].contains("source")) {
      ++traced[event["args"]["source"].get<std::string>() + " " + event["cat"].get<std::string>()];
    }
  }
  EXPECT_EQ(traced["kern.py:12 vector"], 3);
  EXPECT_EQ(traced["kern.py:10 gpsimd"], 1);
  EXPECT_EQ(traced["kern.py:13 dma_trigger"], 1);
  EXPECT_EQ(traced["kern.py:13 dma_transfer"], 1);

  // The summary lists the lines.
  const testing::CommandResult summary = run_trnsim("run " + kernel);
  ASSERT_EQ(summary.exit_code, 0) << summary.output;
  EXPECT_NE(summary.output.find("source lines    all of 3 by busy time"), std::string::npos)
      << summary.output;
  EXPECT_NE(summary.output.find("\nkern.py:12            3 "), std::string::npos) << summary.output;
}

TEST(SourceAttribution, KernelsWithoutSourcesKeepTheirOutputsAndGetLinesPerStatement) {
  ScratchDir dir;
  const testing::CommandResult summary = run_trnsim(std::string("run ") + kGoldenKernel);
  ASSERT_EQ(summary.exit_code, 0) << summary.output;
  EXPECT_EQ(summary.output.find("source lines"), std::string::npos) << summary.output;
  const testing::CommandResult json_run =
      run_trnsim(std::string("run ") + kGoldenKernel + " --json");
  ASSERT_EQ(json_run.exit_code, 0) << json_run.output;
  EXPECT_FALSE(json::parse(json_run.output).contains("source_lines"));

  const testing::CommandResult lines_run =
      run_trnsim(std::string("run ") + kGoldenKernel + " --profile-lines " + dir.file("l.csv"));
  ASSERT_EQ(lines_run.exit_code, 0) << lines_run.output;
  EXPECT_EQ(lines_run.output, summary.output);
  const auto rows = csv_rows(read_file(dir.file("l.csv")));
  // One row per executed statement (7 instructions in the golden kernel), named by pointer.
  ASSERT_EQ(rows.size(), 7u);
  std::uint64_t instructions = 0;
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("source").rfind(std::string(kGoldenKernel) + ":/program/", 0), 0u)
        << row.at("source");
    instructions += std::stoull(row.at("instructions"));
  }
  const json statistics = json::parse(json_run.output);
  EXPECT_EQ(instructions, statistics["system"]["instructions"].get<std::uint64_t>());
}

}  // namespace
}  // namespace trnsim::report
