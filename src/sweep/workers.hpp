// Worker processes: runs command lines as child processes (util/child_process.hpp), at most
// `parallel` at a time, captures their stdout and stderr, and reports each as it ends. A
// simulation runs in its own process because SystemC elaborates once per process. Children die
// with the parent (PR_SET_PDEATHSIG), so a killed sweep leaves no orphans. Leaves out what the
// commands mean.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "util/child_process.hpp"

namespace trnsim::sweep {

struct WorkerTask {
  std::size_t id = 0;             ///< the caller's tag, returned with the outcome
  std::vector<std::string> argv;  ///< argv[0] is the executable's path
};

/// How a worker ended and what it wrote (util::ChildOutcome).
using WorkerOutcome = util::ChildOutcome;

struct WorkerOptions {
  unsigned parallel = 1;  ///< children running at once (>= 1)
  double timeout_s = 0;   ///< per task, wall-clock seconds; 0 for none
  /// Called about every 250 ms while waiting, e.g. to refresh a progress display.
  std::function<void()> tick;
};

/// Runs tasks taken from `next` (nullopt when there are no more) and calls `done` in the calling
/// thread as each ends, in completion order. Returns false when interrupted (SIGINT, SIGTERM or
/// SIGHUP arrived while an InterruptGuard is alive): running children are then killed and not
/// reported, and no more tasks start.
bool run_workers(const WorkerOptions& options,
                 const std::function<std::optional<WorkerTask>()>& next,
                 const std::function<void(const WorkerTask&, WorkerOutcome&&)>& done);

/// While alive, SIGINT, SIGTERM and SIGHUP set a flag (read by run_workers and interrupted())
/// instead of killing the process, so a sweep can stop cleanly. Restores the previous handlers.
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
  static bool interrupted();
};

/// Absolute path of the running executable, to start workers of the same build.
using util::self_executable;

/// Worker parallelism from a -j value: 0 means one per hardware thread.
unsigned resolve_parallelism(unsigned requested);

/// "exited with code 3", "killed by signal 9 (Killed)", "timed out after 60 s".
using util::describe_outcome;

}  // namespace trnsim::sweep
