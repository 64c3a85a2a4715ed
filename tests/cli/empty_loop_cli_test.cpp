// A loop whose body issues nothing is skipped whatever its trip count: these runs finish at once
// (the CTest TIMEOUT of this executable, 30 s, fails them if they walk the iterations).
#include "cli_test_support.hpp"

namespace trnsim::cli {
namespace {

using testing::kernel_with;
using testing::Output;
using testing::ScratchDir;
using testing::trnsim;
using testing::write_file;

TEST(EmptyLoops, AnEmptyLoopOfInt64MaxIterationsIsSkipped) {
  ScratchDir dir;
  write_file(dir.file("k.json"),
             kernel_with(R"([{"for": "i", "range": "9223372036854775807", "body": []}])"));
  for (const char* command : {"check", "run"}) {
    const Output output = trnsim(dir, {command, "k.json"});
    EXPECT_EQ(output.exit_code, 0) << command << ": " << output.err;
  }
}

TEST(EmptyLoops, NestedLoopsAndConditionsWithoutInstructionsAreSkipped) {
  ScratchDir dir;
  write_file(dir.file("k.json"),
             kernel_with(R"([{"for": "i", "range": [-9223372036854775807, 9223372036854775807],
               "body": [{"for": "j", "range": 1000000000000, "body": [
                 {"if": "j % 2", "then": [], "else": []}]}]},
               {"op": "dma_copy", "dst": "a_sb", "src": "a[0]"}])"));
  const Output output = trnsim(dir, {"run", "k.json"});
  EXPECT_EQ(output.exit_code, 0) << output.err;
}

}  // namespace
}  // namespace trnsim::cli
