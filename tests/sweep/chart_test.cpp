#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "sweep/compare.hpp"
#include "sweep/plot.hpp"
#include "util/error.hpp"
#include "util/svg_chart.hpp"

namespace trnsim::sweep {
namespace {

using nlohmann::json;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

Record point(std::size_t index, int t, int f, double time_us, const std::string& config = "trn2") {
  Record r;
  r["index"] = index;
  r["kernel"] = "k.json";
  r["config"] = config;
  r["values"] = {{"T", t}, {"F", f}};
  r["status"] = "ok";
  r["metrics"] = {{"time_us", time_us}};
  return r;
}

TEST(SvgChart, NiceTicks) {
  // (10 - 0) / 5 = 2 -> step 2.
  EXPECT_EQ(util::nice_ticks(0, 10), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  // 47 / 5 = 9.4 -> the next of 1, 2, 2.5, 5, 10 x 10^0 is 10.
  EXPECT_EQ(util::nice_ticks(0, 47), (std::vector<double>{0, 10, 20, 30, 40, 50}));
  // 0.3 / 5 = 0.06 -> magnitude 0.01, step 0.1 (10 x 0.01); covers [0.1, 0.4].
  const auto ticks = util::nice_ticks(0.1, 0.4);
  ASSERT_EQ(ticks.size(), 4u);
  EXPECT_DOUBLE_EQ(ticks.front(), 0.1);
  EXPECT_DOUBLE_EQ(ticks.back(), 0.4);
}

TEST(SvgChart, LogTicksAreDecadesWhenTheDataCrossTwoOfThem) {
  // 8.1 .. 126 holds 10 and 100: the axis runs from 1 (below 8.1) to 1000 (above 126).
  std::set<double> many;
  for (int i = 0; i < 15; ++i) many.insert(8.1 * std::pow(126 / 8.1, i / 14.0));
  EXPECT_EQ(util::log_ticks(8.1, 126, many), (std::vector<double>{1, 10, 100, 1000}));
  // Exactly 10 .. 100: both ends are the decades.
  EXPECT_EQ(util::log_ticks(10, 100, {10, 20, 50, 100}), (std::vector<double>{10, 100}));
}

TEST(SvgChart, LogTicksWithinADecadeAreTheDataOr125Steps) {
  // 650, 1300, 2600 hold one power of ten only: the three values themselves.
  EXPECT_EQ(util::log_ticks(650, 2600, {650, 1300, 2600}), (std::vector<double>{650, 1300, 2600}));
  // Close values (20 and 22) would overlap: 1-2-5 steps from 2 to 50 instead.
  EXPECT_EQ(util::log_ticks(2, 40, {2, 20, 22, 40}), (std::vector<double>{2, 5, 10, 20, 50}));
  // 13 values from 3 to 40: 1-2-5 steps from 2 (the last at or below 3) to 50 (first >= 40).
  std::set<double> many;
  for (int i = 0; i < 13; ++i) many.insert(3 + i * (37.0 / 12));
  EXPECT_EQ(util::log_ticks(3, 40, many), (std::vector<double>{2, 5, 10, 20, 50}));
}

TEST(SvgChart, TheCsvBehindALineChartHasEveryPointInXOrder) {
  util::LineChart chart{"t",   "F",   "time, us",
                        false, false, {{"T = 1", {{256, 2.5}, {128, 1}}}, {"", {{128, 0.1}}}}};
  EXPECT_EQ(util::line_chart_csv(chart),
            "series,F,\"time, us\"\nT = 1,128,1\nT = 1,256,2.5\n,128,0.1\n");
  EXPECT_EQ(util::chart_csv_path("plots/a.svg"), "plots/a.csv");
  EXPECT_EQ(util::chart_csv_path("plots/a"), "plots/a.csv");
}

TEST(SvgChart, TheRooflineRoofBendsAtTheRidge) {
  // 100 TFLOP/s over 500 GB/s: ridge at 100e3 / 500 = 200 FLOP/byte. A kernel at 50 FLOP/byte:
  // from 5 (a decade below it) at 5 x 500 / 1e3 = 2.5 TFLOP/s, to 2,000 (a decade above the
  // ridge) at the peak.
  const util::LineSeries roof = util::roofline_roof("roof", 100, 500, 50);
  EXPECT_EQ(roof.name, "roof");
  ASSERT_EQ(roof.points.size(), 3u);
  EXPECT_DOUBLE_EQ(roof.points[0].first, 5);
  EXPECT_DOUBLE_EQ(roof.points[0].second, 2.5);
  EXPECT_DOUBLE_EQ(roof.points[1].first, 200);
  EXPECT_DOUBLE_EQ(roof.points[1].second, 100);
  EXPECT_DOUBLE_EQ(roof.points[2].first, 2000);
  EXPECT_DOUBLE_EQ(roof.points[2].second, 100);
}

TEST(SvgChart, EscapesText) {
  EXPECT_EQ(util::xml_escape("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
  util::LineChart chart{"t<1>", "x", "y", false, false, {{"s&1", {{1, 2}, {2, 3}}}}};
  const std::string svg = util::line_chart_svg(chart);
  EXPECT_NE(svg.find("t&lt;1&gt;"), std::string::npos);
  EXPECT_EQ(svg.find("t<1>"), std::string::npos);
}

TEST(SweepPlot, OneLinePerSeries) {
  const std::vector<Record> records = {point(0, 1, 128, 1.0), point(1, 1, 256, 2.0),
                                       point(2, 2, 128, 1.5), point(3, 2, 256, 3.0)};
  PlotRequest request;
  request.x = "T";
  request.y = "/time/kernel_us";  // the same metric as the recorded "time_us"
  request.by = "F";
  const PlotOutput output = plot_results(records, request);
  EXPECT_EQ(output.plotted, 4u);
  EXPECT_EQ(count(output.svg, "<polyline"), 2u);
  EXPECT_EQ(count(output.svg, "<circle"), 4u + 2u);  // 4 points + 2 legend markers
  EXPECT_NE(output.svg.find("F = 256"), std::string::npos);

  request.by = "";
  request.where = {{"F", "128"}};
  EXPECT_EQ(count(plot_results(records, request).svg, "<polyline"), 1u);
}

TEST(SweepPlot, AmbiguousPointsNameTheOtherKey) {
  const std::vector<Record> records = {point(0, 1, 128, 1.0), point(1, 1, 256, 2.0)};
  PlotRequest request;
  request.x = "T";
  request.y = "time_us";
  try {
    plot_results(records, request);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("differ in F"), std::string::npos) << e.what();
  }
  request.x = "Q";
  try {
    plot_results(records, request);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where(), "--x");
  }
}

TEST(SweepPlot, CategoricalXDrawsBars) {
  const std::vector<Record> records = {point(0, 1, 128, 4.0, "trn1"),
                                       point(1, 1, 128, 2.0, "trn2")};
  PlotRequest request;
  request.x = "config";
  request.y = "time_us";
  const std::string svg = plot_results(records, request).svg;
  EXPECT_EQ(count(svg, "<polyline"), 0u);
  EXPECT_EQ(count(svg, "<title>trn1: 4</title>"), 1u);
  EXPECT_EQ(count(svg, "<title>trn2: 2</title>"), 1u);
}

TEST(Compare, TableWithSpeedupAndInvalidColumn) {
  const auto stats = [](double time_us) {
    json engines;
    for (const char* engine : {"tensor", "vector", "scalar", "gpsimd", "dma"}) {
      engines[engine] = {{"active_pct", 50.0}};
    }
    return json{
        {"time", {{"kernel_us", time_us}}},
        {"system", {{"cores", 1}, {"mfu_pct", 1.5}, {"hbm_achieved_gbps", 300.0}}},
        {"cores",
         json::array({{{"engines", engines}, {"bottleneck", "dma-bound: dma is busy 90%"}}})}};
  };
  const std::vector<CompareColumn> columns = {{"trn1", {true, stats(10.0), ""}},
                                              {"trn2", {true, stats(4.0), ""}},
                                              {"trn3", {false, {}, "k.json: needs 300 KiB"}}};
  const std::string table = compare_table("k.json", columns);
  EXPECT_NE(table.find("speedup vs trn1"), std::string::npos) << table;
  EXPECT_NE(table.find("2.50x"), std::string::npos) << table;  // 10 / 4
  EXPECT_NE(table.find("invalid [1]"), std::string::npos) << table;
  EXPECT_NE(table.find("[1] invalid on trn3: k.json: needs 300 KiB"), std::string::npos) << table;
  EXPECT_NE(table.find("dma-bound"), std::string::npos) << table;
  const auto as_json = compare_json("k.json", columns);
  EXPECT_EQ(as_json["columns"][1]["speedup"], 2.5);
  EXPECT_EQ(as_json["columns"][2]["error"], "k.json: needs 300 KiB");
  const util::BarChart chart = compare_chart("k.json", columns);
  EXPECT_NE(util::bar_chart_svg(chart).find("n/a"), std::string::npos);
  // The CSV: one row per config, the failed config's time empty.
  EXPECT_EQ(util::bar_chart_csv(chart),
            "series,config,kernel time (us)\n,trn1,10\n,trn2,4\n,trn3,\n");
}

}  // namespace
}  // namespace trnsim::sweep
