#include "sweep/regress.hpp"

#include <gtest/gtest.h>

#include "sweep/metrics.hpp"
#include "util/error.hpp"

namespace trnsim::sweep {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

json statistics(double time_us, double mfu_pct, const std::string& bottleneck) {
  return json{{"time", {{"kernel_us", time_us}}},
              {"cores", json::array({{{"bottleneck", bottleneck}}})},
              {"system", {{"mfu_pct", mfu_pct}}}};
}

RunResult ok(double time_us, double mfu_pct = 2.0,
             const std::string& bottleneck = "dma-bound: dma is busy 90.0% of the kernel time") {
  return RunResult{true, statistics(time_us, mfu_pct, bottleneck), ""};
}

Baseline baseline() {
  return parse_baseline(ordered_json::parse(R"({
    "format": "trnsim-baseline/1",
    "cases": [{"kernel": "k.json", "config": "trn2", "params": {"T": 4},
               "metrics": {"time_us": {"expected": 100.0, "rel": 0.05},
                           "bottleneck": {"expected": "dma-bound"},
                           "/system/mfu_pct": {"expected": 2.0, "abs": 0.5}}}]})"),
                        "base.json");
}

TEST(Metrics, AliasesPointersAndVerdicts) {
  EXPECT_EQ(resolve_metric("time_us", "").pointer, "/time/kernel_us");
  EXPECT_EQ(resolve_metric("/system/flops", "").pointer, "/system/flops");
  EXPECT_TRUE(same_metric("time_us", "/time/kernel_us"));
  EXPECT_FALSE(same_metric("bottleneck", "/cores/0/bottleneck"));  // a verdict is not the line
  try {
    resolve_metric("mfu_pc", "spec.json: /metrics/1");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where(), "spec.json: /metrics/1");
    EXPECT_NE(e.message().find("did you mean 'mfu_pct'?"), std::string::npos) << e.what();
  }
  EXPECT_THROW(resolve_metric("/a~2", ""), InputError);  // ~2 is not an RFC 6901 escape

  std::string problem;
  const json stats = statistics(5.0, 1.0, "latency-bound: the busiest unit (dma) is busy 3.0%");
  EXPECT_EQ(extract_metric(stats, resolve_metric("bottleneck", ""), problem),
            json("latency-bound"));
  EXPECT_EQ(extract_metric(stats, resolve_metric("time_us", ""), problem), json(5.0));
  EXPECT_FALSE(extract_metric(stats, resolve_metric("/time/kernel_usec", ""), problem));
  EXPECT_NE(problem.find("did you mean '/time/kernel_us'?"), std::string::npos) << problem;
}

TEST(Regress, UnchangedRunPasses) {
  const RegressReport report = check_baseline(baseline(), {ok(100.0)});
  EXPECT_TRUE(report.passed());
  EXPECT_EQ(report.unchanged, 3u);
  EXPECT_EQ(report.outside, 0u);
}

TEST(Regress, TenPercentSlowerFailsAFivePercentTolerance) {
  // |110 - 100| = 10 > 0.05 * 100 = 5.
  const Baseline base = baseline();
  const RegressReport report = check_baseline(base, {ok(110.0)});
  EXPECT_FALSE(report.passed());
  EXPECT_EQ(report.outside, 1u);
  EXPECT_EQ(report.rows[0].verdict, Verdict::kOutside);
  const std::string text = format_report(base, report, false);
  EXPECT_NE(text.find("k on trn2 T=4"), std::string::npos) << text;
  EXPECT_NE(text.find("+10.00%"), std::string::npos) << text;
  EXPECT_NE(text.find("FAIL"), std::string::npos) << text;
  // Unchanged metrics are listed only with --all.
  EXPECT_EQ(text.find("bottleneck"), std::string::npos) << text;
  EXPECT_NE(format_report(base, report, true).find("bottleneck"), std::string::npos);
}

TEST(Regress, ToleranceBoundaries) {
  const Baseline base = baseline();
  // 104 is 4 from 100 <= 5: within. MFU 2.4 is 0.4 from 2.0 <= 0.5: within.
  RegressReport report = check_baseline(base, {ok(104.0, 2.4)});
  EXPECT_TRUE(report.passed());
  EXPECT_EQ(report.within, 2u);
  // MFU 2.6 is 0.6 from 2.0 > 0.5.
  report = check_baseline(base, {ok(100.0, 2.6)});
  EXPECT_FALSE(report.passed());
  EXPECT_EQ(report.rows[2].verdict, Verdict::kOutside);
  // A different verdict is an exact mismatch.
  report = check_baseline(base, {ok(100.0, 2.0, "vector-bound: vector is busy 80%")});
  EXPECT_EQ(report.rows[1].verdict, Verdict::kOutside);
  // 5% faster: 95 is 5 from 100 <= 5.
  EXPECT_EQ(judge(base.cases[0].expectations[0], json(95.0)), Verdict::kWithin);
  EXPECT_EQ(judge(base.cases[0].expectations[0], json(94.9)), Verdict::kOutside);
}

TEST(Regress, FailedRunAndMissingExpectedFail) {
  const Baseline base = baseline();
  RegressReport report = check_baseline(base, {RunResult{false, {}, "k.json: bad"}});
  EXPECT_FALSE(report.passed());
  EXPECT_EQ(report.failed_cases, 1u);
  EXPECT_NE(format_report(base, report, false).find("error: k on trn2 T=4: k.json: bad"),
            std::string::npos);

  const Baseline fresh = parse_baseline(ordered_json::parse(R"({"format": "trnsim-baseline/1",
      "cases": [{"kernel": "k.json", "metrics": {"time_us": {"expected": null, "rel": 0.01}}}]})"),
                                        "");
  report = check_baseline(fresh, {ok(7.0)});
  EXPECT_EQ(report.rows[0].verdict, Verdict::kNoBaseline);
  EXPECT_FALSE(report.passed());
}

TEST(Regress, UpdateRewritesExpectedAndKeepsTolerances) {
  const ordered_json updated = updated_baseline(baseline(), {ok(110.0, 2.5, "vector-bound: x")});
  const ordered_json& metrics = updated["cases"][0]["metrics"];
  EXPECT_EQ(metrics["time_us"].dump(), R"({"expected":110.0,"rel":0.05})");
  EXPECT_EQ(metrics["bottleneck"].dump(), R"({"expected":"vector-bound"})");
  EXPECT_EQ(metrics["/system/mfu_pct"].dump(), R"({"expected":2.5,"abs":0.5})");
  EXPECT_EQ(updated["cases"][0]["params"].dump(), R"({"T":4})");
  // A case that did not run keeps its values.
  const ordered_json kept = updated_baseline(baseline(), {RunResult{false, {}, "bad"}});
  EXPECT_EQ(kept["cases"][0]["metrics"]["time_us"]["expected"], 100.0);
}

TEST(Regress, FormatBaselineKeepsEachMetricOnOneLine) {
  const ordered_json document =
      ordered_json::parse(R"({"a": {"b": {"expected": 1.5, "rel": 0.01}}, "l": [1, 2], "s": "x"})");
  EXPECT_EQ(format_baseline(document),
            "{\n"
            "  \"a\": {\n"
            "    \"b\": {\"expected\": 1.5, \"rel\": 0.01}\n"
            "  },\n"
            "  \"l\": [1, 2],\n"
            "  \"s\": \"x\"\n"
            "}\n");
  EXPECT_EQ(ordered_json::parse(format_baseline(document)), document);
}

TEST(Regress, BaselineErrorsNamePointer) {
  const auto error_of = [](const std::string& text) -> std::string {
    try {
      parse_baseline(ordered_json::parse(text), "b.json");
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of(R"({"format": "trnsim-baseline/1", "cases": [{"kernel": "k.json",
      "metrics": {"time_us": {"expected": 1, "relative": 0.1}}}]})")
                .find("b.json: /cases/0/metrics/time_us/relative: unknown key 'relative'"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"format": "trnsim-baseline/1", "cases": [{"kernel": "k.json",
      "metrics": {"time_us": {"expected": 1, "rel": -1}}}]})")
                .find("/cases/0/metrics/time_us/rel: expected a non-negative number"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"cases": []})").find("b.json: /format"), std::string::npos);
}

}  // namespace
}  // namespace trnsim::sweep
