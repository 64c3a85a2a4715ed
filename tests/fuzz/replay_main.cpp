// Replays inputs through a fuzz target's LLVMFuzzerTestOneInput without libFuzzer, so that any
// compiler (the normal g++ build included) can run the seed corpus and the crash reproducers of
// tests/fuzz/regressions as a test. Usage: REPLAY FILE_OR_DIRECTORY... (a directory: each regular
// file in it, sorted). Exit 0 when every input returned; a crash or an escaped exception ends the
// process as it would under the fuzzer. Exit 2 when an argument names nothing to read.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

bool read_file(const std::filesystem::path& path, std::string& text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path argument(argv[i]);
    std::error_code error;
    if (std::filesystem::is_directory(argument, error)) {
      std::vector<std::filesystem::path> entries;
      for (const auto& entry : std::filesystem::directory_iterator(argument)) {
        if (entry.is_regular_file()) entries.push_back(entry.path());
      }
      std::sort(entries.begin(), entries.end());
      files.insert(files.end(), entries.begin(), entries.end());
    } else if (std::filesystem::is_regular_file(argument, error)) {
      files.push_back(argument);
    } else {
      std::cerr << argv[i] << ": no such file or directory\n";
      return 2;
    }
  }
  for (const auto& file : files) {
    std::string text;
    if (!read_file(file, text)) {
      std::cerr << file.string() << ": cannot read\n";
      return 2;
    }
    std::cout << "replaying " << file.string() << " (" << text.size() << " bytes)" << std::endl;
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
  }
  std::cout << files.size() << " inputs replayed\n";
  return 0;
}
