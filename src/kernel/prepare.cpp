#include "kernel/prepare.hpp"

#include <algorithm>
#include <array>
#include <map>

#include "kernel/validate.hpp"
#include "util/error.hpp"

namespace trnsim::kernel {
namespace {

std::int64_t eval_at(const Expr& expr, const std::vector<std::int64_t>& env,
                     const std::string& where) {
  try {
    return expr.eval(env.data());
  } catch (const ExprEvalError& e) {
    throw InputError(where, e.describe(expr.text()));
  }
}

std::vector<std::int64_t> make_global_env(const Program& program, const Target& target,
                                          std::uint32_t& cores_out) {
  std::array<std::int64_t, kBuiltinSlotCount> builtins{};
  builtins[kSlotCoresPerChip] = target.cores_per_chip;
  builtins[kSlotPmax] = target.partitions;
  builtins[kSlotGemmStationaryFmax] = target.gemm_stationary_fmax;
  builtins[kSlotGemmMovingFmax] = target.gemm_moving_fmax;
  builtins[kSlotPsumFmax] = target.psum_fmax();
  builtins[kSlotPsumNumBanks] = target.psum_banks;
  builtins[kSlotSbufPartitionBytes] = static_cast<std::int64_t>(target.sbuf_partition_bytes);
  std::vector<std::int64_t> env(builtins.begin(), builtins.end());
  env.resize(program.env_size(), 0);

  // Params that need neither ncores nor a per-core value, then cores, then the ncores ones.
  for (std::uint32_t i : program.param_order) {
    const Param& p = program.params[i];
    if (p.per_core || p.uses_ncores) continue;
    env[program.param_slot(i)] = eval_at(p.value, env, param_location(program, p));
  }
  const std::string cores_where = program.file + ": /cores";
  for (std::uint32_t slot : program.cores.slots()) {
    if (slot == kSlotNcores || is_per_core_builtin(slot)) {
      throw InputError(cores_where, "cores may not use '" + builtin_names()[slot] + "'");
    }
    if (slot >= kBuiltinSlotCount) {
      const Param& p = program.params[slot - kBuiltinSlotCount];
      if (p.per_core || p.uses_ncores) {
        throw InputError(cores_where, "cores may not use param '" + p.name +
                                          "', which depends on " +
                                          (p.per_core ? "pid, chip or local_core" : "ncores"));
      }
    }
  }
  const std::int64_t cores = eval_at(program.cores, env, cores_where);
  if (cores < 1 || static_cast<std::uint64_t>(cores) > target.max_cores()) {
    throw InputError(cores_where,
                     "cores = " + std::to_string(cores) + " ('" + program.cores.text() +
                         "') must be between 1 and the " + std::to_string(target.max_cores()) +
                         " NeuronCores of the configured system (" + std::to_string(target.chips) +
                         " chip(s) x " + std::to_string(target.cores_per_chip) + " cores of " +
                         target.name + ")");
  }
  cores_out = static_cast<std::uint32_t>(cores);
  env[kSlotNcores] = cores;
  for (std::uint32_t i : program.param_order) {
    const Param& p = program.params[i];
    if (p.per_core || !p.uses_ncores) continue;
    env[program.param_slot(i)] = eval_at(p.value, env, param_location(program, p));
  }
  return env;
}

TensorLayout make_layout(const Program& program, const TensorDecl& decl, const Target& target,
                         const std::vector<std::int64_t>& env) {
  TensorLayout layout;
  const std::string where = program.file + ": " + decl.pointer;
  std::uint64_t elements = 1;
  for (std::size_t d = 0; d < decl.shape.size(); ++d) {
    const std::string dim_where = where + "/shape/" + std::to_string(d);
    const std::int64_t size = eval_at(decl.shape[d], env, dim_where);
    if (size < 1) {
      throw InputError(dim_where, "tensor '" + decl.name + "' dimension " + std::to_string(d) +
                                      " is " + std::to_string(size) + " ('" + decl.shape[d].text() +
                                      "'); sizes must be at least 1");
    }
    layout.shape.push_back(static_cast<std::uint64_t>(size));
    if (__builtin_mul_overflow(elements, static_cast<std::uint64_t>(size), &elements) ||
        elements > (1ull << 50)) {
      throw InputError(where, "tensor '" + decl.name + "' is too large");
    }
  }
  const std::uint64_t element_bytes = dtype_bytes(decl.dtype);
  const std::size_t rank = layout.shape.size();
  layout.strides.assign(rank, 0);
  std::int64_t stride = 1;
  const bool on_chip = decl.memory != MemoryKind::kHbm;
  for (std::size_t d = rank; d-- > 0;) {
    if (on_chip && d == decl.partition_dim) continue;
    layout.strides[d] = stride;
    stride *= static_cast<std::int64_t>(layout.shape[d]);
  }
  if (!on_chip) {
    layout.partitions = 1;
    layout.bytes = elements * element_bytes;
    layout.bytes_per_partition = layout.bytes;
    return layout;
  }
  const std::uint64_t partitions = layout.shape[decl.partition_dim];
  if (partitions > target.partitions) {
    throw InputError(where + "/shape/" + std::to_string(decl.partition_dim),
                     "tensor '" + decl.name + "' has " + std::to_string(partitions) +
                         " partitions (dimension " + std::to_string(decl.partition_dim) +
                         " of its shape) but " + target.name + " has " +
                         std::to_string(target.partitions) +
                         (decl.partition_dim == 0 ? "; to put another dimension on the partitions "
                                                    "set \"partition_dim\""
                                                  : ""));
  }
  layout.partitions = static_cast<std::uint32_t>(partitions);
  layout.bytes_per_partition = elements / partitions * element_bytes;
  layout.bytes = layout.bytes_per_partition * partitions;
  if (decl.partition_start) {
    const std::int64_t start = eval_at(*decl.partition_start, env, where + "/partition_start");
    if (start < 0 || static_cast<std::uint64_t>(start) + partitions > target.partitions) {
      throw InputError(where + "/partition_start",
                       "tensor '" + decl.name + "' at partition_start " + std::to_string(start) +
                           " with " + std::to_string(partitions) +
                           " partitions does not fit in partitions 0-" +
                           std::to_string(target.partitions - 1));
    }
    layout.requested_partition_start = static_cast<std::uint32_t>(start);
  }
  if (decl.offset) {
    const std::int64_t offset = eval_at(*decl.offset, env, where + "/offset");
    if (offset < 0) {
      throw InputError(where + "/offset", "tensor '" + decl.name + "' offset " +
                                              std::to_string(offset) + " is negative");
    }
    layout.requested_offset = static_cast<std::uint64_t>(offset);
  }
  return layout;
}

}  // namespace

std::string param_location(const Program& program, const Param& param) {
  return param.pointer.starts_with("/") ? program.file + ": " + param.pointer : param.pointer;
}

PreparedKernel prepare_kernel(std::shared_ptr<const Program> program_ptr, const Target& target) {
  PreparedKernel kernel;
  kernel.program = std::move(program_ptr);
  kernel.target = target;
  const Program& program = *kernel.program;
  kernel.global_env = make_global_env(program, target, kernel.cores);
  for (const TensorDecl& decl : program.tensors) {
    kernel.layouts.push_back(make_layout(program, decl, target, kernel.global_env));
  }
  kernel.allocation = allocate(program, kernel.layouts, target, kernel.cores);

  // Core lists that need no loop or per-core value are interned once.
  std::map<std::vector<std::uint32_t>, std::uint32_t> interned;
  kernel.spec_core_group.assign(program.instructions.size(), kAllCores);
  for (std::uint32_t s = 0; s < program.statements.size(); ++s) {
    const Statement& statement = program.statements[s];
    if (statement.kind != Statement::Kind::kInstruction) continue;
    const InstructionSpec& spec = program.instructions[statement.instruction];
    const InstructionAttributes& attributes = program.attributes_of(spec);
    if (attributes.all_cores) continue;
    bool dynamic = false;
    for (const Expr& e : attributes.cores) {
      dynamic = dynamic || program.uses_loops(e) || program.uses_per_core(e);
    }
    if (dynamic) {
      kernel.spec_core_group[statement.instruction] = kDynamicCoreGroup;
      continue;
    }
    std::vector<std::uint32_t> group;
    const std::string key = spec.opcode == Opcode::kCoreBarrier ? "/cores" : "/group";
    for (std::size_t i = 0; i < attributes.cores.size(); ++i) {
      const std::string where = program.location(s, key + "/" + std::to_string(i));
      group.push_back(check_core_index(eval_at(attributes.cores[i], kernel.global_env, where),
                                       kernel.cores, where));
    }
    check_core_group(group, program.location(s, key));
    const auto [it, inserted] =
        interned.emplace(group, static_cast<std::uint32_t>(kernel.static_core_groups.size()));
    if (inserted) kernel.static_core_groups.push_back(group);
    kernel.spec_core_group[statement.instruction] = it->second;
  }

  for (std::uint32_t s = 0; s < program.statements.size(); ++s) {
    if (program.statements[s].kind == Statement::Kind::kInstruction) {
      validate_statement(kernel, s);
    }
  }
  return kernel;
}

}  // namespace trnsim::kernel
