#include "kernel/expr.hpp"

#include <gtest/gtest.h>

#include <array>
#include <optional>
#include <vector>

#include "util/error.hpp"

namespace trnsim::kernel {
namespace {

// Environment: slot 0 = x, slot 1 = n, slot 2 = K.
class ExprTest : public ::testing::Test {
 protected:
  ExprTest() {
    scope_.add("x", 0);
    scope_.add("n", 1);
    scope_.add("K", 2);
  }
  std::int64_t eval(const std::string& text) {
    return Expr::compile(text, scope_, "here").eval(env_.data());
  }
  std::string compile_error(const std::string& text) {
    try {
      Expr::compile(text, scope_, "here");
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  }
  Scope scope_;
  std::array<std::int64_t, 3> env_{5, 0, 512};
};

TEST_F(ExprTest, FloorDivisionAndModuloFollowPython) {
  // Python: -7 // 2 == -4, -7 % 2 == 1, 7 // -2 == -4, 7 % -2 == -1, -7 // -2 == 3, -7 % -2 == -1
  EXPECT_EQ(eval("-7 // 2"), -4);
  EXPECT_EQ(eval("-7 % 2"), 1);
  EXPECT_EQ(eval("7 // -2"), -4);
  EXPECT_EQ(eval("7 % -2"), -1);
  EXPECT_EQ(eval("-7 // -2"), 3);
  EXPECT_EQ(eval("-7 % -2"), -1);
  EXPECT_EQ(eval("6 // 3"), 2);
  // With a slot, not folded at compile time: x = 5 -> -5 // 2 == -3, -5 % 3 == 1.
  EXPECT_EQ(eval("-x // 2"), -3);
  EXPECT_EQ(eval("(0 - x) % 3"), 1);
  EXPECT_EQ(floor_div(-1, 4), -1);
  EXPECT_EQ(floor_mod(-1, 4), 3);
}

TEST_F(ExprTest, MinMaxAndPrecedence) {
  EXPECT_EQ(eval("min(3, -5)"), -5);
  EXPECT_EQ(eval("max(3, -5)"), 3);
  EXPECT_EQ(eval("max(x, K // 128)"), 5);    // max(5, 4)
  EXPECT_EQ(eval("min(x * 2, 9) + 1"), 10);  // min(10, 9) + 1
  EXPECT_EQ(eval("2 + 3 * 4"), 14);
  EXPECT_EQ(eval("(2 + 3) * 4"), 20);
  EXPECT_EQ(eval("10 - 4 - 3"), 3);    // left to right: (10 - 4) - 3
  EXPECT_EQ(eval("20 // 3 // 2"), 3);  // (20 // 3) // 2 = 6 // 2
  EXPECT_EQ(eval("2 * 3 % 4"), 2);     // (2 * 3) % 4
  EXPECT_EQ(eval("-2 * 3"), -6);
  EXPECT_EQ(eval("--x"), 5);
  EXPECT_EQ(eval("x * (K // 128) - 1"), 19);  // 5 * 4 - 1
}

TEST_F(ExprTest, ComparisonsAndLogic) {
  EXPECT_EQ(eval("3 < 5"), 1);
  EXPECT_EQ(eval("x >= 6"), 0);
  EXPECT_EQ(eval("x == 5"), 1);
  EXPECT_EQ(eval("x != 5"), 0);
  EXPECT_EQ(eval("1 < x <= 5"), 1);  // chained: 1 < 5 and 5 <= 5
  EXPECT_EQ(eval("3 > x > 2"), 0);   // 3 > 5 is false
  // and/or return an operand, as in Python.
  EXPECT_EQ(eval("3 and x"), 5);
  EXPECT_EQ(eval("0 and x"), 0);
  EXPECT_EQ(eval("n or 7"), 7);
  EXPECT_EQ(eval("x or 7"), 5);
  EXPECT_EQ(eval("not n"), 1);
  EXPECT_EQ(eval("not x"), 0);
  EXPECT_EQ(eval("not x < 3"), 1);          // not (5 < 3)
  EXPECT_EQ(eval("1 + 1 == 2 and x"), 5);   // (2 == 2) and 5
  EXPECT_EQ(eval("n == 0 or 10 // n"), 1);  // short-circuit: 10 // 0 never evaluated
  EXPECT_EQ(eval("n > 0 and 10 // n"), 0);  // short-circuit
  EXPECT_EQ(eval("True + False"), 1);
}

TEST_F(ExprTest, ConstantsFoldAndSlotsAreRecorded) {
  const Expr constant = Expr::compile("4 * 128 + 1", scope_, "here");
  EXPECT_TRUE(constant.is_constant());
  EXPECT_EQ(constant.constant_value(), 513);
  const Expr slot = Expr::compile("K", scope_, "here");
  EXPECT_FALSE(slot.is_constant());
  EXPECT_EQ(slot.slots(), (std::vector<std::uint32_t>{2}));
  const Expr both = Expr::compile("x * K + x", scope_, "here");
  EXPECT_EQ(both.slots(), (std::vector<std::uint32_t>{0, 2}));
  EXPECT_EQ(both.text(), "x * K + x");
}

TEST_F(ExprTest, ErrorsAreLocatedAndHelpful) {
  EXPECT_EQ(compile_error("K / 2"),
            "here: in expression 'K / 2': '/' is not supported (expressions are integers); use "
            "'//' for floor division at column 3");
  EXPECT_EQ(compile_error("Kk + 1"),
            "here: in expression 'Kk + 1': unknown name 'Kk'; did you mean 'K'?");
  EXPECT_EQ(compile_error("10 // (3 - 3)"), "here: division by zero in expression '10 // (3 - 3)'");
  EXPECT_EQ(compile_error("(x + 1"), "here: in expression '(x + 1': expected ')' at column 7");
  EXPECT_EQ(compile_error("x + 1)"), "here: in expression 'x + 1)': unbalanced ')' at column 6");
  EXPECT_EQ(compile_error("x ** 2"),
            "here: in expression 'x ** 2': '**' is not supported at column 5");
  EXPECT_EQ(compile_error("1.5 * x"),
            "here: in expression '1.5 * x': only integers are allowed at column 2");
  EXPECT_EQ(compile_error("abs(x)"),
            "here: in expression 'abs(x)': unknown function 'abs' (only min and max exist) at "
            "column 1");
  EXPECT_EQ(compile_error("min(x)"),
            "here: in expression 'min(x)': 'min' takes two arguments: expected ',' at column 6");
  EXPECT_EQ(compile_error(""),
            "here: in expression '': expected a number, a name or '(' at column 1");
}

TEST_F(ExprTest, RuntimeDivisionByZeroThrowsEvalError) {
  const Expr expr = Expr::compile("64 // n", scope_, "here");
  try {
    expr.eval(env_.data());
    FAIL() << "expected ExprEvalError";
  } catch (const ExprEvalError& e) {
    EXPECT_EQ(e.describe(expr.text()), "division by zero in expression '64 // n'");
  }
  env_[1] = 16;
  EXPECT_EQ(expr.eval(env_.data()), 4);
}

// bind(): x (slot 0) stays a variable; n and K (slots 1, 2) take their values 16 and 512.
TEST_F(ExprTest, BindSpecialisesToAffineForms) {
  env_[1] = 16;
  const auto known = [](std::uint32_t slot) { return slot != 0; };
  auto bound = [&](const std::string& text) {
    return Expr::compile(text, scope_, "here").bind(env_.data(), known);
  };
  std::array<std::int64_t, 3> other{3, -1, -1};  // x = 3; n and K must not be read any more
  EXPECT_TRUE(bound("K // 128").is_constant());
  EXPECT_EQ(bound("K // 128").constant_value(), 4);
  EXPECT_EQ(bound("x * K").eval(other.data()), 3 * 512);
  EXPECT_EQ(bound("(x + 1) * n - x").eval(other.data()), 4 * 16 - 3);  // 15 x + 16
  EXPECT_EQ(bound("x").eval(other.data()), 3);
  // Not affine in x: interpreted, still correct (with n and K from the original environment).
  env_[0] = 3;
  EXPECT_EQ(bound("x % 2").eval(env_.data()), 1);
  EXPECT_EQ(bound("x * x").eval(env_.data()), 9);
  EXPECT_EQ(bound("n > 0 and K // n").eval(env_.data()), 32);
  EXPECT_EQ(bound("x * K").text(), "x * K");
  // An error in the known part is left for evaluation to report.
  EXPECT_THROW(bound("10 // (K - 512) + x").eval(env_.data()), ExprEvalError);
}

// An affine form combined with a constant by one last operator (x % 2, (x + n) // 4, x > 0) is
// evaluated without the interpreter; values must equal the interpreter's, Python semantics for
// negative operands included (floor division and modulo round towards minus infinity).
TEST_F(ExprTest, BoundAffineWithOneOperatorMatchesTheInterpreter) {
  env_[1] = 16;
  const auto known = [](std::uint32_t slot) { return slot != 0; };
  const char* texts[] = {"x % 2", "(x + n) // 4", "x > 0", "x * 3 - K <= -500", "-x % 3",
                         "min(x, 7)", "max(2 * x, n)", "x == 5", "x != 5", "x // -4", "x % -3",
                         "x < n and x",
                         // one variable and one operator that cannot fail: the shortest path
                         "x // 4", "x % 3", "x < 2", "x <= 2", "x >= 2", "max(x, 1)", "x // 1"};
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  std::vector<std::int64_t> xs{kMin, kMin + 1, kMax - 1, kMax};
  for (std::int64_t x = -9; x <= 9; ++x) xs.push_back(x);
  for (const char* text : texts) {
    const Expr compiled = Expr::compile(text, scope_, "here");
    const Expr bound = compiled.bind(env_.data(), known);
    for (const std::int64_t x : xs) {
      env_[0] = x;
      std::optional<std::int64_t> expected;
      try {
        expected = compiled.eval(env_.data());
      } catch (const ExprEvalError&) {
      }
      if (expected) {
        EXPECT_EQ(bound.eval(env_.data()), *expected) << text << " at x = " << x;
      } else {
        EXPECT_THROW(bound.eval(env_.data()), ExprEvalError) << text << " at x = " << x;
      }
    }
  }
  // Hand-worked values, Python semantics: -7 % 2 == 1, (-7 + 16) // 4 == 2, -7 // -4 == 1.
  env_[0] = -7;
  const auto bound = [&](const char* text) {
    return Expr::compile(text, scope_, "here").bind(env_.data(), known).eval(env_.data());
  };
  EXPECT_EQ(bound("x % 2"), 1);
  EXPECT_EQ(bound("(x + n) // 4"), 2);
  EXPECT_EQ(bound("x // -4"), 1);
  EXPECT_EQ(bound("x > 0"), 0);
  // Overflow in the affine part is still an evaluation error.
  env_[0] = std::numeric_limits<std::int64_t>::max();
  EXPECT_THROW(bound("(x + 1) % 2"), ExprEvalError);
}

TEST_F(ExprTest, OverflowIsAnError) {
  env_[0] = std::numeric_limits<std::int64_t>::max();
  const Expr expr = Expr::compile("x + 1", scope_, "here");
  EXPECT_THROW(expr.eval(env_.data()), ExprEvalError);
}

}  // namespace
}  // namespace trnsim::kernel
