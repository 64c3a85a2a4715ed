// The rows of `trnsim validate` against their sources: every published figure a row quotes
// appears in calibration-targets.md, every run names an existing example on a built-in config,
// and the calibrated parameters exist in every built-in config.
#include "validation/targets.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "config/load.hpp"
#include "validation/catalog.hpp"
#include "validation/report.hpp"

namespace trnsim::validation {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

// The project's copy of the calibration targets (docs/sources/), so the check runs from any
// clone; CopyOfTheTargetsIsCurrent keeps it equal to the shared original where that exists.
std::string targets_document() {
  return read_file(std::string(TRNSIM_SOURCE_DIR) + "/docs/sources/calibration-targets.md");
}

TEST(CalibrationRows, CopyOfTheTargetsIsCurrent) {
  const std::string copy = targets_document();
  ASSERT_FALSE(copy.empty()) << "docs/sources/calibration-targets.md is missing";
  const std::string original =
      read_file(std::string(TRNSIM_SHARED_DIR) + "/validation/calibration-targets.md");
  if (original.empty()) {
    GTEST_SKIP() << "no shared/validation/calibration-targets.md beside this checkout";
  }
  EXPECT_EQ(copy, original) << "docs/sources/calibration-targets.md differs from "
                               "shared/validation/calibration-targets.md: copy it again";
}

TEST(CalibrationRows, QuoteFiguresOfThePublishedDocument) {
  const std::string document = targets_document();
  ASSERT_FALSE(document.empty()) << "docs/sources/calibration-targets.md is missing";
  for (const Row& row : calibration_rows()) {
    // The leading number of the published text ("51.80 ms", "1,416 ns", "58 us", "40-45 %").
    const std::size_t first = row.published.find_first_of("0123456789");
    ASSERT_NE(first, std::string::npos) << row.measure;
    const std::size_t end = row.published.find_first_not_of("0123456789,.", first);
    std::string figure = row.published.substr(first, end - first);
    if (figure.back() == '.' || figure.back() == ',') figure.pop_back();
    EXPECT_NE(document.find(figure), std::string::npos)
        << row.target << " " << row.measure << ": '" << figure << "' is not in the document";
  }
}

TEST(CalibrationRows, CoverEveryTargetAndReadExistingExamples) {
  std::set<std::string> targets;
  for (const Row& row : calibration_rows()) {
    targets.insert(row.target);
    for (const RunSpec& run : row.runs) {
      const std::string file = run.kernel.substr(0, run.kernel.find("::"));
      if (file.size() > 3 && file.compare(file.size() - 3, 3, ".py") == 0) {
        // the NKI Python version of an example, beside examples/kernels
        EXPECT_EQ(file.rfind("../nki/", 0), 0u) << run.key();
        EXPECT_FALSE(run.inputs.empty()) << run.key();
      } else {
        EXPECT_NE(find_example(run.kernel), nullptr) << run.key();
      }
      EXPECT_TRUE(
          std::filesystem::exists(std::string(TRNSIM_SOURCE_DIR) + "/examples/kernels/" + file))
          << run.key();
      const auto names = config::builtin_config_names();
      EXPECT_NE(std::find(names.begin(), names.end(), run.config), names.end()) << run.key();
    }
    if (row.check.kind != Check::Kind::kPending) {
      EXPECT_FALSE(row.runs.empty()) << row.measure;
      EXPECT_TRUE(static_cast<bool>(row.simulate)) << row.measure;
    }
  }
  EXPECT_EQ(targets, (std::set<std::string>{"T1", "T2", "T3", "T4", "T5"}));
}

TEST(CalibrationRows, UseTheTolerancesTheTargetsState) {
  for (const Row& row : calibration_rows()) {
    if (row.check.kind != Check::Kind::kRelative || row.check.tolerance == 0) continue;
    // T1 15 % (ratios 20 %, the ideal time 1 %), T2 and T3 20 %, T4 10 %, T5 25 %.
    if (row.target == "T1" && row.measure.find("kernel time") != std::string::npos) {
      EXPECT_DOUBLE_EQ(row.check.tolerance, 0.15) << row.measure;
    }
    if (row.target == "T2") {
      EXPECT_DOUBLE_EQ(row.check.tolerance, 0.20) << row.measure;
    }
    if (row.target == "T3" && row.unit == "us") {
      EXPECT_DOUBLE_EQ(row.check.tolerance, 0.20) << row.measure;
    }
    if (row.target == "T4") {
      EXPECT_DOUBLE_EQ(row.check.tolerance, 0.10) << row.measure;
    }
  }
}

TEST(SanityRows, RunEveryExampleOnEveryGenerationItSupports) {
  std::size_t expected_runs = 0;
  for (const ExampleKernel& kernel : example_kernels()) expected_runs += kernel.generations.size();
  const std::vector<Row> rows = sanity_rows();
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows.front().runs.size(), expected_runs);
}

TEST(CalibratedParameters, ExistInEveryBuiltInConfigWithASource) {
  for (const CalibrationEntry& entry : calibration_entries()) {
    ASSERT_EQ(entry.values.size(), generations().size());
    for (const CalibratedValue& value : entry.values) {
      EXPECT_NE(value.value, "null") << entry.parameter.key << " in " << value.generation;
      EXPECT_FALSE(value.source.empty())
          << entry.parameter.key << " in " << value.generation
          << ": a fitted value must say which target it was fitted on (config 'sources')";
    }
  }
}

}  // namespace
}  // namespace trnsim::validation
