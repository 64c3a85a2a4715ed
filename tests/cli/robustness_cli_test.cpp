// No input crashes trnsim: deep nesting of statements, expressions and JSON values, numbers out
// of range, directories and unreadable files end in exit code 2 with one located message;
// outputs that are devices, FIFOs or symlinks are written in place; write errors (stdout
// included) are exit 2; compare's exit codes. Each test runs the trnsim binary as a user would.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <future>
#include <nlohmann/json.hpp>

#include "cli_test_support.hpp"

namespace trnsim::cli {
namespace {

using testing::kernel_with;
using testing::line_count;
using testing::nested;
using testing::Output;
using testing::read_file;
using testing::ScratchDir;
using testing::trnsim;
using testing::write_file;

const std::string kVectorAdd = std::string(TRNSIM_SOURCE_DIR) + "/examples/kernels/vector_add.json";

/// One dma_copy into a_sb from a[INDEX].
std::string copy_from(const std::string& index) {
  return R"({"op": "dma_copy", "dst": "a_sb", "src": "a[)" + index + R"(]"})";
}

/// Exit code 2, nothing on stdout and one message on stderr that contains `expected`.
void expect_input_error(const Output& output, const std::string& expected) {
  EXPECT_EQ(output.exit_code, 2) << output.err;
  EXPECT_EQ(output.out, "");
  EXPECT_EQ(line_count(output.err), 1u) << output.err;
  EXPECT_NE(output.err.find(expected), std::string::npos) << output.err.substr(0, 2000);
}

// ---- tracing ----------------------------------------------------------------------------------

TEST(Tracing, LogTracesAComponentOnStderrAndLeavesTheResultAlone) {
  ScratchDir dir;
  const Output plain = trnsim(dir, {"run", kVectorAdd, "--json", "-q"});
  const Output traced =
      trnsim(dir, {"--log", "core=debug,dma=debug", "run", kVectorAdd, "--json", "-q"});
  ASSERT_EQ(traced.exit_code, 0) << traced.err;
  EXPECT_EQ(traced.out, plain.out);
  EXPECT_NE(traced.err.find("trnsim: core: debug: core 0 sync #0 dma_copy"), std::string::npos)
      << traced.err.substr(0, 2000);
  EXPECT_NE(traced.err.find("trnsim: core.dma: debug: core 0 #0 dma_copy submitted"),
            std::string::npos);
  EXPECT_NE(traced.err.find("trnsim: dma: debug: flow model: core 0 DMA #0"), std::string::npos);
  EXPECT_EQ(traced.err.find("collective"), std::string::npos);
  EXPECT_EQ(plain.err, "");
}

TEST(Tracing, LogAndVerboseMayFollowTheSubcommand) {
  ScratchDir dir;
  const Output before = trnsim(dir, {"--log", "dma=debug", "run", kVectorAdd, "--json", "-q"});
  const Output after = trnsim(dir, {"run", kVectorAdd, "--json", "-q", "--log", "dma=debug"});
  ASSERT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(after.out, before.out);
  EXPECT_EQ(after.err, before.err);
  EXPECT_NE(after.err.find("trnsim: dma: debug: flow model: core 0 DMA #0"), std::string::npos);
  const Output verbose = trnsim(dir, {"check", kVectorAdd, "-vv"});
  EXPECT_EQ(verbose.exit_code, 0) << verbose.err;
  // An option neither the subcommand nor trnsim knows stays an error.
  const Output unknown = trnsim(dir, {"run", kVectorAdd, "--no-such-option"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("--no-such-option"), std::string::npos) << unknown.err;
}

TEST(Tracing, AnUnknownComponentIsAnInputError) {
  ScratchDir dir;
  expect_input_error(trnsim(dir, {"--log", "cores=debug", "run", kVectorAdd}),
                     "--log 'cores=debug': expected COMPONENT=LEVEL with COMPONENT one of core, "
                     "core.dma, dma, collective; found 'cores'");
}

// Only the packet model moves packets: asking the trace for them under another model warns on
// stderr (the run and its trace are otherwise as without the warning).
TEST(Tracing, PacketDetailUnderARateModelWarnsThatTheTraceHasNoPackets) {
  ScratchDir dir;
  const std::string warning =
      "trnsim: warning: --trace-detail packets: the flow DMA model moves "
      "no packets, so the trace has none; add --set dma.model=packet "
      "for them\n";
  const Output flow =
      trnsim(dir, {"run", kVectorAdd, "-q", "--trace", "flow.json", "--trace-detail", "packets"});
  ASSERT_EQ(flow.exit_code, 0) << flow.err;
  EXPECT_EQ(flow.err, warning);
  EXPECT_EQ(read_file(dir.file("flow.json")).find("dma_packet"), std::string::npos);
  const Output packet = trnsim(dir, {"run", kVectorAdd, "-q", "--trace", "packet.json",
                                     "--trace-detail", "packets", "--set", "dma.model=packet"});
  ASSERT_EQ(packet.exit_code, 0) << packet.err;
  EXPECT_EQ(packet.err, "");
  EXPECT_NE(read_file(dir.file("packet.json")).find("dma_packet"), std::string::npos);
  // Without a trace, or with less detail, there is nothing to warn about.
  EXPECT_EQ(trnsim(dir, {"run", kVectorAdd, "-q", "--trace-detail", "packets"}).err, "");
  EXPECT_EQ(trnsim(dir, {"run", kVectorAdd, "-q", "--trace", "dma.json"}).err, "");
}

// ---- nesting ----------------------------------------------------------------------------------

TEST(Nesting, IfsNestedPastTheLimitAreRejected) {
  ScratchDir dir;
  const std::string program =
      "[" + nested(R"({"if": 1, "then": [)", copy_from("0"), "]}", 101) + "]";
  write_file(dir.file("k.json"), kernel_with(program));
  expect_input_error(trnsim(dir, {"check", "k.json"}), "statements nest deeper than 100 levels");
  // 100 levels are fine.
  write_file(dir.file("ok.json"),
             kernel_with("[" + nested(R"({"if": 1, "then": [)", copy_from("0"), "]}", 100) + "]"));
  EXPECT_EQ(trnsim(dir, {"check", "ok.json"}).exit_code, 0);
}

TEST(Nesting, SixThousandNestedIfsAreAJsonNestingError) {
  ScratchDir dir;
  write_file(dir.file("k.json"),
             kernel_with("[" + nested(R"({"if": 1, "then": [)", copy_from("0"), "]}", 6000) + "]"));
  expect_input_error(trnsim(dir, {"check", "k.json"}),
                     "k.json: invalid input: arrays and objects nest deeper than 512 levels at "
                     "line 3, column");
}

TEST(Nesting, LoopsNestedPastTheLimitAreRejected) {
  ScratchDir dir;
  std::string open;
  for (int i = 0; i < 20; ++i) {
    open += R"({"for": "i)" + std::to_string(i) + R"(", "range": 1, "body": [)";
  }
  std::string close;
  for (int i = 0; i < 20; ++i) close += "]}";
  write_file(dir.file("k.json"), kernel_with("[" + open + copy_from("0") + close + "]"));
  expect_input_error(trnsim(dir, {"check", "k.json"}), "loops nest deeper than 8 levels");
}

TEST(Nesting, DeepParenthesesAreRejected) {
  ScratchDir dir;
  write_file(dir.file("k.json"), kernel_with("[" + copy_from(nested("(", "0", ")", 100000)) + "]"));
  expect_input_error(trnsim(dir, {"check", "k.json"}), "nested deeper than 200 levels");
}

TEST(Nesting, LongUnaryMinusChainsAreRejected) {
  ScratchDir dir;
  write_file(dir.file("k.json"), kernel_with("[" + copy_from(nested("-", "0", "", 100000)) + "]"));
  expect_input_error(trnsim(dir, {"check", "k.json"}), "nested deeper than 200 levels");
  // A message quotes a long expression cut short.
  const Output output = trnsim(dir, {"check", "k.json"});
  EXPECT_LT(output.err.size(), 1000u);
}

TEST(Nesting, ASumOfOneHundredThousandTermsIsFine) {
  ScratchDir dir;
  // (t + t + ... + t) - 99999 * t == t: flat chains are walked without recursion.
  std::string sum = "t";
  for (int i = 1; i < 100000; ++i) sum += " + t";
  const std::string index = "(" + sum + ") - 99999 * t";
  write_file(dir.file("k.json"),
             kernel_with(R"([{"for": "t", "range": "T", "body": [)" + copy_from(index) + "]}]"));
  const Output output = trnsim(dir, {"check", "k.json"});
  EXPECT_EQ(output.exit_code, 0) << output.err.substr(0, 2000);
}

TEST(Nesting, DeepJsonArraysAreRejectedInEveryInput) {
  ScratchDir dir;
  const std::string deep = nested("[", "", "]", 100000);
  write_file(dir.file("k.json"), kernel_with("[]", R"({"T": )" + deep + "}"));
  expect_input_error(trnsim(dir, {"check", "k.json"}),
                     "k.json: invalid input: arrays and objects nest deeper than 512 levels at "
                     "line 1, column");
  write_file(dir.file("c.json"), R"({"extends": "trn2", "name": "deep", "dma": )" + deep + "}");
  expect_input_error(trnsim(dir, {"config", "show", "c.json"}),
                     "c.json: invalid input: arrays and objects nest deeper than 512 levels");
  expect_input_error(trnsim(dir, {"run", kVectorAdd, "--config", "c.json"}),
                     "c.json: invalid input: arrays and objects nest deeper than 512 levels");
  write_file(dir.file("s.json"),
             R"({"format": "trnsim-sweep/1", "name": "s", "axes": )" + deep + "}");
  expect_input_error(trnsim(dir, {"sweep", "s.json", "--dry-run"}),
                     "s.json: invalid input: arrays and objects nest deeper than 512 levels");
  write_file(dir.file("b.json"), deep);
  expect_input_error(trnsim(dir, {"regress", "b.json"}),
                     "b.json: invalid input: arrays and objects nest deeper than 512 levels");
}

// ---- loops ------------------------------------------------------------------------------------

TEST(Loops, ALoopThatWouldIssueTooManyInstructionsIsRejectedBeforeItRuns) {
  ScratchDir dir;
  write_file(dir.file("k.json"),
             kernel_with(R"([{"for": "i", "range": "9223372036854775807", "body": [)" +
                         copy_from("0") + "]}]"));
  expect_input_error(trnsim(dir, {"check", "k.json"}),
                     "k.json: for i /program/0/range: loop 'i' would run 9223372036854775807 "
                     "iterations; at most 1000000000 are allowed");
}

// ---- numbers ----------------------------------------------------------------------------------

TEST(Numbers, OverflowingNumbersAreLocatedErrorsInEveryInput) {
  ScratchDir dir;
  write_file(dir.file("k.json"), kernel_with("[]", R"({"T": 1e999})"));
  expect_input_error(trnsim(dir, {"check", "k.json"}),
                     "k.json: invalid JSON: number overflow parsing '1e999' at line 1, column 60");
  write_file(dir.file("c.json"),
             R"({"extends": "trn2", "name": "big", "dma": {"fixed_cost_ns": 1e999}})");
  expect_input_error(trnsim(dir, {"config", "show", "c.json"}),
                     "c.json: invalid JSON: number overflow parsing '1e999' at line 1, column 61");
  write_file(dir.file("s.json"), R"({"format": "trnsim-sweep/1", "name": "s",
    "kernel": {"file": ")" + kVectorAdd +
                                     R"("}, "config": "trn2",
    "axes": [{"set": "dma.fixed_cost_ns", "values": [1e999]}], "metrics": ["time_us"]})");
  expect_input_error(trnsim(dir, {"sweep", "s.json", "--dry-run"}),
                     "s.json: invalid JSON: number overflow parsing '1e999' at line 3");
}

// ---- files that are not kernels ---------------------------------------------------------------

TEST(Inputs, ADirectoryOrABinaryFileIsAnInputErrorNamingIt) {
  ScratchDir dir;
  std::filesystem::create_directory(dir.file("kdir"));
  expect_input_error(trnsim(dir, {"run", "kdir"}),
                     "kdir: expected a kernel file, found a directory");
  expect_input_error(trnsim(dir, {"run", kVectorAdd, "--config", "kdir"}),
                     "kdir: expected a config file, found a directory");
  write_file(dir.file("binary.json"), std::string("\x7f"
                                                  "ELF\x02\x01\x01\0\0\0",
                                                  10));
  expect_input_error(trnsim(dir, {"run", "binary.json"}), "binary.json: invalid JSON");
  expect_input_error(trnsim(dir, {"run", "missing.json"}),
                     "missing.json: cannot open the kernel file: No such file or directory");
}

TEST(Inputs, DirectoriesWhereASweepReadsAFileAreInputErrors) {
  ScratchDir dir;
  std::filesystem::create_directory(dir.file("kdir"));
  for (const std::string kernel : {R"("kdir")", R"({"file": "kdir", "params": {"T": [1, 2]}})"}) {
    write_file(dir.file("s.json"),
               R"({"format": "trnsim-sweep/1", "kernel": )" + kernel + R"(, "config": "trn2"})");
    expect_input_error(trnsim(dir, {"sweep", "s.json", "--dry-run"}),
                       "expected a kernel file, found a directory");
  }
  expect_input_error(trnsim(dir, {"sweep", "export", "kdir"}),
                     "kdir: expected a results file, found a directory");
  expect_input_error(trnsim(dir, {"sweep", "merge", "kdir", "-o", "all.jsonl"}),
                     "kdir: expected a results file, found a directory");
  EXPECT_FALSE(std::filesystem::exists(dir.file("all.jsonl")));
}

TEST(Inputs, ANulCharacterInASweepSpecStringIsAnInputError) {
  ScratchDir dir;
  // "./\u0000x" would name the spec's own directory once cut at the NUL.
  write_file(dir.file("s.json"),
             R"({"format": "trnsim-sweep/1", "kernel": "./\u0000x.json", "config": "trn2"})");
  expect_input_error(
      trnsim(dir, {"sweep", "s.json", "--dry-run"}),
      "s.json: /kernel: expected a kernel file, found a string with a NUL character");
}

TEST(Inputs, AnErrorMidRunPrintsNothingOnStdout) {
  ScratchDir dir;
  // The second iteration reads past the end of `a`: found while the simulation runs.
  write_file(dir.file("k.json"),
             kernel_with(R"([{"for": "t", "range": 3, "body": [)" + copy_from("t") + "]}]"));
  const Output output = trnsim(dir, {"run", "k.json"});
  EXPECT_EQ(output.exit_code, 2) << output.err;
  EXPECT_EQ(output.out, "");
}

// ---- outputs ----------------------------------------------------------------------------------

bool is_char_device(const std::string& path) {
  struct stat info {};
  return ::lstat(path.c_str(), &info) == 0 && S_ISCHR(info.st_mode);
}

TEST(Outputs, DevNullStaysADevice) {
  if (::access("/dev/null", W_OK) != 0 || !is_char_device("/dev/null")) {
    GTEST_SKIP() << "/dev/null is not a writable character device here";
  }
  ScratchDir dir;
  const Output output = trnsim(dir, {"run", kVectorAdd, "--trace", "/dev/null", "--profile",
                                     "/dev/null", "--stats", "/dev/null"});
  EXPECT_EQ(output.exit_code, 0) << output.err;
  EXPECT_TRUE(is_char_device("/dev/null"));
}

TEST(Outputs, ASymlinkIsFollowedAndKept) {
  ScratchDir dir;
  write_file(dir.file("target.json"), "old");
  std::filesystem::create_symlink("target.json", dir.file("link.json"));
  const Output output = trnsim(dir, {"run", kVectorAdd, "--stats", "link.json"});
  EXPECT_EQ(output.exit_code, 0) << output.err;
  EXPECT_TRUE(std::filesystem::is_symlink(dir.file("link.json")));
  const auto stats = nlohmann::json::parse(read_file(dir.file("target.json")), nullptr, false);
  EXPECT_TRUE(stats.is_object());
  EXPECT_FALSE(std::filesystem::exists(dir.file("target.json.tmp")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("link.json.tmp")));
}

TEST(Outputs, AFifoIsWrittenInPlace) {
  ScratchDir dir;
  const std::string fifo = dir.file("stats.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto reader = std::async(std::launch::async, [&fifo] { return read_file(fifo); });
  const Output output = trnsim(dir, {"run", kVectorAdd, "--stats", fifo});
  EXPECT_EQ(output.exit_code, 0) << output.err;
  const auto stats = nlohmann::json::parse(reader.get(), nullptr, false);
  EXPECT_TRUE(stats.is_object());
  struct stat info {};
  ASSERT_EQ(::lstat(fifo.c_str(), &info), 0);
  EXPECT_TRUE(S_ISFIFO(info.st_mode));
}

TEST(Outputs, MissingParentDirectoriesAreCreated) {
  ScratchDir dir;
  EXPECT_EQ(trnsim(dir, {"run", kVectorAdd, "--stats", "runs/a/stats.json"}).exit_code, 0);
  EXPECT_TRUE(
      nlohmann::json::parse(read_file(dir.file("runs/a/stats.json")), nullptr, false).is_object());
  write_file(dir.file("s.json"), R"({"format": "trnsim-sweep/1", "name": "s",
    "kernel": {"file": ")" + kVectorAdd +
                                     R"(", "params": {"T": [2]}}, "config": "trn2",
    "metrics": ["time_us"]})");
  const Output sweep =
      trnsim(dir, {"sweep", "s.json", "-o", "runs/b/s.jsonl", "--progress", "none"});
  EXPECT_EQ(sweep.exit_code, 0) << sweep.err;
  EXPECT_NE(read_file(dir.file("runs/b/s.jsonl")).find("\"index\":0"), std::string::npos);
}

TEST(Outputs, ADirectoryAsOutputIsAnErrorAndLeavesNoTemporaryFile) {
  ScratchDir dir;
  std::filesystem::create_directory(dir.file("out"));
  expect_input_error(trnsim(dir, {"run", kVectorAdd, "--trace", "out"}),
                     "--trace out: expected a file to write, found a directory");
  write_file(dir.file("s.json"), R"({"format": "trnsim-sweep/1", "name": "s",
    "kernel": {"file": ")" + kVectorAdd +
                                     R"(", "params": {"T": [2]}}, "config": "trn2",
    "metrics": ["time_us"]})");
  const Output sweep = trnsim(dir, {"sweep", "s.json", "--csv", "out", "--progress", "none"});
  EXPECT_EQ(sweep.exit_code, 2) << sweep.err;
  EXPECT_NE(sweep.err.find("out: expected a file to write, found a directory"), std::string::npos)
      << sweep.err;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir.path())) {
    EXPECT_NE(entry.path().extension(), ".tmp") << entry.path();
  }
}

TEST(Outputs, AFailedRunLeavesNoFileAndNoTemporaryFile) {
  ScratchDir dir;
  write_file(dir.file("k.json"),
             kernel_with(R"([{"for": "t", "range": 3, "body": [)" + copy_from("t") + "]}]"));
  EXPECT_EQ(trnsim(dir, {"run", "k.json", "--trace", "t.json", "--profile", "p.csv"}).exit_code, 2);
  EXPECT_FALSE(std::filesystem::exists(dir.file("t.json")));
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_NE(entry.path().extension(), ".tmp") << entry.path();
  }
}

TEST(Outputs, AFullStdoutIsAnErrorForEveryCommand) {
  if (::access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no writable /dev/full here";
  ScratchDir dir;
  write_file(dir.file("s.json"), R"({"format": "trnsim-sweep/1", "name": "s",
    "kernel": {"file": ")" + kVectorAdd +
                                     R"(", "params": {"T": [2]}}, "config": "trn2",
    "metrics": ["time_us"]})");
  const std::vector<std::vector<std::string>> commands{
      {"run", kVectorAdd, "--json"},
      {"run", kVectorAdd},
      {"check", kVectorAdd},
      {"config", "show", "trn2"},
      {"compare", kVectorAdd, "--configs", "trn2", "--param", "T=2"},
      {"sweep", "s.json", "--progress", "none"},
      {"sweep", "s.json", "--dry-run"},
  };
  for (const auto& command : commands) {
    std::filesystem::remove(dir.file("s.jsonl"));
    const Output output = trnsim(dir, command, "/dev/full");
    EXPECT_EQ(output.exit_code, 2) << command[0] << ": " << output.err;
    EXPECT_EQ(line_count(output.err), 1u) << command[0] << ": " << output.err;
    EXPECT_NE(output.err.find("writing standard output failed: No space left on device"),
              std::string::npos)
        << command[0] << ": " << output.err;
  }
}

// ---- compare's exit codes ---------------------------------------------------------------------

TEST(Compare, ExitCodesSayWhetherEveryConfigRan) {
  ScratchDir dir;
  expect_input_error(trnsim(dir, {"compare", "missing.json", "--configs", "trn2"}),
                     "missing.json: cannot open the kernel file");
  write_file(dir.file("broken.json"), "{\"format\": ");
  expect_input_error(trnsim(dir, {"compare", "broken.json", "--configs", "trn2"}),
                     "broken.json: invalid JSON");
  expect_input_error(
      trnsim(dir, {"compare", kVectorAdd, "--configs", "nonesuch", "--param", "T=2"}),
      "no built-in config and no file named 'nonesuch'");
  write_file(dir.file("bad.json"), R"({"extends": "trn2", "name": "bad", "dma": {"x": 1}})");
  expect_input_error(trnsim(dir, {"compare", kVectorAdd, "--configs", "trn2,bad.json"}),
                     "bad.json: /dma/x");
  const Output ok =
      trnsim(dir, {"compare", kVectorAdd, "--configs", "trn1,trn2", "--param", "T=2", "--json"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(nlohmann::json::parse(ok.out, nullptr, false).is_object());
}

}  // namespace
}  // namespace trnsim::cli
