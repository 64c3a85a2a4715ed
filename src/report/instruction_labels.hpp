// What traces and profiles say about one dynamic instruction: its statement's label, JSON pointer
// and loop names (formatted once per statement inside a loop, then cached; a statement outside
// every loop runs once per core and is formatted when it is used), operand descriptions such as
// "acc[128, 512] float32 psum", loop values, and the bytes it moves per memory.
// Memory is proportional to the kernel's loop bodies, never to the dynamic instruction count.
// Leaves out anything the timing model did not report (see core::InstructionTiming).
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "kernel/instruction.hpp"
#include "kernel/program.hpp"
#include "report/output_file.hpp"

namespace trnsim::report {

/// Bytes an instruction reads and writes, by memory. Written: dst and reduce_dst; read: every
/// other operand, and dst too for an accumulating nc_matmul(_mx).
struct MemoryTraffic {
  std::array<std::uint64_t, 3> read_bytes{};   ///< by MemoryKind
  std::array<std::uint64_t, 3> write_bytes{};  ///< by MemoryKind
  std::uint64_t read(kernel::MemoryKind memory) const {
    return read_bytes[static_cast<std::size_t>(memory)];
  }
  std::uint64_t written(kernel::MemoryKind memory) const {
    return write_bytes[static_cast<std::size_t>(memory)];
  }
};
MemoryTraffic memory_traffic(const kernel::Instruction& instruction);

/// The dtype a profile reports for an instruction: of the main input (src/moving), else of dst.
kernel::DType main_dtype(const kernel::Instruction& instruction);

class InstructionLabels {
 public:
  /// `program` must outlive this object.
  explicit InstructionLabels(const kernel::Program& program);

  struct StatementText {
    std::string label;    ///< Program::label: the `name` attribute or "<op> <pointer>"
    std::string pointer;  ///< JSON pointer of the statement
    std::string source;   ///< the statement's `source` ("kernel.py:42"), "" when absent
    /// Profile column nki_source_location: `source` when given, else "KERNEL_FILE:POINTER".
    std::string location;
    std::vector<std::string> loop_names;  ///< enclosing loops, outermost first
    /// Attribute name of each operand slot ("dst", "moving", "stationary", ...); "" if unused.
    std::array<std::string, kernel::kSlotCount> operand_keys;
  };
  /// Strings of statement `index` (formatted at first use). Out-of-range indices (instructions
  /// not from this program) get a placeholder. The reference stays valid until the next call
  /// for another statement outside every loop.
  const StatementText& statement(std::uint32_t index);

  /// "acc[128, 512] float32 psum": tensor name, logical shape, dtype, memory.
  void append_operand(TextBuffer& out, const kernel::AccessPattern& pattern) const;
  /// Loop values as "m=0 n=1" (`separator` between pairs).
  void append_loop_values(TextBuffer& out, const kernel::SourceRef& source,
                          std::string_view separator);

  const kernel::Program& program() const { return program_; }

 private:
  void format(std::uint32_t index, StatementText& text) const;

  static constexpr std::uint32_t kNotCached = 0xFFFFFFFFu;
  const kernel::Program& program_;
  std::vector<std::uint32_t> cached_index_;  ///< by statement: index into cached_, or kNotCached
  std::deque<StatementText> cached_;         ///< statements inside loops (stable references)
  StatementText recent_;                     ///< the latest statement outside every loop
  std::uint32_t recent_index_ = kNotCached;
  StatementText unknown_;
};

}  // namespace trnsim::report
