// Integer expressions of the kernel format (docs/kernel-format.md section 3), Python
// semantics: + - * // % (floor division and modulo for negatives), comparisons -> 0/1, and/or
// (returning an operand, short-circuit), not, min(a, b), max(a, b), unary minus, parentheses.
// An expression is compiled once against a Scope (name -> environment slot) into postfix code and
// evaluated many times against an environment array of int64 values: no parsing, no name lookup
// and no allocation per evaluation. Leaves out: floats, '/', '**', bit operators, calls other
// than min/max.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trnsim::kernel {

/// Deepest nesting in one expression: parentheses, unary '-' and '+', 'not' and min/max
/// (docs/kernel-format.md, "Limits"). Flat chains (a + b + c + ...) have no limit.
inline constexpr std::size_t kMaxExprNesting = 200;

/// Environment slots of the built-in names, identical for every kernel. Params follow at
/// kBuiltinSlotCount, then one slot per loop nesting depth (see Program).
enum BuiltinSlot : std::uint32_t {
  kSlotPid = 0,             ///< this core's global index
  kSlotNcores,              ///< value of `cores`
  kSlotChip,                ///< pid // cores_per_chip
  kSlotLocalCore,           ///< pid % cores_per_chip
  kSlotCoresPerChip,        ///< NeuronCores per chip
  kSlotPmax,                ///< partitions (Tensor Engine rows)
  kSlotGemmStationaryFmax,  ///< Tensor Engine columns
  kSlotGemmMovingFmax,      ///< largest moving free size (NKI tile_size)
  kSlotPsumFmax,            ///< FP32 elements in one PSUM bank per partition
  kSlotPsumNumBanks,        ///< PSUM banks
  kSlotSbufPartitionBytes,  ///< usable SBUF bytes per partition
  kBuiltinSlotCount
};
/// Names of the built-in slots, indexed by BuiltinSlot.
const std::vector<std::string>& builtin_names();
/// Slots whose value differs between the cores of one kernel (pid, chip, local_core).
constexpr bool is_per_core_builtin(std::uint32_t slot) {
  return slot == kSlotPid || slot == kSlotChip || slot == kSlotLocalCore;
}

/// Names visible to an expression, each bound to an environment slot. Lookup walks from the
/// innermost scope outwards; the parent must outlive this scope.
class Scope {
 public:
  explicit Scope(const Scope* parent = nullptr) : parent_(parent) {}
  void add(std::string name, std::uint32_t slot) { entries_.emplace_back(std::move(name), slot); }
  std::optional<std::uint32_t> find(std::string_view name) const;
  /// Every visible name (for "did you mean").
  std::vector<std::string> names() const;

 private:
  std::vector<std::pair<std::string, std::uint32_t>> entries_;
  const Scope* parent_;
};

/// Thrown by Expr::eval; the caller adds the location (statement, loop values).
struct ExprEvalError {
  enum class Kind : std::uint8_t { kDivisionByZero, kOverflow };
  Kind kind;
  /// "division by zero in 'K // n'" style text (allocates: only on the error path).
  std::string describe(const std::string& expression_text) const;
};

class Expr {
 public:
  Expr() = default;  ///< the constant 0 (text "")
  Expr(const Expr& other);
  Expr& operator=(const Expr& other);
  Expr(Expr&&) noexcept = default;
  Expr& operator=(Expr&&) noexcept = default;
  ~Expr() = default;

  static Expr constant(std::int64_t value);
  /// Compiles `text`. Throws InputError(where, message) for a syntax error, '/', an unknown name
  /// (with the closest visible name), or a constant sub-expression that divides by zero.
  static Expr compile(std::string_view text, const Scope& scope, const std::string& where);

  /// Value for the environment `env` (indexed by slot). Throws ExprEvalError.
  std::int64_t eval(const std::int64_t* env) const {
    if (kind_ == Kind::kConstant) return constant_;
    if (kind_ == Kind::kSlot) return env[slot_];
    if (kind_ == Kind::kSlotOp) return eval_slot_op(env[slot_]);
    if (kind_ == Kind::kAffine1) return eval_affine1(env[slot_]);
    return eval_out_of_line(env);
  }
  /// A copy specialised for one environment: slots for which `known(slot)` is true are replaced
  /// by their value in `env`, constants are folded, and an expression that becomes affine in
  /// the remaining slots (c + sum a_i * slot_i, up to kMaxAffineTerms terms), or such an affine
  /// form combined with a constant by one operator (t % 2, k // 4, k > 0, min(n, 7)), evaluates
  /// without interpretation. Same value as this expression for any environment that agrees with
  /// `env` on the known slots; text() is kept for messages.
  template <typename Known>
  Expr bind(const std::int64_t* env, Known known) const {
    const std::vector<std::uint32_t>& read = slots();
    std::vector<bool> mask(read.empty() ? 0 : read.back() + 1, false);
    for (std::uint32_t slot : read) mask[slot] = known(slot);
    return bind_mask(env, mask);
  }
  bool is_constant() const { return kind_ == Kind::kConstant; }
  std::int64_t constant_value() const { return constant_; }
  /// Source text ("" for the default constant; the decimal value for constant()).
  std::string text() const;
  /// Environment slots read (sorted, unique).
  const std::vector<std::uint32_t>& slots() const;
  bool uses_slot_at_or_above(std::uint32_t first) const {
    const std::vector<std::uint32_t>& read = slots();
    return !read.empty() && read.back() >= first;
  }

  enum class OpCode : std::uint8_t {
    kConst,
    kSlot,
    kAdd,
    kSub,
    kMul,
    kFloorDiv,
    kMod,
    kNeg,
    kNot,
    kLt,
    kLe,
    kGt,
    kGe,
    kEq,
    kNe,
    kMin,
    kMax,
    kJumpIfZeroElsePop,     ///< `and`: top == 0 -> jump (keep top), else pop
    kJumpIfNonZeroElsePop,  ///< `or`: top != 0 -> jump (keep top), else pop
  };
  struct Op {
    OpCode code;
    std::int64_t operand;  ///< constant, slot, or jump target (index into code)
  };

 private:
  /// kConstant, kSlot, kSlotOp and kAffine1 evaluate from the inline fields; the others read
  /// Detail. A constant whose text is its decimal value (every JSON integer and literal such as
  /// "128") has no Detail, so an expression is 32 bytes and allocates nothing in the common case
  /// of an unrolled kernel's constant indices.
  enum class Kind : std::uint8_t {
    kConstant,  ///< constant_
    kSlot,      ///< env[slot_]
    kSlotOp,    ///< env[slot_] final_op_ final_operand_, an operator that cannot fail there
    kAffine1,   ///< constant_ + final_operand_ * env[slot_], overflow-checked
    kAffine,    ///< constant_ + sum of Detail's terms, overflow-checked
    kAffineOp,  ///< (kAffine form) final_op_ final_operand_
    kCode,      ///< Detail::code on the interpreter
  };
  static constexpr std::size_t kMaxAffineTerms = 4;
  /// What does not fit the inline fields: text, slots read, interpreter code, affine terms.
  struct Detail {
    std::string text;
    std::vector<std::uint32_t> slots;  ///< sorted, unique
    std::vector<Op> code;              ///< kCode
    std::uint32_t stack_depth = 0;     ///< kCode
    std::uint8_t affine_terms = 0;     ///< kAffine, kAffineOp
    std::array<std::uint32_t, kMaxAffineTerms> affine_slots{};
    std::array<std::int64_t, kMaxAffineTerms> affine_coefs{};
  };
  Detail& detail();  ///< allocates it when absent
  std::int64_t eval_out_of_line(const std::int64_t* env) const;
  std::int64_t run(const std::int64_t* env) const;
  std::int64_t eval_affine(const std::int64_t* env) const;
  std::int64_t eval_affine1(std::int64_t a) const {
    std::int64_t value = 0;
    if (__builtin_mul_overflow(final_operand_, a, &value) ||
        __builtin_add_overflow(constant_, value, &value)) {
      throw ExprEvalError{ExprEvalError::Kind::kOverflow};
    }
    return value;
  }
  /// kSlotOp: slot final_op_ final_operand_, for the operators that cannot fail there
  /// (slot_op_cannot_fail): t % 2, k // 4, k > 0, min(n, 7) without the general checks.
  std::int64_t eval_slot_op(std::int64_t a) const {
    const std::int64_t b = final_operand_;
    switch (final_op_) {
      case OpCode::kMod: {  // b > 0: floor_mod
        const std::int64_t r = a % b;
        return r < 0 ? r + b : r;
      }
      case OpCode::kFloorDiv: {  // b > 0: floor_div
        const std::int64_t q = a / b;
        return a % b < 0 ? q - 1 : q;
      }
      case OpCode::kLt:
        return a < b;
      case OpCode::kLe:
        return a <= b;
      case OpCode::kGt:
        return a > b;
      case OpCode::kGe:
        return a >= b;
      case OpCode::kEq:
        return a == b;
      case OpCode::kNe:
        return a != b;
      case OpCode::kMin:
        return a < b ? a : b;
      default:  // kMax
        return a > b ? a : b;
    }
  }
  static bool slot_op_cannot_fail(OpCode code, std::int64_t operand);
  Expr bind_mask(const std::int64_t* env, const std::vector<bool>& known) const;
  /// Sets the text, keeping no Detail for a constant whose text is its decimal value.
  void set_text(std::string text);

  Kind kind_ = Kind::kConstant;
  OpCode final_op_ = OpCode::kAdd;
  bool text_is_value_ = false;  ///< no Detail: text() is the decimal constant_ (else "")
  std::uint32_t slot_ = 0;
  std::int64_t constant_ = 0;
  std::int64_t final_operand_ = 0;  ///< kSlotOp, kAffineOp: operand; kAffine1: coefficient
  std::unique_ptr<Detail> detail_;
};

/// Python floor division and modulo (the divisor is non-zero).
constexpr std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  const std::int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
constexpr std::int64_t floor_mod(std::int64_t a, std::int64_t b) {
  const std::int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

}  // namespace trnsim::kernel
