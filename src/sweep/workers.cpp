#include "sweep/workers.hpp"

#include <poll.h>
#include <signal.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <system_error>
#include <thread>

#include "util/temporary_directory.hpp"

namespace trnsim::sweep {

namespace {

volatile std::sig_atomic_t g_interrupted = 0;

extern "C" void on_interrupt(int /*signal*/) {
  g_interrupted = 1;
}

constexpr std::array<int, 3> kInterruptSignals = {SIGINT, SIGTERM, SIGHUP};
std::array<struct sigaction, 3> g_previous{};

using Clock = std::chrono::steady_clock;

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

struct Running {
  WorkerTask task;
  util::ChildProcess child;
  Clock::time_point started;
};

}  // namespace

bool run_workers(const WorkerOptions& options,
                 const std::function<std::optional<WorkerTask>()>& next,
                 const std::function<void(const WorkerTask&, WorkerOutcome&&)>& done) {
  const unsigned parallel = std::max(1u, options.parallel);
  // The workers' temporary files (an NKI kernel's traced JSON) go to a directory of this run,
  // removed when it ends: a worker killed for its timeout cannot remove its own.
  const util::TemporaryDirectory scratch("trnsim-sweep", "for the sweep workers' files");
  std::vector<Running> running;
  bool more = true;
  while (true) {
    if (g_interrupted) {
      for (Running& worker : running) worker.child.kill();
      return false;
    }
    while (more && running.size() < parallel) {
      std::optional<WorkerTask> task = next();
      if (!task) {
        more = false;
        break;
      }
      util::ChildLaunch launch;
      launch.argv = task->argv;
      launch.environment = {"TMPDIR=" + scratch.path().string()};
      util::ChildProcess child(launch);
      running.push_back(Running{std::move(*task), std::move(child), Clock::now()});
    }
    if (running.empty()) return true;

    std::vector<pollfd> fds;
    for (const Running& worker : running) {
      for (const int fd : worker.child.output_fds()) fds.push_back({fd, POLLIN, 0});
    }
    // A bounded wait: timeouts, interrupts and progress refresh are checked at least 4x/s.
    if (!fds.empty()) {
      const int ready = ::poll(fds.data(), fds.size(), 250);
      if (ready < 0 && errno != EINTR) throw_errno("poll");
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (options.tick) options.tick();

    const auto now = Clock::now();
    for (std::size_t i = 0; i < running.size();) {
      Running& worker = running[i];
      worker.child.drain();
      const double elapsed = std::chrono::duration<double>(now - worker.started).count();
      if (options.timeout_s > 0 && elapsed > options.timeout_s && !worker.child.finished()) {
        worker.child.outcome().timed_out = true;
        worker.child.kill();
      }
      if (!worker.child.finished()) {
        ++i;
        continue;
      }
      Running ended = std::move(worker);
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
      // A child ended by our interrupt is not a result.
      if (g_interrupted) {
        for (Running& other : running) other.child.kill();
        return false;
      }
      done(ended.task, std::move(ended.child.outcome()));
    }
  }
}

InterruptGuard::InterruptGuard() {
  g_interrupted = 0;
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: poll() returns EINTR at once
  for (std::size_t i = 0; i < kInterruptSignals.size(); ++i) {
    ::sigaction(kInterruptSignals[i], &action, &g_previous[i]);
  }
}

InterruptGuard::~InterruptGuard() {
  for (std::size_t i = 0; i < kInterruptSignals.size(); ++i) {
    ::sigaction(kInterruptSignals[i], &g_previous[i], nullptr);
  }
}

bool InterruptGuard::interrupted() {
  return g_interrupted != 0;
}

unsigned resolve_parallelism(unsigned requested) {
  if (requested > 0) return requested;
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace trnsim::sweep
