// Progress of one simulation on stderr: instructions walked by the cores so far out of the
// kernel's total, which a second walk of the kernel counts on another thread (the bar shows a
// count and a rate until it is known). Leaves out simulated time: the walk is what is counted.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "core/instruction_source.hpp"
#include "kernel/prepare.hpp"
#include "util/progress.hpp"

namespace trnsim::cli {

class RunProgress {
 public:
  /// `kernel` must outlive this object. With kQuiet nothing is counted or drawn.
  RunProgress(const kernel::PreparedKernel& kernel, std::string label, util::ProgressStyle style,
              util::Progress::Options options);
  ~RunProgress();
  RunProgress(const RunProgress&) = delete;
  RunProgress& operator=(const RunProgress&) = delete;

  /// `source` with its instructions counted toward the progress (as is when quiet).
  std::unique_ptr<core::InstructionSource> wrap(std::unique_ptr<core::InstructionSource> source);
  /// The run is over after `instructions`: stops the counting walk and ends the bar's line.
  void finish(std::uint64_t instructions);

 private:
  class CountingSource;
  void walked(std::uint64_t instructions);
  /// Starts the counting walk (once the progress is about to show: short runs never pay it).
  void start_counting();
  void stop_counting();

  std::optional<util::Progress> progress_;
  std::uint64_t walked_ = 0;
  const kernel::PreparedKernel& kernel_;
  std::chrono::steady_clock::time_point count_from_;  ///< when to start the counting walk
  std::atomic<std::uint64_t> total_{0};               ///< 0 until the counting walk is done
  std::jthread counter_;
};

}  // namespace trnsim::cli
