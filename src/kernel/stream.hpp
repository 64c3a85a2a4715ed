// The lazy instruction stream of one NeuronCore: walks a PreparedKernel's statements in program
// order (loops are iterated, never unrolled; conditions evaluated per iteration) and yields one
// concrete Instruction per dynamic instruction, with resolved operands, byte regions and the
// checks that depend on loop values done. Memory: one frame per active loop, bound copies of the
// expressions that are not constants, one cached Instruction per loop-invariant statement inside
// a loop and bounded memos per loop-dependent statement: proportional to the kernel's loops and
// non-constant expressions, a few bytes per statement of an unrolled kernel.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "kernel/instruction.hpp"
#include "kernel/prepare.hpp"

namespace trnsim::kernel {

/// The evaluation environment of core `pid` before any loop: `kernel.global_env` with the
/// built-ins of the core (pid, chip, local_core) and the per-core params set. Size
/// Program::env_size(). Throws InputError when a per-core param cannot be evaluated.
std::vector<std::int64_t> core_environment(const PreparedKernel& kernel, std::uint32_t pid);

class InstructionStream {
 public:
  /// The stream of core `pid` (0 <= pid < kernel.cores). `kernel` must outlive the stream.
  /// Throws InputError when a per-core param cannot be evaluated.
  InstructionStream(const PreparedKernel& kernel, std::uint32_t pid);
  // Memos hold pointers into the stream's own bound expressions.
  InstructionStream(const InstructionStream&) = delete;
  InstructionStream& operator=(const InstructionStream&) = delete;

  /// Writes the next dynamic instruction into `out` and returns true, or returns false at the
  /// end of the program. Throws InputError (located: statement, loop values) for a bad index,
  /// an out-of-bounds slice, a division by zero, or a rule broken by this instance.
  bool next(Instruction& out);

  std::uint32_t pid() const { return pid_; }
  /// Instructions yielded so far.
  std::uint64_t issued() const { return sequence_; }
  /// Global core indices of Instruction::core_group `id` (not kAllCores). Ids below
  /// kernel.static_core_groups.size() mean the same group on every core; other ids are local to
  /// this stream, so compare groups across cores by content.
  std::span<const std::uint32_t> core_group(std::uint32_t id) const;
  const PreparedKernel& kernel() const { return kernel_; }
  /// Turns off reuse of built instructions (memo and address shift, see below): every
  /// instruction is built in full. For tests that compare the two, and benchmarks.
  void set_reuse(bool enabled) { reuse_ = enabled; }

 private:
  struct Frame {
    const std::vector<std::uint32_t>* body;
    std::uint32_t position;
    bool is_loop;
    std::uint32_t slot;  ///< loop variable's environment slot
    std::int64_t value;
    std::int64_t stop;
    std::int64_t step;
  };

  void build(std::uint32_t statement, Instruction& out);
  /// Resolves the operand in `slot` of `spec` (present) into `pattern`.
  void resolve_operand(const InstructionSpec& spec, Slot slot, AccessPattern& pattern,
                       const SourceRef& source) const;
  /// resolve_operand() of an explicit pattern NAME.ap(...) (OperandExpr::explicit_pattern).
  void resolve_explicit_pattern(const OperandExpr& operand, const char* key, bool written,
                                AccessPattern& pattern, const SourceRef& source) const;
  /// The operand in `slot` of `spec` as this core evaluates it: the bound copy, or the Program's
  /// own when all its expressions are constants. Absent (present() false) for an empty slot.
  const OperandExpr& operand(const InstructionSpec& spec, std::size_t slot) const {
    static const OperandExpr kAbsent;
    const std::uint32_t id = spec.operands[slot];
    if (id == kNoOperand) return kAbsent;
    const std::uint32_t bound = bound_operand_index_[id];
    return bound == kNoOperand ? program_.operands[id] : bound_operands_[bound];
  }
  /// The explicit pattern of `operand` (as returned by operand()).
  const ExplicitPatternExpr& explicit_pattern(const OperandExpr& operand) const {
    return operand.all_constant ? program_.explicit_patterns[operand.explicit_pattern]
                                : bound_patterns_[operand.explicit_pattern];
  }
  /// Elements an explicit pattern may touch (per partition on chip): the product of its counts.
  /// Beyond it (only broadcasts get there) element and byte counts could overflow.
  static constexpr std::uint64_t kMaxPatternElements = std::uint64_t{1} << 40;
  /// `expr` in this core's environment; an evaluation error becomes an InputError located at
  /// attribute `key` of the instance `source`.
  std::int64_t eval(const Expr& expr, const SourceRef& source, const char* key) const {
    try {
      return expr.eval(env_.data());
    } catch (const ExprEvalError& e) {
      throw_eval_error(e, expr, source, key);
    }
  }
  [[noreturn]] void throw_eval_error(const ExprEvalError& error, const Expr& expr,
                                     const SourceRef& source, const char* key) const;
  std::uint32_t intern_dynamic_group(const InstructionSpec& spec,
                                     const InstructionAttributes& attributes,
                                     const SourceRef& source);
  void fill_source(std::uint32_t statement, SourceRef& source) const;

  /// Loop bounds and conditions of one loop or condition, specialised to this core (Expr::bind).
  struct ControlExprs {
    Expr start;
    Expr stop;
    Expr step;
    Expr condition;
  };
  void bind_expressions();
  void find_emitting_controls();

  const PreparedKernel& kernel_;
  const Program& program_;
  /// The program's expressions with every param and built-in substituted for this core, so that
  /// most expressions evaluate as affine forms of loop variables: the operands whose expressions
  /// are not all constants (bound_operand_index_ maps Program::operands to them, kNoOperand =
  /// use the Program's), their explicit patterns, every attribute set (by
  /// InstructionSpec::attributes) and every loop and condition (by Statement::control).
  std::vector<OperandExpr> bound_operands_;
  std::vector<std::uint32_t> bound_operand_index_;
  std::vector<ExplicitPatternExpr> bound_patterns_;  ///< by bound OperandExpr::explicit_pattern
  std::vector<InstructionAttributes> attributes_;
  std::vector<ControlExprs> control_;
  /// By Statement::control: true when the body or else-body holds an instruction at any depth.
  /// A loop whose body emits nothing is skipped whatever its trip count.
  std::vector<bool> control_emits_;
  std::uint32_t pid_;
  std::uint32_t chip_;
  std::vector<std::int64_t> env_;
  std::vector<Frame> stack_;
  std::uint64_t sequence_ = 0;
  std::uint64_t last_content_key_ = 0;  ///< Instruction::content_key of the latest full build
  /// By InstructionSpec: for a spec that uses loop variables, its index in memo_; for one that
  /// does not and sits inside a loop, its index in cache_ once built; else kNoState. A statement
  /// outside every loop runs once per stream and keeps nothing.
  static constexpr std::uint32_t kNoState = 0xFFFFFFFFu;
  std::vector<std::uint32_t> spec_state_;
  /// Loop-invariant instructions inside loops, built the first time (reused with new sequence
  /// number and loop values).
  std::vector<Instruction> cache_;

  /// Reuse of built instructions of loop-dependent specs. A built Instruction is a function of
  /// its spec and the values of the spec's non-constant (bound) expressions, its "signature".
  /// - Memo: when a signature recurs (acc[n % 8], s[k % 2], accumulate=k > 0), the instruction is
  ///   copied instead of resolved and validated again. kMemoEntries entries per spec, open
  ///   addressing by signature hash, allocated on first use; a spec whose signatures rarely recur
  ///   (x[t] over a long loop) stops being memoised after kMemoTrial lookups.
  /// - Shift: when the signature differs from a fully built one (a base) only in integer
  ///   indices and same-length slice windows of HBM operands (x[t], w[:, k*128:(k+1)*128]), in
  ///   the OFFSET of explicit HBM patterns (x.ap(t * 4096, [512, 8], [1, 512])) and in the DMA
  ///   queue, the instruction is the base with those operands' addresses moved:
  ///   validation does not depend on HBM addresses, only bounds, which are checked. Anything
  ///   else (on-chip operands, shapes, other attributes) changed: full build. A spec keeps
  ///   up to kMemoBases bases, the last full build for each combination of its fixed values
  ///   (open addressing over kMemoBaseProbes slots from the values' hash), so a load cycling
  ///   through buffers (x_sb[t % 8] <- x[t]) shifts from the base of its own buffer.
  /// Both give exactly the instruction a full build gives (tests/kernel: every example kernel's
  /// stream is compared with reuse off). Memory: bounded by the number of specs.
  static constexpr std::size_t kMemoEntries = 32;
  static constexpr std::size_t kMemoProbes = 4;
  static constexpr std::uint32_t kMemoTrial = 256;
  static constexpr std::size_t kMemoBases = 16;  // power of two
  static constexpr std::size_t kMemoBaseProbes = 4;
  /// What a signature expression is, for the shift path.
  struct SignatureRole {
    enum class Kind : std::uint8_t {
      kFixed,          ///< must equal the base's value
      kQueue,          ///< dma queue
      kHbmIndex,       ///< integer index of an HBM operand
      kHbmSliceStart,  ///< start of an HBM slice whose stop follows as kHbmSliceStop
      kHbmSliceStop,
      kHbmPatternOffset,  ///< OFFSET of an explicit HBM pattern NAME.ap(...)
    };
    Kind kind = Kind::kFixed;
    std::uint8_t slot = 0;
    std::uint8_t dim = 0;
  };
  /// An instruction allocated on first fill (null until then); copies are deep.
  struct MemoEntry {
    std::unique_ptr<Instruction> instruction;
    MemoEntry() = default;
    MemoEntry(const MemoEntry& other)
        : instruction(other.instruction ? std::make_unique<Instruction>(*other.instruction)
                                        : nullptr) {}
    MemoEntry& operator=(const MemoEntry& other) {
      if (this != &other) MemoEntry(other).instruction.swap(instruction);
      return *this;
    }
    MemoEntry(MemoEntry&&) noexcept = default;
    MemoEntry& operator=(MemoEntry&&) noexcept = default;
  };
  struct Memo {
    std::vector<const Expr*> exprs;    ///< the signature's expressions, in a fixed order
    std::vector<SignatureRole> roles;  ///< by expression
    std::vector<std::int64_t> keys;    ///< kMemoEntries x exprs.size() signatures
    /// kMemoEntries built instructions, each allocated when first filled: most memos see a
    /// few distinct signatures (x_sb[t % 2]), and a core keeps one memo per statement.
    std::vector<MemoEntry> entries;
    std::vector<std::uint8_t> filled;  ///< per entry
    std::uint32_t lookups = 0;
    std::uint32_t hits = 0;
    bool caching = false;    ///< the memo is in use
    bool shiftable = false;  ///< some role is not kFixed
    /// Shift bases (when shiftable): the last fully built instruction for a combination of
    /// kFixed values, and its signature. The slot vector is sized on first use and each base
    /// allocated when first filled (an Instruction is over 1 KiB; most specs use few bases).
    struct Base {
      Instruction instruction;
      std::vector<std::int64_t> signature;
      std::uint64_t fixed_hash = 0;  ///< hash of the signature's kFixed values
    };
    std::vector<std::unique_ptr<Base>> bases;
  };
  /// Slot in Memo::bases for `signature`'s kFixed values, whose hash it stores in `hash`: the
  /// slot of a base with the same hash among the kMemoBaseProbes slots from the hash, else the
  /// first empty one of those, else the first (replaced). Sets `found` for a base with the same
  /// hash (shift_from_base still checks the values themselves).
  static std::size_t base_index(const Memo& memo, const std::vector<std::int64_t>& signature,
                                std::uint64_t& hash, bool& found);
  /// Evaluates the signature of `memo` into signature_; false when an expression fails (the
  /// full build then reports the error with its location).
  bool evaluate_signature(const Memo& memo);
  /// The memo entry for signature_, or nullptr (then `entry` is where to store the built one,
  /// or kMemoEntries when the spec is no longer memoised).
  const Instruction* memo_lookup(Memo& memo, std::size_t& entry);
  /// The shift path: writes the instruction for signature_ into `out` and returns true, or
  /// returns false when it does not apply.
  bool shift_from_base(const Memo& memo, const Memo::Base& base, Instruction& out) const;
  std::vector<Memo> memo_;  ///< by spec_state_ of the specs that use loop variables
  /// Collects the signature expressions of `spec` (which uses loop variables) into `memo`.
  void build_memo(const InstructionSpec& spec, Memo& memo);
  std::vector<std::int64_t> signature_;  ///< scratch
  bool reuse_ = true;

  /// Rebuilds `out`'s dependency regions (reads, writes) from its operands.
  static void derive_regions(Instruction& out);
  std::vector<std::vector<std::uint32_t>> dynamic_groups_;
  std::map<std::vector<std::uint32_t>, std::uint32_t> dynamic_group_ids_;
};

}  // namespace trnsim::kernel
