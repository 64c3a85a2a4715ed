// A Program bound to a Target: params and `cores` evaluated, tensor shapes resolved, tensors
// placed (allocate.hpp) and every statement checked against the generation (validate.hpp).
// This is what the simulator runs: one InstructionStream per core walks it (stream.hpp).
// Per-core values (params over pid/chip/local_core) are evaluated by each stream.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "kernel/allocate.hpp"
#include "kernel/program.hpp"
#include "kernel/target.hpp"

namespace trnsim::kernel {

/// Marks an InstructionSpec whose core list depends on loop variables or pid: the stream
/// evaluates and interns it per instance.
inline constexpr std::uint32_t kDynamicCoreGroup = 0xFFFFFFFEu;

struct PreparedKernel {
  std::shared_ptr<const Program> program;
  Target target;
  std::uint32_t cores = 1;  ///< value of `cores`
  /// Evaluation environment shared by every core: built-ins (pid, chip and local_core are 0
  /// here), every param that does not depend on them. Size Program::env_size().
  std::vector<std::int64_t> global_env;
  std::vector<TensorLayout> layouts;  ///< by tensor
  Allocation allocation;
  /// Core lists known before simulation (core_barrier `cores`, collective `group`), interned:
  /// Instruction::core_group indexes this table first (InstructionStream::core_group()).
  std::vector<std::vector<std::uint32_t>> static_core_groups;
  /// By InstructionSpec: kAllCores, an index into static_core_groups, or kDynamicCoreGroup.
  std::vector<std::uint32_t> spec_core_group;

  const Program& prog() const { return *program; }
};

/// Evaluates, places and validates. Throws InputError for every problem found before
/// simulation (the first one).
PreparedKernel prepare_kernel(std::shared_ptr<const Program> program, const Target& target);

/// Location prefix for a param's errors: "FILE: /params/N" or "--param N".
std::string param_location(const Program& program, const Param& param);

}  // namespace trnsim::kernel
