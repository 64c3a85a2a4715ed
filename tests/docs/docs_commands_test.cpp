// The `trnsim` commands shown in README.md, examples/README.md, docs/kernel-format.md,
// docs/outputs.md and docs/nki-frontend.md (lines of ```sh blocks that start with "trnsim ",
// continued on the next line after a trailing " \"; a trailing "# comment" is dropped) run from a
// scratch directory that sees the source tree's examples/ and tests/, and exit 0. Files they write
// stay in the scratch directory.
// In README.md, examples/README.md and docs/*.md, a ```sh block right after the line kRunsInOrder
// runs as a whole: its commands in order, in one scratch directory (so a command may read what an
// earlier one wrote), each exiting 0. The other blocks of docs outside the five files above hold
// placeholders (SPEC, RESULTS) and are not run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace fs = std::filesystem;

/// The line before a ```sh block whose commands run in order in one directory.
constexpr std::string_view kRunsInOrder =
    "<!-- tests/docs runs the commands below in order, in one directory -->";

struct DocCommand {
  std::string file;
  int line = 0;
  std::string arguments;  ///< everything after "trnsim "
  int block_line = 0;     ///< line of the block's opening fence
  bool in_order = false;  ///< the block follows kRunsInOrder
};

std::vector<DocCommand> commands_in(const std::string& relative) {
  std::ifstream in(std::string(TRNSIM_SOURCE_DIR) + "/" + relative);
  std::vector<DocCommand> commands;
  std::string text;
  std::string previous;
  bool in_shell_block = false;
  bool in_order = false;
  int block_line = 0;
  for (int number = 1; std::getline(in, text); previous = text, ++number) {
    if (text.rfind("```", 0) == 0) {
      in_shell_block = !in_shell_block && text == "```sh";
      in_order = in_shell_block && previous == kRunsInOrder;
      block_line = number;
      continue;
    }
    if (!in_shell_block || text.rfind("trnsim ", 0) != 0) continue;
    const int first_line = number;
    while (text.size() >= 2 && text.compare(text.size() - 2, 2, " \\") == 0) {
      std::string next;
      if (!std::getline(in, next)) break;
      ++number;
      text.resize(text.size() - 1);
      text += next;
    }
    std::string arguments = text.substr(7);
    const std::size_t comment = arguments.find(" #");
    if (comment != std::string::npos) arguments.resize(comment);
    while (!arguments.empty() && arguments.back() == ' ') arguments.pop_back();
    commands.push_back({relative, first_line, arguments, block_line, in_order});
  }
  return commands;
}

/// Commands run one by one: those of the five files above outside blocks run in order. A
/// command written in several places (the same arguments) runs once, at its first place.
std::vector<DocCommand> all_commands() {
  std::vector<DocCommand> commands;
  std::set<std::string> seen;
  for (const char* file : {"README.md", "examples/README.md", "docs/kernel-format.md",
                           "docs/outputs.md", "docs/nki-frontend.md"}) {
    for (const DocCommand& command : commands_in(file)) {
      if (!command.in_order && seen.insert(command.arguments).second) commands.push_back(command);
    }
  }
  return commands;
}

/// Blocks run in order, from README.md, examples/README.md and docs/*.md.
std::vector<std::vector<DocCommand>> all_ordered_blocks() {
  std::vector<std::string> files = {"README.md", "examples/README.md"};
  for (const auto& entry : fs::directory_iterator(fs::path(TRNSIM_SOURCE_DIR) / "docs")) {
    if (entry.path().extension() == ".md")
      files.push_back("docs/" + entry.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  std::vector<std::vector<DocCommand>> blocks;
  for (const std::string& file : files) {
    for (const DocCommand& command : commands_in(file)) {
      if (!command.in_order) continue;
      if (blocks.empty() || blocks.back().front().file != file ||
          blocks.back().front().block_line != command.block_line) {
        blocks.emplace_back();
      }
      blocks.back().push_back(command);
    }
  }
  return blocks;
}

/// A fresh directory that sees the source tree's examples/ and tests/, removed on destruction.
class Scratch {
 public:
  explicit Scratch(int line)
      : path_(fs::temp_directory_path() /
              ("trnsim_docs_" + std::to_string(::getpid()) + "_" + std::to_string(line))) {
    fs::remove_all(path_);
    fs::create_directories(path_);
    for (const char* shared : {"examples", "tests"}) {
      fs::create_directory_symlink(fs::path(TRNSIM_SOURCE_DIR) / shared, path_ / shared);
    }
  }
  ~Scratch() { fs::remove_all(path_); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  /// Runs `trnsim ARGUMENTS` here; fails the test (with its stderr) unless it exits 0.
  void expect_success(const DocCommand& command) const {
    const std::string shell = "cd '" + path_.string() + "' && '" + TRNSIM_BINARY + "' " +
                              command.arguments + " > out.txt 2> err.txt";
    const int status = std::system(shell.c_str());
    std::ifstream err(path_ / "err.txt");
    std::stringstream message;
    message << err.rdbuf();
    EXPECT_EQ(status, 0) << command.file << ":" << command.line << ": trnsim " << command.arguments
                         << "\n"
                         << message.str();
  }

 private:
  fs::path path_;
};

class DocumentedCommand : public ::testing::TestWithParam<DocCommand> {};

TEST_P(DocumentedCommand, ExitsZero) {
  const DocCommand& command = GetParam();
  // `trnsim validate` runs the whole calibration (a minute in Release, many under the
  // sanitizers): validation_docs_current runs exactly these simulations (its Markdown form) and
  // validation_transfer_model / validation_packet_model its table, so it is not run once more here.
  if (command.arguments == "validate") {
    GTEST_SKIP() << "`trnsim validate` runs in validation_docs_current and validation_*_model";
  }
  const Scratch scratch(command.line);
  scratch.expect_success(command);
}

class DocumentedBlock : public ::testing::TestWithParam<std::vector<DocCommand>> {};

TEST_P(DocumentedBlock, RunsInOrder) {
  const std::vector<DocCommand>& block = GetParam();
  const Scratch scratch(block.front().block_line);
  for (const DocCommand& command : block) {
    scratch.expect_success(command);
    if (::testing::Test::HasFailure()) return;
  }
}

std::string command_name(const ::testing::TestParamInfo<DocCommand>& info) {
  std::string name = info.param.file + "_line" + std::to_string(info.param.line);
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

void PrintTo(const DocCommand& command, std::ostream* os) {
  *os << command.file << ":" << command.line << ": trnsim " << command.arguments;
}

INSTANTIATE_TEST_SUITE_P(ReadmeExamplesAndDocs, DocumentedCommand,
                         ::testing::ValuesIn(all_commands()), command_name);

std::string block_name(const ::testing::TestParamInfo<std::vector<DocCommand>>& info) {
  std::string name =
      info.param.front().file + "_block" + std::to_string(info.param.front().block_line);
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

void PrintTo(const std::vector<DocCommand>& block, std::ostream* os) {
  *os << block.front().file << ":" << block.front().block_line << " (" << block.size()
      << " commands)";
}

INSTANTIATE_TEST_SUITE_P(Docs, DocumentedBlock, ::testing::ValuesIn(all_ordered_blocks()),
                         block_name);

TEST(DocumentedCommands, AreFound) {
  EXPECT_GE(all_commands().size(), 15u);
  EXPECT_GE(all_ordered_blocks().size(), 1u);
}

}  // namespace
