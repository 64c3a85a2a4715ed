// Fuzz target: a sweep spec through the JSON reader, the spec validator and the expansion into
// points (the first and last few, with each point's `trnsim run` command line), as
// `trnsim sweep SPEC --dry-run` does. Relative kernel and config paths resolve against
// examples/sweeps, so the seeds (examples/sweeps/*.json) name real kernels. Any input must end in
// success or an InputError; anything else is a finding. docs/fuzzing.md.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "sweep/run_request.hpp"
#include "sweep/spec.hpp"
#include "util/error.hpp"
#include "util/json_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::filesystem::path base_dir =
      std::filesystem::path(TRNSIM_SOURCE_DIR) / "examples/sweeps";
  try {
    const auto document = trnsim::util::parse_json_input<nlohmann::ordered_json>(text, "fuzz.json");
    const trnsim::sweep::SweepSpec spec =
        trnsim::sweep::parse_sweep_spec(document, "fuzz.json", base_dir);
    const std::size_t points = trnsim::sweep::point_count(spec);
    constexpr std::size_t kEnds = 4;  // points expanded at each end
    for (std::size_t i = 0; i < points; ++i) {
      if (i == kEnds && points > 2 * kEnds) i = points - kEnds;
      const trnsim::sweep::SweepPoint point = trnsim::sweep::make_point(spec, i);
      (void)trnsim::sweep::run_command_line(point.request, "trnsim");
      (void)point.values.dump();
    }
  } catch (const trnsim::InputError&) {
    // The documented outcome of bad input (exit 2).
  }
  return 0;
}
