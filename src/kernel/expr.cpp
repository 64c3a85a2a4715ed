#include "kernel/expr.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <limits>
#include <memory>
#include <optional>

#include "util/error.hpp"
#include "util/strings.hpp"

namespace trnsim::kernel {

const std::vector<std::string>& builtin_names() {
  static const std::vector<std::string> names{"pid",
                                              "ncores",
                                              "chip",
                                              "local_core",
                                              "cores_per_chip",
                                              "pmax",
                                              "gemm_stationary_fmax",
                                              "gemm_moving_fmax",
                                              "psum_fmax",
                                              "psum_num_banks",
                                              "sbuf_partition_bytes"};
  return names;
}

std::optional<std::uint32_t> Scope::find(std::string_view name) const {
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    if (it->first == name) return it->second;
  }
  return parent_ != nullptr ? parent_->find(name) : std::nullopt;
}

std::vector<std::string> Scope::names() const {
  std::vector<std::string> out = parent_ != nullptr ? parent_->names() : std::vector<std::string>{};
  for (const auto& entry : entries_) out.push_back(entry.first);
  return out;
}

std::string ExprEvalError::describe(const std::string& expression_text) const {
  const char* what = kind == Kind::kDivisionByZero ? "division by zero" : "integer overflow";
  return std::string(what) + " in expression '" + expression_text + "'";
}

namespace {

// ---- syntax tree (compile time only) --------------------------------------------------------

struct Node {
  Expr::OpCode code = Expr::OpCode::kConst;
  std::int64_t value = 0;  // kConst: value; kSlot: slot
  std::unique_ptr<Node> left;
  std::unique_ptr<Node> right;
  bool is_and = false;  // logical nodes use code kJumpIfZeroElsePop/kJumpIfNonZeroElsePop
};
using NodePtr = std::unique_ptr<Node>;

NodePtr make_leaf(Expr::OpCode code, std::int64_t value) {
  auto node = std::make_unique<Node>();
  node->code = code;
  node->value = value;
  return node;
}
NodePtr make_node(Expr::OpCode code, NodePtr left, NodePtr right = nullptr) {
  auto node = std::make_unique<Node>();
  node->code = code;
  node->left = std::move(left);
  node->right = std::move(right);
  return node;
}
NodePtr clone(const Node& node) {
  auto copy = std::make_unique<Node>();
  copy->code = node.code;
  copy->value = node.value;
  copy->is_and = node.is_and;
  if (node.left) copy->left = clone(*node.left);
  if (node.right) copy->right = clone(*node.right);
  return copy;
}

inline bool checked_binary(Expr::OpCode code, std::int64_t a, std::int64_t b, std::int64_t& out,
                           ExprEvalError::Kind& error) {
  switch (code) {
    case Expr::OpCode::kAdd:
      if (__builtin_add_overflow(a, b, &out)) break;
      return true;
    case Expr::OpCode::kSub:
      if (__builtin_sub_overflow(a, b, &out)) break;
      return true;
    case Expr::OpCode::kMul:
      if (__builtin_mul_overflow(a, b, &out)) break;
      return true;
    case Expr::OpCode::kFloorDiv:
    case Expr::OpCode::kMod:
      if (b == 0) {
        error = ExprEvalError::Kind::kDivisionByZero;
        return false;
      }
      if (a == std::numeric_limits<std::int64_t>::min() && b == -1) break;
      out = code == Expr::OpCode::kFloorDiv ? floor_div(a, b) : floor_mod(a, b);
      return true;
    case Expr::OpCode::kLt:
      out = a < b;
      return true;
    case Expr::OpCode::kLe:
      out = a <= b;
      return true;
    case Expr::OpCode::kGt:
      out = a > b;
      return true;
    case Expr::OpCode::kGe:
      out = a >= b;
      return true;
    case Expr::OpCode::kEq:
      out = a == b;
      return true;
    case Expr::OpCode::kNe:
      out = a != b;
      return true;
    case Expr::OpCode::kMin:
      out = std::min(a, b);
      return true;
    case Expr::OpCode::kMax:
      out = std::max(a, b);
      return true;
    default:
      break;
  }
  error = ExprEvalError::Kind::kOverflow;
  return false;
}

// ---- recursive-descent parser ----------------------------------------------------------------

class Parser {
 public:
  Parser(std::string_view text, const Scope& scope, const std::string& where)
      : text_(text), scope_(scope), where_(where) {}

  NodePtr parse() {
    NodePtr node = parse_or();
    skip_space();
    if (pos_ < text_.size()) {
      if (text_[pos_] == ')') fail("unbalanced ')'");
      fail("unexpected '" + std::string(1, text_[pos_]) + "'");
    }
    return node;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(where_, "in expression '" + std::string(text_) + "': " + what + " at column " +
                                 std::to_string(pos_ + 1));
  }

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool peek_word(std::string_view word) {
    skip_space();
    if (text_.substr(pos_, word.size()) != word) return false;
    const std::size_t end = pos_ + word.size();
    return end == text_.size() ||
           !(std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '_');
  }
  bool accept_word(std::string_view word) {
    if (!peek_word(word)) return false;
    pos_ += word.size();
    return true;
  }
  bool accept(std::string_view symbol) {
    skip_space();
    if (text_.substr(pos_, symbol.size()) != symbol) return false;
    pos_ += symbol.size();
    return true;
  }

  NodePtr parse_or() {
    NodePtr left = parse_and();
    while (accept_word("or")) {
      NodePtr node = make_node(Expr::OpCode::kJumpIfNonZeroElsePop, std::move(left), parse_and());
      left = std::move(node);
    }
    return left;
  }
  NodePtr parse_and() {
    NodePtr left = parse_not();
    while (accept_word("and")) {
      NodePtr node = make_node(Expr::OpCode::kJumpIfZeroElsePop, std::move(left), parse_not());
      node->is_and = true;
      left = std::move(node);
    }
    return left;
  }
  NodePtr parse_not() {
    if (accept_word("not")) return make_node(Expr::OpCode::kNot, parse_not());
    return parse_comparison();
  }
  // Python chains comparisons: a < b <= c means (a < b) and (b <= c).
  NodePtr parse_comparison() {
    NodePtr first = parse_sum();
    NodePtr result;
    const Node* previous = first.get();
    NodePtr owned_previous = std::move(first);
    while (true) {
      skip_space();
      Expr::OpCode code;
      if (accept("<=")) {
        code = Expr::OpCode::kLe;
      } else if (accept(">=")) {
        code = Expr::OpCode::kGe;
      } else if (accept("==")) {
        code = Expr::OpCode::kEq;
      } else if (accept("!=")) {
        code = Expr::OpCode::kNe;
      } else if (accept("<")) {
        code = Expr::OpCode::kLt;
      } else if (accept(">")) {
        code = Expr::OpCode::kGt;
      } else {
        break;
      }
      NodePtr right = parse_sum();
      NodePtr left_operand = result ? clone(*previous) : std::move(owned_previous);
      const Node* right_raw = right.get();
      NodePtr comparison = make_node(code, std::move(left_operand), std::move(right));
      if (!result) {
        result = std::move(comparison);
      } else {
        NodePtr both =
            make_node(Expr::OpCode::kJumpIfZeroElsePop, std::move(result), std::move(comparison));
        both->is_and = true;
        result = std::move(both);
      }
      previous = right_raw;
    }
    return result ? std::move(result) : std::move(owned_previous);
  }
  NodePtr parse_sum() {
    NodePtr left = parse_product();
    while (true) {
      if (accept("+")) {
        left = make_node(Expr::OpCode::kAdd, std::move(left), parse_product());
      } else if (accept("-")) {
        left = make_node(Expr::OpCode::kSub, std::move(left), parse_product());
      } else {
        return left;
      }
    }
  }
  NodePtr parse_product() {
    NodePtr left = parse_unary();
    while (true) {
      skip_space();
      if (accept("**")) fail("'**' is not supported");
      if (accept("//")) {
        left = make_node(Expr::OpCode::kFloorDiv, std::move(left), parse_unary());
      } else if (accept("/")) {
        --pos_;
        fail("'/' is not supported (expressions are integers); use '//' for floor division");
      } else if (accept("*")) {
        left = make_node(Expr::OpCode::kMul, std::move(left), parse_unary());
      } else if (accept("%")) {
        left = make_node(Expr::OpCode::kMod, std::move(left), parse_unary());
      } else {
        return left;
      }
    }
  }
  NodePtr parse_unary() {
    if (accept("-")) return make_node(Expr::OpCode::kNeg, parse_unary());
    if (accept("+")) return parse_unary();
    return parse_atom();
  }
  NodePtr parse_atom() {
    skip_space();
    if (pos_ >= text_.size()) fail("expected a number, a name or '('");
    const char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      NodePtr inner = parse_or();
      if (!accept(")")) fail("expected ')'");
      return inner;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      std::int64_t value = 0;
      const std::size_t start = pos_;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        const int digit = text_[pos_] - '0';
        if (__builtin_mul_overflow(value, 10, &value) ||
            __builtin_add_overflow(value, digit, &value)) {
          pos_ = start;
          fail("integer literal too large");
        }
        ++pos_;
      }
      if (pos_ < text_.size() && (text_[pos_] == '.' || text_[pos_] == 'e' || text_[pos_] == 'E')) {
        fail("only integers are allowed");
      }
      return make_leaf(Expr::OpCode::kConst, value);
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const std::size_t start = pos_;
      while (pos_ < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
        ++pos_;
      }
      const std::string name(text_.substr(start, pos_ - start));
      if (name == "min" || name == "max") {
        if (!accept("(")) fail("expected '(' after '" + name + "'");
        NodePtr a = parse_or();
        if (!accept(",")) fail("'" + name + "' takes two arguments: expected ','");
        NodePtr b = parse_or();
        if (accept(",")) fail("'" + name + "' takes exactly two arguments");
        if (!accept(")")) fail("expected ')' to close '" + name + "('");
        return make_node(name == "min" ? Expr::OpCode::kMin : Expr::OpCode::kMax, std::move(a),
                         std::move(b));
      }
      if (name == "and" || name == "or" || name == "not") {
        pos_ = start;
        fail("expected an operand before '" + name + "'");
      }
      skip_space();
      if (pos_ < text_.size() && text_[pos_] == '(') {
        pos_ = start;
        fail("unknown function '" + name + "' (only min and max exist)");
      }
      if (const auto slot = scope_.find(name)) return make_leaf(Expr::OpCode::kSlot, *slot);
      if (name == "True") return make_leaf(Expr::OpCode::kConst, 1);
      if (name == "False") return make_leaf(Expr::OpCode::kConst, 0);
      pos_ = start;
      throw InputError(where_, "in expression '" + std::string(text_) + "': unknown name '" + name +
                                   "'" + util::did_you_mean(name, scope_.names()));
    }
    fail("unexpected '" + std::string(1, c) + "'");
  }

  std::string_view text_;
  const Scope& scope_;
  const std::string& where_;
  std::size_t pos_ = 0;
};

// Folds constant sub-trees. Returns false (and sets `error`) when a constant part cannot be
// evaluated (division by zero, overflow).
bool fold(NodePtr& node, ExprEvalError::Kind& error) {
  if (node->code == Expr::OpCode::kConst || node->code == Expr::OpCode::kSlot) return true;
  if (node->left && !fold(node->left, error)) return false;
  if (node->right && !fold(node->right, error)) return false;
  const bool left_const = node->left && node->left->code == Expr::OpCode::kConst;
  if (node->code == Expr::OpCode::kNeg || node->code == Expr::OpCode::kNot) {
    if (!left_const) return true;
    const std::int64_t a = node->left->value;
    if (node->code == Expr::OpCode::kNeg) {
      if (a == std::numeric_limits<std::int64_t>::min()) {
        error = ExprEvalError::Kind::kOverflow;
        return false;
      }
      node = make_leaf(Expr::OpCode::kConst, -a);
    } else {
      node = make_leaf(Expr::OpCode::kConst, a == 0 ? 1 : 0);
    }
    return true;
  }
  if (node->code == Expr::OpCode::kJumpIfZeroElsePop ||
      node->code == Expr::OpCode::kJumpIfNonZeroElsePop) {
    if (!left_const) return true;
    const bool keep_left = node->is_and ? node->left->value == 0 : node->left->value != 0;
    NodePtr kept = keep_left ? std::move(node->left) : std::move(node->right);
    node = std::move(kept);
    return true;
  }
  const bool right_const = node->right && node->right->code == Expr::OpCode::kConst;
  if (!left_const || !right_const) return true;
  std::int64_t out = 0;
  if (!checked_binary(node->code, node->left->value, node->right->value, out, error)) {
    return false;
  }
  node = make_leaf(Expr::OpCode::kConst, out);
  return true;
}

void emit(const Node& node, std::vector<Expr::Op>& code, std::vector<std::uint32_t>& slots,
          std::uint32_t depth, std::uint32_t& max_depth) {
  max_depth = std::max(max_depth, depth + 1);
  switch (node.code) {
    case Expr::OpCode::kConst:
      code.push_back({Expr::OpCode::kConst, node.value});
      return;
    case Expr::OpCode::kSlot:
      code.push_back({Expr::OpCode::kSlot, node.value});
      slots.push_back(static_cast<std::uint32_t>(node.value));
      return;
    case Expr::OpCode::kNeg:
    case Expr::OpCode::kNot:
      emit(*node.left, code, slots, depth, max_depth);
      code.push_back({node.code, 0});
      return;
    case Expr::OpCode::kJumpIfZeroElsePop:
    case Expr::OpCode::kJumpIfNonZeroElsePop: {
      emit(*node.left, code, slots, depth, max_depth);
      const std::size_t jump = code.size();
      code.push_back({node.code, 0});
      emit(*node.right, code, slots, depth, max_depth);
      code[jump].operand = static_cast<std::int64_t>(code.size());
      return;
    }
    default:
      emit(*node.left, code, slots, depth, max_depth);
      emit(*node.right, code, slots, depth + 1, max_depth);
      code.push_back({node.code, 0});
      return;
  }
}

}  // namespace

Expr::Expr(const Expr& other)
    : kind_(other.kind_),
      final_op_(other.final_op_),
      text_is_value_(other.text_is_value_),
      slot_(other.slot_),
      constant_(other.constant_),
      final_operand_(other.final_operand_),
      detail_(other.detail_ ? std::make_unique<Detail>(*other.detail_) : nullptr) {}

Expr& Expr::operator=(const Expr& other) {
  if (this != &other) *this = Expr(other);
  return *this;
}

Expr::Detail& Expr::detail() {
  if (!detail_) detail_ = std::make_unique<Detail>();
  return *detail_;
}

std::string Expr::text() const {
  if (detail_) return detail_->text;
  return text_is_value_ ? std::to_string(constant_) : std::string();
}

const std::vector<std::uint32_t>& Expr::slots() const {
  static const std::vector<std::uint32_t> kNone;
  return detail_ ? detail_->slots : kNone;
}

void Expr::set_text(std::string text) {
  if (kind_ == Kind::kConstant && (!detail_ || detail_->slots.empty()) &&
      text == std::to_string(constant_)) {
    detail_.reset();
    text_is_value_ = true;
    return;
  }
  text_is_value_ = false;
  detail().text = std::move(text);
}

Expr Expr::constant(std::int64_t value) {
  Expr expr;
  expr.constant_ = value;
  expr.text_is_value_ = true;
  return expr;
}

Expr Expr::compile(std::string_view text, const Scope& scope, const std::string& where) {
  Parser parser(text, scope, where);
  NodePtr root = parser.parse();
  ExprEvalError::Kind error{};
  if (!fold(root, error)) {
    throw InputError(where, ExprEvalError{error}.describe(std::string(text)));
  }
  Expr expr;
  if (root->code == OpCode::kConst) {
    expr.kind_ = Kind::kConstant;
    expr.constant_ = root->value;
    expr.set_text(std::string(text));
    return expr;
  }
  Detail& detail = expr.detail();
  detail.text = std::string(text);
  if (root->code == OpCode::kSlot) {
    expr.kind_ = Kind::kSlot;
    expr.slot_ = static_cast<std::uint32_t>(root->value);
    detail.slots.push_back(expr.slot_);
    return expr;
  }
  expr.kind_ = Kind::kCode;
  emit(*root, detail.code, detail.slots, 0, detail.stack_depth);
  std::sort(detail.slots.begin(), detail.slots.end());
  detail.slots.erase(std::unique(detail.slots.begin(), detail.slots.end()), detail.slots.end());
  constexpr std::uint32_t kMaxStack = 64;
  if (detail.stack_depth > kMaxStack) {
    throw InputError(where, "in expression '" + std::string(text) + "': nested too deeply");
  }
  return expr;
}

std::int64_t Expr::eval_affine(const std::int64_t* env) const {
  const Detail& detail = *detail_;
  std::int64_t value = constant_;
  for (std::uint8_t i = 0; i < detail.affine_terms; ++i) {
    std::int64_t term = 0;
    if (__builtin_mul_overflow(detail.affine_coefs[i], env[detail.affine_slots[i]], &term) ||
        __builtin_add_overflow(value, term, &value)) {
      throw ExprEvalError{ExprEvalError::Kind::kOverflow};
    }
  }
  return value;
}

std::int64_t Expr::eval_out_of_line(const std::int64_t* env) const {
  if (kind_ == Kind::kAffine) return eval_affine(env);
  if (kind_ == Kind::kAffineOp) {
    const std::int64_t value = eval_affine(env);
    std::int64_t out = 0;
    ExprEvalError::Kind error{};
    if (!checked_binary(final_op_, value, final_operand_, out, error)) throw ExprEvalError{error};
    return out;
  }
  return run(env);
}

std::int64_t Expr::run(const std::int64_t* env) const {
  std::array<std::int64_t, 64> stack;
  std::size_t top = 0;  // number of values on the stack
  const std::vector<Op>& code = detail_->code;
  const std::size_t size = code.size();
  for (std::size_t pc = 0; pc < size; ++pc) {
    const Op& op = code[pc];
    switch (op.code) {
      case OpCode::kConst:
        stack[top++] = op.operand;
        break;
      case OpCode::kSlot:
        stack[top++] = env[op.operand];
        break;
      case OpCode::kNeg:
        if (stack[top - 1] == std::numeric_limits<std::int64_t>::min()) {
          throw ExprEvalError{ExprEvalError::Kind::kOverflow};
        }
        stack[top - 1] = -stack[top - 1];
        break;
      case OpCode::kNot:
        stack[top - 1] = stack[top - 1] == 0 ? 1 : 0;
        break;
      case OpCode::kJumpIfZeroElsePop:
        if (stack[top - 1] == 0) {
          pc = static_cast<std::size_t>(op.operand) - 1;
        } else {
          --top;
        }
        break;
      case OpCode::kJumpIfNonZeroElsePop:
        if (stack[top - 1] != 0) {
          pc = static_cast<std::size_t>(op.operand) - 1;
        } else {
          --top;
        }
        break;
      default: {
        const std::int64_t b = stack[--top];
        const std::int64_t a = stack[top - 1];
        std::int64_t out = 0;
        ExprEvalError::Kind error{};
        if (!checked_binary(op.code, a, b, out, error)) throw ExprEvalError{error};
        stack[top - 1] = out;
        break;
      }
    }
  }
  return stack[0];
}

namespace {

// Symbolic value during binding: c + sum coef[i] * slot[i], or not affine.
struct Affine {
  bool ok = true;
  std::int64_t c = 0;
  std::uint8_t n = 0;
  std::array<std::uint32_t, 4> slot{};
  std::array<std::int64_t, 4> coef{};
  bool constant() const { return ok && n == 0; }
};

Affine affine_add(const Affine& a, const Affine& b, std::int64_t sign) {
  Affine out = a;
  if (!a.ok || !b.ok) return Affine{false};
  std::int64_t bc = 0;
  if (__builtin_mul_overflow(b.c, sign, &bc) || __builtin_add_overflow(out.c, bc, &out.c)) {
    return Affine{false};
  }
  for (std::uint8_t i = 0; i < b.n; ++i) {
    std::int64_t coef = 0;
    if (__builtin_mul_overflow(b.coef[i], sign, &coef)) return Affine{false};
    bool merged = false;
    for (std::uint8_t j = 0; j < out.n; ++j) {
      if (out.slot[j] == b.slot[i]) {
        if (__builtin_add_overflow(out.coef[j], coef, &out.coef[j])) return Affine{false};
        merged = true;
        break;
      }
    }
    if (merged) continue;
    if (out.n == out.slot.size()) return Affine{false};
    out.slot[out.n] = b.slot[i];
    out.coef[out.n] = coef;
    ++out.n;
  }
  return out;
}

Affine affine_scale(const Affine& a, std::int64_t factor) {
  if (!a.ok) return a;
  Affine out = a;
  if (__builtin_mul_overflow(a.c, factor, &out.c)) return Affine{false};
  for (std::uint8_t i = 0; i < a.n; ++i) {
    if (__builtin_mul_overflow(a.coef[i], factor, &out.coef[i])) return Affine{false};
  }
  return out;
}

}  // namespace

bool Expr::slot_op_cannot_fail(OpCode code, std::int64_t operand) {
  switch (code) {
    case OpCode::kMod:
    case OpCode::kFloorDiv:
      return operand > 0;  // no division by zero, no INT64_MIN // -1
    case OpCode::kLt:
    case OpCode::kLe:
    case OpCode::kGt:
    case OpCode::kGe:
    case OpCode::kEq:
    case OpCode::kNe:
    case OpCode::kMin:
    case OpCode::kMax:
      return true;
    default:
      return false;  // + - * may overflow
  }
}

Expr Expr::bind_mask(const std::int64_t* env, const std::vector<bool>& known) const {
  // Only compiled forms are bound: a constant stays, and bound forms are already specialised.
  if (kind_ != Kind::kSlot && kind_ != Kind::kCode) return *this;
  auto is_known = [&known](std::uint32_t slot) { return slot < known.size() && known[slot]; };
  if (kind_ == Kind::kSlot) {
    if (!is_known(slot_)) return *this;
    Expr out;
    out.constant_ = env[slot_];
    out.set_text(detail_->text);
    return out;
  }
  const std::vector<Op>& code = detail_->code;
  std::vector<Affine> stack;
  // An affine form combined with a constant by the last operator: kAffineOp.
  std::optional<Op> final_op;
  for (std::size_t pc = 0; pc < code.size(); ++pc) {
    const Op& op = code[pc];
    switch (op.code) {
      case OpCode::kConst: {
        Affine a;
        a.c = op.operand;
        stack.push_back(a);
        break;
      }
      case OpCode::kSlot: {
        Affine a;
        const auto slot = static_cast<std::uint32_t>(op.operand);
        if (is_known(slot)) {
          a.c = env[slot];
        } else {
          a.n = 1;
          a.slot[0] = slot;
          a.coef[0] = 1;
        }
        stack.push_back(a);
        break;
      }
      case OpCode::kNeg:
        stack.back() = affine_scale(stack.back(), -1);
        break;
      case OpCode::kAdd:
      case OpCode::kSub: {
        const Affine b = stack.back();
        stack.pop_back();
        stack.back() = affine_add(stack.back(), b, op.code == OpCode::kAdd ? 1 : -1);
        break;
      }
      case OpCode::kMul: {
        const Affine b = stack.back();
        stack.pop_back();
        const Affine a = stack.back();
        if (a.constant()) {
          stack.back() = affine_scale(b, a.c);
        } else if (b.constant()) {
          stack.back() = affine_scale(a, b.c);
        } else {
          stack.back() = Affine{false};
        }
        break;
      }
      case OpCode::kNot: {
        Affine& a = stack.back();
        if (a.constant()) {
          a.c = a.c == 0 ? 1 : 0;
        } else {
          a = Affine{false};
        }
        break;
      }
      case OpCode::kJumpIfZeroElsePop:
      case OpCode::kJumpIfNonZeroElsePop:
        return *this;  // short-circuit logic: keep the interpreter
      default: {
        const Affine b = stack.back();
        stack.pop_back();
        Affine& a = stack.back();
        std::int64_t out = 0;
        ExprEvalError::Kind error{};
        if (a.constant() && b.constant() && checked_binary(op.code, a.c, b.c, out, error)) {
          a.c = out;
        } else if (pc + 1 == code.size() && stack.size() == 1 && a.ok && b.constant() &&
                   !((op.code == OpCode::kFloorDiv || op.code == OpCode::kMod) && b.c == 0)) {
          final_op = Op{op.code, b.c};  // `a` stays on the stack as the affine part
        } else {
          a = Affine{false};  // includes errors: the interpreter reports them when evaluated
        }
        break;
      }
    }
  }
  if (stack.size() != 1) return *this;
  const Affine result = stack.front();
  if (!result.ok) return *this;
  Expr out;
  out.constant_ = result.c;
  if (final_op && result.n == 0) return *this;  // unreachable: constants were folded
  if (result.n == 0) {
    out.kind_ = Kind::kConstant;
    out.set_text(detail_->text);
    return out;
  }
  Detail& detail = out.detail();
  detail.text = detail_->text;
  for (std::uint8_t i = 0; i < result.n; ++i) detail.slots.push_back(result.slot[i]);
  std::sort(detail.slots.begin(), detail.slots.end());
  if (final_op && result.n == 1 && result.coef[0] == 1 && result.c == 0 &&
      slot_op_cannot_fail(final_op->code, final_op->operand)) {
    out.kind_ = Kind::kSlotOp;
    out.slot_ = result.slot[0];
    out.final_op_ = final_op->code;
    out.final_operand_ = final_op->operand;
    return out;
  }
  if (!final_op && result.n == 1) {
    if (result.coef[0] == 1 && result.c == 0) {
      out.kind_ = Kind::kSlot;
    } else {
      out.kind_ = Kind::kAffine1;
      out.final_operand_ = result.coef[0];
    }
    out.slot_ = result.slot[0];
    return out;
  }
  out.kind_ = final_op ? Kind::kAffineOp : Kind::kAffine;
  if (final_op) {
    out.final_op_ = final_op->code;
    out.final_operand_ = final_op->operand;
  }
  detail.affine_terms = result.n;
  for (std::uint8_t i = 0; i < result.n; ++i) {
    detail.affine_slots[i] = result.slot[i];
    detail.affine_coefs[i] = result.coef[i];
  }
  return out;
}

}  // namespace trnsim::kernel
