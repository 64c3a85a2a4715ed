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
// Nodes live in one array and refer to their operands by index: no recursion destroys or copies
// a tree, and a comparison chain (a < b < c) shares its middle operand instead of cloning it.
// Every walk below is iterative, so a flat chain of any length (a + b + c + ...) is safe; only
// nesting (parentheses, unary operators, not, min/max) recurses in the parser, up to
// kMaxExprNesting levels.

using NodeId = std::uint32_t;
constexpr NodeId kNoNode = std::numeric_limits<NodeId>::max();

struct Node {
  Expr::OpCode code = Expr::OpCode::kConst;
  std::int64_t value = 0;  // kConst: value; kSlot: slot
  NodeId left = kNoNode;
  NodeId right = kNoNode;
  bool is_and = false;  // logical nodes use code kJumpIfZeroElsePop/kJumpIfNonZeroElsePop
};

struct Tree {
  std::vector<Node> nodes;

  NodeId leaf(Expr::OpCode code, std::int64_t value) {
    nodes.push_back(Node{code, value, kNoNode, kNoNode, false});
    return static_cast<NodeId>(nodes.size() - 1);
  }
  NodeId node(Expr::OpCode code, NodeId left, NodeId right = kNoNode, bool is_and = false) {
    nodes.push_back(Node{code, 0, left, right, is_and});
    return static_cast<NodeId>(nodes.size() - 1);
  }
};

bool is_leaf(const Node& node) {
  return node.code == Expr::OpCode::kConst || node.code == Expr::OpCode::kSlot;
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

/// Longest expression text quoted whole in a message; longer ones are cut.
constexpr std::size_t kQuotedTextChars = 120;

std::string quoted_text(std::string_view text) {
  if (text.size() <= kQuotedTextChars) return std::string(text);
  return std::string(text.substr(0, kQuotedTextChars)) + "... (" + std::to_string(text.size()) +
         " characters)";
}

class Parser {
 public:
  Parser(std::string_view text, const Scope& scope, const std::string& where, Tree& tree)
      : text_(text), scope_(scope), where_(where), tree_(tree) {}

  NodeId parse() {
    const NodeId node = parse_or();
    skip_space();
    if (pos_ < text_.size()) {
      if (text_[pos_] == ')') fail("unbalanced ')'");
      fail("unexpected '" + std::string(1, text_[pos_]) + "'");
    }
    return node;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(where_, "in expression '" + quoted_text(text_) + "': " + what + " at column " +
                                 std::to_string(pos_ + 1));
  }

  /// Counts one level of nesting for the scope of the object (see kMaxExprNesting).
  class Nested {
   public:
    explicit Nested(Parser& parser) : parser_(parser) {
      if (++parser_.nesting_ > kMaxExprNesting) {
        parser_.fail("nested deeper than " + std::to_string(kMaxExprNesting) +
                     " levels (parentheses, unary '-', 'not', min/max)");
      }
    }
    ~Nested() { --parser_.nesting_; }
    Nested(const Nested&) = delete;
    Nested& operator=(const Nested&) = delete;

   private:
    Parser& parser_;
  };

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

  NodeId parse_or() {
    NodeId left = parse_and();
    while (accept_word("or")) {
      const NodeId right = parse_and();
      left = tree_.node(Expr::OpCode::kJumpIfNonZeroElsePop, left, right);
    }
    return left;
  }
  NodeId parse_and() {
    NodeId left = parse_not();
    while (accept_word("and")) {
      const NodeId right = parse_not();
      left = tree_.node(Expr::OpCode::kJumpIfZeroElsePop, left, right, /*is_and=*/true);
    }
    return left;
  }
  NodeId parse_not() {
    if (accept_word("not")) {
      const Nested nested(*this);
      return tree_.node(Expr::OpCode::kNot, parse_not());
    }
    return parse_comparison();
  }
  // Python chains comparisons: a < b <= c means (a < b) and (b <= c); b is shared.
  NodeId parse_comparison() {
    NodeId previous = parse_sum();
    NodeId result = kNoNode;
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
      const NodeId right = parse_sum();
      const NodeId comparison = tree_.node(code, previous, right);
      result = result == kNoNode
                   ? comparison
                   : tree_.node(Expr::OpCode::kJumpIfZeroElsePop, result, comparison, true);
      previous = right;
    }
    return result == kNoNode ? previous : result;
  }
  NodeId parse_sum() {
    NodeId left = parse_product();
    while (true) {
      Expr::OpCode code;
      if (accept("+")) {
        code = Expr::OpCode::kAdd;
      } else if (accept("-")) {
        code = Expr::OpCode::kSub;
      } else {
        return left;
      }
      const NodeId right = parse_product();
      left = tree_.node(code, left, right);
    }
  }
  NodeId parse_product() {
    NodeId left = parse_unary();
    while (true) {
      skip_space();
      if (accept("**")) fail("'**' is not supported");
      Expr::OpCode code;
      if (accept("//")) {
        code = Expr::OpCode::kFloorDiv;
      } else if (accept("/")) {
        --pos_;
        fail("'/' is not supported (expressions are integers); use '//' for floor division");
      } else if (accept("*")) {
        code = Expr::OpCode::kMul;
      } else if (accept("%")) {
        code = Expr::OpCode::kMod;
      } else {
        return left;
      }
      const NodeId right = parse_unary();
      left = tree_.node(code, left, right);
    }
  }
  NodeId parse_unary() {
    if (accept("-")) {
      const Nested nested(*this);
      return tree_.node(Expr::OpCode::kNeg, parse_unary());
    }
    if (accept("+")) {
      const Nested nested(*this);
      return parse_unary();
    }
    return parse_atom();
  }
  NodeId parse_atom() {
    skip_space();
    if (pos_ >= text_.size()) fail("expected a number, a name or '('");
    const char c = text_[pos_];
    if (c == '(') {
      const Nested nested(*this);
      ++pos_;
      const NodeId inner = parse_or();
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
      return tree_.leaf(Expr::OpCode::kConst, value);
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const std::size_t start = pos_;
      while (pos_ < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
        ++pos_;
      }
      const std::string name(text_.substr(start, pos_ - start));
      if (name == "min" || name == "max") {
        const Nested nested(*this);
        if (!accept("(")) fail("expected '(' after '" + name + "'");
        const NodeId a = parse_or();
        if (!accept(",")) fail("'" + name + "' takes two arguments: expected ','");
        const NodeId b = parse_or();
        if (accept(",")) fail("'" + name + "' takes exactly two arguments");
        if (!accept(")")) fail("expected ')' to close '" + name + "('");
        return tree_.node(name == "min" ? Expr::OpCode::kMin : Expr::OpCode::kMax, a, b);
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
      if (const auto slot = scope_.find(name)) return tree_.leaf(Expr::OpCode::kSlot, *slot);
      if (name == "True") return tree_.leaf(Expr::OpCode::kConst, 1);
      if (name == "False") return tree_.leaf(Expr::OpCode::kConst, 0);
      pos_ = start;
      throw InputError(where_, "in expression '" + quoted_text(text_) + "': unknown name '" + name +
                                   "'" + util::did_you_mean(name, scope_.names()));
    }
    fail("unexpected '" + std::string(1, c) + "'");
  }

  std::string_view text_;
  const Scope& scope_;
  const std::string& where_;
  Tree& tree_;
  std::size_t pos_ = 0;
  std::size_t nesting_ = 0;
};

// Folds the constant operands of node `id` (whose operands are folded already). Returns false
// (and sets `error`) when a constant part cannot be evaluated (division by zero, overflow).
bool fold_node(Tree& tree, NodeId id, ExprEvalError::Kind& error) {
  Node& node = tree.nodes[id];
  if (is_leaf(node)) return true;
  const Node* left = node.left == kNoNode ? nullptr : &tree.nodes[node.left];
  const bool left_const = left != nullptr && left->code == Expr::OpCode::kConst;
  if (node.code == Expr::OpCode::kNeg || node.code == Expr::OpCode::kNot) {
    if (!left_const) return true;
    const std::int64_t a = left->value;
    if (node.code == Expr::OpCode::kNeg) {
      if (a == std::numeric_limits<std::int64_t>::min()) {
        error = ExprEvalError::Kind::kOverflow;
        return false;
      }
      node = Node{Expr::OpCode::kConst, -a};
    } else {
      node = Node{Expr::OpCode::kConst, a == 0 ? 1 : 0};
    }
    return true;
  }
  if (node.code == Expr::OpCode::kJumpIfZeroElsePop ||
      node.code == Expr::OpCode::kJumpIfNonZeroElsePop) {
    if (!left_const) return true;
    const bool keep_left = node.is_and ? left->value == 0 : left->value != 0;
    node = tree.nodes[keep_left ? node.left : node.right];  // a copy: operands may be shared
    return true;
  }
  const Node* right = node.right == kNoNode ? nullptr : &tree.nodes[node.right];
  const bool right_const = right != nullptr && right->code == Expr::OpCode::kConst;
  if (!left_const || !right_const) return true;
  std::int64_t out = 0;
  if (!checked_binary(node.code, left->value, right->value, out, error)) return false;
  node = Node{Expr::OpCode::kConst, out};
  return true;
}

// Folds constant sub-trees, operands before the operator (post-order, with an explicit stack).
bool fold(Tree& tree, NodeId root, ExprEvalError::Kind& error) {
  std::vector<std::pair<NodeId, bool>> stack{{root, false}};  // node, operands pushed
  while (!stack.empty()) {
    auto& [id, expanded] = stack.back();
    if (expanded || is_leaf(tree.nodes[id])) {
      const NodeId done = id;
      stack.pop_back();
      if (!fold_node(tree, done, error)) return false;
      continue;
    }
    expanded = true;
    const Node node = tree.nodes[id];  // a copy: push_back may move the stack
    if (node.right != kNoNode) stack.emplace_back(node.right, false);
    if (node.left != kNoNode) stack.emplace_back(node.left, false);
  }
  return true;
}

// Postfix code of the tree (explicit stack). `max_depth` is the deepest evaluation stack.
void emit(const Tree& tree, NodeId root, std::vector<Expr::Op>& code,
          std::vector<std::uint32_t>& slots, std::uint32_t& max_depth) {
  struct Frame {
    NodeId id;
    std::uint32_t depth;
    std::uint8_t stage;  // operands emitted so far
    std::size_t jump;    // and/or: index of the jump to patch
  };
  std::vector<Frame> stack{{root, 0, 0, 0}};
  while (!stack.empty()) {
    Frame& frame = stack.back();
    const Node& node = tree.nodes[frame.id];
    max_depth = std::max(max_depth, frame.depth + 1);
    const std::uint32_t depth = frame.depth;
    switch (node.code) {
      case Expr::OpCode::kConst:
        code.push_back({Expr::OpCode::kConst, node.value});
        stack.pop_back();
        continue;
      case Expr::OpCode::kSlot:
        code.push_back({Expr::OpCode::kSlot, node.value});
        slots.push_back(static_cast<std::uint32_t>(node.value));
        stack.pop_back();
        continue;
      case Expr::OpCode::kNeg:
      case Expr::OpCode::kNot:
        if (frame.stage++ == 0) {
          stack.push_back({node.left, depth, 0, 0});
        } else {
          code.push_back({node.code, 0});
          stack.pop_back();
        }
        continue;
      case Expr::OpCode::kJumpIfZeroElsePop:
      case Expr::OpCode::kJumpIfNonZeroElsePop:
        if (frame.stage == 0) {
          frame.stage = 1;
          stack.push_back({node.left, depth, 0, 0});
        } else if (frame.stage == 1) {
          frame.stage = 2;
          frame.jump = code.size();
          code.push_back({node.code, 0});
          stack.push_back({node.right, depth, 0, 0});
        } else {
          code[frame.jump].operand = static_cast<std::int64_t>(code.size());
          stack.pop_back();
        }
        continue;
      default:
        if (frame.stage == 0) {
          frame.stage = 1;
          stack.push_back({node.left, depth, 0, 0});
        } else if (frame.stage == 1) {
          frame.stage = 2;
          stack.push_back({node.right, depth + 1, 0, 0});
        } else {
          code.push_back({node.code, 0});
          stack.pop_back();
        }
        continue;
    }
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
  Tree tree;
  const NodeId root_id = Parser(text, scope, where, tree).parse();
  ExprEvalError::Kind error{};
  if (!fold(tree, root_id, error)) {
    throw InputError(where, ExprEvalError{error}.describe(quoted_text(text)));
  }
  const Node& root = tree.nodes[root_id];
  Expr expr;
  if (root.code == OpCode::kConst) {
    expr.kind_ = Kind::kConstant;
    expr.constant_ = root.value;
    expr.set_text(std::string(text));
    return expr;
  }
  Detail& detail = expr.detail();
  detail.text = std::string(text);
  if (root.code == OpCode::kSlot) {
    expr.kind_ = Kind::kSlot;
    expr.slot_ = static_cast<std::uint32_t>(root.value);
    detail.slots.push_back(expr.slot_);
    return expr;
  }
  expr.kind_ = Kind::kCode;
  emit(tree, root_id, detail.code, detail.slots, detail.stack_depth);
  std::sort(detail.slots.begin(), detail.slots.end());
  detail.slots.erase(std::unique(detail.slots.begin(), detail.slots.end()), detail.slots.end());
  constexpr std::uint32_t kMaxStack = 64;
  if (detail.stack_depth > kMaxStack) {
    throw InputError(where, "in expression '" + quoted_text(text) + "': nested too deeply");
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
