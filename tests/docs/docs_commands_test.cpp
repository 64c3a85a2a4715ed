// The `trnsim` commands shown in README.md, examples/README.md, docs/kernel-format.md,
// docs/outputs.md and docs/nki-frontend.md (lines of ```sh blocks that start with "trnsim ",
// continued on the next line after a trailing " \"; a trailing "# comment" is dropped) run from a
// scratch directory that sees the source tree's examples/ and tests/, and exit 0. Files they write
// stay in the scratch directory.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct DocCommand {
  std::string file;
  int line = 0;
  std::string arguments;  ///< everything after "trnsim "
};

std::vector<DocCommand> commands_in(const std::string& relative) {
  std::ifstream in(std::string(TRNSIM_SOURCE_DIR) + "/" + relative);
  std::vector<DocCommand> commands;
  std::string text;
  bool in_shell_block = false;
  for (int number = 1; std::getline(in, text); ++number) {
    if (text.rfind("```", 0) == 0) {
      in_shell_block = !in_shell_block && text == "```sh";
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
    commands.push_back({relative, first_line, arguments});
  }
  return commands;
}

std::vector<DocCommand> all_commands() {
  std::vector<DocCommand> commands;
  for (const char* file : {"README.md", "examples/README.md", "docs/kernel-format.md",
                           "docs/outputs.md", "docs/nki-frontend.md"}) {
    const std::vector<DocCommand> found = commands_in(file);
    commands.insert(commands.end(), found.begin(), found.end());
  }
  return commands;
}

class DocumentedCommand : public ::testing::TestWithParam<DocCommand> {};

TEST_P(DocumentedCommand, ExitsZero) {
  const DocCommand& command = GetParam();
  const fs::path scratch =
      fs::temp_directory_path() /
      ("trnsim_docs_" + std::to_string(::getpid()) + "_" + std::to_string(command.line));
  fs::remove_all(scratch);
  fs::create_directories(scratch);
  for (const char* shared : {"examples", "tests"}) {
    fs::create_directory_symlink(fs::path(TRNSIM_SOURCE_DIR) / shared, scratch / shared);
  }
  const std::string shell = "cd '" + scratch.string() + "' && '" + TRNSIM_BINARY + "' " +
                            command.arguments + " > out.txt 2> err.txt";
  const int status = std::system(shell.c_str());
  std::ifstream err(scratch / "err.txt");
  std::stringstream message;
  message << err.rdbuf();
  EXPECT_EQ(status, 0) << command.file << ":" << command.line << ": trnsim " << command.arguments
                       << "\n"
                       << message.str();
  fs::remove_all(scratch);
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

TEST(DocumentedCommands, AreFound) {
  EXPECT_GE(all_commands().size(), 15u);
}

}  // namespace
