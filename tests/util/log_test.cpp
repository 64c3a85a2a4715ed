// Per-component trace levels (util/log.hpp): verbosity, COMPONENT=LEVEL specs with their
// hierarchy, and located errors for unknown components and levels.
#include "util/log.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "util/error.hpp"

namespace trnsim::log {
namespace {

TEST(Log, VerbosityTwoSetsEveryComponentToDebug) {
  configure(0, {});
  for (std::string_view component : kComponents) EXPECT_FALSE(debug_enabled(component));
  configure(2, {});
  for (std::string_view component : kComponents) EXPECT_TRUE(debug_enabled(component));
  configure(0, {});
}

TEST(Log, AComponentsLevelAppliesToTheComponentsBelowIt) {
  configure(0, {"core=debug"});
  EXPECT_TRUE(debug_enabled("core"));
  EXPECT_TRUE(debug_enabled("core.dma"));  // below core
  EXPECT_FALSE(debug_enabled("dma"));      // "dma" is not below "core"
  EXPECT_FALSE(debug_enabled("collective"));
  configure(0, {"core=debug", "core.dma=warn"});  // later specs win
  EXPECT_TRUE(debug_enabled("core"));
  EXPECT_FALSE(debug_enabled("core.dma"));
  configure(2, {"dma=off"});
  EXPECT_FALSE(debug_enabled("dma"));
  EXPECT_TRUE(debug_enabled("collective"));
  EXPECT_EQ(component("dma").level(), spdlog::level::off);  // an existing logger follows
  configure(0, {});
}

TEST(Log, UnknownComponentsAndLevelsAreLocatedErrors) {
  try {
    configure(0, {"cor=debug"});
    FAIL() << "no error";
  } catch (const InputError& error) {
    EXPECT_EQ(std::string(error.what()),
              "command line: --log 'cor=debug': expected COMPONENT=LEVEL with COMPONENT one of "
              "core, core.dma, dma, collective; found 'cor'");
  }
  try {
    configure(0, {"dma=loud"});
    FAIL() << "no error";
  } catch (const InputError& error) {
    EXPECT_EQ(std::string(error.what()),
              "command line: --log 'dma=loud': expected LEVEL one of trace, debug, info, warn, "
              "error, off; found 'loud'");
  }
  EXPECT_THROW(configure(0, {"core"}), InputError);  // no '='
}

}  // namespace
}  // namespace trnsim::log
