// The timing model's view of a kernel: one program-order instruction source per NeuronCore.
// Implemented over kernel::InstructionStream (lazy loop walk); tests may feed hand-built lists.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kernel/instruction.hpp"

namespace trnsim::core {

class InstructionSource {
 public:
  virtual ~InstructionSource() = default;
  /// Writes the next instruction in program order into `out`; false at the end of the program.
  /// Bad input found while walking (e.g. a loop-dependent slice out of bounds) throws InputError.
  virtual bool next(kernel::Instruction& out) = 0;
  /// Global core indices of a core_barrier/collective group id (kernel::Instruction::core_group,
  /// not kAllCores), as the stream interned it. Empty when unknown.
  virtual std::span<const std::uint32_t> core_group(std::uint32_t /*id*/) const { return {}; }
  /// Where an instruction came from, for messages: "FILE: POINTER OP (loop values)".
  virtual std::string location(const kernel::Instruction& /*instruction*/) const { return {}; }
};

/// A fixed list of instructions (tests, small benchmarks).
class VectorSource final : public InstructionSource {
 public:
  explicit VectorSource(std::vector<kernel::Instruction> instructions)
      : instructions_(std::move(instructions)) {}
  bool next(kernel::Instruction& out) override {
    if (position_ >= instructions_.size()) return false;
    out = instructions_[position_++];
    return true;
  }

 private:
  std::vector<kernel::Instruction> instructions_;
  std::size_t position_ = 0;
};

}  // namespace trnsim::core
