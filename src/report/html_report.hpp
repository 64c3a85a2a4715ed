// `trnsim run --report FILE.html`: one self-contained HTML page of a run (docs/outputs.md,
// section 6). It shows the summary; each engine's utilisation over time; a TensorE roofline
// (achieved FLOP rate against arithmetic intensity over HBM bytes, under the compute and DMA
// bandwidth roofs) and every engine's busy and utilisation share; the dependency stalls that cost
// most, as producer statement -> waiting statement; and the per-source-line table of a kernel
// with source attribution (NKI Python). Inline SVG and CSS only: no scripts, fonts or network
// fetches, so it opens offline and in a sandbox.
// Memory is bounded by the kernel's statements and the time bins, not by the instruction count.
// Leaves out sweeps and comparisons across configs (their charts come from `sweep plot` and
// `compare --svg`).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "core/dma_backend.hpp"
#include "core/neuron_core.hpp"
#include "kernel/program.hpp"
#include "report/instruction_labels.hpp"
#include "report/trace.hpp"
#include "util/output_target.hpp"

namespace trnsim::report {

class HtmlReport {
 public:
  /// Opens `path` (util::OutputTarget: a bad path fails here, before the simulation). `program`
  /// must outlive the report; `cores` NeuronCores run the kernel. The page is written by
  /// finish(); an unfinished report leaves no file.
  HtmlReport(std::string path, const kernel::Program& program, std::uint32_t cores);

  void instruction(const core::InstructionTiming& timing);
  void dma(const core::DmaEvent& event);

  /// Writes the page and puts it in place. `statistics` is
  /// report::run_statistics of the run (with "source_lines" when the kernel has them).
  void finish(const nlohmann::json& statistics, double kernel_ns);

  /// A dependency stall between two statements, summed over their instructions.
  struct Stall {
    std::uint32_t producer_statement = 0;
    std::uint32_t consumer_statement = 0;
    kernel::Engine producer_engine = kernel::Engine::kSync;
    kernel::Engine consumer_engine = kernel::Engine::kSync;
    double wait_ns = 0;
    std::uint64_t waits = 0;
  };
  /// The stalls, longest total wait first (ties: statement order).
  std::vector<Stall> stalls() const;

 private:
  /// A recently seen instruction, to name the producer of a later wait.
  struct Recent {
    std::uint64_t key = ~std::uint64_t{0};
    std::uint32_t statement = 0;
    kernel::Engine engine = kernel::Engine::kSync;
  };
  std::string render(const nlohmann::json& statistics, double kernel_ns) const;

  util::OutputTarget target_;
  const kernel::Program& program_;
  std::uint32_t cores_;
  mutable InstructionLabels labels_;  ///< formats statement texts on first use
  /// Busy ns per time bin of each engine's sequencer (all cores), and DMA bytes.
  std::array<std::unique_ptr<RateCounter>, kernel::kEngineCount> busy_;
  RateCounter dma_bytes_;
  std::vector<Recent> recent_ = std::vector<Recent>(std::size_t{1} << 16);
  std::map<std::pair<std::uint32_t, std::uint32_t>, Stall> stalls_;
};

}  // namespace trnsim::report
