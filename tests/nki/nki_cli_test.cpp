// Whole-run tests of the trnsim commands with NKI Python kernels: they run the trnsim binary from
// the source tree (so kernels are named as tests/nki/kernels/..., as a user would) and check
// that an NKI kernel simulates exactly like the JSON `trnsim nki trace` writes for it, that the
// config reaches the tracer, and that every bad input is one located message with exit code 2.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "util/child_process.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using Args = std::vector<std::string>;

const std::string kSourceDir = TRNSIM_SOURCE_DIR;
const std::string kVectorAdd = "tests/nki/kernels/vector_add.py::vector_add";
const std::vector<std::string> kVectorAddInputs = {"--input", "a=float32[256,512]", "--input",
                                                   "b=float32[256,512]"};
const std::string kScaledCopy = kSourceDir + "/tests/nki/kernels/scaled_copy.py::scaled_copy";
const std::string kRaises = "tests/nki/kernels/raises_value_error.py";
const std::string kRaisesMessage =
    "trnsim: error: tests/nki/kernels/raises_value_error.py:9: the kernel raised ValueError: the "
    "free size must be a multiple of 512\n";

/// A fresh directory under /tmp, removed when the test ends.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "trnsim-nki-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

std::string read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

void write_file(const std::string& path, const std::string& text, bool executable = false) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  if (executable) ::chmod(path.c_str(), 0755);
}

std::vector<std::string> operator+(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

/// Runs `binary` (default: the build's trnsim) with `args` in the source tree.
trnsim::util::ChildOutcome trnsim(const std::vector<std::string>& args,
                                  const std::vector<std::string>& environment = {},
                                  const std::string& binary = TRNSIM_BINARY) {
  trnsim::util::ChildLaunch launch;
  launch.argv = std::vector<std::string>{binary} + args;
  launch.environment = environment;
  launch.working_directory = kSourceDir;
  return trnsim::util::run_child(launch);
}

/// The command failed with exit code 2 and exactly one line on stderr, which it returns.
std::string one_error_line(const trnsim::util::ChildOutcome& outcome) {
  EXPECT_EQ(outcome.exit_code, 2) << outcome.err;
  EXPECT_EQ(outcome.signal, 0);
  EXPECT_EQ(outcome.err.rfind("trnsim: error: ", 0), 0u) << outcome.err;
  EXPECT_EQ(outcome.err.find('\n'), outcome.err.size() - 1) << outcome.err;
  EXPECT_EQ(outcome.out, "");
  return outcome.err;
}

json json_of(const trnsim::util::ChildOutcome& outcome) {
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  return json::parse(outcome.out, nullptr, /*allow_exceptions=*/false);
}

// ---- run, check and nki trace ----------------------------------------------------------------

TEST(NkiRun, GivesTheStatisticsOfTheTracedJson) {
  ScratchDir dir;
  for (const std::string config : {"trn2", "trn1"}) {
    const std::string traced = dir.file("vector_add_" + config + ".json");
    const auto trace = trnsim(Args{"nki", "trace", kVectorAdd, "--config", config, "-o", traced} +
                              kVectorAddInputs);
    ASSERT_EQ(trace.exit_code, 0) << trace.err;
    EXPECT_EQ(trace.out, "");
    json from_python =
        json_of(trnsim(Args{"run", kVectorAdd, "--config", config, "--json"} + kVectorAddInputs));
    json from_json = json_of(trnsim(Args{"run", traced, "--config", config, "--json"}));
    ASSERT_TRUE(from_python.is_object());
    ASSERT_TRUE(from_json.is_object());
    // The kernel is named as given; everything else, the provenance hash of the JSON text
    // included, is the same.
    EXPECT_EQ(from_python["provenance"]["kernel"]["file"], kVectorAdd);
    EXPECT_EQ(from_json["provenance"]["kernel"]["file"], traced);
    from_python["provenance"]["kernel"].erase("file");
    from_json["provenance"]["kernel"].erase("file");
    EXPECT_TRUE(from_python == from_json) << config;
    EXPECT_EQ(from_python["provenance"]["config"], config);
    EXPECT_GT(from_python["time"]["kernel_us"].get<double>(), 0.0);
  }
}

TEST(NkiTrace, StdoutAndFileHoldTheSameKernel) {
  ScratchDir dir;
  const auto to_stdout = trnsim(Args{"nki", "trace", kVectorAdd} + kVectorAddInputs);
  ASSERT_EQ(to_stdout.exit_code, 0) << to_stdout.err;
  const auto to_file =
      trnsim(Args{"nki", "trace", kVectorAdd, "-o", dir.file("k.json")} + kVectorAddInputs);
  ASSERT_EQ(to_file.exit_code, 0) << to_file.err;
  EXPECT_EQ(read_file(dir.file("k.json")), to_stdout.out);
  EXPECT_FALSE(fs::exists(dir.file("k.json.tmp")));
  const json kernel = json::parse(to_stdout.out);
  EXPECT_EQ(kernel["format"], "trnsim-kernel/1");
  EXPECT_EQ(kernel["name"], "vector_add");
  EXPECT_EQ(kernel["tensors"]["a"]["shape"], json::array({256, 512}));
}

TEST(NkiTrace, TheCompilerSectionChangesTheTracedKernel) {
  const json double_buffered = json_of(trnsim(Args{"nki", "trace", kVectorAdd} + kVectorAddInputs));
  const json single_buffered =
      json_of(trnsim(Args{"nki", "trace", kVectorAdd, "--set", "compiler.loop_tile_buffers=1"} +
                     kVectorAddInputs));
  // A tile loaded in the loop: two rotating buffers by default, one with loop_tile_buffers=1.
  EXPECT_EQ(double_buffered["tensors"]["ta"]["shape"], json::array({2, 128, 512}));
  EXPECT_EQ(single_buffered["tensors"]["ta"]["shape"], json::array({128, 512}));

  const json one_queue = json_of(trnsim(
      Args{"nki", "trace", kVectorAdd, "--set", "compiler.dma_queues=1"} + kVectorAddInputs));
  const std::string text = one_queue.dump();
  EXPECT_EQ(text.find("\"queue\":1"), std::string::npos) << text;
  EXPECT_NE(text.find("\"queue\":0"), std::string::npos) << text;
}

TEST(NkiTrace, GridAndKwargsReachTheKernel) {
  const auto count = [](const std::vector<std::string>& args) {
    const json stats = json_of(trnsim(Args{"run", "--json"} + args));
    return stats["system"]["instructions"].get<int>();
  };
  const std::string row_blocks = "tests/nki/kernels/row_blocks.py";
  EXPECT_EQ(count({row_blocks, "--input", "a=float32[256,64]"}), 2);
  EXPECT_EQ(count({row_blocks, "--input", "a=float32[256,64]", "--grid", "2"}), 4);
  EXPECT_EQ(count({kScaledCopy, "--input", "a=float32[128,512]", "--kwarg", "T=4"}), 12);
  EXPECT_EQ(count({kScaledCopy, "--input", "a=float32[128,512]", "--kwarg", "T=1"}), 3);
}

TEST(NkiCheck, ValidatesTheTracedKernel) {
  const json result = json_of(trnsim(Args{"check", kVectorAdd, "--json"} + kVectorAddInputs));
  EXPECT_EQ(result["valid"], true);
  EXPECT_EQ(result["file"], kVectorAdd);
  EXPECT_EQ(result["kernel"], "vector_add");
  // Two row tiles, each: two loads, one add, one store.
  EXPECT_EQ(result["instructions"]["total"], 8);
}

TEST(NkiRun, WhatTheKernelPrintsGoesToStderr) {
  ScratchDir dir;
  write_file(dir.file("chatty.py"), R"(from neuronxcc import nki
import neuronxcc.nki.language as nl

print("loading the module")


@nki.jit
def chatty(a):
    print("tracing", a.shape)
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(a))
    return out
)");
  const auto traced =
      trnsim(Args{"nki", "trace", dir.file("chatty.py"), "--input", "a=float32[128,4]"});
  ASSERT_EQ(traced.exit_code, 0) << traced.err;
  EXPECT_TRUE(json::accept(traced.out)) << traced.out;
  EXPECT_NE(traced.err.find("loading the module\n"), std::string::npos) << traced.err;
  EXPECT_NE(traced.err.find("tracing (128, 4)\n"), std::string::npos) << traced.err;
  const auto run = trnsim(Args{"run", dir.file("chatty.py"), "--input", "a=float32[128,4]"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out.rfind("kernel chatty on trn2", 0), 0u) << run.out;
}

// ---- compare, sweep, regress -----------------------------------------------------------------

TEST(NkiCompare, OneColumnPerConfig) {
  const json comparison =
      json_of(trnsim(Args{"compare", kVectorAdd, "--configs", "trn1,trn2", "--json", "-j", "2"} +
                     kVectorAddInputs));
  ASSERT_EQ(comparison["columns"].size(), 2u) << comparison.dump(2);
  for (const json& column : comparison["columns"]) {
    EXPECT_EQ(column["ok"], true) << column.dump();
  }
  EXPECT_EQ(comparison["columns"][0]["config"], "trn1");
}

TEST(NkiSweep, TwoPointsOverAKwargAndResume) {
  ScratchDir dir;
  write_file(dir.file("spec.json"), R"({
    "kernel": {"file": ")" + kScaledCopy +
                                        R"(", "inputs": {"a": "float32[128,512]"},
               "kwargs": {"scale": 0.5}},
    "axes": [{"kwarg": "T", "values": [1, 2]}],
    "metrics": ["time_us", "instructions"]})");
  const std::string results = dir.file("results.jsonl");
  const auto sweep =
      trnsim(Args{"sweep", dir.file("spec.json"), "-j", "2", "-o", results, "--progress", "none"});
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  std::vector<json> records;
  std::ifstream file(results);
  for (std::string line; std::getline(file, line);) records.push_back(json::parse(line));
  ASSERT_EQ(records.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(records[i]["status"], "ok") << records[i].dump();
    EXPECT_EQ(records[i]["values"]["T"], i + 1);
    EXPECT_EQ(records[i]["inputs"]["a"], "float32[128,512]");
    EXPECT_EQ(records[i]["kwargs"]["T"], i + 1);
    EXPECT_EQ(records[i]["kwargs"]["scale"], 0.5);
    EXPECT_FALSE(records[i].contains("params"));
  }
  EXPECT_EQ(records[0]["metrics"]["instructions"], 3);
  EXPECT_EQ(records[1]["metrics"]["instructions"], 6);
  EXPECT_NE(records[0]["kernel_hash"], records[1]["kernel_hash"]);

  const auto resumed =
      trnsim(Args{"sweep", dir.file("spec.json"), "-o", results, "--resume", "--progress", "none"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("0 ran now, 2 resumed"), std::string::npos) << resumed.out;
}

TEST(NkiSweep, SpecErrorsNameTheJsonPointer) {
  ScratchDir dir;
  write_file(dir.file("spec.json"),
             R"({"kernel": {"file": ")" + kScaledCopy + R"(", "params": {"T": [1, 2]}}})");
  const std::string error = one_error_line(trnsim(Args{"sweep", dir.file("spec.json")}));
  EXPECT_NE(error.find("spec.json: /kernel/params: '" + kScaledCopy + "' is an NKI Python kernel"),
            std::string::npos)
      << error;
}

TEST(NkiSweep, AHangingTracerIsKilledWithItsWorker) {
  ScratchDir dir;
  write_file(dir.file("hangs.py"), R"(from neuronxcc import nki


@nki.jit
def hangs(a):
    while True:
        pass
)");
  write_file(dir.file("spec.json"), R"({"kernel": {"file": "hangs.py::hangs",
    "inputs": {"a": "float32[128,4]"}}, "metrics": ["time_us"]})");
  const std::string results = dir.file("results.jsonl");
  // The sweep's temporary files go under its own TMPDIR, so that what the killed worker left is
  // seen: nothing may remain.
  const std::string temporary = dir.file("tmp");
  fs::create_directories(temporary);
  const auto sweep = trnsim(
      Args{"sweep", dir.file("spec.json"), "-o", results, "--timeout", "1", "--progress", "none"},
      {"TMPDIR=" + temporary});
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  EXPECT_TRUE(fs::is_empty(temporary)) << fs::directory_iterator(temporary)->path();
  const json record = json::parse(read_file(results));
  EXPECT_EQ(record["status"], "error");
  EXPECT_NE(record["error"].get<std::string>().find("timed out after 1 s"), std::string::npos)
      << record.dump();
  // The tracer died with the worker (PR_SET_PDEATHSIG): no process still traces hangs.py.
  const auto tracer_alive = [&dir] {
    for (const auto& entry : fs::directory_iterator("/proc")) {
      const std::string cmdline = read_file((entry.path() / "cmdline").string());
      if (cmdline.find(dir.file("hangs.py")) != std::string::npos) return true;
    }
    return false;
  };
  bool alive = tracer_alive();
  for (int i = 0; alive && i < 50; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    alive = tracer_alive();
  }
  EXPECT_FALSE(alive);
}

TEST(NkiRegress, ABaselineCaseWithInputsAndKwargs) {
  ScratchDir dir;
  const std::string baseline = dir.file("baseline.json");
  const auto write_baseline = [&](const std::string& instructions) {
    write_file(baseline, R"({"format": "trnsim-baseline/1", "cases": [
      {"kernel": ")" + kScaledCopy +
                             R"(", "inputs": {"a": "float32[128,512]"},
       "kwargs": {"T": 2}, "config": "trn2",
       "metrics": {"time_us": {"expected": null, "rel": 1e-6},
                   "instructions": {"expected": )" +
                             instructions + "}}}]}");
  };
  write_baseline("6");
  const auto update = trnsim(Args{"regress", baseline, "--update"});
  ASSERT_EQ(update.exit_code, 0) << update.out << update.err;
  const json updated = json::parse(read_file(baseline));
  EXPECT_GT(updated["cases"][0]["metrics"]["time_us"]["expected"].get<double>(), 0.0);
  EXPECT_EQ(trnsim(Args{"regress", baseline}).exit_code, 0);
  write_baseline("7");
  const auto failing = trnsim(Args{"regress", baseline});
  EXPECT_EQ(failing.exit_code, 1) << failing.out;
  EXPECT_NE(failing.out.find("scaled_copy on trn2 a=float32[128,512] T=2"), std::string::npos)
      << failing.out;
}

// ---- errors ------------------------------------------------------------------------------------

TEST(NkiErrors, MissingKernelFile) {
  EXPECT_EQ(one_error_line(trnsim(Args{"run", "tests/nki/kernels/missing.py"})),
            "trnsim: error: tests/nki/kernels/missing.py: no such file\n");
}

TEST(NkiErrors, BadInputSpec) {
  EXPECT_EQ(one_error_line(trnsim(Args{"run", kVectorAdd, "--input", "a=float32[128", "--input",
                                       "b=float32[128,512]"})),
            "trnsim: error: --input 'a=float32[128': expected NAME=DTYPE[SHAPE] (e.g. "
            "a=float32[128,512]) or NAME=FILE.npy\n");
  EXPECT_EQ(one_error_line(trnsim(Args{"run", kVectorAdd, "--input", "float32[128,512]"})),
            "trnsim: error: --input float32[128,512]: expected NAME=DTYPE[SHAPE] (e.g. "
            "a=float32[128,512]) or NAME=FILE.npy\n");
}

TEST(NkiErrors, UnknownKwarg) {
  EXPECT_EQ(one_error_line(trnsim(Args{"check", kVectorAdd, "--kwarg", "T=4"} + kVectorAddInputs)),
            "trnsim: error: tests/nki/kernels/vector_add.py::vector_add has no parameter T "
            "(parameters: a, b)\n");
}

TEST(NkiErrors, ParamWithAnNkiKernelNamesKwarg) {
  const std::string error = one_error_line(trnsim(Args{"run", kVectorAdd, "--param", "T=4"}));
  EXPECT_EQ(
      error.rfind("trnsim: error: --param T=4: '" + kVectorAdd + "' is an NKI Python kernel", 0),
      0u)
      << error;
  EXPECT_NE(error.find("--kwarg NAME=VALUE"), std::string::npos) << error;
}

TEST(NkiErrors, NkiOptionsWithAJsonKernel) {
  for (const std::vector<std::string>& option :
       {std::vector<std::string>{"--input", "a=float32[128]"},
        std::vector<std::string>{"--kwarg", "T=4"}, std::vector<std::string>{"--grid", "2"}}) {
    const std::string error =
        one_error_line(trnsim(Args{"run", "examples/kernels/vector_add.json"} + option));
    EXPECT_NE(error.find("'examples/kernels/vector_add.json' is a JSON kernel"), std::string::npos)
        << error;
  }
  EXPECT_EQ(
      one_error_line(trnsim(Args{"compare", "examples/kernels/vector_add.json", "--kwarg", "T=2"}))
          .rfind("trnsim: error: --kwarg T=2: ", 0),
      0u);
}

TEST(NkiErrors, TheKernelsOwnExceptionIsOneLocatedLine) {
  EXPECT_EQ(one_error_line(trnsim(Args{"run", kRaises, "--input", "a=float32[128,500]"})),
            kRaisesMessage);
  EXPECT_EQ(one_error_line(trnsim(Args{"nki", "trace", kRaises, "--input", "a=float32[128,500]"})),
            kRaisesMessage);
}

TEST(NkiErrors, VerboseAddsTheTraceback) {
  const auto outcome = trnsim(Args{"-v", "run", kRaises, "--input", "a=float32[128,500]"});
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_NE(outcome.err.find("Traceback (most recent call last):"), std::string::npos)
      << outcome.err;
  EXPECT_NE(outcome.err.find("raise ValueError(\"the free size must be a multiple of 512\")"),
            std::string::npos)
      << outcome.err;
  ASSERT_GE(outcome.err.size(), kRaisesMessage.size());
  EXPECT_EQ(outcome.err.substr(outcome.err.size() - kRaisesMessage.size()), kRaisesMessage);
}

TEST(NkiErrors, ShapeMismatchIsLocated) {
  const std::string error =
      one_error_line(trnsim(Args{"run", "tests/nki/kernels/shape_mismatch.py", "--input",
                                 "a=float32[128,512]", "--input", "b=float32[128,256]"}));
  EXPECT_EQ(error.rfind("trnsim: error: tests/nki/kernels/shape_mismatch.py:11: ", 0), 0u) << error;
}

TEST(NkiErrors, SyntaxErrorIsOneLocatedLine) {
  const auto outcome =
      trnsim(Args{"run", "tests/nki/kernels/syntax_error.py", "--input", "a=float32[128,512]"});
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_EQ(outcome.signal, 0);
  EXPECT_EQ(outcome.out, "");
  EXPECT_EQ(std::count(outcome.err.begin(), outcome.err.end(), '\n'), 1) << outcome.err;
  EXPECT_NE(outcome.err.find("syntax_error.py:"), std::string::npos) << outcome.err;
  EXPECT_NE(outcome.err.find("SyntaxError"), std::string::npos) << outcome.err;
}

TEST(NkiErrors, NkiTraceRejectsAJsonKernelAndLeavesNoOutputOnFailure) {
  ScratchDir dir;
  EXPECT_NE(one_error_line(trnsim(Args{"nki", "trace", "examples/kernels/vector_add.json"}))
                .find("expected an NKI Python kernel FILE.py::FUNCTION"),
            std::string::npos);
  const std::string output = dir.file("out.json");
  EXPECT_EQ(one_error_line(trnsim(
                Args{"nki", "trace", kRaises, "--input", "a=float32[128,500]", "-o", output})),
            kRaisesMessage);
  EXPECT_FALSE(fs::exists(output));
  EXPECT_FALSE(fs::exists(output + ".tmp"));
}

TEST(NkiErrors, PythonAndFrontEndThatCannotBeUsed) {
  ScratchDir dir;
  const std::vector<std::string> run = {
      "run", kVectorAdd, "--input", "a=float32[256,512]", "--input", "b=float32[256,512]"};
  EXPECT_EQ(one_error_line(trnsim(run, {"TRNSIM_PYTHON=/no/such/python3"})),
            "trnsim: error: TRNSIM_PYTHON=/no/such/python3: no such executable; set "
            "TRNSIM_PYTHON to a Python 3 interpreter for the NKI front end\n");
  EXPECT_EQ(
      one_error_line(trnsim(run, {"TRNSIM_NKI_PATH=" + dir.file("")}))
          .rfind("trnsim: error: TRNSIM_NKI_PATH=" + dir.file("") + ": no trnsim_nki package", 0),
      0u);

  write_file(dir.file("crashes.sh"), "#!/bin/sh\nkill -SEGV $$\n", /*executable=*/true);
  const std::string crash =
      one_error_line(trnsim(run, {"TRNSIM_PYTHON=" + dir.file("crashes.sh")}));
  EXPECT_NE(crash.find("killed by signal 11"), std::string::npos) << crash;

  write_file(dir.file("fails.sh"), "#!/bin/sh\necho 'something went wrong' >&2\nexit 3\n",
             /*executable=*/true);
  const std::string failure =
      one_error_line(trnsim(run, {"TRNSIM_PYTHON=" + dir.file("fails.sh")}));
  EXPECT_NE(failure.find("exited with code 3 while tracing: something went wrong"),
            std::string::npos)
      << failure;
}

// ---- finding the front end ---------------------------------------------------------------------

TEST(NkiFrontEnd, AnInstalledTreeIsFoundBesideTheBinaryAndGetsTheContract) {
  // prefix/bin/trnsim with prefix/share/trnsim/python/trnsim_nki: a stand-in tracer that writes
  // what it was given (arguments, target, environment) as its "kernel".
  ScratchDir dir;
  const std::string binary = dir.file("prefix/bin/trnsim");
  fs::create_directories(dir.file("prefix/bin"));
  fs::copy_file(TRNSIM_BINARY, binary);
  ::chmod(binary.c_str(), 0755);
  const std::string frontend = dir.file("prefix/share/trnsim/python");
  write_file(frontend + "/trnsim_nki/__init__.py", "");
  write_file(frontend + "/trnsim_nki/__main__.py", R"(import json, os, sys
args = sys.argv[1:]
target = json.load(sys.stdin)
report = {"args": args, "target": target, "cwd": os.getcwd(),
          "pythonpath": os.environ.get("PYTHONPATH", ""),
          "no_bytecode": os.environ.get("PYTHONDONTWRITEBYTECODE", "")}
with open(args[args.index("-o") + 1], "w") as f:
    json.dump(report, f)
)");
  const auto outcome = trnsim(
      Args{"nki", "trace", "k.py::f", "--config", "trn1", "--set", "compiler.loop_tile_buffers=3",
           "--input", "a=float32[128,4]", "--kwarg", "T=-1", "--grid", "2,2"},
      {"TRNSIM_NKI_PATH=", "PYTHONPATH=/elsewhere"}, binary);
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  const json report = json::parse(outcome.out);
  const std::vector<std::string> args = report["args"];
  ASSERT_GE(args.size(), 9u);
  EXPECT_EQ(std::vector<std::string>(args.begin(), args.begin() + 8),
            (std::vector<std::string>{"trace", "k.py::f", "--input=a=float32[128,4]",
                                      "--kwarg=T=-1", "--grid=2,2", "--target", "-", "-o"}));
  EXPECT_EQ(report["target"]["name"], "trn1");
  EXPECT_EQ(report["target"]["nc_version"], 2);
  EXPECT_EQ(report["target"]["compiler"]["loop_tile_buffers"], 3);
  EXPECT_EQ(report["cwd"], fs::canonical(kSourceDir).string());
  EXPECT_EQ(report["pythonpath"], fs::canonical(frontend).string() + ":/elsewhere");
  EXPECT_EQ(report["no_bytecode"], "1");
}

}  // namespace
