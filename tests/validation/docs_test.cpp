// docs/validation.md is what `trnsim validate --markdown` prints for this build, and every
// published target is within its tolerance (or a known miss with its reason): regenerate with
// `trnsim validate --markdown --output docs/validation.md` after a timing-model change. Also:
// the transfer- and packet-level DMA models meet the same targets, and `validate` rejects bad
// input.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "sweep/workers.hpp"

namespace {

std::string read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

/// Runs the trnsim binary once as a child process and returns its exit code and output.
trnsim::sweep::WorkerOutcome run_trnsim(std::vector<std::string> argv) {
  trnsim::sweep::WorkerTask task;
  task.argv = std::move(argv);
  bool given = false;
  trnsim::sweep::WorkerOutcome result;
  trnsim::sweep::run_workers(
      {},
      [&]() -> std::optional<trnsim::sweep::WorkerTask> {
        if (given) return std::nullopt;
        given = true;
        return task;
      },
      [&](const trnsim::sweep::WorkerTask&, trnsim::sweep::WorkerOutcome&& outcome) {
        result = std::move(outcome);
      });
  return result;
}

TEST(ValidationDocs, AreCurrentAndEveryTargetIsWithinTolerance) {
  const auto result = run_trnsim({TRNSIM_BINARY, "validate", "--markdown", "--jobs", "2"});
  EXPECT_EQ(result.exit_code, 0)
      << "a validation row is outside its tolerance (FAIL) or has no result:\n"
      << result.out << result.err;
  const std::string checked_in = read_file(std::string(TRNSIM_SOURCE_DIR) + "/docs/validation.md");
  EXPECT_EQ(result.out, checked_in)
      << "docs/validation.md is stale: regenerate it with `trnsim validate --markdown --output "
         "docs/validation.md`";
}

// The transfer-level DMA model (dma.model = transfer, the fastest) and the packet-level one (the
// detailed one) meet the same published targets as the default flow model: every row within its
// tolerance or a known miss.
TEST(ValidationTransferModel, EveryTargetIsWithinTolerance) {
  const auto result = run_trnsim(
      {TRNSIM_BINARY, "validate", "--set", "dma.model=transfer", "--no-sanity", "--jobs", "2"});
  EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_NE(result.out.find("T1 "), std::string::npos) << result.out;
}

TEST(ValidationPacketModel, EveryTargetIsWithinTolerance) {
  const auto result = run_trnsim(
      {TRNSIM_BINARY, "validate", "--set", "dma.model=packet", "--no-sanity", "--jobs", "2"});
  EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_NE(result.out.find("T1 "), std::string::npos) << result.out;
}

// A bad --set is reported once, before any simulation runs, with exit code 2.
TEST(ValidateCommand, RejectsABadSetBeforeRunning) {
  const auto unknown = run_trnsim({TRNSIM_BINARY, "validate", "--set", "dma.modle=transfer"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("unknown parameter 'dma.modle'"), std::string::npos) << unknown.err;
  const auto no_value = run_trnsim({TRNSIM_BINARY, "validate", "--set", "dma.model"});
  EXPECT_EQ(no_value.exit_code, 2);
  EXPECT_NE(no_value.err.find("expected KEY=VALUE"), std::string::npos) << no_value.err;
  const auto bad_value = run_trnsim({TRNSIM_BINARY, "validate", "--set", "dma.model=fast"});
  EXPECT_EQ(bad_value.exit_code, 2);
  EXPECT_NE(bad_value.err.find("packet|transfer"), std::string::npos) << bad_value.err;
}

}  // namespace
