// Helpers for the result-file tests: a scratch directory, the golden kernel parsed and prepared
// without a simulation (its dynamic instructions come from the lazy stream), reading files, CSV
// splitting, the documented column tables of docs/outputs.md, and running the trnsim binary.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "kernel/parse.hpp"
#include "kernel/prepare.hpp"
#include "kernel/stream.hpp"

namespace trnsim::report::testing {

inline const char* kGoldenKernel = "tests/report/kernels/outputs_small.json";

/// A fresh directory under the system temp dir, removed on destruction.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& suffix = "") {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            (std::string("trnsim_report_") + std::to_string(::getpid()) + "_" +
             info->test_suite_name() + "_" + info->name() + suffix);
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() { std::filesystem::remove_all(path_); }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

/// Splits one CSV record (RFC 4180 quoting, no embedded line breaks).
inline std::vector<std::string> csv_split(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

/// Column names documented in docs/outputs.md under the heading that starts with `heading`:
/// the first cell of each table row, without backticks (header and separator rows skipped).
inline std::vector<std::string> documented_columns(const std::string& heading) {
  const std::vector<std::string> lines =
      lines_of(read_file(std::string(TRNSIM_SOURCE_DIR) + "/docs/outputs.md"));
  std::vector<std::string> columns;
  bool inside = false;
  for (const std::string& line : lines) {
    if (line.rfind("#", 0) == 0) {
      if (inside) break;
      inside = line.find(heading) != std::string::npos;
      continue;
    }
    if (!inside || line.rfind("| `", 0) != 0) continue;
    const std::size_t end = line.find('`', 3);
    columns.push_back(line.substr(3, end - 3));
  }
  return columns;
}

/// The golden kernel parsed and prepared for a default (Trainium2-shaped) target.
struct GoldenKernel {
  GoldenKernel() {
    auto program = std::make_shared<const kernel::Program>(
        kernel::parse_program_file(std::string(TRNSIM_SOURCE_DIR) + "/" + kGoldenKernel));
    prepared = kernel::prepare_kernel(program, kernel::Target{});
    kernel::InstructionStream stream(prepared, 0);
    for (kernel::Instruction instruction; stream.next(instruction);) {
      instructions.push_back(instruction);
    }
  }
  const kernel::Program& program() const { return prepared.prog(); }
  /// The first instruction of core 0 with `opcode`.
  const kernel::Instruction& first(kernel::Opcode opcode) const {
    for (const kernel::Instruction& instruction : instructions) {
      if (instruction.opcode == opcode) return instruction;
    }
    throw std::logic_error("no such instruction in the golden kernel");
  }
  kernel::PreparedKernel prepared;
  std::vector<kernel::Instruction> instructions;  ///< core 0, program order
};

struct CommandResult {
  int exit_code = -1;
  std::string output;  ///< stdout and stderr
};

/// Runs `trnsim ARGUMENTS` in the source directory (so kernel paths, and the paths recorded
/// in the outputs, are relative to it).
inline CommandResult run_trnsim(const std::string& arguments) {
  const std::string command = std::string("cd '") + TRNSIM_SOURCE_DIR + "' && '" + TRNSIM_BINARY +
                              "' " + arguments + " 2>&1";
  CommandResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char chunk[4096];
  for (std::size_t n; (n = fread(chunk, 1, sizeof(chunk), pipe)) > 0;)
    result.output.append(chunk, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace trnsim::report::testing
