// Fuzz target: a config file through the loader (extends chain, validation, derived fields) and
// what a run derives from it (the kernel target, the NKI tracer's target description). Any input
// must end in success or an InputError; anything else is a finding. docs/fuzzing.md.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "config/load.hpp"
#include "kernel/target_from_config.hpp"
#include "nki/target.hpp"
#include "util/error.hpp"

namespace {

/// The loader reads files (a config's "extends" may name another file), so each input is
/// written to this process's own file first.
const std::string& input_path() {
  static const std::string path = (std::filesystem::temp_directory_path() /
                                   ("trnsim-fuzz-config-" + std::to_string(::getpid()) + ".json"))
                                      .string();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = input_path();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    const trnsim::config::LoadedConfig loaded = trnsim::config::load_config(path);
    (void)trnsim::kernel::target_from_params(loaded.params);
    (void)trnsim::nki::target_json(loaded.params).dump();
  } catch (const trnsim::InputError&) {
    // The documented outcome of bad input (exit 2).
  }
  std::remove(path.c_str());
  return 0;
}
