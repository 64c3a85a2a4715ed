// The statistics tree (include/trnsim/stats.hpp): units in names, groups, lists, paths and the
// JSON renderer.
#include "trnsim/stats.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace trnsim::stats {
namespace {

TEST(StatsTree, ANameMustCarryItsUnit) {
  Group group("engine");
  EXPECT_NO_THROW(group.add("active_ns", 1.5, Unit::kNs));
  EXPECT_NO_THROW(group.add("bytes", 4096U, Unit::kBytes));  // the bare unit
  EXPECT_NO_THROW(group.add("instructions", 3U, Unit::kCount));
  EXPECT_THROW(group.add("active", 1.5, Unit::kNs), std::logic_error);
  EXPECT_THROW(group.add("read_ns", 8U, Unit::kBytes), std::logic_error);
  // A group named for a unit holds values of it under any name.
  Group& waits = group.group("wait_by_producer_ns");
  EXPECT_NO_THROW(waits.add("tensor", 2.0, Unit::kNs));
  EXPECT_THROW(waits.add("tensor_pct", 2.0, Unit::kBytes), std::logic_error);
}

TEST(StatsTree, RendersGroupsListsAndNumberKinds) {
  Group root;
  Group& core = root.append("cores");
  core.add("pid", 0U, Unit::kIndex);
  core.add("end_ns", 10.0, Unit::kNs);
  core.add("offset_ns", -2, Unit::kNs);
  core.group("tensor").add("flops", std::uint64_t{1} << 40, Unit::kCount);
  core.add("name", std::string("core0"), Unit::kText);
  root.group("memory_system").add("model", "packet", Unit::kText);
  root.group("memory_system").list("stacks");  // declared, empty
  root.group("memory_system").add("cores", std::vector<std::uint64_t>{0, 1}, Unit::kIndex);
  EXPECT_EQ(root.to_json().dump(),
            R"({"cores":[{"end_ns":10.0,"name":"core0","offset_ns":-2,"pid":0,)"
            R"("tensor":{"flops":1099511627776}}],)"
            R"("memory_system":{"cores":[0,1],"model":"packet","stacks":[]}})");
}

TEST(StatsTree, AddingANameAgainReplacesItsValue) {
  Group group;
  group.add("utilisation_pct", 10.0, Unit::kPercent);
  group.add("utilisation_pct", 93.5, Unit::kPercent);
  EXPECT_EQ(group.to_json().dump(), R"({"utilisation_pct":93.5})");
}

TEST(StatsTree, FindsAStatisticByItsDottedPath) {
  Group root;
  root.append("cores").group("engines").group("tensor").add("active_ns", 5.0, Unit::kNs);
  root.append("cores").group("engines").group("tensor").add("active_ns", 7.0, Unit::kNs);
  const Statistic* found = root.find("cores.1.engines.tensor.active_ns");
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(std::get<double>(found->value), 7.0);
  EXPECT_EQ(found->unit, Unit::kNs);
  EXPECT_EQ(root.find("cores.2.engines.tensor.active_ns"), nullptr);
  EXPECT_EQ(root.find("cores.x.engines"), nullptr);
  EXPECT_EQ(root.find("cores.0.engines"), nullptr);  // a group, not a statistic
  EXPECT_EQ(root.find("cores"), nullptr);
}

TEST(StatsTree, VisitsEveryStatisticInOrderWithItsPath) {
  Group root;
  root.add("kernel_ns", 3.0, Unit::kNs);
  Group& stack = root.group("hbm").append("stacks");
  stack.add("read_bytes", 64U, Unit::kBytes);
  stack.add("utilization_pct", 1.0, Unit::kPercent);
  std::vector<std::string> seen;
  root.for_each([&seen](const std::string& path, const Statistic& statistic) {
    seen.push_back(path + " " + std::string(unit_symbol(statistic.unit)));
  });
  EXPECT_EQ(seen, (std::vector<std::string>{"kernel_ns ns", "hbm.stacks.0.read_bytes B",
                                            "hbm.stacks.0.utilization_pct %"}));
}

TEST(StatsTree, EveryUnitHasASuffixAndASymbolOrNeither) {
  for (Unit unit : {Unit::kCount, Unit::kIndex, Unit::kText, Unit::kNs, Unit::kUs, Unit::kBytes,
                    Unit::kPercent, Unit::kGbps, Unit::kTflops, Unit::kGhz, Unit::kCycles}) {
    EXPECT_EQ(unit_suffix(unit).empty(), unit_symbol(unit).empty());
  }
  EXPECT_EQ(unit_suffix(Unit::kGbps), "_gbps");
  EXPECT_EQ(unit_symbol(Unit::kGbps), "GB/s");
}

}  // namespace
}  // namespace trnsim::stats
