#include "sweep/spec.hpp"

#include <gtest/gtest.h>

#include <string>

#include "util/error.hpp"

namespace trnsim::sweep {
namespace {

using nlohmann::ordered_json;

const std::string kVectorAdd = std::string(TRNSIM_SOURCE_DIR) + "/examples/kernels/vector_add.json";
const std::string kSingleBuffer =
    std::string(TRNSIM_SOURCE_DIR) + "/examples/kernels/vector_add_single_buffer.json";

SweepSpec parse(const std::string& text) {
  return parse_sweep_spec(ordered_json::parse(text), "spec.json", {});
}

/// The InputError message of parsing `text`, or "" when it parses.
std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::vector<ordered_json> axis_values(const std::string& axis) {
  const SweepSpec spec = parse(R"({"kernel": ")" + kVectorAdd + R"(", "axes": [)" + axis + "]}");
  return spec.groups.at(0).at(0).values;
}

TEST(SweepSpec, ProductOrderIsKernelGridThenAxesLastFastest) {
  const SweepSpec spec = parse(R"({
    "kernel": {"file": ")" + kVectorAdd +
                               R"(", "params": {"T": [1, 2], "F": 256}},
    "config": "trn2",
    "set": {"dma.fixed_cost_ns": 1000},
    "axes": [{"set": "tensor.clock_ghz", "values": [1.4, 2.8]},
             {"set": "dma.hwdge_cost_ns", "values": [500, 600, 700]}],
    "metrics": ["time_us"]})");
  // 2 values of T x 2 clocks x 3 HWDGE costs.
  ASSERT_EQ(point_count(spec), 12u);
  // Index 7 in radices [2, 2, 3]: 7 % 3 = 1 -> 600; 7 / 3 = 2; 2 % 2 = 0 -> 1.4; 2 / 2 = 1 -> T=2.
  const SweepPoint point = make_point(spec, 7);
  EXPECT_EQ(point.index, 7u);
  EXPECT_EQ(point.values.dump(), R"({"T":2,"tensor.clock_ghz":1.4,"dma.hwdge_cost_ns":600})");
  EXPECT_EQ(point.request.params, (Assignments{{"F", "256"}, {"T", "2"}}));
  EXPECT_EQ(point.request.sets, (Assignments{{"dma.fixed_cost_ns", "1000"},
                                             {"tensor.clock_ghz", "1.4"},
                                             {"dma.hwdge_cost_ns", "600"}}));
  EXPECT_EQ(run_command_line(point.request, "/bin/trnsim"),
            (std::vector<std::string>{"/bin/trnsim", "run", kVectorAdd, "--config", "trn2", "--set",
                                      "dma.fixed_cost_ns=1000", "--set", "tensor.clock_ghz=1.4",
                                      "--set", "dma.hwdge_cost_ns=600", "--param", "F=256",
                                      "--param", "T=2", "--json"}));
  // First and last points: all digits 0, then all digits at their maximum.
  EXPECT_EQ(make_point(spec, 0).values.dump(),
            R"({"T":1,"tensor.clock_ghz":1.4,"dma.hwdge_cost_ns":500})");
  EXPECT_EQ(make_point(spec, 11).values.dump(),
            R"({"T":2,"tensor.clock_ghz":2.8,"dma.hwdge_cost_ns":700})");
  EXPECT_THROW(make_point(spec, 12), std::out_of_range);
}

TEST(SweepSpec, ZipGroupsVaryTogether) {
  const SweepSpec spec = parse(R"({"kernel": ")" + kVectorAdd + R"(",
    "axes": [{"zip": [{"set": "tensor.clock_ghz", "values": [1.0, 2.0, 3.0]},
                      {"param": "T", "values": [1, 2, 3]}]},
             {"param": "F", "values": [128, 256]}]})");
  // 3 zipped pairs x 2 values of F.
  ASSERT_EQ(point_count(spec), 6u);
  // Index 5: 5 % 2 = 1 -> F=256; 5 / 2 = 2 -> the third pair.
  EXPECT_EQ(make_point(spec, 5).values.dump(), R"({"tensor.clock_ghz":3.0,"T":3,"F":256})");
}

TEST(SweepSpec, CombineZipZipsEveryAxis) {
  const SweepSpec spec = parse(R"({"kernel": ")" + kVectorAdd + R"(", "combine": "zip",
    "axes": [{"param": "T", "values": [1, 2]}, {"param": "F", "values": [128, 256]}]})");
  ASSERT_EQ(point_count(spec), 2u);
  EXPECT_EQ(make_point(spec, 1).values.dump(), R"({"T":2,"F":256})");
}

TEST(SweepSpec, SeveralKernelsAndConfigs) {
  const SweepSpec spec = parse(R"({"kernels": [")" + kVectorAdd + R"(", ")" + kSingleBuffer +
                               R"("], "config": ["trn1", "trn2", "trn3"]})");
  // 2 kernels x 3 configs; kernels outermost.
  ASSERT_EQ(point_count(spec), 6u);
  const SweepPoint point = make_point(spec, 4);  // second kernel (4 - 3 = 1), config index 1
  EXPECT_EQ(point.values.dump(), R"({"kernel":"vector_add_single_buffer","config":"trn2"})");
  EXPECT_EQ(point.request.config, "trn2");
  EXPECT_EQ(point.request.kernel_path, kSingleBuffer);
}

TEST(SweepSpec, DefaultMetricsWhenNoneNamed) {
  const SweepSpec spec = parse(R"({"kernel": ")" + kVectorAdd + R"("})");
  ASSERT_EQ(spec.metrics.size(), 4u);
  EXPECT_EQ(spec.metrics[0].pointer, "/time/kernel_us");
  EXPECT_EQ(point_count(spec), 1u);
  EXPECT_EQ(make_point(spec, 0).values.dump(), "{}");
}

TEST(SweepSpec, Ranges) {
  // Arithmetic, integers: 100, 200, 300, 400 (inclusive end).
  EXPECT_EQ(ordered_json(axis_values(R"({"set": "dma.hwdge_cost_ns", "range": {"from": 100,
            "to": 400, "step": 100}})"))
                .dump(),
            "[100,200,300,400]");
  // Arithmetic, fractional: 0.1 + i*0.1 tidied to 12 significant digits, so 0.3 is 0.3.
  EXPECT_EQ(ordered_json(axis_values(R"({"set": "tensor.clock_ghz", "range": {"from": 0.1,
            "to": 0.5, "step": 0.1}})"))
                .dump(),
            "[0.1,0.2,0.3,0.4,0.5]");
  // Geometric: 1, 2, 4, ..., 64 (7 values).
  EXPECT_EQ(ordered_json(axis_values(R"({"param": "F", "range": {"from": 1, "to": 64,
            "times": 2}})"))
                .dump(),
            "[1,2,4,8,16,32,64]");
  // Evenly spaced: 5 values from 1 to 2 step (2-1)/4 = 0.25.
  EXPECT_EQ(ordered_json(axis_values(R"({"set": "tensor.clock_ghz", "range": {"from": 1,
            "to": 2, "count": 5}})"))
                .dump(),
            "[1,1.25,1.5,1.75,2]");
  // A descending step.
  EXPECT_EQ(ordered_json(axis_values(R"({"param": "T", "range": {"from": 3, "to": 1,
            "step": -1}})"))
                .dump(),
            "[3,2,1]");
}

TEST(SweepSpec, ErrorsNameTheFileAndPointer) {
  const std::string kernel = R"("kernel": ")" + kVectorAdd + R"(")";
  std::string error = error_of("{" + kernel + R"(, "axs": []})");
  EXPECT_NE(error.find("spec.json: /axs: unknown key 'axs'"), std::string::npos) << error;
  EXPECT_NE(error.find("did you mean 'axes'?"), std::string::npos) << error;

  error = error_of("{" + kernel + R"(, "axes": [{"set": "tensor.clock_ghx", "values": [1]}]})");
  EXPECT_NE(error.find("spec.json: /axes/0/set: unknown config parameter 'tensor.clock_ghx'"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("did you mean 'tensor.clock_ghz'?"), std::string::npos) << error;

  error = error_of("{" + kernel +
                   R"(, "axes": [{"set": "tensor.clock_ghz", "values": [1.0, "fast"]}]})");
  EXPECT_NE(error.find("/axes/0/values/1: 'tensor.clock_ghz' expects a number"), std::string::npos)
      << error;
  EXPECT_NE(error.find("found the string \"fast\""), std::string::npos) << error;

  error = error_of("{" + kernel + R"(, "axes": [{"param": "Tt", "values": [1]}]})");
  EXPECT_NE(error.find("has no param 'Tt'"), std::string::npos) << error;
  EXPECT_NE(error.find("did you mean 'T'?"), std::string::npos) << error;

  error = error_of("{" + kernel + R"(, "axes": [{"zip": [{"param": "T", "values": [1, 2]},
                   {"param": "F", "values": [128]}]}]})");
  EXPECT_NE(error.find("same number of values"), std::string::npos) << error;

  error = error_of("{" + kernel + R"(, "axes": [{"param": "T", "range": {"from": 1, "to": 10,
                   "step": -1}}]})");
  EXPECT_NE(error.find("/axes/0/range/step: a step of -1 never goes from 1 to 10"),
            std::string::npos)
      << error;

  error = error_of("{" + kernel + R"(, "metrics": ["time_usec"]})");
  EXPECT_NE(error.find("/metrics/0: unknown metric 'time_usec'"), std::string::npos) << error;
  EXPECT_NE(error.find("did you mean 'time_us'?"), std::string::npos) << error;

  error = error_of(R"({"kernel": "no/such/kernel.json"})");
  EXPECT_NE(error.find("/kernel: cannot open the kernel file"), std::string::npos) << error;

  error = error_of("{" + kernel + R"(, "set": {"tensor.clock_ghz": 2.0},
                   "axes": [{"set": "tensor.clock_ghz", "values": [1.0]}]})");
  EXPECT_NE(error.find("both fixed here and varied"), std::string::npos) << error;

  error = error_of("{" + kernel + R"(, "axes": [{"set": "dma.arbitration", "values": ["fifo"]}]})");
  EXPECT_NE(error.find("expects one of"), std::string::npos) << error;

  error = error_of("{" + kernel + R"(, "config": ["trn2", 5]})");
  EXPECT_NE(error.find("spec.json: /config/1: expected a config name or file"), std::string::npos)
      << error;

  EXPECT_EQ(error_of("{" + kernel + "}"), "");
}

TEST(SweepSpec, ExampleSpecsLoad) {
  const std::string dir = std::string(TRNSIM_SOURCE_DIR) + "/examples/sweeps/";
  // T (5) x F (3) x fixed cost 650, 1300, 2600 (3) x core bandwidth (2).
  EXPECT_EQ(point_count(load_sweep_spec(dir + "vector_add_dma.json")), 90u);
  // 4 generations x N in 512, 1024, 2048, 4096.
  EXPECT_EQ(point_count(load_sweep_spec(dir + "matmul_generations.json")), 16u);
  // 2 generations x 5 zipped (T, F) pairs.
  const SweepSpec shape = load_sweep_spec(dir + "vector_add_tile_shape.json");
  ASSERT_EQ(point_count(shape), 10u);
  EXPECT_EQ(make_point(shape, 7).values.dump(), R"({"config":"trn3","T":16,"F":1024})");
  // 4 generations x PE arrays 32, 64, 128, 256 (the last dimension varies fastest).
  const SweepSpec arrays = load_sweep_spec(dir + "array_size.json");
  ASSERT_EQ(point_count(arrays), 16u);
  EXPECT_EQ(make_point(arrays, 6).values.dump(), R"({"config":"trn2","tensor.rows":128})");
}

TEST(SweepSpec, Shards) {
  const Shard shard = parse_shard("2/3", "--shard");
  EXPECT_EQ(shard.index, 2u);
  EXPECT_EQ(shard.count, 3u);
  EXPECT_TRUE(shard.contains(5));  // 5 % 3 == 2
  EXPECT_FALSE(shard.contains(6));
  for (const char* bad : {"3/3", "1", "a/2", "1/0", "-1/2", "1/2/3"}) {
    EXPECT_THROW(parse_shard(bad, "--shard"), InputError) << bad;
  }
}

}  // namespace
}  // namespace trnsim::sweep
