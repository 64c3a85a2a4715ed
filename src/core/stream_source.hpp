// Adapter: a kernel's lazy per-core instruction stream as the timing model's InstructionSource.
#pragma once

#include <memory>
#include <span>
#include <string>

#include "core/instruction_source.hpp"
#include "kernel/prepare.hpp"
#include "kernel/stream.hpp"

namespace trnsim::core {

class StreamSource final : public InstructionSource {
 public:
  /// `kernel` must outlive the source.
  StreamSource(const kernel::PreparedKernel& kernel, std::uint32_t pid) : stream_(kernel, pid) {}
  bool next(kernel::Instruction& out) override { return stream_.next(out); }
  std::span<const std::uint32_t> core_group(std::uint32_t id) const override {
    return stream_.core_group(id);
  }
  std::string location(const kernel::Instruction& instruction) const override {
    return stream_.kernel().prog().location(instruction.source);
  }

 private:
  kernel::InstructionStream stream_;
};

}  // namespace trnsim::core
