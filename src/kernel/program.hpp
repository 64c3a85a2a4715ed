// The parsed kernel (docs/kernel-format.md): params, cores, tensor declarations and a
// statement tree (loops, conditions, instructions) whose expressions are compiled but not yet
// evaluated. Target-independent: sizes, addresses and per-core values come later (load.hpp).
// Statements live in one flat vector; loops and conditions refer to their bodies by index, so
// memory is proportional to the kernel's JSON, never to its dynamic instruction count. Operands
// and expression attributes are shared tables that identical loop-free statements reuse, so an
// unrolled kernel of 100k statements costs a few hundred bytes per statement.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernel/expr.hpp"
#include "kernel/instruction.hpp"
#include "kernel/region.hpp"

namespace trnsim::kernel {

inline constexpr std::string_view kFormatVersion = "trnsim-kernel/1";

struct TensorDecl {
  std::string name;
  std::string pointer;  ///< JSON pointer of the declaration, e.g. "/tensors/a_sb"
  MemoryKind memory = MemoryKind::kHbm;
  DType dtype = DType::kFloat32;
  std::vector<Expr> shape;              ///< elements per dimension
  std::uint32_t partition_dim = 0;      ///< on-chip: index of the partition dimension
  bool per_core = false;                ///< HBM: one instance per core
  std::optional<Expr> partition_start;  ///< on-chip placement; absent = 0
  std::optional<Expr> offset;           ///< on-chip placement (bytes); absent = allocated
};

/// One index of an access pattern: an integer (drops the dimension) or a slice.
struct IndexExpr {
  bool is_slice = true;
  bool has_start = false;  ///< slice: start given (else 0); integer: always true
  bool has_stop = false;   ///< slice: stop given (else the dimension size)
  bool has_step = false;   ///< slice: step given (else 1)
  Expr start;              ///< integer index or slice start
  Expr stop;
  Expr step;
};

/// One dimension of an explicit access pattern: COUNT elements, STRIDE elements apart.
struct PatternPairExpr {
  Expr stride;  ///< elements of the tensor's dtype; >= 0 (0 = broadcast)
  Expr count;   ///< >= 1
};

/// An explicit access pattern "NAME.ap(...)" (docs/kernel-format.md section 5):
/// HBM `NAME.ap(OFFSET, [STRIDE, COUNT], ...)` with 1-5 pairs, on-chip
/// `NAME.ap(PSTART:PSTOP, OFFSET, [STRIDE, COUNT], ...)` with 0-4 pairs. OFFSET and strides are in
/// elements: into the tensor's row-major elements (HBM) or into one partition's elements as the
/// tensor lays them out (buffer dimensions, then free dimensions, row-major). The partition range
/// counts partitions of the tensor (0 = its first partition).
struct ExplicitPatternExpr {
  Expr partition_start;  ///< on-chip: PSTART
  Expr partition_stop;   ///< on-chip: PSTOP (exclusive)
  Expr offset;
  std::vector<PatternPairExpr> pairs;  ///< outermost first
};

inline constexpr std::uint32_t kNoExplicitPattern = 0xFFFFFFFFu;

/// A compiled operand string: NumPy slices such as "A[k*128:(k+1)*128, m]", where `indices` has
/// exactly one entry per dimension of the tensor (omitted trailing dimensions and '...' are
/// expanded to ':'), or an explicit pattern "A.ap(...)" (`explicit_pattern` indexes
/// Program::explicit_patterns, `indices` is empty). Operands live in Program::operands; an
/// instruction refers to them by index, and statements that use the same loop-free operand text
/// share one entry (an unrolled kernel names the same tiles thousands of times). What depends on
/// the use (the attribute's name, whether it is written) comes from the instruction's slot.
struct OperandExpr {
  std::uint32_t tensor = kNoTensor;  ///< index into Program::tensors; kNoTensor = absent
  std::string text;                  ///< source text
  std::vector<IndexExpr> indices;
  std::uint32_t explicit_pattern = kNoExplicitPattern;
  bool uses_loops = false;     ///< some index uses a loop variable
  bool uses_per_core = false;  ///< some index uses pid/chip/local_core (directly or via a param)
  bool all_constant = true;    ///< every index (pattern) expression is a constant: never bound
  bool present() const { return tensor != kNoTensor; }
  bool is_explicit() const { return explicit_pattern != kNoExplicitPattern; }
};

/// A number-or-tensor attribute: absent, a number (JSON number, "inf"/"-inf"/"nan", or an integer
/// expression), or a tensor (then the operand is in the instruction's slot for it).
struct ScalarSpec {
  ScalarKind kind = ScalarKind::kNone;
  bool has_expr = false;  ///< kImmediate given as a non-constant integer expression `expr`
  double number = 0.0;    ///< kImmediate without expression
  Expr expr;
};

/// The integer, boolean and number attributes of an instruction statement, which stay
/// expressions (they may use loop variables). They live in Program::attributes; statements whose
/// loop-free attributes are written alike share one entry (entry 0 holds every default).
struct InstructionAttributes {
  ScalarSpec scale;     ///< activation scale (tensor in kAux1)
  ScalarSpec bias;      ///< activation bias (tensor in kAux0)
  ScalarSpec operand0;  ///< see Slot in instruction.hpp
  ScalarSpec operand1;  ///< see Slot in instruction.hpp
  ScalarSpec fill;      ///< memset value, affine_select fill (never a tensor)

  Expr accumulate;    ///< boolean (non-zero = true)
  Expr is_transpose;  ///< boolean
  Expr reverse0;      ///< boolean
  Expr reverse1;      ///< boolean
  Expr negate;        ///< boolean
  Expr keepdims;      ///< boolean
  Expr queue;         ///< integer 0..15
  Expr peer;          ///< integer core index (send/recv)
  /// tensor_reduce `axis`: logical axes of src (0 = partition axis, which is not allowed);
  /// empty = every free axis.
  std::vector<Expr> axes;
  /// core_barrier `cores` / collective `group`; `all_cores` = the default "all".
  bool all_cores = true;
  std::vector<Expr> cores;
  /// iota `expr` / affine_select `pred`: over p (partition), f (flattened free index) and
  /// f0..f3 (per free dimension), plus the usual names. The timing model only checks it;
  /// functional execution evaluates it with p, f, f0..f3 in the slots from kPatternSlotP on.
  std::optional<Expr> pattern;
};

/// Environment slots of a `pattern` expression's own names, past every other slot: p, then f,
/// then f0..f3 (kPatternSlotP + 2 + d).
inline constexpr std::uint32_t kPatternSlotP = 1u << 20;
inline constexpr std::uint32_t kPatternSlotCount = 2 + kMaxFreeDims;

inline constexpr std::uint32_t kNoOperand = 0xFFFFFFFFu;

/// An instruction statement: enumerated attributes (resolved at parse time), its operands by
/// slot and its expression attributes, both by index into the Program's shared tables.
struct InstructionSpec {
  Opcode opcode = Opcode::kTensorCopy;
  Engine engine = Engine::kVector;
  AluOp alu = AluOp::kNone;
  AluOp op0 = AluOp::kNone;
  AluOp op1 = AluOp::kNone;
  /// tensor_scalar with reduce_dst: how the result is reduced along the free axis.
  AluOp reduce_op = AluOp::kNone;
  ActivationFunc func = ActivationFunc::kCopy;
  CompareOp cmp = CompareOp::kGe;
  DgeMode dge = DgeMode::kNone;
  Engine dma_trigger = Engine::kSync;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kAuto;
  bool double_row = false;
  bool uses_loops = false;     ///< some attribute or operand uses a loop variable
  bool uses_per_core = false;  ///< some attribute or operand depends on pid/chip/local_core
  /// By Slot (instruction.hpp table): index into Program::operands, or kNoOperand.
  std::array<std::uint32_t, kSlotCount> operands{kNoOperand, kNoOperand, kNoOperand, kNoOperand,
                                                 kNoOperand, kNoOperand, kNoOperand};
  std::uint32_t attributes = 0;  ///< index into Program::attributes
  bool has(Slot slot) const { return operands[static_cast<std::size_t>(slot)] != kNoOperand; }
};

/// The kernel-format name of the attribute that fills `slot` of `opcode` ("dst", "moving",
/// "operand0", ...), or "" when the op has no operand there.
std::string_view operand_key(Opcode opcode, Slot slot);

inline constexpr std::uint32_t kNoSourceLine = 0xFFFFFFFFu;

struct Statement {
  enum class Kind : std::uint8_t { kInstruction, kLoop, kIf };
  Kind kind = Kind::kInstruction;
  std::uint8_t depth = 0;  ///< number of enclosing loops
  /// `source` attribute: index into Program::source_lines, or kNoSourceLine when absent.
  std::uint32_t source_line = kNoSourceLine;
  std::uint32_t enclosing = 0;    ///< innermost enclosing loop statement (valid when depth > 0)
  std::uint32_t instruction = 0;  ///< kInstruction: index into Program::instructions
  std::uint32_t control = 0;      ///< kLoop, kIf: index into Program::controls
  std::string pointer;            ///< JSON pointer, e.g. "/program/0/body/2"
  std::string name;               ///< instruction "name" attribute ("" when absent)
};

/// A loop or a condition.
struct ControlSpec {
  // kLoop: for VAR in range(start, stop, step); the variable lives in environment slot
  // Program::loop_slot(depth).
  std::string loop_var;
  Expr start;
  Expr stop;
  Expr step;
  // kIf
  Expr condition;
  std::vector<std::uint32_t> body;       ///< loop body or `then` (statement indices)
  std::vector<std::uint32_t> else_body;  ///< `else`
};

struct Param {
  std::string name;
  std::string pointer;  ///< "/params/N", or "--param N" when overridden
  Expr value;
  bool per_core = false;     ///< depends (transitively) on pid, chip or local_core
  bool uses_ncores = false;  ///< depends (transitively) on ncores
};

struct Program {
  std::string file;  ///< path of the kernel, used in messages ("<string>" when parsed from text)
  std::string name;
  std::string description;
  std::vector<Param> params;               ///< declaration order
  std::vector<std::uint32_t> param_order;  ///< evaluation order (dependencies first)
  Expr cores = Expr::constant(1);
  std::string cores_pointer = "/cores";
  std::vector<TensorDecl> tensors;  ///< declaration order
  std::vector<Statement> statements;
  std::vector<ControlSpec> controls;  ///< by Statement::control
  std::vector<InstructionSpec> instructions;
  std::vector<OperandExpr> operands;                   ///< by InstructionSpec::operands
  std::vector<InstructionAttributes> attributes;       ///< by InstructionSpec::attributes
  std::vector<ExplicitPatternExpr> explicit_patterns;  ///< by OperandExpr::explicit_pattern
  std::vector<std::uint32_t> program;                  ///< top-level statement indices
  std::uint32_t max_depth = 0;                         ///< deepest loop nesting
  /// The distinct `source` strings ("kernel.py:42") of statements, in order of first use.
  std::vector<std::string> source_lines;

  std::uint32_t param_slot(std::size_t param) const {
    return kBuiltinSlotCount + static_cast<std::uint32_t>(param);
  }
  std::uint32_t loop_slot(std::size_t depth) const {
    return kBuiltinSlotCount + static_cast<std::uint32_t>(params.size() + depth);
  }
  /// Size of the evaluation environment (built-ins, params, one slot per loop depth).
  std::uint32_t env_size() const { return loop_slot(max_depth); }

  /// True when `expr` reads a loop variable.
  bool uses_loops(const Expr& expr) const { return expr.uses_slot_at_or_above(loop_slot(0)); }
  /// True when `expr` reads pid, chip, local_core or a param that depends on them.
  bool uses_per_core(const Expr& expr) const;

  /// The operand in `slot` of `spec`; an absent one (present() false) when the slot is empty.
  const OperandExpr& operand(const InstructionSpec& spec, Slot slot) const {
    static const OperandExpr kAbsent;
    const std::uint32_t id = spec.operands[static_cast<std::size_t>(slot)];
    return id == kNoOperand ? kAbsent : operands[id];
  }
  const InstructionAttributes& attributes_of(const InstructionSpec& spec) const {
    return attributes[spec.attributes];
  }
  const ControlSpec& control(const Statement& statement) const {
    return controls[statement.control];
  }

  std::optional<std::uint32_t> find_tensor(std::string_view tensor_name) const;
  /// Trace label: the `name` attribute, or "<op> <pointer>" (spec section 6).
  std::string label(std::uint32_t statement) const;
  /// True when some statement carries a `source`.
  bool has_source_lines() const { return !source_lines.empty(); }
  /// The statement's `source` ("kernel.py:42"), or "" when it has none.
  std::string_view source_line(std::uint32_t statement) const {
    const std::uint32_t index = statements[statement].source_line;
    return index == kNoSourceLine ? std::string_view{} : std::string_view{source_lines[index]};
  }
  /// Names of the loops enclosing `statement`, outermost first.
  std::vector<std::string> loop_names(std::uint32_t statement) const;
  /// Error location of a dynamic instance: "FILE: HEAD POINTER (t=3, k=1)", where HEAD is the
  /// `name` attribute or the op ("for VAR" for loops, "if" for conditions). A statement with a
  /// `source` is cited by it instead of FILE: "kernel.py:42: HEAD POINTER (t=3, k=1)".
  std::string location(const SourceRef& source) const;
  /// Location of a statement (no loop values), or of one attribute under it when `suffix`
  /// (e.g. "/dst") is given.
  std::string location(std::uint32_t statement, const std::string& suffix = "") const;
  /// Location of a statement attribute within a dynamic instance.
  std::string location(const SourceRef& source, const std::string& pointer_suffix) const;
};

}  // namespace trnsim::kernel
