#include "util/child_process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>
#include <utility>

extern char** environ;

namespace trnsim::util {

namespace {

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

/// Signals whose disposition a child starts with the default for (a caller may have changed
/// them, e.g. sweep/workers.hpp's InterruptGuard).
constexpr std::array<int, 4> kResetSignals = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};

/// This process's environment with `overrides` ("NAME=VALUE") replacing or adding variables.
std::vector<std::string> child_environment(const std::vector<std::string>& overrides) {
  const auto name_of = [](const std::string& entry) { return entry.substr(0, entry.find('=')); };
  std::vector<std::string> entries;
  for (char** variable = environ; variable != nullptr && *variable != nullptr; ++variable) {
    const std::string entry(*variable);
    bool replaced = false;
    for (const std::string& override_entry : overrides) {
      replaced = replaced || name_of(override_entry) == name_of(entry);
    }
    if (!replaced) entries.push_back(entry);
  }
  entries.insert(entries.end(), overrides.begin(), overrides.end());
  return entries;
}

/// An anonymous in-memory file holding `text`, positioned at its start: a child's stdin that
/// needs no writer (no pipe to keep fed, no SIGPIPE when the child does not read it all).
int input_file(const std::string& text) {
  const int fd = ::memfd_create("trnsim-child-input", MFD_CLOEXEC);
  if (fd < 0) throw_errno("memfd_create");
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int saved = errno;
      ::close(fd);
      errno = saved;
      throw_errno("writing a child's input");
    }
    written += static_cast<std::size_t>(n);
  }
  if (::lseek(fd, 0, SEEK_SET) != 0) {
    const int saved = errno;
    ::close(fd);
    errno = saved;
    throw_errno("lseek");
  }
  return fd;
}

/// Reads what is available from `fd` into `into`; closes `fd` at end of file or on an error.
void drain_fd(int& fd, std::string& into) {
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

void record_status(ChildOutcome& outcome, int status) {
  if (WIFEXITED(status)) {
    outcome.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    outcome.signal = WTERMSIG(status);
  }
}

}  // namespace

std::optional<std::string> run_in_child(const std::function<std::string()>& body, int& status) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  const pid_t child = fork();
  if (child < 0) throw std::runtime_error("fork failed");
  if (child == 0) {
    close(fds[0]);
    const std::string out = body();
    std::size_t written = 0;
    while (written < out.size()) {
      const ssize_t n = write(fds[1], out.data() + written, out.size() - written);
      if (n <= 0) _exit(3);
      written += static_cast<std::size_t>(n);
    }
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  char buffer[65536];
  for (;;) {
    const ssize_t n = read(fds[0], buffer, sizeof(buffer));
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  status = 0;
  waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || text.empty()) return std::nullopt;
  return text;
}

ChildProcess::ChildProcess(const ChildLaunch& launch) {
  if (launch.argv.empty()) throw std::invalid_argument("ChildProcess: empty argv");
  int out_pipe[2];
  int err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) throw_errno("pipe2");
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    throw_errno("pipe2");
  }
  int input_fd = -1;
  try {
    if (!launch.input.empty()) input_fd = input_file(launch.input);
  } catch (...) {
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) ::close(fd);
    throw;
  }
  // Everything the child needs is prepared before fork: after it, only async-signal-safe calls.
  std::vector<std::string> arguments = launch.argv;
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  std::vector<std::string> environment = child_environment(launch.environment);
  std::vector<char*> envp;
  for (std::string& entry : environment) envp.push_back(entry.data());
  envp.push_back(nullptr);
  const std::string exec_failure = "trnsim: error: cannot execute " + arguments.front() + "\n";
  const std::string chdir_failure =
      "trnsim: error: cannot change to the directory " + launch.working_directory + "\n";
  const pid_t parent = ::getpid();

  const pid_t pid = ::fork();
  if (pid < 0) {
    const int saved = errno;
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1], input_fd}) {
      if (fd >= 0) ::close(fd);
    }
    errno = saved;
    throw_errno("fork");
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    for (int signal : kResetSignals) ::signal(signal, SIG_DFL);
    const int stdin_fd = input_fd >= 0 ? input_fd : ::open("/dev/null", O_RDONLY);
    if (stdin_fd >= 0) ::dup2(stdin_fd, STDIN_FILENO);
    ::dup2(out_pipe[1], STDOUT_FILENO);
    ::dup2(err_pipe[1], STDERR_FILENO);
    if (!launch.working_directory.empty() && ::chdir(launch.working_directory.c_str()) != 0) {
      [[maybe_unused]] const ssize_t written =
          ::write(STDERR_FILENO, chdir_failure.data(), chdir_failure.size());
      ::_exit(127);
    }
    ::execve(argv[0], argv.data(), envp.data());
    [[maybe_unused]] const ssize_t written =
        ::write(STDERR_FILENO, exec_failure.data(), exec_failure.size());
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (input_fd >= 0) ::close(input_fd);
  ::fcntl(out_pipe[0], F_SETFL, O_NONBLOCK);
  ::fcntl(err_pipe[0], F_SETFL, O_NONBLOCK);
  pid_ = pid;
  out_fd_ = out_pipe[0];
  err_fd_ = err_pipe[0];
  reaped_ = false;
}

ChildProcess::~ChildProcess() {
  release();
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      out_fd_(std::exchange(other.out_fd_, -1)),
      err_fd_(std::exchange(other.err_fd_, -1)),
      reaped_(std::exchange(other.reaped_, true)),
      outcome_(std::move(other.outcome_)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    release();
    pid_ = std::exchange(other.pid_, -1);
    out_fd_ = std::exchange(other.out_fd_, -1);
    err_fd_ = std::exchange(other.err_fd_, -1);
    reaped_ = std::exchange(other.reaped_, true);
    outcome_ = std::move(other.outcome_);
  }
  return *this;
}

void ChildProcess::release() {
  if (!reaped_) kill();
  close_fd(out_fd_);
  close_fd(err_fd_);
}

std::vector<int> ChildProcess::output_fds() const {
  std::vector<int> fds;
  if (out_fd_ >= 0) fds.push_back(out_fd_);
  if (err_fd_ >= 0) fds.push_back(err_fd_);
  return fds;
}

void ChildProcess::drain() {
  drain_fd(out_fd_, outcome_.out);
  drain_fd(err_fd_, outcome_.err);
}

bool ChildProcess::finished() {
  if (out_fd_ >= 0 || err_fd_ >= 0) return false;
  if (reaped_) return true;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    record_status(outcome_, status);
    reaped_ = true;
  }
  return reaped_;
}

void ChildProcess::wait() {
  if (!reaped_) {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    record_status(outcome_, status);
    reaped_ = true;
  }
  drain();
}

void ChildProcess::kill() {
  if (!reaped_) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    record_status(outcome_, status);
    reaped_ = true;
  }
  close_fd(out_fd_);
  close_fd(err_fd_);
}

ChildOutcome run_child(const ChildLaunch& launch) {
  ChildProcess child(launch);
  for (;;) {
    const std::vector<int> open_fds = child.output_fds();
    if (open_fds.empty()) break;
    std::vector<pollfd> fds;
    for (const int fd : open_fds) fds.push_back({fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) throw_errno("poll");
    child.drain();
  }
  child.wait();
  return std::move(child.outcome());
}

std::string describe_outcome(const ChildOutcome& outcome, double timeout_s) {
  if (outcome.timed_out) return fmt::format("timed out after {} s", timeout_s);
  if (outcome.signal != 0) {
    return fmt::format("killed by signal {} ({})", outcome.signal, ::strsignal(outcome.signal));
  }
  return fmt::format("exited with code {}", outcome.exit_code);
}

std::string self_executable() {
  std::error_code error;
  const auto path = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) throw std::system_error(error, "reading /proc/self/exe");
  return path.string();
}

std::optional<std::string> find_executable(const std::string& name) {
  const auto executable = [](const std::string& path) {
    struct stat info {};
    return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
           ::access(path.c_str(), X_OK) == 0;
  };
  if (name.find('/') != std::string::npos) {
    return executable(name) ? std::optional<std::string>(name) : std::nullopt;
  }
  const char* path_variable = std::getenv("PATH");
  const std::string path = path_variable != nullptr ? path_variable : "/usr/bin:/bin";
  std::size_t begin = 0;
  while (begin <= path.size()) {
    const std::size_t end = std::min(path.find(':', begin), path.size());
    const std::string directory = end > begin ? path.substr(begin, end - begin) : ".";
    const std::string candidate = directory + "/" + name;
    if (executable(candidate)) return candidate;
    begin = end + 1;
  }
  return std::nullopt;
}

}  // namespace trnsim::util
