// docs/validation.md is what `trnsim validate --markdown` prints for this build, and every
// published target is within its tolerance (or a known miss with its reason): regenerate with
// `trnsim validate --markdown --output docs/validation.md` after a timing-model change.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <optional>

#include "sweep/workers.hpp"

namespace {

std::string read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

TEST(ValidationDocs, AreCurrentAndEveryTargetIsWithinTolerance) {
  trnsim::sweep::WorkerTask task;
  task.argv = {TRNSIM_BINARY, "validate", "--markdown", "--jobs", "2"};
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
  EXPECT_EQ(result.exit_code, 0)
      << "a validation row is outside its tolerance (FAIL) or has no result:\n"
      << result.out << result.err;
  const std::string checked_in = read_file(std::string(TRNSIM_SOURCE_DIR) + "/docs/validation.md");
  EXPECT_EQ(result.out, checked_in)
      << "docs/validation.md is stale: regenerate it with `trnsim validate --markdown --output "
         "docs/validation.md`";
}

}  // namespace

namespace {

// The transfer-level DMA model (dma.model = transfer, the fast one) meets the same published
// targets as the packet model: every row within its tolerance or a known miss.
TEST(ValidationTransferModel, EveryTargetIsWithinTolerance) {
  trnsim::sweep::WorkerTask task;
  task.argv = {TRNSIM_BINARY, "validate", "--set", "dma.model=transfer",
               "--no-sanity", "--jobs",   "2"};
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
  EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_NE(result.out.find("T1 "), std::string::npos) << result.out;
}

}  // namespace
