// util::EndOfTimeStep: a client's callback runs once nothing else is left to run at the time it
// asked for, after every delta cycle of that time, and two clients never keep each other
// waiting (one method serves both).
#include "util/end_of_time_step.hpp"

#include <gtest/gtest.h>

#include <string>
#include <systemc>
#include <vector>

namespace trnsim::util {
namespace {

using sc_core::SC_NS;
using sc_core::sc_time;

/// Records, in order, what ran when.
std::vector<std::string>& journal() {
  static std::vector<std::string> entries;
  return entries;
}

std::string now_label(const std::string& what) {
  return what + "@" + std::to_string(static_cast<int>(sc_core::sc_time_stamp().to_seconds() * 1e9));
}

struct Recorder : EndOfTimeStep::Client {
  explicit Recorder(std::string label) : name(std::move(label)) {}
  void time_step_ended() override { journal().push_back(now_label(name)); }
  std::string name;
};

/// A process that, at 10 ns, asks both clients for the end of that time step, then keeps the
/// time step going for three more delta cycles; at 20 ns asks one client for 30 ns.
class Driver : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Driver);
  Driver(sc_core::sc_module_name name, Recorder& first, Recorder& second)
      : sc_module(name), a_(first), b_(second) {
    SC_THREAD(run);
    SC_METHOD(step);
    sensitive << delta_;
    dont_initialize();
  }

 private:
  void run() {
    wait(10, SC_NS);
    EndOfTimeStep::request(a_, sc_core::sc_time_stamp());
    EndOfTimeStep::request(b_, sc_core::sc_time_stamp());
    delta_.notify(sc_core::SC_ZERO_TIME);
    wait(10, SC_NS);
    EndOfTimeStep::request(a_, sc_time(30, SC_NS));
  }
  void step() {
    journal().push_back(now_label("delta"));
    if (++deltas_ < 3) delta_.notify(sc_core::SC_ZERO_TIME);
  }
  Recorder& a_;
  Recorder& b_;
  sc_core::sc_event delta_;
  int deltas_ = 0;
};

TEST(EndOfTimeStep, CallsBackAfterEveryDeltaOfTheTimeAndServesSeveralClients) {
  Recorder a("a");
  Recorder b("b");
  Driver driver("driver", a, b);
  sc_core::sc_start();
  const std::vector<std::string> expected{"delta@10", "delta@10", "delta@10",
                                          "a@10",     "b@10",     "a@30"};
  EXPECT_EQ(journal(), expected);
}

}  // namespace
}  // namespace trnsim::util

// libsystemc.so refers to sc_main (its own main() calls it); gtest_main provides main(), so this
// is never called.
extern "C" int sc_main(int /*argc*/, char* /*argv*/[]) {
  return 1;
}
