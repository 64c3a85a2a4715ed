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
  StreamSource(const kernel::PreparedKernel& kernel, std::uint32_t pid) : stream_(kernel, pid) {
    // Every instruction statement of the program, taken or not: a superset.
    for (const kernel::InstructionSpec& spec : kernel.prog().instructions) {
      engines_used_ |= engine_bit(spec.engine, spec.dma_trigger);
      interacts_ = interacts_ || interacts(spec.engine, spec.opcode);
    }
  }
  bool next(kernel::Instruction& out) override { return stream_.next(out); }
  std::span<const std::uint32_t> core_group(std::uint32_t id) const override {
    return stream_.core_group(id);
  }
  std::string location(const kernel::Instruction& instruction) const override {
    return stream_.kernel().prog().location(instruction.source);
  }
  std::uint32_t engines_used() const override { return engines_used_; }
  bool interacts_with_other_cores() const override { return interacts_; }

 private:
  kernel::InstructionStream stream_;
  std::uint32_t engines_used_ = 0;
  bool interacts_ = false;
};

}  // namespace trnsim::core
