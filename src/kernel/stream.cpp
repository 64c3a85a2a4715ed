#include "kernel/stream.hpp"

#include <algorithm>
#include <limits>

#include "kernel/opcodes.hpp"
#include "kernel/validate.hpp"
#include "util/error.hpp"

namespace trnsim::kernel {
namespace {

/// Where each operand's region goes in an instruction's reads and writes: every used operand, in
/// slot order, takes the next write (dst, reduce_dst) or the next read; an accumulating
/// matmul's dst also takes the next read. Calls visit(slot, read index, write index), kNoRegion
/// where the operand takes none. Shared by derive_regions() and shift_from_base().
constexpr std::uint8_t kNoRegion = 0xFF;
template <typename Visit>
void for_each_operand_region(const Instruction& instruction, Visit visit) {
  const bool accumulating = is_matmul(instruction.opcode) && instruction.accumulate;
  std::uint8_t reads = 0;
  std::uint8_t writes = 0;
  for (std::size_t slot = 0; slot < kSlotCount; ++slot) {
    if (!instruction.operands[slot].used()) continue;
    std::uint8_t read = kNoRegion;
    std::uint8_t write = kNoRegion;
    if (slot == static_cast<std::size_t>(Slot::kDst) ||
        slot == static_cast<std::size_t>(Slot::kReduceDst)) {
      write = writes++;
      if (accumulating && slot == static_cast<std::size_t>(Slot::kDst)) read = reads++;
    } else {
      read = reads++;
    }
    visit(slot, read, write);
  }
}

std::string operand_text(const OperandExpr& operand) {
  return "operand '" + operand.text + "'";
}

/// Elements from a pattern's first element to its last one: sum of (size - 1) * stride (strides
/// of resolved patterns are never negative).
std::int64_t pattern_extent(const AccessPattern& pattern) {
  std::int64_t extent = 0;
  for (std::uint8_t d = 0; d < pattern.rank; ++d) {
    extent += static_cast<std::int64_t>(pattern.sizes[d] - 1) * pattern.strides[d];
  }
  return extent;
}

}  // namespace

std::vector<std::int64_t> core_environment(const PreparedKernel& kernel, std::uint32_t pid) {
  if (pid >= kernel.cores) {
    throw InputError("", "core " + std::to_string(pid) + " does not exist: the kernel runs on " +
                             std::to_string(kernel.cores) + " core(s)");
  }
  const Program& program = *kernel.program;
  std::vector<std::int64_t> env = kernel.global_env;
  env[kSlotPid] = pid;
  env[kSlotChip] = pid / kernel.target.cores_per_chip;
  env[kSlotLocalCore] = pid % kernel.target.cores_per_chip;
  for (std::uint32_t i : program.param_order) {
    const Param& param = program.params[i];
    if (!param.per_core) continue;
    try {
      env[program.param_slot(i)] = param.value.eval(env.data());
    } catch (const ExprEvalError& e) {
      throw InputError(param_location(program, param) + " (pid=" + std::to_string(pid) + ")",
                       e.describe(param.value.text()));
    }
  }
  return env;
}

InstructionStream::InstructionStream(const PreparedKernel& kernel, std::uint32_t pid)
    : kernel_(kernel),
      program_(*kernel.program),
      pid_(pid),
      chip_(pid / kernel.target.cores_per_chip),
      env_(core_environment(kernel, pid)) {
  bind_expressions();
  find_emitting_controls();
  stack_.reserve(program_.max_depth + 2);
  stack_.push_back(Frame{&program_.program, 0, false, 0, 0, 0, 0});
}

void InstructionStream::find_emitting_controls() {
  // A body's statements come after their loop or condition in Program::statements (the parser
  // adds a statement before its body), so one backward pass sees every body before its owner.
  // A body statement that does not come later is taken to emit: the walk then visits it.
  control_emits_.assign(program_.controls.size(), false);
  for (std::size_t i = program_.statements.size(); i-- > 0;) {
    const Statement& statement = program_.statements[i];
    if (statement.kind == Statement::Kind::kInstruction) continue;
    const ControlSpec& control = program_.control(statement);
    bool emits = false;
    for (const auto* body : {&control.body, &control.else_body}) {
      for (const std::uint32_t child : *body) {
        const Statement& inner = program_.statements[child];
        emits = emits || child <= i || inner.kind == Statement::Kind::kInstruction ||
                control_emits_[inner.control];
      }
    }
    control_emits_[statement.control] = emits;
  }
}

void InstructionStream::bind_expressions() {
  const std::uint32_t loop_base = program_.loop_slot(0);
  const auto known = [loop_base](std::uint32_t slot) { return slot < loop_base; };
  const std::int64_t* env = env_.data();
  const auto bind = [&](Expr& expr) { expr = expr.bind(env, known); };
  bound_operand_index_.assign(program_.operands.size(), kNoOperand);
  for (std::size_t i = 0; i < program_.operands.size(); ++i) {
    const OperandExpr& operand = program_.operands[i];
    if (operand.all_constant) continue;
    OperandExpr& bound = bound_operands_.emplace_back(operand);
    bound_operand_index_[i] = static_cast<std::uint32_t>(bound_operands_.size() - 1);
    for (IndexExpr& index : bound.indices) {
      bind(index.start);
      bind(index.stop);
      bind(index.step);
    }
    if (!operand.is_explicit()) continue;
    ExplicitPatternExpr& pattern =
        bound_patterns_.emplace_back(program_.explicit_patterns[operand.explicit_pattern]);
    bound.explicit_pattern = static_cast<std::uint32_t>(bound_patterns_.size() - 1);
    bind(pattern.partition_start);
    bind(pattern.partition_stop);
    bind(pattern.offset);
    for (PatternPairExpr& pair : pattern.pairs) {
      bind(pair.stride);
      bind(pair.count);
    }
  }
  attributes_ = program_.attributes;
  for (InstructionAttributes& attributes : attributes_) {
    for (Expr* expr : {&attributes.accumulate, &attributes.is_transpose, &attributes.reverse0,
                       &attributes.reverse1, &attributes.negate, &attributes.keepdims,
                       &attributes.queue, &attributes.peer}) {
      bind(*expr);
    }
    for (Expr& expr : attributes.axes) bind(expr);
    for (Expr& expr : attributes.cores) bind(expr);
    for (ScalarSpec* scalar : {&attributes.scale, &attributes.bias, &attributes.operand0,
                               &attributes.operand1, &attributes.fill}) {
      if (scalar->has_expr) bind(scalar->expr);
    }
  }
  // Memos point into the vectors above, which are complete now.
  spec_state_.assign(program_.instructions.size(), kNoState);
  for (std::size_t i = 0; i < program_.instructions.size(); ++i) {
    const InstructionSpec& spec = program_.instructions[i];
    if (!spec.uses_loops) continue;
    spec_state_[i] = static_cast<std::uint32_t>(memo_.size());
    build_memo(spec, memo_.emplace_back());
  }
  control_.reserve(program_.controls.size());
  for (const ControlSpec& control : program_.controls) {
    control_.push_back(ControlExprs{control.start.bind(env, known), control.stop.bind(env, known),
                                    control.step.bind(env, known),
                                    control.condition.bind(env, known)});
  }
}

void InstructionStream::build_memo(const InstructionSpec& spec, Memo& memo) {
  using Kind = SignatureRole::Kind;
  const auto add = [&memo](const Expr& expr, SignatureRole role = {}) {
    if (expr.is_constant()) return;
    memo.exprs.push_back(&expr);
    memo.roles.push_back(role);
    memo.shiftable = memo.shiftable || role.kind != Kind::kFixed;
  };
  for (std::size_t slot = 0; slot < kSlotCount; ++slot) {
    const OperandExpr& operand = this->operand(spec, slot);
    const bool hbm =
        operand.present() && program_.tensors[operand.tensor].memory == MemoryKind::kHbm;
    for (std::size_t d = 0; d < operand.indices.size(); ++d) {
      const IndexExpr& index = operand.indices[d];
      const auto at = [&](Kind kind) {
        return SignatureRole{kind, static_cast<std::uint8_t>(slot), static_cast<std::uint8_t>(d)};
      };
      const bool window = hbm && index.is_slice && index.has_start && index.has_stop &&
                          !index.start.is_constant() && !index.stop.is_constant() &&
                          index.step.is_constant();
      if (hbm && !index.is_slice) {
        add(index.start, at(Kind::kHbmIndex));
      } else if (window) {
        add(index.start, at(Kind::kHbmSliceStart));
        add(index.stop, at(Kind::kHbmSliceStop));
      } else {
        add(index.start);
        add(index.stop);
      }
      add(index.step);
    }
    if (operand.is_explicit()) {
      const ExplicitPatternExpr& pattern = explicit_pattern(operand);
      add(pattern.partition_start);
      add(pattern.partition_stop);
      add(pattern.offset,
          hbm ? SignatureRole{Kind::kHbmPatternOffset, static_cast<std::uint8_t>(slot), 0}
              : SignatureRole{});
      for (const PatternPairExpr& pair : pattern.pairs) {
        add(pair.stride);
        add(pair.count);
      }
    }
  }
  const InstructionAttributes& attributes = attributes_[spec.attributes];
  for (const Expr* expr :
       {&attributes.accumulate, &attributes.is_transpose, &attributes.reverse0,
        &attributes.reverse1, &attributes.negate, &attributes.keepdims, &attributes.peer}) {
    add(*expr);
  }
  add(attributes.queue, SignatureRole{Kind::kQueue, 0, 0});
  for (const Expr& expr : attributes.axes) add(expr);
  for (const Expr& expr : attributes.cores) add(expr);
  for (const ScalarSpec* scalar : {&attributes.scale, &attributes.bias, &attributes.operand0,
                                   &attributes.operand1, &attributes.fill}) {
    if (scalar->has_expr) add(scalar->expr);
  }
  memo.caching = true;
}

std::span<const std::uint32_t> InstructionStream::core_group(std::uint32_t id) const {
  const auto& statics = kernel_.static_core_groups;
  if (id < statics.size()) return statics[id];
  return dynamic_groups_.at(id - statics.size());
}

void InstructionStream::throw_eval_error(const ExprEvalError& error, const Expr& expr,
                                         const SourceRef& source, const char* key) const {
  throw InputError(program_.location(source, std::string("/") + key), error.describe(expr.text()));
}

void InstructionStream::fill_source(std::uint32_t statement, SourceRef& source) const {
  source.statement = statement;
  source.depth = program_.statements[statement].depth;
  const std::uint32_t base = program_.loop_slot(0);
  for (std::uint8_t d = 0; d < source.depth; ++d) source.loop_values[d] = env_[base + d];
}

bool InstructionStream::next(Instruction& out) {
  while (!stack_.empty()) {
    Frame& frame = stack_.back();
    if (frame.position == frame.body->size()) {
      if (frame.is_loop) {
        frame.value += frame.step;
        if (frame.step > 0 ? frame.value < frame.stop : frame.value > frame.stop) {
          env_[frame.slot] = frame.value;
          frame.position = 0;
          continue;
        }
      }
      stack_.pop_back();
      continue;
    }
    const std::uint32_t index = (*frame.body)[frame.position++];
    const Statement& statement = program_.statements[index];
    switch (statement.kind) {
      case Statement::Kind::kInstruction:
        if (sequence_ >= kMaxDynamicInstructions) {
          SourceRef source;
          fill_source(index, source);
          throw InputError(program_.location(source), "core " + std::to_string(pid_) +
                                                          " would issue more than " +
                                                          std::to_string(kMaxDynamicInstructions) +
                                                          " instructions, the most one core runs");
        }
        build(index, out);
        ++sequence_;
        return true;
      case Statement::Kind::kLoop: {
        if (!control_emits_[statement.control]) continue;  // nothing to walk, however long
        SourceRef source;
        fill_source(index, source);
        const ControlExprs& control = control_[statement.control];
        const std::int64_t start = eval(control.start, source, "range");
        const std::int64_t stop = eval(control.stop, source, "range");
        const std::int64_t step = eval(control.step, source, "range");
        if (step == 0) {
          throw InputError(
              program_.location(source, "/range"),
              "range step '" + program_.control(statement).step.text() + "' evaluates to 0");
        }
        if (step > 0 ? start >= stop : start <= stop) continue;  // empty range
        // Trip count ceil(|stop - start| / |step|), unsigned: no overflow for any int64s.
        const auto u = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
        const std::uint64_t distance = step > 0 ? u(stop) - u(start) : u(start) - u(stop);
        const std::uint64_t stride = step > 0 ? u(step) : std::uint64_t{0} - u(step);
        const std::uint64_t trips = distance / stride + (distance % stride != 0 ? 1 : 0);
        if (trips > kMaxLoopTrips) {
          throw InputError(program_.location(source, "/range"),
                           "loop '" + program_.control(statement).loop_var + "' would run " +
                               std::to_string(trips) + " iterations; at most " +
                               std::to_string(kMaxLoopTrips) +
                               " are allowed for a loop whose body issues instructions");
        }
        const std::uint32_t slot = program_.loop_slot(statement.depth);
        env_[slot] = start;
        stack_.push_back(
            Frame{&program_.control(statement).body, 0, true, slot, start, stop, step});
        continue;
      }
      case Statement::Kind::kIf: {
        SourceRef source;
        fill_source(index, source);
        const bool taken = eval(control_[statement.control].condition, source, "if") != 0;
        const ControlSpec& control = program_.control(statement);
        const auto& body = taken ? control.body : control.else_body;
        if (!body.empty()) stack_.push_back(Frame{&body, 0, false, 0, 0, 0, 0});
        continue;
      }
    }
  }
  return false;
}

void InstructionStream::resolve_operand(const InstructionSpec& spec, Slot slot,
                                        AccessPattern& pattern, const SourceRef& source) const {
  const OperandExpr& operand = this->operand(spec, static_cast<std::size_t>(slot));
  const std::string_view key_view = operand_key(spec.opcode, slot);
  const char* key = key_view.data();  // a literal of op_specs(): NUL-terminated
  if (operand.is_explicit()) {
    resolve_explicit_pattern(operand, key, slot == Slot::kDst || slot == Slot::kReduceDst, pattern,
                             source);
    return;
  }
  const TensorDecl& decl = program_.tensors[operand.tensor];
  const TensorLayout& layout = kernel_.layouts[operand.tensor];
  const Placement& placement = kernel_.allocation.placements[operand.tensor];
  const bool on_chip = decl.memory != MemoryKind::kHbm;
  pattern.memory = decl.memory;
  pattern.dtype = decl.dtype;
  pattern.tensor = operand.tensor;
  pattern.space = on_chip ? pid_ : chip_;
  pattern.partition_start = 0;
  pattern.partitions = 1;
  pattern.partition_axis = 0;
  const std::size_t max_rank = on_chip ? kMaxFreeDims : kMaxPatternDims;
  std::int64_t element = 0;
  std::uint8_t rank = 0;
  const std::size_t dims = layout.shape.size();
  for (std::size_t d = 0; d < dims; ++d) {
    const IndexExpr& index = operand.indices[d];
    const std::int64_t size = static_cast<std::int64_t>(layout.shape[d]);
    if (!index.is_slice) {
      const std::int64_t value = eval(index.start, source, key);
      if (value < 0 || value >= size) {
        throw InputError(program_.location(source, std::string("/") + key),
                         operand_text(operand) + ": index '" + index.start.text() +
                             "' = " + std::to_string(value) + " is out of bounds for dimension " +
                             std::to_string(d) + " of tensor '" + decl.name + "' (size " +
                             std::to_string(size) + ", valid 0-" + std::to_string(size - 1) + ")");
      }
      element += value * layout.strides[d];
      continue;
    }
    const std::int64_t start = index.has_start ? eval(index.start, source, key) : 0;
    const std::int64_t stop = index.has_stop ? eval(index.stop, source, key) : size;
    const std::int64_t step = index.has_step ? eval(index.step, source, key) : 1;
    if (step <= 0 || start < 0 || stop > size || start >= stop) {
      std::string why;
      if (step <= 0) {
        why = "has step " + std::to_string(step) + "; steps must be positive";
      } else if (start >= stop && start >= 0 && stop <= size) {
        why = "is empty";
      } else {
        why = "is out of bounds (valid 0:" + std::to_string(size) + ")";
      }
      throw InputError(program_.location(source, std::string("/") + key),
                       operand_text(operand) + ": slice " + std::to_string(start) + ":" +
                           std::to_string(stop) + (step != 1 ? ":" + std::to_string(step) : "") +
                           " of dimension " + std::to_string(d) + " of tensor '" + decl.name +
                           "' (size " + std::to_string(size) + ") " + why);
    }
    const std::int64_t count = (stop - start + step - 1) / step;
    if (on_chip && d == decl.partition_dim) {
      if (step != 1) {
        throw InputError(program_.location(source, std::string("/") + key),
                         operand_text(operand) +
                             ": the partition dimension's slice must have step 1, found " +
                             std::to_string(step));
      }
      pattern.partition_start = placement.partition_start + static_cast<std::uint32_t>(start);
      pattern.partitions = static_cast<std::uint32_t>(count);
      pattern.partition_axis = rank;
      continue;
    }
    if (rank == max_rank) {
      throw InputError(program_.location(source, std::string("/") + key),
                       operand_text(operand) + ": more than " + std::to_string(max_rank) +
                           (on_chip ? " free dimensions" : " dimensions") +
                           " remain after indexing; index some with an integer");
    }
    pattern.sizes[rank] = static_cast<std::uint32_t>(count);
    pattern.strides[rank] = layout.strides[d] * step;
    ++rank;
    element += start * layout.strides[d];
  }
  pattern.rank = rank;
  const std::uint64_t byte_offset = static_cast<std::uint64_t>(element) * dtype_bytes(decl.dtype);
  pattern.offset = on_chip ? placement.offset + byte_offset
                           : kernel_.allocation.hbm_address(operand.tensor, pid_,
                                                            kernel_.target.cores_per_chip) +
                                 byte_offset;
}

void InstructionStream::resolve_explicit_pattern(const OperandExpr& operand, const char* key,
                                                 bool written, AccessPattern& pattern,
                                                 const SourceRef& source) const {
  const ExplicitPatternExpr& expr = explicit_pattern(operand);
  const TensorDecl& decl = program_.tensors[operand.tensor];
  const TensorLayout& layout = kernel_.layouts[operand.tensor];
  const Placement& placement = kernel_.allocation.placements[operand.tensor];
  const bool on_chip = decl.memory != MemoryKind::kHbm;
  const auto fail = [&](const std::string& why) {
    throw InputError(program_.location(source, std::string("/") + key),
                     operand_text(operand) + ": " + why);
  };
  pattern.memory = decl.memory;
  pattern.dtype = decl.dtype;
  pattern.tensor = operand.tensor;
  pattern.space = on_chip ? pid_ : chip_;
  pattern.partition_axis = 0;
  pattern.partition_start = 0;
  pattern.partitions = 1;
  if (on_chip) {
    const std::int64_t start = eval(expr.partition_start, source, key);
    const std::int64_t stop = eval(expr.partition_stop, source, key);
    const auto partitions = static_cast<std::int64_t>(layout.partitions);
    if (start < 0 || stop > partitions || start >= stop) {
      fail("partition range " + std::to_string(start) + ":" + std::to_string(stop) +
           (start >= stop && start >= 0 && stop <= partitions ? " is empty" : " is out of bounds") +
           " for the " + std::to_string(partitions) + " partitions of tensor '" + decl.name +
           "' (valid 0:" + std::to_string(partitions) + ")");
    }
    pattern.partition_start = placement.partition_start + static_cast<std::uint32_t>(start);
    pattern.partitions = static_cast<std::uint32_t>(stop - start);
  }
  const std::int64_t offset = eval(expr.offset, source, key);
  // Elements one pattern may address: the tensor's (HBM) or one partition's (on chip).
  const auto limit = static_cast<std::int64_t>(
      (on_chip ? layout.bytes_per_partition : layout.bytes) / dtype_bytes(decl.dtype));
  std::int64_t last = offset;  // last element touched, if it does not overflow
  bool overflow = false;
  std::uint64_t elements = 1;
  const auto rank = static_cast<std::uint8_t>(expr.pairs.size());
  for (std::uint8_t d = 0; d < rank; ++d) {
    const std::int64_t stride = eval(expr.pairs[d].stride, source, key);
    const std::int64_t count = eval(expr.pairs[d].count, source, key);
    const std::string pair_text = "pair " + std::to_string(d) + " [" + std::to_string(stride) +
                                  ", " + std::to_string(count) + "]";
    if (stride < 0) fail(pair_text + " has a negative stride; strides are at least 0");
    if (count < 1) fail(pair_text + " has a count below 1");
    if (count > static_cast<std::int64_t>(std::numeric_limits<std::uint32_t>::max())) {
      fail(pair_text + " has a count above " +
           std::to_string(std::numeric_limits<std::uint32_t>::max()));
    }
    if (__builtin_mul_overflow(elements, static_cast<std::uint64_t>(count), &elements) ||
        elements > kMaxPatternElements) {
      fail("the pattern touches more than " + std::to_string(kMaxPatternElements) + " elements" +
           (on_chip ? " per partition" : ""));
    }
    if (written && stride == 0 && count > 1) {
      fail(pair_text + " writes the same elements " + std::to_string(count) +
           " times; a written operand may not broadcast (stride 0)");
    }
    std::int64_t span = 0;
    overflow = overflow || __builtin_mul_overflow(count - 1, stride, &span) ||
               __builtin_add_overflow(last, span, &last);
    pattern.sizes[d] = static_cast<std::uint32_t>(count);
    pattern.strides[d] = stride;
  }
  pattern.rank = rank;
  if (offset < 0 || overflow || last >= limit) {
    const std::string tensor_size = "tensor '" + decl.name + "' has " + std::to_string(limit) +
                                    " elements" + (on_chip ? " per partition" : "") + " (valid 0-" +
                                    std::to_string(limit - 1) + ")";
    if (offset < 0) fail("offset " + std::to_string(offset) + " is negative; " + tensor_size);
    fail("offset " + std::to_string(offset) + " with the pairs given reaches element " +
         (overflow ? "beyond 2^63" : std::to_string(last)) + "; " + tensor_size);
  }
  const std::uint64_t byte_offset = static_cast<std::uint64_t>(offset) * dtype_bytes(decl.dtype);
  pattern.offset = on_chip ? placement.offset + byte_offset
                           : kernel_.allocation.hbm_address(operand.tensor, pid_,
                                                            kernel_.target.cores_per_chip) +
                                 byte_offset;
}

std::uint32_t InstructionStream::intern_dynamic_group(const InstructionSpec& spec,
                                                      const InstructionAttributes& attributes,
                                                      const SourceRef& source) {
  const char* key = spec.opcode == Opcode::kCoreBarrier ? "cores" : "group";
  std::vector<std::uint32_t> group;
  group.reserve(attributes.cores.size());
  for (std::size_t i = 0; i < attributes.cores.size(); ++i) {
    const std::int64_t value = eval(attributes.cores[i], source, key);
    if (value < 0 || value >= static_cast<std::int64_t>(kernel_.cores)) {
      check_core_index(value, kernel_.cores,
                       program_.location(source, std::string("/") + key + "/" + std::to_string(i)));
    }
    group.push_back(static_cast<std::uint32_t>(value));
  }
  std::vector<std::uint32_t> sorted = group;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    check_core_group(group, program_.location(source, std::string("/") + key));
  }
  const auto found = dynamic_group_ids_.find(group);
  if (found != dynamic_group_ids_.end()) return found->second;
  const auto id =
      static_cast<std::uint32_t>(kernel_.static_core_groups.size() + dynamic_groups_.size());
  dynamic_groups_.push_back(group);
  dynamic_group_ids_.emplace(std::move(group), id);
  return id;
}

bool InstructionStream::evaluate_signature(const Memo& memo) {
  const std::size_t width = memo.exprs.size();
  signature_.resize(width);
  for (std::size_t i = 0; i < width; ++i) {
    try {
      signature_[i] = memo.exprs[i]->eval(env_.data());
    } catch (const ExprEvalError&) {
      return false;
    }
  }
  return true;
}

const Instruction* InstructionStream::memo_lookup(Memo& memo, std::size_t& entry) {
  entry = kMemoEntries;
  if (memo.lookups == kMemoTrial && memo.hits * 4 < memo.lookups) {
    memo.caching = false;  // fewer than a quarter of lookups hit
    memo.keys = {};
    memo.entries = {};
    memo.filled = {};
    return nullptr;
  }
  ++memo.lookups;
  const std::size_t width = memo.exprs.size();
  std::uint64_t hash = 0x9E3779B97F4A7C15ull;
  for (const std::int64_t value : signature_) {
    hash = (hash ^ static_cast<std::uint64_t>(value)) * 0xFF51AFD7ED558CCDull;
  }
  hash ^= hash >> 29;
  if (memo.entries.empty()) {
    memo.keys.assign(kMemoEntries * width, 0);
    memo.entries.resize(kMemoEntries);
    memo.filled.assign(kMemoEntries, 0);
  }
  const std::size_t home = hash % kMemoEntries;
  for (std::size_t probe = 0; probe < kMemoProbes; ++probe) {
    const std::size_t candidate = (home + probe) % kMemoEntries;
    if (!memo.filled[candidate]) {
      entry = candidate;
      return nullptr;
    }
    if (std::equal(signature_.begin(), signature_.end(),
                   memo.keys.begin() + static_cast<std::ptrdiff_t>(candidate * width))) {
      ++memo.hits;
      entry = candidate;
      return memo.entries[candidate].instruction.get();
    }
  }
  entry = home;  // all probed entries hold other signatures: replace the home entry
  return nullptr;
}

std::size_t InstructionStream::base_index(const Memo& memo,
                                          const std::vector<std::int64_t>& signature,
                                          std::uint64_t& hash, bool& found) {
  hash = 0;
  for (std::size_t i = 0; i < signature.size(); ++i) {
    if (memo.roles[i].kind != SignatureRole::Kind::kFixed) continue;
    hash = (hash ^ static_cast<std::uint64_t>(signature[i])) * 0x9E3779B97F4A7C15ull;
  }
  const std::size_t home = static_cast<std::size_t>(hash >> 32) & (kMemoBases - 1);
  found = false;
  if (memo.bases.empty()) return home;
  std::size_t empty = kMemoBases;
  for (std::size_t probe = 0; probe < kMemoBaseProbes; ++probe) {
    const std::size_t slot = (home + probe) & (kMemoBases - 1);
    const Memo::Base* base = memo.bases[slot].get();
    if (base == nullptr) {
      if (empty == kMemoBases) empty = slot;
    } else if (base->fixed_hash == hash) {
      found = true;
      return slot;
    }
  }
  return empty != kMemoBases ? empty : home;
}

bool InstructionStream::shift_from_base(const Memo& memo, const Memo::Base& base,
                                        Instruction& out) const {
  using Kind = SignatureRole::Kind;
  std::array<std::int64_t, kSlotCount> element_delta{};
  std::int64_t queue = 0;
  bool queue_changed = false;
  const std::size_t width = signature_.size();
  for (std::size_t i = 0; i < width; ++i) {
    const std::int64_t now = signature_[i];
    const std::int64_t was = base.signature[i];
    if (now == was) continue;
    const SignatureRole& role = memo.roles[i];
    if (role.kind == Kind::kFixed || role.kind == Kind::kHbmSliceStop) return false;
    if (role.kind == Kind::kQueue) {
      queue = now;
      queue_changed = true;
      continue;
    }
    const AccessPattern& based = base.instruction.operands[role.slot];
    const TensorLayout& layout = kernel_.layouts[based.tensor];
    if (role.kind == Kind::kHbmPatternOffset) {
      // The base's pattern stays inside the tensor at the new offset.
      const auto elements = static_cast<std::int64_t>(layout.bytes / dtype_bytes(based.dtype));
      if (now < 0 || now >= elements - pattern_extent(based)) return false;
      element_delta[role.slot] += now - was;
      continue;
    }
    const auto size = static_cast<std::int64_t>(layout.shape[role.dim]);
    if (role.kind == Kind::kHbmIndex) {
      if (now < 0 || now >= size) return false;
    } else {  // a window: its stop is the next expression and must move by the same amount
      const std::int64_t stop_now = signature_[i + 1];
      const std::int64_t stop_was = base.signature[i + 1];
      if (stop_now - stop_was != now - was || now < 0 || stop_now > size) return false;
      ++i;
    }
    element_delta[role.slot] += (now - was) * layout.strides[role.dim];
  }
  if (queue_changed &&
      (queue < 0 || queue >= static_cast<std::int64_t>(kernel_.target.dma_queues))) {
    return false;
  }
  assign_compact(out, base.instruction);
  // A region's first byte is its operand's offset plus a function of the operand's shape
  // (AccessPattern::region()), so the regions move with their operands.
  for_each_operand_region(out, [&](std::size_t slot, std::uint8_t read, std::uint8_t write) {
    if (element_delta[slot] == 0) return;
    AccessPattern& pattern = out.operands[slot];
    const auto bytes = static_cast<std::uint64_t>(
        element_delta[slot] * static_cast<std::int64_t>(dtype_bytes(pattern.dtype)));
    pattern.offset += bytes;
    if (read != kNoRegion) out.reads[read].byte_begin += bytes;
    if (write != kNoRegion) out.writes[write].byte_begin += bytes;
  });
  if (queue_changed) out.dma_queue = static_cast<std::uint8_t>(queue);
  return true;
}

void InstructionStream::derive_regions(Instruction& out) {
  out.num_reads = 0;
  out.num_writes = 0;
  for_each_operand_region(out, [&](std::size_t slot, std::uint8_t read, std::uint8_t write) {
    const Region region = out.operands[slot].region();
    if (read != kNoRegion) out.reads[read] = region;
    if (write != kNoRegion) out.writes[write] = region;
    out.num_reads = static_cast<std::uint8_t>(out.num_reads + (read != kNoRegion ? 1 : 0));
    out.num_writes = static_cast<std::uint8_t>(out.num_writes + (write != kNoRegion ? 1 : 0));
  });
}

void InstructionStream::build(std::uint32_t statement_index, Instruction& out) {
  const Statement& statement = program_.statements[statement_index];
  const std::uint32_t spec_index = statement.instruction;
  const InstructionSpec& spec = program_.instructions[spec_index];
  const std::uint32_t state = spec_state_[spec_index];
  if (!spec.uses_loops && state != kNoState) {
    assign_compact(out, cache_[state]);
    out.sequence = sequence_;
    fill_source(statement_index, out.source);
    return;
  }
  Memo* memo_of_spec = spec.uses_loops ? &memo_[state] : nullptr;
  std::size_t memo_entry = kMemoEntries;
  std::size_t base = 0;          // shift base of signature_ (when memo.shiftable)
  std::uint64_t fixed_hash = 0;  // of signature_'s kFixed values (when memo.shiftable)
  const bool have_signature =
      reuse_ && memo_of_spec != nullptr && evaluate_signature(*memo_of_spec);
  if (have_signature) {
    Memo& memo = *memo_of_spec;
    const Instruction* reused = memo.caching ? memo_lookup(memo, memo_entry) : nullptr;
    bool reconstructed = false;
    if (reused != nullptr) {
      assign_compact(out, *reused);
      reconstructed = true;
    } else if (memo.shiftable) {
      bool found = false;
      base = base_index(memo, signature_, fixed_hash, found);
      reconstructed = found && shift_from_base(memo, *memo.bases[base], out);
    }
    if (reconstructed) {
      // Shifted: new addresses, no shared content key; the base's family key stays.
      if (reused == nullptr) out.content_key = 0;
      out.sequence = sequence_;
      fill_source(statement_index, out.source);
      return;
    }
  }
  const InstructionAttributes& attributes = attributes_[spec.attributes];
  out = Instruction{};
  out.opcode = spec.opcode;
  out.engine = spec.engine;
  out.pid = pid_;
  out.sequence = sequence_;
  out.content_key = ++last_content_key_;
  out.family_key = out.content_key;
  fill_source(statement_index, out.source);
  const SourceRef& source = out.source;

  for (std::size_t slot = 0; slot < kSlotCount; ++slot) {
    if (spec.operands[slot] != kNoOperand) {
      resolve_operand(spec, static_cast<Slot>(slot), out.operands[slot], source);
    }
  }

  // Attributes.
  out.alu = spec.opcode == Opcode::kTensorScalar ? spec.reduce_op : spec.alu;
  out.op0 = spec.op0;
  out.op1 = spec.op1;
  out.func = spec.func;
  out.cmp = spec.cmp;
  out.dge = spec.dge;
  out.dma_trigger = spec.dma_trigger;
  out.algorithm = spec.algorithm;
  out.double_row = spec.double_row;
  out.accumulate = eval(attributes.accumulate, source, "accumulate") != 0;
  out.is_transpose = eval(attributes.is_transpose, source, "is_transpose") != 0;
  out.reverse0 = eval(attributes.reverse0, source, "reverse0") != 0;
  out.reverse1 = eval(attributes.reverse1, source, "reverse1") != 0;
  out.negate = eval(attributes.negate, source, "negate") != 0;
  out.keepdims = eval(attributes.keepdims, source, "keepdims") != 0;
  if (is_dma(spec.opcode)) {
    const std::int64_t queue = eval(attributes.queue, source, "queue");
    if (queue < 0 || queue >= static_cast<std::int64_t>(kernel_.target.dma_queues)) {
      throw InputError(program_.location(source, "/queue"),
                       "dma-queue: queue '" + attributes.queue.text() +
                           "' = " + std::to_string(queue) + " is out of range 0-" +
                           std::to_string(kernel_.target.dma_queues - 1));
    }
    out.dma_queue = static_cast<std::uint8_t>(queue);
  }
  if (spec.opcode == Opcode::kSend || spec.opcode == Opcode::kRecv) {
    const std::int64_t peer = eval(attributes.peer, source, "peer");
    const std::string where = program_.location(source, "/peer");
    out.peer = check_core_index(peer, kernel_.cores, where);
    if (out.peer == pid_) {
      throw InputError(where, "peer '" + attributes.peer.text() + "' = " + std::to_string(peer) +
                                  " is this core itself; send/recv need another core");
    }
  }
  auto scalar = [&](const ScalarSpec& s, ScalarKind& kind, double& value, const char* key) {
    kind = s.kind;
    if (s.kind == ScalarKind::kImmediate) {
      value = s.has_expr ? static_cast<double>(eval(s.expr, source, key)) : s.number;
    }
  };
  scalar(attributes.scale, out.scale_kind, out.scale_value, "scale");
  scalar(attributes.bias, out.bias_kind, out.bias_value, "bias");
  scalar(attributes.operand0, out.operand0_kind, out.operand0_value, "operand0");
  scalar(attributes.operand1, out.operand1_kind, out.operand1_value, "operand1");
  ScalarKind fill_kind = ScalarKind::kNone;
  scalar(attributes.fill, fill_kind, out.fill_value,
         spec.opcode == Opcode::kMemset ? "value" : "fill");
  if (!attributes.all_cores) {
    const std::uint32_t group = kernel_.spec_core_group[spec_index];
    out.core_group =
        group == kDynamicCoreGroup ? intern_dynamic_group(spec, attributes, source) : group;
  }
  if (spec.opcode == Opcode::kTensorReduce) {
    const AccessPattern& src = out.src();
    if (attributes.axes.empty()) {
      out.reduce_axes = static_cast<std::uint8_t>((1u << src.rank) - 1);
    }
    for (const Expr& axis_expr : attributes.axes) {
      const std::int64_t axis = eval(axis_expr, source, "axis");
      const std::int64_t logical_rank = src.rank + (src.on_chip() ? 1 : 0);
      if (axis < 0 || axis >= logical_rank || (src.on_chip() && axis == src.partition_axis)) {
        throw InputError(program_.location(source, "/axis"),
                         "axis: " + std::to_string(axis) + " is not a free axis of src '" +
                             operand(spec, static_cast<std::size_t>(Slot::kSrc)).text +
                             "' (shape " + format_shape(src) + ", partition axis " +
                             std::to_string(src.partition_axis) +
                             (axis == src.partition_axis ? "; to reduce across partitions use "
                                                           "tensor_partition_reduce)"
                                                         : ")"));
      }
      const std::int64_t free_axis = axis < src.partition_axis ? axis : axis - 1;
      out.reduce_axes = static_cast<std::uint8_t>(out.reduce_axes | (1u << free_axis));
    }
  }

  // Derived numbers.
  const AccessPattern& main =
      out.operand(Slot::kSrc).used() ? out.operand(Slot::kSrc) : out.operand(Slot::kDst);
  out.elements_per_partition = main.used() ? main.elements_per_partition() : 0;
  out.partitions = main.used() ? main.partitions : 0;
  if (is_matmul(spec.opcode)) {
    const AccessPattern& stationary = out.operand(Slot::kStationary);
    const AccessPattern& moving = out.operand(Slot::kSrc);
    const std::uint64_t pair = out.double_row ? 2 : 1;
    const std::uint64_t n = moving.elements_per_partition() / pair;
    const std::uint64_t m = stationary.elements_per_partition() / pair;
    const std::uint64_t k = static_cast<std::uint64_t>(stationary.partitions) * pair *
                            dtype_values_per_element(stationary.dtype);
    out.elements_per_partition = n;
    out.flops = 2 * k * m * n;
  }
  for (std::size_t slot = 0; slot < kSlotCount; ++slot) {
    const AccessPattern& pattern = out.operands[slot];
    if (!pattern.used()) continue;
    const bool written = slot == static_cast<std::size_t>(Slot::kDst) ||
                         slot == static_cast<std::size_t>(Slot::kReduceDst);
    const std::uint64_t bytes = pattern.bytes();
    (written ? out.bytes_written : out.bytes_read) += bytes;
    if (pattern.memory == MemoryKind::kHbm) out.hbm_bytes += bytes;
  }
  derive_regions(out);

  validate_instruction(
      kernel_, out,
      attributes.all_cores ? std::span<const std::uint32_t>{} : core_group(out.core_group));
  if (!spec.uses_loops) {
    if (statement.depth > 0) {  // it runs again
      spec_state_[spec_index] = static_cast<std::uint32_t>(cache_.size());
      cache_.push_back(out);
    }
  } else if (have_signature) {
    Memo& memo = *memo_of_spec;
    if (memo.caching && memo_entry < kMemoEntries) {
      std::unique_ptr<Instruction>& stored = memo.entries[memo_entry].instruction;
      if (stored == nullptr) {
        stored = std::make_unique<Instruction>(out);
      } else {
        *stored = out;
      }
      memo.filled[memo_entry] = 1;
      std::copy(signature_.begin(), signature_.end(),
                memo.keys.begin() + static_cast<std::ptrdiff_t>(memo_entry * memo.exprs.size()));
    }
    if (memo.shiftable) {
      // Only a memo miss gets here, so `base` was set above.
      if (memo.bases.empty()) memo.bases.resize(kMemoBases);
      std::unique_ptr<Memo::Base>& stored = memo.bases[base];
      if (stored == nullptr) stored = std::make_unique<Memo::Base>();
      stored->instruction = out;
      stored->signature = signature_;
      stored->fixed_hash = fixed_hash;
    }
  }
}

}  // namespace trnsim::kernel
