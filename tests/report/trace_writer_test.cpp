// TraceWriter on hand-made timings of the golden kernel's instructions (no simulation): the
// Chrome trace-event layout, arguments, lanes that keep slices of a track from overlapping,
// the window and the limit, DMA slices and bandwidth counters, determinism, and no file left
// behind by an unfinished trace.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "report/trace.hpp"
#include "report_test_support.hpp"
#include "util/error.hpp"

namespace trnsim::report {
namespace {

using kernel::Engine;
using kernel::Opcode;
using nlohmann::json;
using testing::GoldenKernel;
using testing::read_file;
using testing::ScratchDir;

core::InstructionTiming timing_of(const kernel::Instruction& instruction, double start_ns,
                                  double end_ns) {
  core::InstructionTiming timing;
  timing.instruction = &instruction;
  timing.start_ns = start_ns;
  timing.end_ns = end_ns;
  timing.visible_ns = end_ns;
  return timing;
}

std::vector<json> events_with_phase(const json& trace, const std::string& phase) {
  std::vector<json> events;
  for (const json& event : trace["traceEvents"]) {
    if (event["ph"] == phase) events.push_back(event);
  }
  return events;
}

/// Name of thread (pid, tid) from the metadata events; "" when absent.
std::string thread_name(const json& trace, std::uint64_t pid, std::uint64_t tid) {
  for (const json& event : trace["traceEvents"]) {
    if (event["ph"] == "M" && event["name"] == "thread_name" && event["pid"] == pid &&
        event["tid"] == tid) {
      return event["args"]["name"];
    }
  }
  return "";
}

std::string process_name(const json& trace, std::uint64_t pid) {
  for (const json& event : trace["traceEvents"]) {
    if (event["ph"] == "M" && event["name"] == "process_name" && event["pid"] == pid) {
      return event["args"]["name"];
    }
  }
  return "";
}

/// Per (pid, tid), X slices sorted by start never overlap (times compared in whole ns).
void expect_no_overlap(const json& trace) {
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::vector<std::pair<long, long>>> tracks;
  for (const json& event : events_with_phase(trace, "X")) {
    const long start = std::lround(event["ts"].get<double>() * 1000);
    const long end = start + std::lround(event["dur"].get<double>() * 1000);
    tracks[{event["pid"], event["tid"]}].emplace_back(start, end);
  }
  for (auto& [track, slices] : tracks) {
    std::sort(slices.begin(), slices.end());
    for (std::size_t i = 1; i < slices.size(); ++i) {
      EXPECT_LE(slices[i - 1].second, slices[i].first)
          << "overlap on pid " << track.first << " tid " << track.second;
    }
  }
}

class TraceWriterTest : public ::testing::Test {
 protected:
  TraceSystem system(std::uint32_t cores = 1, std::uint32_t cores_per_chip = 8) const {
    TraceSystem shape;
    shape.cores = cores;
    shape.cores_per_chip = cores_per_chip;
    return shape;
  }
  json finish_and_parse(TraceWriter& writer, double kernel_ns) {
    writer.finish(kernel_ns);
    return json::parse(read_file(path_));
  }

  GoldenKernel golden_;
  ScratchDir dir_;
  std::string path_ = dir_.file("trace.json");
};

TEST_F(TraceWriterTest, OneSliceCarriesTheInstructionsArguments) {
  const kernel::Instruction& matmul = golden_.first(Opcode::kNcMatmul);
  core::InstructionTiming timing = timing_of(matmul, 100.0, 218.5);
  timing.visible_ns = 300.0;
  timing.wait_ns = 50.0;
  timing.waited_on = Engine::kDma;
  timing.waited_on_sequence = 1;

  TraceWriter writer(path_, golden_.program(), system(), {});
  writer.instruction(timing);
  const json trace = finish_and_parse(writer, 300.0);

  const std::vector<json> slices = events_with_phase(trace, "X");
  ASSERT_EQ(slices.size(), 1u);
  const json& slice = slices[0];
  EXPECT_EQ(slice["name"], "mm, \"main\"");  // the statement's `name`
  EXPECT_EQ(slice["cat"], "tensor");
  EXPECT_EQ(slice["pid"], 0);
  EXPECT_EQ(slice["tid"], 1);  // tensor: track 0, lane 0
  EXPECT_EQ(thread_name(trace, 0, 1), "tensor");
  EXPECT_EQ(process_name(trace, 0), "NeuronCore 0 (chip 0, pid 0)");
  // Start 100 ns; end 218.5 ns rounds (half away from zero) to 219 ns: 0.100 us for 0.119 us.
  EXPECT_NE(read_file(path_).find("\"ts\":0.100,\"dur\":0.119"), std::string::npos);
  const json& args = slice["args"];
  EXPECT_EQ(args["op"], "nc_matmul");
  EXPECT_EQ(args["seq"], 2);
  EXPECT_EQ(args["pointer"], "/program/1/body/1");
  EXPECT_EQ(args["loops"], json({{"t", 0}}));
  EXPECT_EQ(args["dst"], "acc[128, 128] float32 psum");
  EXPECT_EQ(args["moving"], "x_sb[128, 128] bfloat16 sbuf");
  EXPECT_EQ(args["stationary"], "w_sb[128, 128] bfloat16 sbuf");
  EXPECT_EQ(args["dtype"], "bfloat16");
  EXPECT_EQ(args["partitions"], 128);
  EXPECT_EQ(args["elements_per_partition"], 128);
  EXPECT_EQ(args["flops"], 4194304);         // 2 * K * M * N = 2 * 128 * 128 * 128
  EXPECT_FALSE(args.contains("hbm_bytes"));  // zero: left out
  EXPECT_DOUBLE_EQ(args["wait_ns"].get<double>(), 50.0);
  EXPECT_EQ(args["waited_on"], "dma #1");
  EXPECT_DOUBLE_EQ(args["visible_ns"].get<double>(), 300.0);
  EXPECT_EQ(trace["displayTimeUnit"], "ns");
  EXPECT_EQ(trace["otherData"]["slices_written"], 1);
}

TEST_F(TraceWriterTest, ADmaTriggerSitsOnItsTriggerEnginesTrack) {
  // The store of y is triggered by the scalar engine, on queue 1.
  const kernel::Instruction* store = nullptr;
  for (const kernel::Instruction& instruction : golden_.instructions) {
    if (instruction.opcode == Opcode::kDmaCopy && instruction.dma_trigger == Engine::kScalar) {
      store = &instruction;
      break;
    }
  }
  ASSERT_NE(store, nullptr);
  TraceWriter writer(path_, golden_.program(), system(), {});
  writer.instruction(timing_of(*store, 10, 12));
  const json trace = finish_and_parse(writer, 12);
  const json slice = events_with_phase(trace, "X").at(0);
  EXPECT_EQ(slice["cat"], "dma_trigger");
  EXPECT_EQ(slice["tid"], 3);  // scalar: track 2, lane 0
  EXPECT_EQ(slice["args"]["queue"], 1);
  EXPECT_EQ(slice["args"]["hbm_bytes"], 65536);  // y[t]: 128 x 128 float32 written to HBM
  EXPECT_FALSE(slice["args"].contains("wait_ns"));
}

TEST_F(TraceWriterTest, CoresAreProcessesNamedByChip) {
  kernel::Instruction on_core_1 = golden_.first(Opcode::kActivation);
  on_core_1.pid = 1;
  TraceWriter writer(path_, golden_.program(), system(2, 1), {});
  writer.instruction(timing_of(golden_.first(Opcode::kActivation), 0, 10));
  writer.instruction(timing_of(on_core_1, 0, 10));
  const json trace = finish_and_parse(writer, 10);
  EXPECT_EQ(process_name(trace, 0), "NeuronCore 0 (chip 0, pid 0)");
  EXPECT_EQ(process_name(trace, 1), "NeuronCore 0 (chip 1, pid 1)");
}

TEST_F(TraceWriterTest, OverlappingSlicesOfOneTrackGoToExtraLanes) {
  const kernel::Instruction& add = golden_.first(Opcode::kTensorTensor);
  TraceWriter writer(path_, golden_.program(), system(), {});
  writer.instruction(timing_of(add, 0, 100));
  writer.instruction(timing_of(add, 50, 150));   // overlaps the first: second lane
  writer.instruction(timing_of(add, 100, 200));  // fits after the first on lane 1
  const json trace = finish_and_parse(writer, 200);
  const std::vector<json> slices = events_with_phase(trace, "X");
  ASSERT_EQ(slices.size(), 3u);
  // vector = track 1: tid 2; its second lane is tid 2 + 10000.
  EXPECT_EQ(slices[0]["tid"], 2);
  EXPECT_EQ(slices[1]["tid"], 10002);
  EXPECT_EQ(slices[2]["tid"], 2);
  EXPECT_EQ(thread_name(trace, 0, 10002), "vector #2");
  expect_no_overlap(trace);
}

TEST_F(TraceWriterTest, TheWindowKeepsOnlyOverlappingSlices) {
  const kernel::Instruction& add = golden_.first(Opcode::kTensorTensor);
  TraceOptions options;
  parse_trace_window("1:2", options);  // [1000, 2000] ns
  TraceWriter writer(path_, golden_.program(), system(), options);
  writer.instruction(timing_of(add, 0, 500));      // before: dropped
  writer.instruction(timing_of(add, 900, 1100));   // overlaps the begin
  writer.instruction(timing_of(add, 1500, 1600));  // inside
  writer.instruction(timing_of(add, 2000, 2100));  // touches the end
  writer.instruction(timing_of(add, 2100, 2200));  // after: dropped
  const json trace = finish_and_parse(writer, 2200);
  const std::vector<json> slices = events_with_phase(trace, "X");
  ASSERT_EQ(slices.size(), 3u);
  EXPECT_DOUBLE_EQ(slices[0]["ts"].get<double>(), 0.9);
  EXPECT_DOUBLE_EQ(slices[2]["ts"].get<double>(), 2.0);
  EXPECT_EQ(trace["otherData"]["slices_outside_window"], 2);
  EXPECT_DOUBLE_EQ(trace["otherData"]["window_begin_us"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(trace["otherData"]["window_end_us"].get<double>(), 2.0);
}

TEST_F(TraceWriterTest, TheLimitStopsSlicesAndMarksWhere) {
  const kernel::Instruction& add = golden_.first(Opcode::kTensorTensor);
  TraceOptions options;
  options.max_slices = 2;
  TraceWriter writer(path_, golden_.program(), system(), options);
  for (int i = 0; i < 4; ++i) writer.instruction(timing_of(add, 100.0 * i, 100.0 * i + 50));
  const json trace = finish_and_parse(writer, 400);
  EXPECT_EQ(events_with_phase(trace, "X").size(), 2u);
  const std::vector<json> marks = events_with_phase(trace, "i");
  ASSERT_EQ(marks.size(), 1u);
  EXPECT_EQ(marks[0]["name"], "trace limit reached");
  EXPECT_DOUBLE_EQ(marks[0]["ts"].get<double>(), 0.2);  // the first slice left out
  EXPECT_EQ(trace["otherData"]["slices_dropped_by_limit"], 2);
  EXPECT_EQ(writer.slices_written(), 2u);
}

TEST_F(TraceWriterTest, DmaTransfersAndPacketsHaveQueueAndEngineTracksAndCounters) {
  const kernel::Instruction& load = golden_.first(Opcode::kDmaCopy);  // load w: 32 KiB
  core::DmaEvent transfer = core::dma_event_of(0, load.sequence, load);
  transfer.trigger = Engine::kScalar;
  transfer.queue = 1;
  transfer.hbm_stack = 0;
  transfer.issue_ns = 0;
  transfer.start_ns = 1000;
  transfer.end_ns = 3000;
  core::DmaEvent packet = transfer;
  packet.kind = core::DmaEvent::Kind::kPacket;
  packet.dma_engine = 3;
  packet.packet = 7;

  TraceOptions options;
  options.counter_bin_ns = 1000;
  options.detail = TraceDetail::kPackets;
  TraceWriter writer(path_, golden_.program(), system(), options);
  writer.dma(packet);
  writer.dma(transfer);
  const json trace = finish_and_parse(writer, 3000);

  const std::vector<json> slices = events_with_phase(trace, "X");
  ASSERT_EQ(slices.size(), 2u);
  // Tracks: 6 sequencer tracks, then 16 queues per trigger engine, then the DMA engines.
  // Packet on engine 3: track 6 + 5 * 16 + 3 = 89, tid 90.
  EXPECT_EQ(slices[0]["cat"], "dma_packet");
  EXPECT_EQ(slices[0]["tid"], 90);
  EXPECT_EQ(thread_name(trace, 0, 90), "dma engine 3");
  EXPECT_EQ(slices[0]["args"]["packet"], 7);
  // Transfer on scalar (engine 2) queue 1: track 6 + 2 * 16 + 1 = 39, tid 40.
  EXPECT_EQ(slices[1]["cat"], "dma_transfer");
  EXPECT_EQ(slices[1]["tid"], 40);
  EXPECT_EQ(thread_name(trace, 0, 40), "dma queue 1 (scalar)");
  const json& args = slices[1]["args"];
  EXPECT_EQ(args["bytes"], 32768);  // w: 128 x 128 bfloat16
  EXPECT_EQ(args["hbm_read_bytes"], 32768);
  EXPECT_EQ(args["src"], "hbm");
  EXPECT_EQ(args["dst"], "sbuf");
  EXPECT_DOUBLE_EQ(args["latency_ns"].get<double>(), 1000.0);     // start - issue
  EXPECT_DOUBLE_EQ(args["achieved_gbps"].get<double>(), 16.384);  // 32768 B / 2000 ns

  // Counters: 32768 B spread over [1000, 3000) ns = 16384 B in each 1000 ns bin = 16.384 GB/s
  // from 1 us, none before, back to 0 at 3 us. The HBM counters are in the chip's process.
  std::map<std::string, std::vector<std::pair<double, double>>> counters;
  for (const json& sample : events_with_phase(trace, "C")) {
    const std::string key = std::to_string(sample["pid"].get<std::uint64_t>()) + " " +
                            sample["name"].get<std::string>();
    counters[key].emplace_back(sample["ts"].get<double>(),
                               sample["args"].begin().value().get<double>());
  }
  const std::vector<std::pair<double, double>> expected{{0.0, 0.0}, {1.0, 16.384}, {3.0, 0.0}};
  EXPECT_EQ(counters["1000000 HBM bandwidth"], expected);
  EXPECT_EQ(counters["1000000 HBM stack 0 bandwidth"], expected);  // from the packet
  EXPECT_EQ(counters["0 DMA bandwidth"], expected);
  EXPECT_EQ(process_name(trace, 1000000), "chip 0");
  expect_no_overlap(trace);
}

TEST_F(TraceWriterTest, TheDetailLevelChoosesTransferAndPacketSlices) {
  const kernel::Instruction& load = golden_.first(Opcode::kDmaCopy);
  core::DmaEvent transfer = core::dma_event_of(0, load.sequence, load);
  transfer.start_ns = 1000;
  transfer.end_ns = 3000;
  core::DmaEvent packet = transfer;
  packet.kind = core::DmaEvent::Kind::kPacket;
  packet.dma_engine = 0;
  const std::vector<std::pair<TraceDetail, std::vector<std::string>>> expected = {
      {TraceDetail::kInstructions, {"tensor"}},
      {TraceDetail::kDma, {"tensor", "dma_transfer"}},
      {TraceDetail::kPackets, {"tensor", "dma_packet", "dma_transfer"}}};
  for (const auto& [detail, categories] : expected) {
    TraceOptions options;
    options.detail = detail;
    TraceWriter writer(path_, golden_.program(), system(), options);
    writer.instruction(timing_of(golden_.first(Opcode::kNcMatmul), 3000, 3100));
    writer.dma(packet);
    writer.dma(transfer);
    std::vector<std::string> written;
    for (const json& slice : events_with_phase(finish_and_parse(writer, 3100), "X")) {
      written.push_back(slice["cat"]);
    }
    EXPECT_EQ(written, categories);
  }
}

TEST_F(TraceWriterTest, AWaitIsAnArrowFromTheProducersSliceToTheWaitingOne) {
  const kernel::Instruction& load = golden_.first(Opcode::kDmaCopy);
  const kernel::Instruction& matmul = golden_.first(Opcode::kNcMatmul);
  core::DmaEvent transfer = core::dma_event_of(0, load.sequence, load);
  transfer.queue = 1;  // sync queue 1: track 6 + 4 * 16 + 1 = 71, tid 72
  transfer.start_ns = 1000;
  transfer.end_ns = 3000;
  core::InstructionTiming waiting = timing_of(matmul, 3050, 3150);
  waiting.wait_ns = 3050;
  waiting.waited_on = Engine::kDma;
  waiting.waited_on_sequence = load.sequence;
  core::InstructionTiming unknown_producer = timing_of(matmul, 4000, 4100);
  unknown_producer.wait_ns = 10;
  unknown_producer.waited_on_sequence = load.sequence + 1000;  // never written

  TraceWriter writer(path_, golden_.program(), system(), {});
  writer.instruction(timing_of(load, 0, 0));  // the trigger: the transfer is kept over it
  writer.dma(transfer);
  writer.instruction(waiting);
  writer.instruction(unknown_producer);
  EXPECT_EQ(writer.flows_written(), 1u);
  const json trace = finish_and_parse(writer, 4100);

  const std::vector<json> from = events_with_phase(trace, "s");
  const std::vector<json> to = events_with_phase(trace, "f");
  ASSERT_EQ(from.size(), 1u);
  ASSERT_EQ(to.size(), 1u);
  EXPECT_EQ(from[0]["id"], to[0]["id"]);
  // Leaves from the transfer's last ns, arrives where the matmul starts (bound to its slice).
  EXPECT_EQ(from[0]["tid"], 72);
  EXPECT_DOUBLE_EQ(from[0]["ts"].get<double>(), 2.999);
  EXPECT_EQ(to[0]["tid"], 1);
  EXPECT_DOUBLE_EQ(to[0]["ts"].get<double>(), 3.05);
  EXPECT_EQ(to[0]["bp"], "e");
}

TEST_F(TraceWriterTest, EngineTrafficThroughSbufAndPsumIsACounterPerCore) {
  const kernel::Instruction& matmul = golden_.first(Opcode::kNcMatmul);
  std::uint64_t sbuf = 0;
  std::uint64_t psum = 0;
  for (const kernel::AccessPattern& pattern : matmul.operands) {
    if (!pattern.used()) continue;
    (pattern.memory == kernel::MemoryKind::kPsum ? psum : sbuf) += pattern.bytes();
  }
  ASSERT_GT(sbuf, 0u);
  ASSERT_GT(psum, 0u);
  TraceOptions options;
  options.counter_bin_ns = 1000;
  TraceWriter writer(path_, golden_.program(), system(), options);
  writer.instruction(timing_of(matmul, 0, 1000));  // exactly one bin
  const json trace = finish_and_parse(writer, 1000);
  std::map<std::string, double> first_value;
  for (const json& sample : events_with_phase(trace, "C")) {
    if (sample["pid"] == 0 && !first_value.contains(sample["name"])) {
      first_value[sample["name"]] = sample["args"].begin()->get<double>();
    }
  }
  // Bytes over 1000 ns, in GB/s (bytes per ns).
  EXPECT_NEAR(first_value["SBUF bandwidth (engines)"], static_cast<double>(sbuf) / 1000, 1e-3);
  EXPECT_NEAR(first_value["PSUM bandwidth (engines)"], static_cast<double>(psum) / 1000, 1e-3);
}

TEST_F(TraceWriterTest, QueueOccupancyAndDmasInFlightAreMeanCountsPerBin) {
  const kernel::Instruction& matmul = golden_.first(Opcode::kNcMatmul);
  const kernel::Instruction& load = golden_.first(Opcode::kDmaCopy);
  // Two matmuls queued over [0, 1000): one from 0 to 1000, one from 500 to 1000: a mean of 1.5.
  core::InstructionTiming first = timing_of(matmul, 1000, 1100);
  core::InstructionTiming second = timing_of(matmul, 1000, 1200);
  second.fetched_ns = 500;
  // A transfer issued at 0 and complete at 2000: one in flight in both bins.
  core::DmaEvent transfer = core::dma_event_of(0, load.sequence, load);
  transfer.issue_ns = 0;
  transfer.start_ns = 400;
  transfer.end_ns = 2000;
  TraceOptions options;
  options.counter_bin_ns = 1000;
  TraceWriter writer(path_, golden_.program(), system(), options);
  writer.instruction(first);
  writer.instruction(second);
  writer.dma(transfer);
  const json trace = finish_and_parse(writer, 2000);
  std::map<std::string, std::vector<std::pair<double, double>>> samples;
  for (const json& sample : events_with_phase(trace, "C")) {
    samples[sample["name"]].emplace_back(sample["ts"].get<double>(),
                                         sample["args"].begin()->get<double>());
  }
  using Samples = std::vector<std::pair<double, double>>;
  EXPECT_EQ(samples["tensor queue"], (Samples{{0.0, 1.5}, {2.0, 0.0}}));  // then 0 to the end
  EXPECT_EQ(samples["DMAs in flight"], (Samples{{0.0, 1.0}, {2.0, 0.0}}));
  EXPECT_NE(read_file(path_).find("\"tensor queue\",\"ph\":\"C\",\"pid\":0,\"ts\":0.000,"
                                  "\"args\":{\"instructions\":1.500}"),
            std::string::npos);
}

TEST_F(TraceWriterTest, CountersInAWindowStartWithTheValueAtItsBegin) {
  const kernel::Instruction& load = golden_.first(Opcode::kDmaCopy);
  core::DmaEvent transfer = core::dma_event_of(0, load.sequence, load);
  transfer.start_ns = 0;
  transfer.end_ns = 4000;  // 32768 B over 4 bins of 1000 ns: 8192 B each, 8.192 GB/s
  TraceOptions options;
  parse_trace_window("2.5:10", options);  // [2500, 10000] ns
  TraceWriter writer(path_, golden_.program(), system(), options);
  writer.dma(transfer);
  const json trace = finish_and_parse(writer, 4000);
  std::vector<std::pair<double, double>> samples;
  for (const json& sample : events_with_phase(trace, "C")) {
    if (sample["name"] == "HBM bandwidth") {
      samples.emplace_back(sample["ts"].get<double>(), sample["args"]["GB/s"].get<double>());
    }
  }
  // Bins at 0 and 1 us end before the window; the bin from 2 us holds the value at 2.5 us; the
  // equal bin from 3 us is not repeated; back to 0 at 4 us.
  EXPECT_EQ(samples, (std::vector<std::pair<double, double>>{{2.0, 8.192}, {4.0, 0.0}}));
}

TEST_F(TraceWriterTest, AllocatedSbufAndPsumAreConstantCounters) {
  TraceSystem shape = system();
  shape.sbuf_bytes_used = 4096;
  shape.sbuf_partition_bytes = 196608;  // 4096 / 196608 = 2.0833 %
  shape.psum_bytes_used = 1024;
  shape.psum_partition_bytes = 16384;  // 6.25 %
  TraceWriter writer(path_, golden_.program(), shape, {});
  writer.instruction(timing_of(golden_.first(Opcode::kActivation), 0, 500));
  const json trace = finish_and_parse(writer, 500);
  std::vector<std::string> samples;
  for (const json& sample : events_with_phase(trace, "C")) {
    const std::string name = sample["name"];
    if (name.ends_with("allocated")) samples.push_back(name + "@" + sample["ts"].dump());
  }
  EXPECT_EQ(samples, (std::vector<std::string>{"SBUF allocated@0.0", "SBUF allocated@0.5",
                                               "PSUM allocated@0.0", "PSUM allocated@0.5"}));
  EXPECT_NE(read_file(path_).find("\"SBUF allocated\",\"ph\":\"C\",\"pid\":0,\"ts\":0.000,"
                                  "\"args\":{\"%\":2.083}"),
            std::string::npos);
}

TEST_F(TraceWriterTest, TheSameEventsGiveTheSameBytes) {
  auto write = [&](const std::string& path) {
    TraceWriter writer(path, golden_.program(), system(), {});
    double t = 0;
    for (const kernel::Instruction& instruction : golden_.instructions) {
      writer.instruction(timing_of(instruction, t, t + 33.3333));
      t += 40.1;
    }
    writer.finish(t);
    return read_file(path);
  };
  const std::string first = write(dir_.file("a.json"));
  EXPECT_EQ(first, write(dir_.file("b.json")));
  EXPECT_TRUE(json::accept(first));
}

TEST_F(TraceWriterTest, AnUnfinishedTraceLeavesNoFile) {
  {
    TraceWriter writer(path_, golden_.program(), system(), {});
    writer.instruction(timing_of(golden_.first(Opcode::kActivation), 0, 500));
  }  // the run failed: no finish()
  EXPECT_FALSE(std::filesystem::exists(path_));
  EXPECT_FALSE(std::filesystem::exists(path_ + ".tmp"));
}

TEST(TraceDetailOption, NamesTheThreeLevels) {
  TraceOptions options;
  parse_trace_detail("instructions", options);
  EXPECT_EQ(options.detail, TraceDetail::kInstructions);
  parse_trace_detail("packets", options);
  EXPECT_EQ(options.detail, TraceDetail::kPackets);
  parse_trace_detail("dma", options);
  EXPECT_EQ(options.detail, TraceDetail::kDma);
  EXPECT_THROW(parse_trace_detail("all", options), InputError);
}

TEST(TraceWindow, ParsesMicrosecondBoundsWithOptionalSides) {
  TraceOptions options;
  parse_trace_window("10:20.5", options);
  EXPECT_DOUBLE_EQ(options.window_begin_ns, 10000.0);
  EXPECT_DOUBLE_EQ(options.window_end_ns, 20500.0);
  parse_trace_window("50:", options);
  EXPECT_DOUBLE_EQ(options.window_begin_ns, 50000.0);
  EXPECT_TRUE(std::isinf(options.window_end_ns));
  parse_trace_window(":5", options);
  EXPECT_DOUBLE_EQ(options.window_begin_ns, 0.0);
  EXPECT_DOUBLE_EQ(options.window_end_ns, 5000.0);
}

TEST(TraceWindow, MalformedWindowsAreLocatedInputErrors) {
  auto message = [](const std::string& text) {
    TraceOptions options;
    try {
      parse_trace_window(text, options);
    } catch (const InputError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("abc").find("--trace-window abc: expected BEGIN_US:END_US"), std::string::npos);
  EXPECT_NE(message("x:3").find("expected the begin as a non-negative number of microseconds, "
                                "found 'x'"),
            std::string::npos);
  EXPECT_NE(message("5:3").find("expected the end after the begin"), std::string::npos);
}

TEST(RateCounter, SpreadsBytesUniformlyOverBins) {
  RateCounter counter(1000, 100);
  counter.add(0, 2000, 4000);    // 2000 B in each of bins 0 and 1
  counter.add(500, 1500, 1000);  // 500 B in each of bins 0 and 1
  EXPECT_EQ(counter.bins(), (std::vector<double>{2500, 2500}));
}

TEST(RateCounter, MergesBinsWhenTimeOutgrowsThem) {
  RateCounter counter(1000, 4);
  counter.add(0, 1000, 1000);     // bin 0 (of 1000 ns)
  counter.add(4500, 5500, 2000);  // needs bin 5 >= 4 bins: width doubles to 2000 ns
  EXPECT_DOUBLE_EQ(counter.bin_ns(), 2000);
  // [0, 2000): 1000 B; [2000, 4000): 0; [4000, 6000): 2000 B.
  EXPECT_EQ(counter.bins(), (std::vector<double>{1000, 0, 2000}));
}

}  // namespace
}  // namespace trnsim::report
