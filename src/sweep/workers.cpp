#include "sweep/workers.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <thread>

namespace trnsim::sweep {

namespace {

volatile std::sig_atomic_t g_interrupted = 0;

extern "C" void on_interrupt(int /*signal*/) {
  g_interrupted = 1;
}

constexpr std::array<int, 3> kInterruptSignals = {SIGINT, SIGTERM, SIGHUP};
std::array<struct sigaction, 3> g_previous{};

using Clock = std::chrono::steady_clock;

struct Running {
  WorkerTask task;
  pid_t pid = -1;
  int out_fd = -1;
  int err_fd = -1;
  Clock::time_point started;
  WorkerOutcome outcome;
  bool exited = false;
};

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

/// Starts `task` with stdout and stderr on fresh pipes and stdin on /dev/null.
Running launch(WorkerTask task) {
  int out_pipe[2];
  int err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) throw_errno("pipe2");
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    throw_errno("pipe2");
  }
  // Everything the child needs is prepared before fork: after it, only async-signal-safe calls.
  std::vector<char*> argv;
  for (std::string& arg : task.argv) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const std::string exec_failure = "trnsim: error: cannot execute " + task.argv.front() + "\n";
  const pid_t parent = ::getpid();

  const pid_t pid = ::fork();
  if (pid < 0) throw_errno("fork");
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    for (int signal : kInterruptSignals) ::signal(signal, SIG_DFL);
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
    ::dup2(out_pipe[1], STDOUT_FILENO);
    ::dup2(err_pipe[1], STDERR_FILENO);
    ::execv(argv[0], argv.data());
    [[maybe_unused]] const ssize_t written =
        ::write(STDERR_FILENO, exec_failure.data(), exec_failure.size());
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  ::fcntl(out_pipe[0], F_SETFL, O_NONBLOCK);
  ::fcntl(err_pipe[0], F_SETFL, O_NONBLOCK);
  Running running;
  running.task = std::move(task);
  running.pid = pid;
  running.out_fd = out_pipe[0];
  running.err_fd = err_pipe[0];
  running.started = Clock::now();
  return running;
}

/// Reads what is available; closes the descriptor at end of file.
void drain(int& fd, std::string& into) {
  char buffer[65536];
  while (fd >= 0) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      into.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0) {
      close_fd(fd);
    } else if (errno == EINTR) {
      continue;
    } else {
      if (errno != EAGAIN && errno != EWOULDBLOCK) close_fd(fd);
      return;
    }
  }
}

void record_status(Running& running, int status) {
  running.exited = true;
  if (WIFEXITED(status)) {
    running.outcome.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    running.outcome.signal = WTERMSIG(status);
  }
}

/// Polls the child without blocking; true once it has been reaped.
bool reap(Running& running) {
  if (running.exited) return true;
  int status = 0;
  const pid_t result = ::waitpid(running.pid, &status, WNOHANG);
  if (result == running.pid) record_status(running, status);
  return running.exited;
}

void kill_and_reap(Running& running) {
  if (!running.exited) {
    ::kill(running.pid, SIGKILL);
    int status = 0;
    while (::waitpid(running.pid, &status, 0) < 0 && errno == EINTR) {
    }
    record_status(running, status);
  }
  close_fd(running.out_fd);
  close_fd(running.err_fd);
}

}  // namespace

bool run_workers(const WorkerOptions& options,
                 const std::function<std::optional<WorkerTask>()>& next,
                 const std::function<void(const WorkerTask&, WorkerOutcome&&)>& done) {
  const unsigned parallel = std::max(1u, options.parallel);
  std::vector<Running> running;
  bool more = true;
  while (true) {
    if (g_interrupted) {
      for (Running& child : running) kill_and_reap(child);
      return false;
    }
    while (more && running.size() < parallel) {
      std::optional<WorkerTask> task = next();
      if (!task) {
        more = false;
        break;
      }
      running.push_back(launch(std::move(*task)));
    }
    if (running.empty()) return true;

    std::vector<pollfd> fds;
    for (const Running& child : running) {
      if (child.out_fd >= 0) fds.push_back({child.out_fd, POLLIN, 0});
      if (child.err_fd >= 0) fds.push_back({child.err_fd, POLLIN, 0});
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
      Running& child = running[i];
      drain(child.out_fd, child.outcome.out);
      drain(child.err_fd, child.outcome.err);
      const double elapsed = std::chrono::duration<double>(now - child.started).count();
      if (options.timeout_s > 0 && elapsed > options.timeout_s && !child.exited) {
        child.outcome.timed_out = true;
        kill_and_reap(child);
      }
      const bool finished = child.out_fd < 0 && child.err_fd < 0 && reap(child);
      if (!finished) {
        ++i;
        continue;
      }
      Running ended = std::move(child);
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
      // A child ended by our interrupt is not a result.
      if (g_interrupted) {
        for (Running& other : running) kill_and_reap(other);
        return false;
      }
      done(ended.task, std::move(ended.outcome));
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

std::string self_executable() {
  std::error_code error;
  const auto path = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) throw std::system_error(error, "reading /proc/self/exe");
  return path.string();
}

unsigned resolve_parallelism(unsigned requested) {
  if (requested > 0) return requested;
  return std::max(1u, std::thread::hardware_concurrency());
}

std::string describe_outcome(const WorkerOutcome& outcome, double timeout_s) {
  if (outcome.timed_out) return fmt::format("timed out after {} s", timeout_s);
  if (outcome.signal != 0) {
    return fmt::format("killed by signal {} ({})", outcome.signal, ::strsignal(outcome.signal));
  }
  return fmt::format("exited with code {}", outcome.exit_code);
}

}  // namespace trnsim::sweep
