// Fuzz target: a kernel document through the parser, the validator (prepare_kernel, on one of
// the built-in generations) and the instruction stream of its first and last core. Any input
// must end in success or an InputError; anything else (another exception, a crash, a sanitizer
// report, a hang) is a finding. docs/fuzzing.md.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/load.hpp"
#include "kernel/parse.hpp"
#include "kernel/prepare.hpp"
#include "kernel/stream.hpp"
#include "kernel/target_from_config.hpp"
#include "util/error.hpp"
#include "util/hash.hpp"

namespace {

/// Instructions walked per core: enough to reach every statement of the example kernels' first
/// iterations, small enough that one input takes milliseconds.
constexpr std::uint64_t kMaxWalk = 20000;

const std::vector<trnsim::kernel::Target>& targets() {
  static const std::vector<trnsim::kernel::Target> all = [] {
    std::vector<trnsim::kernel::Target> result;
    for (const char* name : {"trn1", "trn2", "trn3", "trn4"}) {
      result.push_back(
          trnsim::kernel::target_from_params(trnsim::config::load_config(name).params));
    }
    return result;
  }();
  return all;
}

void walk(const trnsim::kernel::PreparedKernel& prepared, std::uint32_t pid) {
  trnsim::kernel::InstructionStream stream(prepared, pid);
  trnsim::kernel::Instruction instruction;
  for (std::uint64_t i = 0; i < kMaxWalk && stream.next(instruction); ++i) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // The generation is a function of the input, so a reproducer replays the same way.
  const auto& all = targets();
  const trnsim::kernel::Target& target = all[trnsim::util::fnv1a64(text) % all.size()];
  try {
    auto program = std::make_shared<const trnsim::kernel::Program>(
        trnsim::kernel::parse_program_text(text, "fuzz.json"));
    const trnsim::kernel::PreparedKernel prepared = trnsim::kernel::prepare_kernel(program, target);
    walk(prepared, 0);
    if (prepared.cores > 1) walk(prepared, prepared.cores - 1);
  } catch (const trnsim::InputError&) {
    // The documented outcome of bad input (exit 2).
  }
  return 0;
}
