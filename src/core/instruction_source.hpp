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
  /// The engines that may run or trigger an instruction of this source, a bit per engine in
  /// kernel::Engine order (DMAs count for their trigger engine, collectives for Sync): a
  /// superset is fine. The core's dispatcher walks ahead only for these (NeuronCore::dispatch()).
  virtual std::uint32_t engines_used() const { return kAllEngines; }
  /// Whether the program may wait for or exchange data with other cores: a core_barrier, a
  /// collective or send/recv (true is always safe). A core whose program does not, on a system
  /// where no other core's does, may run ahead of the simulation without bound
  /// (NeuronCore::run_ahead()).
  virtual bool interacts_with_other_cores() const { return true; }

  static constexpr std::uint32_t kAllEngines = 0x1f;  ///< tensor, vector, scalar, gpsimd, sync
  /// The engine whose stream holds an instruction of `engine`: the one that runs it, or for a
  /// DMA its trigger engine, for a collective Sync.
  static kernel::Engine stream_engine(kernel::Engine engine, kernel::Engine dma_trigger) {
    if (engine == kernel::Engine::kDma) return dma_trigger;
    if (engine == kernel::Engine::kCollective) return kernel::Engine::kSync;
    return engine;
  }
  /// The bit of stream_engine() in engines_used().
  static std::uint32_t engine_bit(kernel::Engine engine, kernel::Engine dma_trigger) {
    return 1u << static_cast<unsigned>(stream_engine(engine, dma_trigger));
  }
  /// Whether an instruction of `engine` and `opcode` waits for or exchanges data with other
  /// cores (interacts_with_other_cores()).
  static bool interacts(kernel::Engine engine, kernel::Opcode opcode) {
    return engine == kernel::Engine::kCollective || opcode == kernel::Opcode::kCoreBarrier;
  }
};

/// A fixed list of instructions (tests, small benchmarks).
class VectorSource final : public InstructionSource {
 public:
  explicit VectorSource(std::vector<kernel::Instruction> instructions)
      : instructions_(std::move(instructions)) {
    for (const kernel::Instruction& instruction : instructions_) {
      engines_used_ |= engine_bit(instruction.engine, instruction.dma_trigger);
      interacts_ = interacts_ || interacts(instruction.engine, instruction.opcode);
    }
  }
  bool next(kernel::Instruction& out) override {
    if (position_ >= instructions_.size()) return false;
    out = instructions_[position_++];
    return true;
  }
  std::uint32_t engines_used() const override { return engines_used_; }
  bool interacts_with_other_cores() const override { return interacts_; }

 private:
  std::vector<kernel::Instruction> instructions_;
  std::uint32_t engines_used_ = 0;
  bool interacts_ = false;
  std::size_t position_ = 0;
};

}  // namespace trnsim::core
