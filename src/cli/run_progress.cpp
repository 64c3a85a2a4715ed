#include "cli/run_progress.hpp"

#include <iostream>

#include "kernel/stream.hpp"

namespace trnsim::cli {

namespace {
/// Instructions between two progress updates of one core's source.
constexpr std::uint64_t kBatch = 4096;
}  // namespace

class RunProgress::CountingSource final : public core::InstructionSource {
 public:
  CountingSource(std::unique_ptr<core::InstructionSource> inner, RunProgress& owner)
      : inner_(std::move(inner)), owner_(owner) {}
  bool next(kernel::Instruction& out) override {
    if (++pending_ == kBatch) {
      owner_.walked(pending_);
      pending_ = 0;
    }
    return inner_->next(out);
  }
  std::span<const std::uint32_t> core_group(std::uint32_t id) const override {
    return inner_->core_group(id);
  }
  std::string location(const kernel::Instruction& instruction) const override {
    return inner_->location(instruction);
  }
  std::uint32_t engines_used() const override { return inner_->engines_used(); }
  bool interacts_with_other_cores() const override { return inner_->interacts_with_other_cores(); }

 private:
  std::unique_ptr<core::InstructionSource> inner_;
  RunProgress& owner_;
  std::uint64_t pending_ = 0;
};

RunProgress::RunProgress(const kernel::PreparedKernel& kernel, std::string label,
                         util::ProgressStyle style, util::Progress::Options options)
    : kernel_(kernel), count_from_(std::chrono::steady_clock::now() + options.silent_for / 2) {
  if (style == util::ProgressStyle::kQuiet) return;
  progress_.emplace(std::move(label), 0, 0, style, std::cerr, std::move(options));
}

void RunProgress::start_counting() {
  const kernel::PreparedKernel& kernel = kernel_;
  // The walk reads the prepared kernel only (each stream has its own state); an error in it
  // leaves the total unknown, the simulation reports it.
  counter_ = std::jthread([this, &kernel](std::stop_token stop) {
    try {
      std::uint64_t total = 0;
      kernel::Instruction instruction;
      for (std::uint32_t pid = 0; pid < kernel.cores; ++pid) {
        kernel::InstructionStream stream(kernel, pid);
        while (stream.next(instruction)) {
          if ((++total & (kBatch - 1)) == 0 && stop.stop_requested()) return;
        }
      }
      total_.store(total, std::memory_order_relaxed);
    } catch (...) {
    }
  });
}

RunProgress::~RunProgress() {
  stop_counting();
}

void RunProgress::stop_counting() {
  if (counter_.joinable()) {
    counter_.request_stop();
    counter_.join();
  }
}

std::unique_ptr<core::InstructionSource> RunProgress::wrap(
    std::unique_ptr<core::InstructionSource> source) {
  if (!progress_) return source;
  return std::make_unique<CountingSource>(std::move(source), *this);
}

void RunProgress::walked(std::uint64_t instructions) {
  walked_ += instructions;
  if (!counter_.joinable() && std::chrono::steady_clock::now() >= count_from_) start_counting();
  if (const std::uint64_t total = total_.load(std::memory_order_relaxed); total != 0) {
    progress_->set_total(total);
  }
  progress_->set_done(walked_);
}

void RunProgress::finish(std::uint64_t instructions) {
  stop_counting();
  if (progress_) {
    progress_->set_total(instructions);
    progress_->set_done(instructions);
    progress_->finish();
  }
}

}  // namespace trnsim::cli
