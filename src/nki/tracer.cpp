#include "nki/tracer.hpp"

#include <fmt/format.h>
#include <stdlib.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <vector>

#include "util/child_process.hpp"
#include "util/error.hpp"
#include "util/temporary_directory.hpp"

namespace trnsim::nki {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kErrorPrefix = "trnsim: error: ";
constexpr std::string_view kInternalErrorPrefix = "trnsim: internal error in the NKI front end: ";
constexpr int kTracerInvalidInput = 2;
constexpr int kTracerInternalError = 70;
constexpr int kExecFailed = 127;  ///< util::ChildProcess's exit code when exec fails

/// An environment variable's value; unset and empty are the same.
std::optional<std::string> environment(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

bool has_frontend(const fs::path& directory) {
  std::error_code error;
  return fs::is_regular_file(directory / "trnsim_nki" / "__main__.py", error);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return lines;
}

/// The tracer's stderr split into its error message (the last "trnsim: error: " line, without
/// the prefix) and everything else (tracebacks, what the kernel wrote on stderr).
struct TracerReport {
  std::string message;
  std::string other;
};

TracerReport split_report(const std::string& err) {
  TracerReport report;
  const std::vector<std::string> lines = lines_of(err);
  std::size_t error_line = lines.size();
  for (std::size_t i = lines.size(); i-- > 0;) {
    if (lines[i].rfind(kErrorPrefix, 0) == 0) {
      error_line = i;
      break;
    }
  }
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i == error_line) {
      report.message = lines[i].substr(kErrorPrefix.size());
    } else {
      report.other += lines[i] + "\n";
    }
  }
  return report;
}

/// The last non-empty line of `text`, for a short description of an unexpected failure.
std::string last_line(const std::string& text) {
  const std::vector<std::string> lines = lines_of(text);
  for (std::size_t i = lines.size(); i-- > 0;) {
    if (lines[i].find_first_not_of(" \t\r") != std::string::npos) return lines[i];
  }
  return "";
}

std::vector<std::string> tracer_command_line(const TraceRequest& request, const std::string& python,
                                             const std::string& output_path) {
  std::vector<std::string> argv = {python, "-m", "trnsim_nki", "trace", request.kernel};
  // NAME=VALUE joined to its option, so that a value starting with '-' is not an option.
  for (const std::string& input : request.arguments.inputs) argv.push_back("--input=" + input);
  for (const std::string& kwarg : request.arguments.kwargs) argv.push_back("--kwarg=" + kwarg);
  if (!request.arguments.grid.empty()) argv.push_back("--grid=" + request.arguments.grid);
  argv.insert(argv.end(), {"--target", "-", "-o", output_path});
  if (request.traceback) argv.push_back("--traceback");
  return argv;
}

}  // namespace

std::string python_interpreter() {
  if (const auto chosen = environment("TRNSIM_PYTHON")) {
    if (const auto found = util::find_executable(*chosen)) return *found;
    throw InputError("TRNSIM_PYTHON=" + *chosen,
                     "no such executable; set TRNSIM_PYTHON to a Python 3 interpreter for the NKI "
                     "front end");
  }
  if (const auto system = util::find_executable("/usr/bin/python3")) return *system;
  if (const auto on_path = util::find_executable("python3")) return *on_path;
  throw InputError("",
                   "an NKI Python kernel needs Python 3, and there is no /usr/bin/python3 or "
                   "python3 on PATH; install it (scripts/install-deps.sh) or set TRNSIM_PYTHON");
}

std::string frontend_directory() {
  if (const auto chosen = environment("TRNSIM_NKI_PATH")) {
    if (has_frontend(*chosen)) return *chosen;
    throw InputError("TRNSIM_NKI_PATH=" + *chosen,
                     "no trnsim_nki package in this directory; set TRNSIM_NKI_PATH to the "
                     "directory that holds it (src/frontend of the source tree)");
  }
  std::error_code error;
  const fs::path binary = fs::read_symlink("/proc/self/exe", error);
  if (!error) {
    const fs::path installed =
        (binary.parent_path() / ".." / "share" / "trnsim" / "python").lexically_normal();
    if (has_frontend(installed)) return installed.string();
  }
  const fs::path source_tree(TRNSIM_FRONTEND_SOURCE_DIR);
  if (has_frontend(source_tree)) return source_tree.string();
  throw InputError("",
                   "the NKI front end (Python package trnsim_nki) is neither installed beside "
                   "trnsim (share/trnsim/python) nor in the source tree (" +
                       source_tree.string() + "); set TRNSIM_NKI_PATH to its directory");
}

std::string trace_kernel(const TraceRequest& request, std::ostream& diagnostics) {
  const std::string python = python_interpreter();
  const std::string frontend = frontend_directory();
  // The JSON goes to a file, not stdout, so that what the kernel prints cannot corrupt it.
  const util::TemporaryDirectory scratch("trnsim-nki", "for the NKI front end's output");
  const std::string output_path = (scratch.path() / "kernel.json").string();

  util::ChildLaunch launch;
  launch.argv = tracer_command_line(request, python, output_path);
  const std::optional<std::string> python_path = environment("PYTHONPATH");
  launch.environment = {"PYTHONPATH=" + frontend + (python_path ? ":" + *python_path : ""),
                        "PYTHONDONTWRITEBYTECODE=1"};
  launch.input = request.target.dump() + "\n";
  const util::ChildOutcome outcome = util::run_child(launch);

  if (outcome.exit_code == 0) {
    diagnostics << outcome.out << outcome.err;
    std::ifstream file(output_path, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    if (!file || text.empty()) {
      throw std::runtime_error("the NKI front end succeeded on '" + request.kernel +
                               "' but wrote no kernel JSON");
    }
    return text;
  }
  if (outcome.exit_code == kTracerInvalidInput) {
    const TracerReport report = split_report(outcome.err);
    diagnostics << outcome.out << report.other;
    if (!report.message.empty()) throw InputError("", report.message);
  }
  if (outcome.exit_code == kTracerInternalError) {
    diagnostics << outcome.out << outcome.err;
    std::string detail = lines_of(outcome.err).empty() ? "" : lines_of(outcome.err).front();
    if (detail.rfind(kInternalErrorPrefix, 0) == 0) detail.erase(0, kInternalErrorPrefix.size());
    throw std::runtime_error(fmt::format("the NKI front end failed on '{}' (its report is above){}",
                                         request.kernel,
                                         detail.empty() ? std::string() : ": " + detail));
  }
  if (outcome.exit_code == kExecFailed && outcome.err.rfind(kErrorPrefix, 0) == 0) {
    throw InputError("", "cannot run the Python interpreter '" + python +
                             "' for the NKI front end; set TRNSIM_PYTHON to a Python 3 "
                             "interpreter");
  }
  if (outcome.err.find("No module named trnsim_nki") != std::string::npos) {
    throw InputError("", "'" + python + "' cannot import the NKI front end from " + frontend +
                             " (is it Python 3?); set TRNSIM_PYTHON or TRNSIM_NKI_PATH");
  }
  diagnostics << outcome.out;
  const std::string detail = last_line(outcome.err);
  throw InputError(request.kernel,
                   fmt::format("the NKI front end ({} -m trnsim_nki) {} while tracing{}", python,
                               util::describe_outcome(outcome, 0),
                               detail.empty() ? std::string() : ": " + detail));
}

}  // namespace trnsim::nki
