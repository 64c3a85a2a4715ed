// Row evaluation and report formatting with hand-made statistics: no simulation.
#include "validation/evaluate.hpp"

#include <gtest/gtest.h>

#include "validation/report.hpp"

namespace trnsim::validation {
namespace {

const RunSpec kRun{"k.json", "trn2", {{"N", "4"}}, {}, {}, {}};

/// Statistics with a kernel time in ns.
nlohmann::json stats_with_time(double kernel_ns) {
  return {{"time", {{"kernel_ns", kernel_ns}}}};
}

Row time_row(double reference_ms, Check check) {
  Row row;
  row.target = "T1";
  row.measure = "time";
  row.hardware = "trn1";
  row.published = "x";
  row.reference = reference_ms;
  row.unit = "ms";
  row.decimals = 2;
  row.check = check;
  row.runs = {kRun};
  row.simulate = [](const RunResults& results) {
    return Measured{results.value(kRun, "/time/kernel_ns") / 1e6, ""};
  };
  return row;
}

TEST(RunKey, NamesKernelConfigAndParamsInOrder) {
  EXPECT_EQ(kRun.key(), "k.json@trn2 N=4");
  EXPECT_EQ((RunSpec{"a.json", "trn1", {{"B", "2"}, {"A", "1"}}, {}, {}, {}}).key(),
            "a.json@trn1 B=2 A=1");
}

TEST(RunKey, NamesTheInputsAndKwargsOfAnNkiKernel) {
  const RunSpec run{"../nki/k.py::f", "trn2", {}, {{"a", "float32[128,64]"}}, {{"T", "4"}}, {}};
  EXPECT_EQ(run.key(), "../nki/k.py::f@trn2 a=float32[128,64] T=4");
}

TEST(RunKey, NamesTheConfigOverridesOfTheMeasurement) {
  const RunSpec run{"k.json", "trn2", {}, {}, {}, {{"compiler.dge_mode", "none"}}};
  EXPECT_EQ(run.key(), "k.json@trn2 --set compiler.dge_mode=none");
}

TEST(Evaluate, RelativeErrorInsideAndOutsideTheTolerance) {
  RunResults results;
  // 11.5 ms against 10 ms: +15.0 %, exactly on a 15 % tolerance: pass.
  results.add_statistics(kRun, stats_with_time(11.5e6));
  Outcome outcome = evaluate(time_row(10, Check::relative(0.15)), results);
  EXPECT_EQ(outcome.status, Status::kPass);
  ASSERT_TRUE(outcome.error_pct.has_value());
  EXPECT_NEAR(*outcome.error_pct, 15.0, 1e-9);
  // 11.6 ms: +16 %: fail.
  results.add_statistics(kRun, stats_with_time(11.6e6));
  outcome = evaluate(time_row(10, Check::relative(0.15)), results);
  EXPECT_EQ(outcome.status, Status::kFail);
  EXPECT_NEAR(*outcome.error_pct, 16.0, 1e-9);
  // 8.4 ms: -16 %: fail too (the tolerance is symmetric).
  results.add_statistics(kRun, stats_with_time(8.4e6));
  EXPECT_EQ(evaluate(time_row(10, Check::relative(0.15)), results).status, Status::kFail);
}

TEST(Evaluate, AStatedReasonMakesAMissKnownButOnlyWhileOutside) {
  RunResults results;
  results.add_statistics(kRun, stats_with_time(20e6));  // +100 %
  Row row = time_row(10, Check::relative(0.15));
  row.known_miss = "the model lacks X";
  EXPECT_EQ(evaluate(row, results).status, Status::kKnownMiss);
  results.add_statistics(kRun, stats_with_time(10e6));
  EXPECT_EQ(evaluate(row, results).status, Status::kPass);
}

TEST(Evaluate, BandsCompareTheValueAsPrinted) {
  RunResults results;
  Row row = time_row(0, Check::range(5, 25));
  row.unit = "%";
  row.decimals = 1;
  // 25.04 prints as 25.0: inside [5, 25]. 25.06 prints as 25.1: outside.
  row.simulate = [](const RunResults&) { return Measured{25.04, ""}; };
  EXPECT_EQ(evaluate(row, results).status, Status::kPass);
  row.simulate = [](const RunResults&) { return Measured{25.06, ""}; };
  EXPECT_EQ(evaluate(row, results).status, Status::kFail);
  row.simulate = [](const RunResults&) { return Measured{4.9, ""}; };
  EXPECT_EQ(evaluate(row, results).status, Status::kFail);
  row.check = Check::at_least(70);
  row.simulate = [](const RunResults&) { return Measured{69.9, ""}; };
  EXPECT_EQ(evaluate(row, results).status, Status::kFail);
  row.check = Check::at_most(100);
  row.simulate = [](const RunResults&) { return Measured{100.04, "k.json@trn1"}; };
  const Outcome outcome = evaluate(row, results);
  EXPECT_EQ(outcome.status, Status::kPass);
  EXPECT_EQ(outcome.where, "k.json@trn1");
  EXPECT_FALSE(outcome.error_pct.has_value());
}

TEST(Evaluate, AFailedOrMissingRunGivesNoResultWithTheReason) {
  RunResults results;
  results.add_error(kRun, "worker exited with code 2: bad kernel");
  Outcome outcome = evaluate(time_row(10, Check::relative(0.1)), results);
  EXPECT_EQ(outcome.status, Status::kNoResult);
  EXPECT_NE(outcome.where.find("bad kernel"), std::string::npos);

  RunResults empty;
  outcome = evaluate(time_row(10, Check::relative(0.1)), empty);
  EXPECT_EQ(outcome.status, Status::kNoResult);
  EXPECT_NE(outcome.where.find("was not run"), std::string::npos);

  RunResults no_number;
  no_number.add_statistics(kRun, {{"time", {{"kernel_ns", "text"}}}});
  outcome = evaluate(time_row(10, Check::relative(0.1)), no_number);
  EXPECT_EQ(outcome.status, Status::kNoResult);
  EXPECT_NE(outcome.where.find("/time/kernel_ns"), std::string::npos);
  EXPECT_FALSE(all_passed({outcome}));
}

TEST(Evaluate, PendingRowsNeitherPassNorFail) {
  Row row;
  row.check = Check::pending(0.25);
  const Outcome outcome = evaluate(row, RunResults{});
  EXPECT_EQ(outcome.status, Status::kPending);
  EXPECT_TRUE(all_passed({outcome}));
  EXPECT_EQ(tolerance_text(row), "±25 %");
}

TEST(Format, TolerancesAndValues) {
  Row row = time_row(10, Check::relative(0.15));
  EXPECT_EQ(tolerance_text(row), "±15 %");
  row.check = Check::relative(0);
  EXPECT_EQ(tolerance_text(row), "exact");
  row.check = Check::range(40, 45);
  EXPECT_EQ(tolerance_text(row), "40-45");
  row.check = Check::range(1, 1);
  EXPECT_EQ(tolerance_text(row), "must hold");
  row.check = Check::at_least(70);
  EXPECT_EQ(tolerance_text(row), ">= 70");
  row.check = Check::at_most(100);
  EXPECT_EQ(tolerance_text(row), "<= 100");

  EXPECT_EQ(value_text(row, 6.6612), "6.66 ms");
  row.unit = "B";
  row.decimals = 0;
  EXPECT_EQ(value_text(row, 2048000), "2,048,000 B");
  row.unit = "x";
  row.decimals = 2;
  EXPECT_EQ(value_text(row, 1.2058), "1.21x");
  row.unit = "";
  row.decimals = 0;
  EXPECT_EQ(value_text(row, 129), "129");
  row.format = [](double v) { return v > 0.5 ? std::string("holds") : std::string("violated"); };
  EXPECT_EQ(value_text(row, 1), "holds");
}

Report small_report() {
  Report report;
  report.version = "9.9.9";
  RunResults results;
  results.add_statistics(kRun, stats_with_time(10.5e6));
  Row pass = time_row(10, Check::relative(0.15));
  Row miss = time_row(5, Check::relative(0.15));
  miss.measure = "v4 | time";
  miss.known_miss = "the model lacks X";
  Row miss2 = miss;  // the same reason on a second row: listed once, naming both
  miss2.measure = "ratio";
  Row pending;
  pending.target = "T5";
  pending.measure = "all-reduce";
  pending.hardware = "?";
  pending.published = "58 us";
  pending.check = Check::pending(0.25);
  Row sanity = time_row(0, Check::at_most(100));
  sanity.target = "sanity";
  sanity.measure = "busiest engine";
  sanity.unit = "%";
  sanity.simulate = [](const RunResults&) { return Measured{99.5, "k.json@trn2"}; };
  report.rows = {pass, miss, miss2, pending, sanity};
  for (const Row& row : report.rows) report.outcomes.push_back(evaluate(row, results));
  report.calibration = {{{"sequencer.queue_depth", "T1 v4", "32-1024"},
                         {{"trn1", "256", "fitted on T1 v4"},
                          {"trn2", "256", "fitted on T1 v4"},
                          {"trn3", "32", ""},
                          {"trn4", "32", ""}}}};
  return report;
}

TEST(Report, SummaryCountsEachStatus) {
  const Report report = small_report();
  EXPECT_EQ(report.outcomes[0].status, Status::kPass);       // 10.5 vs 10: +5 %
  EXPECT_EQ(report.outcomes[1].status, Status::kKnownMiss);  // 10.5 vs 5: +110 %
  EXPECT_EQ(summary_line(report), "2 pass, 2 known misses, 1 pending, 0 fail");
}

TEST(Report, MarkdownHasBothTablesReasonsCalibrationAndRuns) {
  const Report report = small_report();
  const std::string markdown = format_markdown(report);
  EXPECT_NE(markdown.find("Generated by trnsim 9.9.9"), std::string::npos);
  EXPECT_NE(markdown.find("| T1 | trn1 | time | x | 10.50 ms | +5.0 % | ±15 % | pass |"),
            std::string::npos)
      << markdown;
  // Pipes inside cells are escaped so the table keeps its columns.
  EXPECT_NE(markdown.find("v4 \\| time"), std::string::npos);
  EXPECT_NE(markdown.find("| T5 | ? | all-reduce | 58 us | pending |  | ±25 % | pending |"),
            std::string::npos);
  EXPECT_NE(markdown.find("| busiest engine | trn1 | x | 99.50 % | k.json@trn2 | pass |"),
            std::string::npos);
  EXPECT_NE(markdown.find("- **T1 v4 | time; T1 ratio**: the model lacks X\n"), std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("| `sequencer.queue_depth` | 256 | 256 | 32 | 32 | T1 v4 | 32-1024 |"),
            std::string::npos);
  EXPECT_NE(markdown.find("- `sequencer.queue_depth` (trn1, trn2): fitted on T1 v4"),
            std::string::npos);
  EXPECT_NE(markdown.find("- `sequencer.queue_depth` (trn3, trn4): (none recorded)"),
            std::string::npos);
  EXPECT_NE(markdown.find("| T1 | `examples/kernels/k.json` | trn2 | `--param N=4` |"),
            std::string::npos);
  // Deterministic.
  EXPECT_EQ(markdown, format_markdown(small_report()));
}

TEST(Report, TextTableAlignsColumnsAndNamesWhereAMaximumCameFrom) {
  const std::string text = format_text(small_report());
  EXPECT_NE(text.find("target"), std::string::npos);
  EXPECT_NE(text.find("[5] busiest engine: k.json@trn2"), std::string::npos);
  EXPECT_NE(text.find("2 pass, 2 known misses, 1 pending, 0 fail"), std::string::npos);
  // The status column starts at the same character (not byte: "±" is two bytes) on every line.
  const auto column_of = [](const std::string& line, const std::string& word) {
    const std::size_t bytes = line.find(word);
    std::size_t characters = 0;
    for (std::size_t i = 0; i < bytes; ++i) {
      characters += (static_cast<unsigned char>(line[i]) & 0xC0) != 0x80 ? 1 : 0;
    }
    return characters;
  };
  const std::string header = text.substr(0, text.find('\n'));
  const std::string first = text.substr(header.size() + 1, text.find('\n', header.size() + 1));
  EXPECT_EQ(column_of(header, "status"), column_of(first, " pass") + 1) << text;
}

}  // namespace
}  // namespace trnsim::validation
