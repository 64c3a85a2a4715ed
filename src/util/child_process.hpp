// Child processes. Two kinds: a function run in a forked copy of this process (SystemC
// elaborates once per process, so a process that runs several simulations runs each in a child),
// and a program started with fork/exec whose stdout and stderr are captured (sweep workers, the
// NKI front end's Python tracer). A started program dies with its parent (PR_SET_PDEATHSIG), so
// a killed trnsim leaves no orphans. POSIX (Linux) only; leaves out running several programs at
// once (sweep/workers.hpp builds that on ChildProcess).
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace trnsim::util {

/// Forks; the child runs `body`, writes its result to a pipe and exits 0. Returns that text,
/// or nullopt when the child failed (crashed, exited non-zero, or produced nothing); then
/// `status` holds the waitpid status. `body` should catch its own exceptions.
std::optional<std::string> run_in_child(const std::function<std::string()>& body, int& status);

/// What to start.
struct ChildLaunch {
  std::vector<std::string> argv;  ///< argv[0] is the executable's path (no PATH search)
  /// "NAME=VALUE" entries set in the child's environment on top of this process's (an entry
  /// replaces a variable of the same name).
  std::vector<std::string> environment;
  /// The child's stdin: these bytes, then end of file. Empty: /dev/null.
  std::string input;
  /// The child's working directory; empty: this process's.
  std::string working_directory;
};

/// How a child ended and what it wrote.
struct ChildOutcome {
  int exit_code = -1;      ///< exit status when the child exited, else -1
  int signal = 0;          ///< the signal that ended the child, else 0
  bool timed_out = false;  ///< killed because it ran too long (set by the caller that killed it)
  std::string out;         ///< everything the child wrote on stdout
  std::string err;         ///< everything the child wrote on stderr
};

/// A started program. Its output pipes are non-blocking: poll output_fds(), then drain().
/// The destructor kills and reaps a child that is still running.
class ChildProcess {
 public:
  /// Starts the program. Throws std::system_error when pipes or fork fail; a program that
  /// cannot be executed (or whose working directory does not exist) exits with code 127 and says
  /// so on its stderr.
  explicit ChildProcess(const ChildLaunch& launch);
  ~ChildProcess();
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  /// The pipe ends still open (stdout, stderr), to poll for POLLIN.
  std::vector<int> output_fds() const;
  /// Reads what is available without blocking; closes a pipe at its end of file.
  void drain();
  /// True once both pipes are closed and the child has been reaped (does not block).
  bool finished();
  /// Waits for the child to exit (blocking), then reads what its pipes still hold.
  void wait();
  /// Sends SIGKILL (if still running), waits for the child and closes the pipes.
  void kill();
  ChildOutcome& outcome() { return outcome_; }

 private:
  void release();

  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  bool reaped_ = true;
  ChildOutcome outcome_;
};

/// Starts the program and waits for it to end, collecting its output.
ChildOutcome run_child(const ChildLaunch& launch);

/// "exited with code 3", "killed by signal 9 (Killed)", "timed out after 60 s".
std::string describe_outcome(const ChildOutcome& outcome, double timeout_s);

/// Absolute path of the running executable (/proc/self/exe).
std::string self_executable();

/// The executable `name` would run as a command: `name` itself when it contains a '/', else the
/// first executable file of that name in a PATH directory; nullopt when there is none.
std::optional<std::string> find_executable(const std::string& name);

}  // namespace trnsim::util
