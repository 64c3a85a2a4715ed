#include "report/instruction_labels.hpp"

#include <algorithm>

#include "kernel/opcodes.hpp"

namespace trnsim::report {

using kernel::AccessPattern;
using kernel::Instruction;
using kernel::MemoryKind;
using kernel::Slot;

MemoryTraffic memory_traffic(const Instruction& instruction) {
  MemoryTraffic traffic;
  for (std::size_t slot = 0; slot < kernel::kSlotCount; ++slot) {
    const AccessPattern& pattern = instruction.operands[slot];
    if (!pattern.used()) continue;
    const auto memory = static_cast<std::size_t>(pattern.memory);
    const bool written = slot == static_cast<std::size_t>(Slot::kDst) ||
                         slot == static_cast<std::size_t>(Slot::kReduceDst);
    if (written) {
      traffic.write_bytes[memory] += pattern.bytes();
      if (kernel::is_matmul(instruction.opcode) && instruction.accumulate)
        traffic.read_bytes[memory] += pattern.bytes();
    } else {
      traffic.read_bytes[memory] += pattern.bytes();
    }
  }
  return traffic;
}

kernel::DType main_dtype(const Instruction& instruction) {
  if (instruction.src().used()) return instruction.src().dtype;
  return instruction.dst().dtype;
}

InstructionLabels::InstructionLabels(const kernel::Program& program)
    : program_(program), cached_index_(program.statements.size(), kNotCached) {
  unknown_.label = "?";
  unknown_.pointer = "?";
  unknown_.location = "?";
}

const InstructionLabels::StatementText& InstructionLabels::statement(std::uint32_t index) {
  if (index >= cached_index_.size()) return unknown_;
  if (cached_index_[index] != kNotCached) return cached_[cached_index_[index]];
  if (program_.statements[index].depth == 0) {
    if (recent_index_ != index) {
      format(index, recent_);
      recent_index_ = index;
    }
    return recent_;
  }
  cached_index_[index] = static_cast<std::uint32_t>(cached_.size());
  format(index, cached_.emplace_back());
  return cached_.back();
}

void InstructionLabels::format(std::uint32_t index, StatementText& text) const {
  const kernel::Statement& statement = program_.statements[index];
  text.label = program_.label(index);
  text.pointer = statement.pointer;
  text.source = program_.source_line(index);
  text.location = text.source.empty() ? program_.file + ":" + statement.pointer : text.source;
  text.loop_names = program_.loop_names(index);
  text.operand_keys = {};
  if (statement.kind == kernel::Statement::Kind::kInstruction &&
      statement.instruction < program_.instructions.size()) {
    const kernel::InstructionSpec& spec = program_.instructions[statement.instruction];
    for (std::size_t slot = 0; slot < kernel::kSlotCount; ++slot) {
      if (spec.has(static_cast<Slot>(slot))) {
        text.operand_keys[slot] = kernel::operand_key(spec.opcode, static_cast<Slot>(slot));
      }
    }
  }
}

void InstructionLabels::append_operand(TextBuffer& out, const AccessPattern& pattern) const {
  if (pattern.tensor < program_.tensors.size()) {
    out << program_.tensors[pattern.tensor].name;
  } else {
    out << '?';
  }
  std::array<std::uint64_t, kernel::kMaxPatternDims + 1> shape{};
  const std::uint8_t rank = pattern.logical_shape(shape);
  out << '[';
  for (std::uint8_t d = 0; d < rank; ++d) {
    if (d > 0) out << ", ";
    out << shape[d];
  }
  out << "] " << kernel::dtype_name(pattern.dtype) << ' '
      << kernel::memory_kind_name(pattern.memory);
}

void InstructionLabels::append_loop_values(TextBuffer& out, const kernel::SourceRef& source,
                                           std::string_view separator) {
  const StatementText& text = statement(source.statement);
  const std::size_t depth = std::min<std::size_t>(source.depth, text.loop_names.size());
  for (std::size_t d = 0; d < depth; ++d) {
    if (d > 0) out << separator;
    out << text.loop_names[d] << '=' << source.loop_values[d];
  }
}

}  // namespace trnsim::report
