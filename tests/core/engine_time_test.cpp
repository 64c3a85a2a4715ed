// Dependency waits and busy time as engine time (core/core_stats.hpp): a unit's wait is a union
// of intervals in which it executes nothing, never a sum over instructions waiting at once.
// Accounting contract tests in simulator ticks, then whole-core runs with times worked out by
// hand from the Trainium2 config (configs/trn2.json), as in core_timing_test.cpp; last, the
// bottleneck line (report/report.cpp) names the unit with the highest utilisation the engine
// table prints, or the largest wait.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "core/core_stats.hpp"
#include "sim_harness.hpp"
#include "trn2_costs.hpp"

namespace trnsim::testing {
namespace {

using core::ConcurrentUnitTime;
using core::EngineStats;
using kernel::Engine;

constexpr std::size_t kSync = static_cast<std::size_t>(Engine::kSync);
constexpr std::size_t kVector = static_cast<std::size_t>(Engine::kVector);
constexpr std::size_t kTensor = static_cast<std::size_t>(Engine::kTensor);
// One tick = 1 fs: the totals in ns are ticks * 1e-6.
constexpr double kTicksPerNs = 1e6;  // 1 fs ticks
constexpr double kNsPerTick = 1e-6;

TEST(IdleWait, IsTheWholeWaitOnAnEngineThatIsIdleThroughout) {
  // Waits from 100 to 400; the previous instruction ended at 80, this one starts at 400.
  EXPECT_EQ(core::idle_wait_ticks(100, 400, 80, 400), 300u);
}

TEST(IdleWait, LeavesOutTimeTheEngineSpendsOnOtherWork) {
  // TensorE: another PE tile runs until 250, this matmul's LoadStationary starts at 350.
  EXPECT_EQ(core::idle_wait_ticks(100, 400, 250, 350), 100u);
  // Busy past the whole wait: nothing idle.
  EXPECT_EQ(core::idle_wait_ticks(100, 400, 500, 600), 0u);
}

TEST(ConcurrentUnitTime, TwoItemsWaitingAtOnceCountOnce) {
  EngineStats stats;
  ConcurrentUnitTime time(stats, kTicksPerNs);
  time.issued(kSync, 1, 10);
  time.issued(kSync, 2, 20);
  // Both wait for one vector result visible at 100.
  time.waited(10, 100, Engine::kVector, 20);
  time.waited(20, 100, Engine::kVector, 20);
  time.completed(1, 150, 200, 100);
  time.completed(2, 180, 260, 100);
  time.all_issued();
  // Waiting [10, 100): 90 ticks, not 90 + 80. Busy [150, 260): 110.
  EXPECT_DOUBLE_EQ(stats.wait_ns(), 90 * kNsPerTick);
  EXPECT_DOUBLE_EQ(stats.wait_ns_by_producer[kVector], 90 * kNsPerTick);
  EXPECT_DOUBLE_EQ(stats.active_ns, 110 * kNsPerTick);
}

TEST(ConcurrentUnitTime, AWaitWhileAnotherItemIsBusyIsNotIdle) {
  EngineStats stats;
  ConcurrentUnitTime time(stats, kTicksPerNs);
  time.issued(kSync, 1, 0);
  time.issued(kSync, 2, 10);
  time.waited(10, 80, Engine::kVector, 10);
  time.completed(1, 0, 50, 50);
  time.completed(2, 80, 120, 80);
  time.all_issued();
  // Item 2 waits [10, 80) while item 1 moves data until 50: idle-waiting [50, 80).
  EXPECT_DOUBLE_EQ(stats.wait_ns(), 30 * kNsPerTick);
  EXPECT_DOUBLE_EQ(stats.active_ns, 90 * kNsPerTick);
}

TEST(ConcurrentUnitTime, OverlappingWaitsGoToTheProducerWhoseResultComesFirst) {
  EngineStats stats;
  ConcurrentUnitTime time(stats, kTicksPerNs);
  time.issued(kSync, 1, 0);
  time.issued(kVector, 2, 20);
  time.waited(0, 100, Engine::kVector, 20);  // item 1 on a vector result at 100
  time.waited(20, 60, Engine::kTensor, 20);  // item 2 on a tensor result at 60
  time.completed(2, 60, 70, 60);
  time.completed(1, 100, 130, 100);
  time.all_issued();
  // [0, 20) only item 1 waits: vector. [20, 60) both: item 2's wait ends first: tensor.
  // [60, 70) busy. [70, 100) item 1: vector.
  EXPECT_DOUBLE_EQ(stats.wait_ns_by_producer[kVector], 50 * kNsPerTick);
  EXPECT_DOUBLE_EQ(stats.wait_ns_by_producer[kTensor], 40 * kNsPerTick);
  EXPECT_DOUBLE_EQ(stats.wait_ns(), 90 * kNsPerTick);
  EXPECT_DOUBLE_EQ(stats.active_ns, 40 * kNsPerTick);
}

// Many items with reports out of time order, as a core makes them (a wait once the producer has
// times, a busy interval at completion), against a tick-by-tick count of the definition; the
// intervals kept for folding stay bounded by the items in flight.
TEST(ConcurrentUnitTime, EqualsATickByTickCountAndKeepsFewIntervals) {
  struct Item {
    std::size_t lane = 0;
    std::uint64_t issue = 0, wait_end = 0, busy_begin = 0, busy_end = 0;
    std::uint64_t wait_reported = 0, busy_reported = 0;
    Engine producer = Engine::kVector;
  };
  std::mt19937 random(7);
  auto uniform = [&random](std::uint64_t low, std::uint64_t high) {
    return std::uniform_int_distribution<std::uint64_t>(low, high)(random);
  };
  std::vector<Item> items(3000);
  std::array<std::uint64_t, 3> lane_time{};
  for (std::uint64_t id = 0; id < items.size(); ++id) {
    Item& item = items[id];
    item.lane = id % 3;
    lane_time[item.lane] += uniform(0, 60);
    item.issue = lane_time[item.lane];
    item.wait_end = item.issue + (uniform(0, 2) == 0 ? 0 : uniform(1, 80));
    item.busy_begin = item.wait_end + uniform(0, 20);
    item.busy_end = item.busy_begin + uniform(1, 10);
    item.wait_reported = uniform(item.issue, item.wait_end);
    item.busy_reported = uniform(item.busy_begin, item.busy_end);
    item.producer = static_cast<Engine>(uniform(0, 4));
  }
  // Reports in time order (ties: issue, wait, busy), each with its time as `now`.
  struct Report {
    std::uint64_t at = 0;
    int kind = 0;  // 0 issued, 1 waited, 2 completed
    std::uint64_t id = 0;
  };
  std::vector<Report> reports;
  for (std::uint64_t id = 0; id < items.size(); ++id) {
    reports.push_back({items[id].issue, 0, id});
    reports.push_back({items[id].wait_reported, 1, id});
    reports.push_back({items[id].busy_reported, 2, id});
  }
  std::stable_sort(reports.begin(), reports.end(), [](const Report& a, const Report& b) {
    return a.at != b.at ? a.at < b.at : a.kind < b.kind;
  });
  EngineStats stats;
  ConcurrentUnitTime time(stats, kTicksPerNs);
  std::size_t most_retained = 0;
  for (const Report& report : reports) {
    const Item& item = items[report.id];
    if (report.kind == 0) time.issued(item.lane, report.id, item.issue);
    if (report.kind == 1) time.waited(item.issue, item.wait_end, item.producer, report.at);
    if (report.kind == 2) time.completed(report.id, item.busy_begin, item.busy_end, report.at);
    most_retained = std::max(most_retained, time.retained_intervals());
  }
  time.all_issued();

  // The definition, one tick at a time.
  std::uint64_t end = 0;
  for (const Item& item : items) end = std::max(end, item.busy_end);
  std::vector<std::uint8_t> busy(end, 0);
  for (const Item& item : items) {
    std::fill(busy.begin() + static_cast<std::ptrdiff_t>(item.busy_begin),
              busy.begin() + static_cast<std::ptrdiff_t>(item.busy_end), 1);
  }
  std::uint64_t busy_ticks = 0;
  std::array<std::uint64_t, kernel::kEngineCount> wait_ticks{};
  for (std::uint64_t tick = 0; tick < end; ++tick) {
    if (busy[tick]) {
      ++busy_ticks;
      continue;
    }
    const Item* first = nullptr;  // the waiting item whose wait ends first (ties: lower engine)
    for (const Item& item : items) {
      if (item.issue > tick || item.wait_end <= tick) continue;
      if (first == nullptr || item.wait_end < first->wait_end ||
          (item.wait_end == first->wait_end && item.producer < first->producer)) {
        first = &item;
      }
    }
    if (first != nullptr) ++wait_ticks[static_cast<std::size_t>(first->producer)];
  }
  EXPECT_DOUBLE_EQ(stats.active_ns, static_cast<double>(busy_ticks) * kNsPerTick);
  for (std::size_t producer = 0; producer < kernel::kEngineCount; ++producer) {
    EXPECT_DOUBLE_EQ(stats.wait_ns_by_producer[producer],
                     static_cast<double>(wait_ticks[producer]) * kNsPerTick)
        << producer;
  }
  // An item lives for at most 170 ticks and one is issued every 10 ticks on average: a few
  // dozen are in flight, and the kept intervals stay near the folding batch (64), never near
  // the 6,000 reported.
  EXPECT_LT(most_retained, 200u);
  // The case is not trivial: the unit is busy, and waits, a good part of the time.
  EXPECT_GT(busy_ticks, end / 5);
  EXPECT_GT(wait_ticks[kVector], end / 50);
}

// --- Whole-core runs (Trainium2) ------------------------------------------------------------
//   kSemaphoreNs, kIssueNs, kVectorAddNs, kScalarCopyNs: trn2_costs.hpp.

std::string engine_kernel_with(const std::string& program) {
  return R"({
    "format": "trnsim-kernel/1", "name": "t",
    "tensors": {
      "x": {"memory": "sbuf", "dtype": "float32", "shape": [128, 2048]},
      "y": {"memory": "sbuf", "dtype": "float32", "shape": [128, 2048]},
      "z": {"memory": "sbuf", "dtype": "float32", "shape": [128, 2048]},
      "w": {"memory": "sbuf", "dtype": "float32", "shape": [128, 2048]},
      "v": {"memory": "sbuf", "dtype": "float32", "shape": [128, 2048]},
      "out0": {"memory": "hbm", "dtype": "float32", "shape": [128, 2048]},
      "out1": {"memory": "hbm", "dtype": "float32", "shape": [128, 2048]}
    },
    "program": )" +
         program + "}";
}

const nlohmann::json& engine(const nlohmann::json& stats, const char* name) {
  return stats["cores"][0]["engines"][name];
}

/// Per unit: active + wait within the kernel; the waiting-on breakdown adds up to the wait.
void expect_engine_time_within_the_kernel(const nlohmann::json& stats) {
  const double kernel = kernel_ns(stats);
  for (const auto& [name, figures] : stats["cores"][0]["engines"].items()) {
    const double wait = figures["dependency_wait_ns"].get<double>();
    EXPECT_LE(figures["active_ns"].get<double>() + wait, kernel * (1 + 1e-12)) << name;
    double by_producer = 0;
    for (const auto& [producer, ns] : figures["dependency_wait_by_producer_ns"].items()) {
      by_producer += ns.get<double>();
    }
    EXPECT_NEAR(by_producer, wait, 1e-9 * std::max(1.0, wait)) << name;
  }
}

TEST(EngineTime, TwoDmasWaitingOnOneVectorInstructionCountOnce) {
  const auto stats = simulate_in_child(engine_kernel_with(R"([
      {"op": "tensor_tensor", "dst": "z", "in0": "x", "in1": "y", "alu": "add"},
      {"op": "dma_copy", "dst": "out0", "src": "z"},
      {"op": "dma_copy", "dst": "out1", "src": "z", "queue": 1}])"));
  // Sync issues the stores at 2 and 4 ns; both wait for the add's result, visible to them at
  // 4266.667 + 50 ns. No DMA moves data before: the DMA path waits from 2 ns on, once.
  const double ready = kVectorAddNs + kSemaphoreNs;
  EXPECT_NEAR(engine(stats, "dma")["dependency_wait_ns"].get<double>(), ready - kIssueNs, 0.01);
  EXPECT_NEAR(engine(stats, "dma")["dependency_wait_by_producer_ns"]["vector"].get<double>(),
              ready - kIssueNs, 0.01);
  EXPECT_NEAR(engine(stats, "vector")["dependency_wait_ns"].get<double>(), 0.0, 1e-9);
  expect_engine_time_within_the_kernel(stats);
}

TEST(EngineTime, AChainAcrossEnginesWaitsOnEachProducerInTurn) {
  const auto stats = simulate_in_child(engine_kernel_with(R"([
      {"op": "tensor_tensor", "dst": "z", "in0": "x", "in1": "y", "alu": "add"},
      {"op": "activation", "dst": "w", "src": "z", "func": "copy"},
      {"op": "tensor_tensor", "dst": "v", "in0": "w", "in1": "y", "alu": "add"},
      {"op": "dma_copy", "dst": "out0", "src": "v"}])"));
  // vector add [0, 4266.667); ScalarE waits from 0 until it is visible (+50), copies until
  // 6023.333; VectorE, free at 4266.667, waits until the copy is visible (+50) = 6073.333, adds
  // until 10340; the store, issued at 2 ns, waits until 10390.
  const double scalar_start = kVectorAddNs + kSemaphoreNs;
  const double second_add_start = scalar_start + kScalarCopyNs + kSemaphoreNs;
  const double store_ready = second_add_start + kVectorAddNs + kSemaphoreNs;
  EXPECT_NEAR(engine(stats, "scalar")["dependency_wait_by_producer_ns"]["vector"].get<double>(),
              scalar_start, 0.01);
  EXPECT_NEAR(engine(stats, "vector")["dependency_wait_by_producer_ns"]["scalar"].get<double>(),
              second_add_start - kVectorAddNs, 0.01);
  EXPECT_NEAR(engine(stats, "dma")["dependency_wait_by_producer_ns"]["vector"].get<double>(),
              store_ready - kIssueNs, 0.01);
  EXPECT_GT(kernel_ns(stats), store_ready);
  expect_engine_time_within_the_kernel(stats);
}

// --- The bottleneck line names the unit with the highest utilisation_pct -------------------

std::string bottleneck(const nlohmann::json& stats) {
  return stats["cores"][0]["bottleneck"].get<std::string>();
}

TEST(Bottleneck, ALoadStreamIsDmaBoundByItsBytesAtThePeakRate) {
  // 32 loads of [128, 2048] bfloat16 = 16 MiB through 16 DMA engines of 23 GB/s (the core cap,
  // 437.5 GB/s, is higher): they need 16,777,216 / 368 ns at the peak rate.
  const auto stats = simulate_in_child(R"({
    "format": "trnsim-kernel/1", "name": "loads",
    "tensors": {
      "src": {"memory": "hbm", "dtype": "bfloat16", "shape": [32, 128, 2048]},
      "dst": {"memory": "sbuf", "dtype": "bfloat16", "shape": [8, 128, 2048], "partition_dim": 1}
    },
    "program": [{"for": "i", "range": 32, "body": [
      {"op": "dma_copy", "dst": "dst[i % 8]", "src": "src[i]", "queue": "i % 4"}]}]})");
  const nlohmann::json& dma = stats["cores"][0]["dma"];
  EXPECT_EQ(dma["resources"]["dma_engines"]["bytes"].get<std::uint64_t>(), 16777216u);
  EXPECT_DOUBLE_EQ(dma["resources"]["dma_engines"]["peak_gbps"].get<double>(), 368.0);
  const double expected_pct = 100.0 * 16777216 / 368.0 / kernel_ns(stats);
  EXPECT_NEAR(engine(stats, "dma")["utilisation_pct"].get<double>(), expected_pct, 1e-9);
  EXPECT_EQ(dma["busiest_resource"], "dma_engines");
  EXPECT_GE(expected_pct, 70.0);
  EXPECT_EQ(bottleneck(stats).rfind("dma-bound: the DMA's dma_engines is at ", 0), 0u)
      << bottleneck(stats);
}

TEST(Bottleneck, AMatmulStreamIsTensorBound) {
  // 64 accumulating matmuls [128x128]x[128x512] on one stationary, nothing else: TensorE busy
  // from the first to the last but for the first LoadStationary and the pipeline latency.
  const auto stats = simulate_in_child(R"({
    "format": "trnsim-kernel/1", "name": "mm",
    "tensors": {
      "s": {"memory": "sbuf", "dtype": "bfloat16", "shape": [128, 128]},
      "m": {"memory": "sbuf", "dtype": "bfloat16", "shape": [128, 512]},
      "acc": {"memory": "psum", "dtype": "float32", "shape": [128, 512]}
    },
    "program": [{"for": "i", "range": 64, "body": [
      {"op": "nc_matmul", "dst": "acc", "stationary": "s", "moving": "m", "accumulate": "i > 0"}]}]})",
                                       "trn2", {"tensor.throttle_enabled=false"});
  const double tensor_pct = engine(stats, "tensor")["utilisation_pct"].get<double>();
  EXPECT_DOUBLE_EQ(tensor_pct, engine(stats, "tensor")["active_pct"].get<double>());
  EXPECT_GE(tensor_pct, 90.0);
  EXPECT_EQ(bottleneck(stats).rfind("tensor-bound: tensor is busy ", 0), 0u) << bottleneck(stats);
}

TEST(Bottleneck, ALoadComputeStoreChainIsLatencyBoundOnItsLargestWait) {
  // One [128, 2048] fp32 tile: load (1 MiB), add, store. The adds take 4266.667 ns of a kernel
  // of two DMA latencies (450 ns each) and transfers more: no unit reaches 70%. The store,
  // issued at 2 ns, waits for the add's result (load + 50 + add + 50 ns) with no DMA moving
  // data but during the load's transfer; VectorE waits only for the load (+ 50 ns): the DMA's
  // wait on VectorE is the largest.
  const auto stats = simulate_in_child(R"({
    "format": "trnsim-kernel/1", "name": "chain",
    "tensors": {
      "a": {"memory": "hbm", "dtype": "float32", "shape": [128, 2048]},
      "out": {"memory": "hbm", "dtype": "float32", "shape": [128, 2048]},
      "a_sb": {"memory": "sbuf", "dtype": "float32", "shape": [128, 2048]},
      "c_sb": {"memory": "sbuf", "dtype": "float32", "shape": [128, 2048]}
    },
    "program": [
      {"op": "dma_copy", "dst": "a_sb", "src": "a"},
      {"op": "tensor_tensor", "dst": "c_sb", "in0": "a_sb", "in1": "a_sb", "alu": "add"},
      {"op": "dma_copy", "dst": "out", "src": "c_sb"}]})");
  const std::string line = bottleneck(stats);
  EXPECT_EQ(line.rfind("latency-bound: ", 0), 0u) << line;
  const double dma_wait =
      engine(stats, "dma")["dependency_wait_by_producer_ns"]["vector"].get<double>();
  EXPECT_GT(dma_wait, engine(stats, "vector")["dependency_wait_ns"].get<double>());
  char named[64];
  std::snprintf(named, sizeof named, "dma waits %.2f us", dma_wait / 1e3);
  EXPECT_NE(line.find(std::string(named) + " ("), std::string::npos) << line;
  EXPECT_NE(line.find(") on vector"), std::string::npos) << line;
  expect_engine_time_within_the_kernel(stats);
}

}  // namespace
}  // namespace trnsim::testing
