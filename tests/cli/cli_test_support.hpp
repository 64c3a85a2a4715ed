// Helpers for the tests that run the trnsim binary as a user would: a scratch directory, files,
// and a run of trnsim with its stdout and stderr captured apart (or stdout sent elsewhere).
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace trnsim::cli::testing {

/// A fresh directory under the system temp dir, removed when the test ends.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "trnsim-cli-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::string read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << text;
}

inline std::string quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct Output {
  int exit_code = -1;  ///< -1 when killed by a signal
  std::string out;
  std::string err;
};

/// Runs `trnsim ARGS` in `dir`. Stdout goes to `stdout_path` when given (e.g. "/dev/full"),
/// else it is captured; stderr is captured.
inline Output trnsim(const ScratchDir& dir, const std::vector<std::string>& args,
                     const std::string& stdout_path = "") {
  std::string command = "cd " + quote(dir.file("")) + " && " + quote(TRNSIM_BINARY);
  for (const std::string& arg : args) command += " " + quote(arg);
  const std::string out_file = stdout_path.empty() ? dir.file("stdout.txt") : stdout_path;
  command += " >" + quote(out_file) + " 2>" + quote(dir.file("stderr.txt"));
  const int status = std::system(command.c_str());
  Output output;
  output.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (stdout_path.empty()) output.out = read_file(dir.file("stdout.txt"));
  output.err = read_file(dir.file("stderr.txt"));
  std::filesystem::remove(dir.file("stdout.txt"));
  std::filesystem::remove(dir.file("stderr.txt"));
  return output;
}

/// Lines of `text` that are not empty.
inline std::size_t line_count(const std::string& text) {
  std::size_t lines = 0;
  bool content = false;
  for (char c : text) {
    if (c == '\n') {
      lines += content ? 1 : 0;
      content = false;
    } else {
      content = true;
    }
  }
  return lines + (content ? 1 : 0);
}

/// A minimal valid kernel whose program is `program` (a JSON list) and params `params`.
inline std::string kernel_with(const std::string& program,
                               const std::string& params = R"({"T": 2})") {
  return R"({"format": "trnsim-kernel/1", "name": "k", "params": )" + params +
         R"(, "tensors": {"a": {"memory": "hbm", "dtype": "float32", "shape": ["T", 128, 64]},
         "a_sb": {"memory": "sbuf", "dtype": "float32", "shape": [128, 64]}},
         "program": )" +
         program + "}";
}

/// `inner` wrapped in `depth` levels of `open` ... `close`.
inline std::string nested(const std::string& open, const std::string& inner,
                          const std::string& close, std::size_t depth) {
  std::string out;
  out.reserve(depth * (open.size() + close.size()) + inner.size());
  for (std::size_t i = 0; i < depth; ++i) out += open;
  out += inner;
  for (std::size_t i = 0; i < depth; ++i) out += close;
  return out;
}

}  // namespace trnsim::cli::testing
