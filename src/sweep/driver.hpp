// Running simulations in worker processes: a whole sweep (the points of one shard that are not
// yet in the results file, each result appended as it ends, the final file sorted by index), or
// a plain batch of runs for compare and regress. Workers are `trnsim run --json`; a run is known
// only through its exit code, its statistics JSON and its error message.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "sweep/results.hpp"
#include "sweep/run_request.hpp"
#include "sweep/spec.hpp"
#include "sweep/workers.hpp"
#include "util/progress.hpp"

namespace trnsim::sweep {

/// What a worker's run gave: the statistics, or the reason there are none.
struct RunResult {
  bool ok = false;
  nlohmann::json statistics;  ///< `trnsim run --json` output when ok
  std::string error;          ///< one message when not ok
};

/// Reads a finished `trnsim run --json` worker: exit 0 with a JSON object is ok; exit 2 gives
/// its input-error message; anything else says how the worker ended.
RunResult interpret_run(const WorkerOutcome& outcome, double timeout_s);

struct BatchOptions {
  std::string trnsim_binary;  ///< worker executable
  unsigned parallel = 1;
  double timeout_s = 0;
  util::ProgressStyle progress = util::ProgressStyle::kQuiet;
  std::string label = "trnsim";  ///< progress label
  util::Progress::Options progress_options;
};

/// Exit code of a command stopped by SIGINT, SIGTERM or SIGHUP (128 + SIGINT, as shells say).
inline constexpr int kExitInterrupted = 130;

/// Thrown by run_batch when SIGINT, SIGTERM or SIGHUP stopped it.
struct Interrupted : std::runtime_error {
  Interrupted() : std::runtime_error("interrupted") {}
};

/// Runs every request; results in request order. Throws Interrupted.
std::vector<RunResult> run_batch(const std::vector<RunRequest>& requests,
                                 const BatchOptions& options, std::ostream& log);

struct SweepOptions {
  BatchOptions batch;
  std::string results_path;
  Shard shard;
  bool resume = false;     ///< keep finished points of an existing results file
  bool overwrite = false;  ///< start an existing results file afresh
};

struct SweepSummary {
  std::size_t total_points = 0;  ///< in the spec
  std::size_t shard_points = 0;  ///< in this shard
  std::size_t resumed = 0;       ///< already in the results file
  std::size_t ran = 0;           ///< finished by this invocation
  std::size_t failed = 0;        ///< error records among the shard's points
  bool interrupted = false;      ///< stopped by a signal; --resume continues it
  std::string first_error;       ///< of the lowest failed index ("point N: ...")
};

/// Runs the sweep. Throws InputError for an existing results file without --resume or
/// --overwrite, or one whose records do not match the spec (different inputs, kernel or config
/// contents, or metrics).
SweepSummary run_sweep(const SweepSpec& spec, const SweepOptions& options, std::ostream& log);

}  // namespace trnsim::sweep
