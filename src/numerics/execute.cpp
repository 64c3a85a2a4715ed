#include "numerics/execute.hpp"

#include <algorithm>
#include <array>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <cmath>
#include <cstring>
#include <latch>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <thread>
#include <vector>

namespace trnsim::numerics {

namespace {

using kernel::ActivationFunc;
using kernel::AluOp;
using kernel::Instruction;
using kernel::Opcode;
using kernel::ScalarKind;
using kernel::Slot;

/// A pattern's values by partition: rows = partitions (1 for HBM), each row its elements in
/// logical order.
struct Matrix {
  std::uint32_t rows = 0;
  std::uint64_t cols = 0;
  std::vector<double> values;  ///< row-major
  double at(std::uint64_t row, std::uint64_t col) const { return values[row * cols + col]; }
  double& at(std::uint64_t row, std::uint64_t col) { return values[row * cols + col]; }
};

std::uint32_t rows_of(const kernel::AccessPattern& pattern) {
  return pattern.on_chip() ? pattern.partitions : 1;
}

/// True when the pattern's logical order visits one partition's elements after another (HBM, or
/// the partition dimension first): its flat values are its matrix, row by row.
bool partition_outermost(const kernel::AccessPattern& pattern) {
  return !pattern.on_chip() || pattern.partition_axis == 0 || pattern.partitions == 1;
}

/// For each element of `pattern` in logical order, its index in the pattern's partition-major
/// matrix (row = partition, columns in logical order within the partition).
std::vector<std::size_t> matrix_positions(const kernel::AccessPattern& pattern) {
  const std::uint64_t cols = pattern.elements_per_partition();
  std::vector<std::size_t> position;
  position.reserve(pattern.elements());
  std::vector<std::uint64_t> next(rows_of(pattern), 0);
  const std::uint32_t first = pattern.on_chip() ? pattern.partition_start : 0;
  for_each_element(pattern, [&](const SpaceKey& key, std::uint64_t) {
    const std::uint32_t row = key.partition - first;
    position.push_back(static_cast<std::size_t>(row * cols + next[row]++));
  });
  return position;
}

/// Reads operands, remembering the first unwritten element and whether any value read is
/// not finite.
class Reader {
 public:
  Reader(const MemoryImage& image, ExecutionNotes& notes) : image_(image), notes_(notes) {}

  std::vector<double> flat(const Instruction& instruction, Slot slot) {
    std::vector<double> values;
    const auto unwritten = gather(image_, instruction.operand(slot), values);
    if (unwritten && !notes_.unwritten) {
      notes_.unwritten = unwritten;
      notes_.unwritten_slot = slot;
    }
    for (const double v : values) {
      if (!std::isfinite(v)) input_non_finite_ = true;
    }
    return values;
  }

  Matrix matrix(const Instruction& instruction, Slot slot) {
    const kernel::AccessPattern& pattern = instruction.operand(slot);
    std::vector<double> values = flat(instruction, slot);
    Matrix m;
    m.rows = rows_of(pattern);
    m.cols = pattern.elements_per_partition();
    if (partition_outermost(pattern)) {  // logical order is already partition-major
      m.values = std::move(values);
      return m;
    }
    m.values.resize(values.size());
    const std::vector<std::size_t> position = matrix_positions(pattern);
    for (std::size_t i = 0; i < values.size(); ++i) m.values[position[i]] = values[i];
    return m;
  }

  bool input_non_finite() const { return input_non_finite_; }

 private:
  const MemoryImage& image_;
  ExecutionNotes& notes_;
  bool input_non_finite_ = false;
};

/// Stores values in dst's logical order, noting the first non-finite one.
void store_flat(MemoryImage& image, const Instruction& instruction,
                const std::vector<double>& values, bool input_non_finite, ExecutionNotes& notes) {
  if (!input_non_finite) {
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (!std::isfinite(round_to(instruction.dst().dtype, values[i]))) {
        notes.first_non_finite = i;
        break;
      }
    }
  }
  scatter(image, instruction.dst(), values);
}

void store_matrix(MemoryImage& image, const Instruction& instruction, const Matrix& m,
                  bool input_non_finite, ExecutionNotes& notes) {
  const kernel::AccessPattern& dst = instruction.dst();
  if (partition_outermost(dst)) {
    store_flat(image, instruction, m.values, input_non_finite, notes);
    return;
  }
  std::vector<double> values(m.values.size());
  const std::vector<std::size_t> position = matrix_positions(dst);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = m.values[position[i]];
  store_flat(image, instruction, values, input_non_finite, notes);
}

float f32(double value) {
  return static_cast<float>(value);
}

bool is_bitwise(AluOp op) {
  switch (op) {
    case AluOp::kBitwiseAnd:
    case AluOp::kBitwiseOr:
    case AluOp::kBitwiseXor:
    case AluOp::kInvert:
    case AluOp::kLeftShift:
    case AluOp::kRightShift:
      return true;
    default:
      return false;
  }
}

/// a op b in float32 (comparisons and logical ops give 1 or 0; bitwise ops act on the values
/// as 32-bit integers).
double alu(AluOp op, double a_in, double b_in) {
  const float a = f32(a_in);
  const float b = f32(b_in);
  // Bitwise operands as integers: truncated, saturated to int64, NaN as 0 (never undefined).
  const auto as_integer = [](double v) -> std::int64_t {
    if (std::isnan(v)) return 0;
    if (v >= 9.2e18) return std::numeric_limits<std::int64_t>::max();
    if (v <= -9.2e18) return std::numeric_limits<std::int64_t>::min();
    return static_cast<std::int64_t>(v);
  };
  const std::int64_t ia = is_bitwise(op) ? as_integer(a_in) : 0;
  const std::int64_t ib = is_bitwise(op) ? as_integer(b_in) : 0;
  switch (op) {
    case AluOp::kNone:
    case AluOp::kBypass:
      return a;
    case AluOp::kAdd:
      return a + b;
    case AluOp::kSubtract:
      return a - b;
    case AluOp::kMultiply:
      return a * b;
    case AluOp::kDivide:
      return a / b;
    case AluOp::kMax:
      return std::fmax(a, b);
    case AluOp::kMin:
      return std::fmin(a, b);
    case AluOp::kPower:
      return f32(std::pow(a_in, b_in));
    case AluOp::kMod:
      return std::fmod(a, b);
    case AluOp::kAbsMax:
      return std::fmax(std::fabs(a), std::fabs(b));
    case AluOp::kAbsMin:
      return std::fmin(std::fabs(a), std::fabs(b));
    case AluOp::kAverage:
      return (a + b) / 2.0f;
    case AluOp::kBitwiseAnd:
      return static_cast<double>(static_cast<std::int32_t>(ia & ib));
    case AluOp::kBitwiseOr:
      return static_cast<double>(static_cast<std::int32_t>(ia | ib));
    case AluOp::kBitwiseXor:
      return static_cast<double>(static_cast<std::int32_t>(ia ^ ib));
    case AluOp::kInvert:
      return static_cast<double>(static_cast<std::int32_t>(~ia));
    case AluOp::kLeftShift:
      return static_cast<double>(
          static_cast<std::int32_t>(static_cast<std::uint32_t>(ia) << (ib & 31)));
    case AluOp::kRightShift:
      return static_cast<double>(static_cast<std::int32_t>(ia) >> (ib & 31));
    case AluOp::kLogicalAnd:
      return (a != 0 && b != 0) ? 1.0 : 0.0;
    case AluOp::kLogicalOr:
      return (a != 0 || b != 0) ? 1.0 : 0.0;
    case AluOp::kLogicalXor:
      return ((a != 0) != (b != 0)) ? 1.0 : 0.0;
    case AluOp::kEqual:
      return a == b ? 1.0 : 0.0;
    case AluOp::kNotEqual:
      return a != b ? 1.0 : 0.0;
    case AluOp::kGreater:
      return a > b ? 1.0 : 0.0;
    case AluOp::kGreaterEqual:
      return a >= b ? 1.0 : 0.0;
    case AluOp::kLess:
      return a < b ? 1.0 : 0.0;
    case AluOp::kLessEqual:
      return a <= b ? 1.0 : 0.0;
  }
  return a;
}

/// x op operand, or operand op x when `reverse` (tensor_scalar's reverse0/1).
double apply_op(AluOp op, bool reverse, double x, double operand) {
  return reverse ? alu(op, operand, x) : alu(op, x, operand);
}

double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}

double activation(ActivationFunc func, double x) {
  constexpr double kInvSqrt2 = 0.70710678118654752440;
  const double pdf = std::exp(-0.5 * x * x) / std::sqrt(2.0 * std::numbers::pi);
  const double cdf = 0.5 * (1.0 + std::erf(x * kInvSqrt2));
  switch (func) {
    case ActivationFunc::kCopy:
      return x;
    case ActivationFunc::kAbs:
      return std::fabs(x);
    case ActivationFunc::kArctan:
      return std::atan(x);
    case ActivationFunc::kErf:
      return std::erf(x);
    case ActivationFunc::kErfDx:
      return 2.0 / std::sqrt(std::numbers::pi) * std::exp(-x * x);
    case ActivationFunc::kExp:
      return std::exp(x);
    case ActivationFunc::kGelu:
      return x * cdf;
    case ActivationFunc::kGeluDx:
      return cdf + x * pdf;
    case ActivationFunc::kGeluApprxTanh:
      return 0.5 * x *
             (1.0 + std::tanh(std::sqrt(2.0 / std::numbers::pi) * (x + 0.044715 * x * x * x)));
    case ActivationFunc::kGeluApprxSigmoid:
      return x * sigmoid(1.702 * x);
    case ActivationFunc::kGeluApprxSigmoidDx: {
      const double s = sigmoid(1.702 * x);
      return s + 1.702 * x * s * (1.0 - s);
    }
    case ActivationFunc::kLog:
      return std::log(x);
    case ActivationFunc::kMish:
      return x * std::tanh(std::log1p(std::exp(x)));
    case ActivationFunc::kPrelu:
      break;
    case ActivationFunc::kReciprocal:
      return 1.0 / x;
    case ActivationFunc::kRelu:
      return x > 0 ? x : 0.0;
    case ActivationFunc::kRsqrt:
      return 1.0 / std::sqrt(x);
    case ActivationFunc::kSigmoid:
      return sigmoid(x);
    case ActivationFunc::kSign:
      return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0);
    case ActivationFunc::kSilu:
      return x * sigmoid(x);
    case ActivationFunc::kSiluDx: {
      const double s = sigmoid(x);
      return s * (1.0 + x * (1.0 - s));
    }
    case ActivationFunc::kSin:
      return std::sin(x);
    case ActivationFunc::kSoftplus:
      return std::log1p(std::exp(x));
    case ActivationFunc::kSqrt:
      return std::sqrt(x);
    case ActivationFunc::kSquare:
      return x * x;
    case ActivationFunc::kTanh:
      return std::tanh(x);
  }
  throw std::logic_error("internal error: activation function without semantics");
}

/// A scalar operand: a number, or per partition the [P, 1] tile's value.
struct Scalar {
  ScalarKind kind = ScalarKind::kNone;
  double value = 0;
  Matrix tile;
  double at(std::uint64_t row) const {
    return kind == ScalarKind::kTensor ? tile.at(row, 0) : value;
  }
};

Scalar scalar(Reader& reader, const Instruction& instruction, ScalarKind kind, double value,
              Slot slot, double absent) {
  Scalar s;
  s.kind = kind;
  s.value = kind == ScalarKind::kNone ? absent : value;
  if (kind == ScalarKind::kTensor) s.tile = reader.matrix(instruction, slot);
  return s;
}

void elementwise_copy(const Instruction& instruction, MemoryImage& image, ExecutionNotes& notes) {
  if (instruction.src().dtype == instruction.dst().dtype) {
    // No cast: every bit is kept (NaN payloads, packed MX containers); no new non-finite value.
    std::vector<std::uint8_t> bytes;
    const auto unwritten = gather_bytes(image, instruction.src(), bytes);
    if (unwritten) {
      notes.unwritten = unwritten;
      notes.unwritten_slot = Slot::kSrc;
    }
    scatter_bytes(image, instruction.dst(), bytes);
    return;
  }
  Reader reader(image, notes);
  std::vector<double> values = reader.flat(instruction, Slot::kSrc);
  store_flat(image, instruction, values, reader.input_non_finite(), notes);
}

void tensor_reduce(const Instruction& instruction, MemoryImage& image, ExecutionNotes& notes) {
  Reader reader(image, notes);
  const kernel::AccessPattern& src = instruction.src();
  const Matrix in = reader.matrix(instruction, Slot::kSrc);
  // Free shape of src (its pattern dimensions, outer first) and which of them are reduced.
  std::uint64_t kept = 1;
  for (std::uint8_t d = 0; d < src.rank; ++d) {
    if ((instruction.reduce_axes >> d & 1) == 0) kept *= src.sizes[d];
  }
  Matrix out;
  out.rows = in.rows;
  out.cols = kept;
  out.values.assign(static_cast<std::size_t>(in.rows) * kept, 0.0);
  std::vector<bool> started(out.values.size(), false);
  for (std::uint32_t row = 0; row < in.rows; ++row) {
    for (std::uint64_t col = 0; col < in.cols; ++col) {
      // Index of the kept dimensions of this element (row-major over the kept sizes).
      std::uint64_t rest = col;
      std::uint64_t target = 0;
      std::uint64_t weight = 1;
      for (int d = src.rank - 1; d >= 0; --d) {
        const std::uint64_t index = rest % src.sizes[d];
        rest /= src.sizes[d];
        if ((instruction.reduce_axes >> d & 1) == 0) {
          target += index * weight;
          weight *= src.sizes[d];
        }
      }
      const std::size_t slot = static_cast<std::size_t>(row) * kept + target;
      out.values[slot] = started[slot] ? alu(instruction.alu, out.values[slot], in.at(row, col))
                                       : f32(in.at(row, col));
      started[slot] = true;
    }
  }
  if (instruction.negate) {
    for (double& v : out.values) v = -v;
  }
  store_matrix(image, instruction, out, reader.input_non_finite(), notes);
}

/// row[n] += s * in[n] for n < count: each a float32 multiply, rounded, then an add, rounded
/// (no fused multiply-add: the build does not contract), so every clone gives the same bits.
/// Cloned for AVX2 where the CPU has it (8 lanes instead of SSE2's 4).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("avx2", "default")))
#endif
void multiply_add_row(float* __restrict row, float s, const float* __restrict in,
                      std::uint64_t count) {
  for (std::uint64_t n = 0; n < count; ++n) row[n] += s * in[n];
}

/// Multiply-accumulates from which a matmul's rows are shared between threads.
constexpr std::uint64_t kParallelWork = std::uint64_t{1} << 20;

/// Runs body(first, last) over [0, count) split into contiguous ranges, one per thread of a
/// pool of the machine's hardware threads (`threads` 0) or on the calling thread (`threads` 1),
/// and waits for all.
template <class Body>
void parallel_ranges(std::uint64_t count, unsigned threads, const Body& body) {
  static const unsigned available = std::max(1u, std::thread::hardware_concurrency());
  const unsigned parts = static_cast<unsigned>(
      std::min<std::uint64_t>(count, threads == 0 ? std::min(available, 16u) : threads));
  if (parts <= 1) {
    body(0, count);
    return;
  }
  static boost::asio::thread_pool pool(std::min(available, 16u) - 1);
  std::latch done(parts - 1);
  const auto range = [count, parts](unsigned part) {
    return std::pair{count * part / parts, count * (part + 1) / parts};
  };
  for (unsigned part = 1; part < parts; ++part) {
    boost::asio::post(pool, [&, part] {
      const auto [first, last] = range(part);
      body(first, last);
      done.count_down();
    });
  }
  const auto [first, last] = range(0);
  body(first, last);
  done.wait();
}

/// acc[M, N] += st[K, M]^T mv[K, N] (row-major float32): per output element the sum runs over
/// k ascending; n innermost over contiguous rows keeps that order and vectorises. Each output
/// row is one thread's: the same sums in the same order however many threads.
void accumulate_product(std::vector<float>& acc, const float* st, const float* mv,
                        std::uint64_t k_size, std::uint64_t m_size, std::uint64_t n_size) {
  const auto rows = [&](std::uint64_t first, std::uint64_t last) {
    for (std::uint64_t m = first; m < last; ++m) {
      float* row = acc.data() + m * n_size;
      for (std::uint64_t k = 0; k < k_size; ++k) {
        multiply_add_row(row, st[k * m_size + m], mv + k * n_size, n_size);
      }
    }
  };
  const std::uint64_t work = m_size * n_size * k_size;
  parallel_ranges(m_size, work >= kParallelWork ? 0 : 1, rows);
}

/// The values of a packed MX operand [Kp partitions, F] as a row-major float32 [4 Kp, F]
/// matrix: row 4 p + j holds packed value j of partition p, times 2^(e - 127) for the E8M0
/// exponent e of its scaling group (32 values along K: partitions 8 g .. 8 g + 7). Group g's
/// exponents are in partition 32 (g / 4) + g % 4 of the scale operand (4 partitions of each
/// 32-partition quadrant: the layout of hardware-facts.md §3.5); e = 255 is NaN.
std::vector<float> dequantize_mx(const MemoryImage& image, const Instruction& instruction,
                                 Slot slot, Slot scale_slot, ExecutionNotes& notes) {
  const kernel::AccessPattern& pattern = instruction.operand(slot);
  // Only the scale partitions of the groups are read (the others of each quadrant are unused).
  const kernel::AccessPattern& scale_pattern = instruction.operand(scale_slot);
  const std::uint64_t groups = (rows_of(pattern) + 7) / 8;
  std::vector<std::vector<double>> group_scales(groups);
  for (std::uint64_t g = 0; g < groups; ++g) {
    const std::uint32_t row = static_cast<std::uint32_t>(32 * (g / 4) + g % 4);
    if (row >= scale_pattern.partitions) break;
    kernel::AccessPattern one_row = scale_pattern;
    one_row.partition_start += row;
    one_row.partitions = 1;
    const auto unwritten = gather(image, one_row, group_scales[g]);
    if (unwritten && !notes.unwritten) {
      notes.unwritten = unwritten;
      notes.unwritten_slot = scale_slot;
    }
  }
  std::vector<std::uint8_t> bytes;
  const auto unwritten = gather_bytes(image, pattern, bytes);
  if (unwritten && !notes.unwritten) {
    notes.unwritten = unwritten;
    notes.unwritten_slot = slot;
  }
  const std::uint32_t container = kernel::dtype_bytes(pattern.dtype);
  const std::uint64_t partitions = rows_of(pattern);
  const std::uint64_t cols = pattern.elements_per_partition();
  // The containers by (partition, column), whatever the pattern's partition axis.
  std::vector<std::uint32_t> containers(partitions * cols);
  const std::vector<std::size_t> position = matrix_positions(pattern);
  for (std::size_t i = 0; i < position.size(); ++i) {
    std::uint32_t value = 0;
    std::memcpy(&value, bytes.data() + container * i, container);
    containers[position[i]] = value;
  }
  std::vector<float> values(4 * partitions * cols);
  for (std::uint64_t p = 0; p < partitions; ++p) {
    const std::vector<double>& exponents = group_scales[p / 8];
    for (std::uint64_t c = 0; c < cols; ++c) {
      const double exponent = c < exponents.size() ? exponents[c] : 127.0;
      const double scale =
          exponent == 255 ? NAN : std::ldexp(1.0, static_cast<int>(exponent) - 127);
      for (unsigned j = 0; j < 4; ++j) {
        values[(4 * p + j) * cols + c] =
            f32(mx_value(pattern.dtype, containers[p * cols + c], j) * scale);
      }
    }
  }
  return values;
}

/// A matmul's PSUM tile before it adds its products: what dst holds when it accumulates, else
/// zeros [M, N].
Matrix matmul_start(Reader& reader, const Instruction& instruction, std::uint64_t m_size,
                    std::uint64_t n_size) {
  if (instruction.accumulate) return reader.matrix(instruction, Slot::kDst);
  Matrix out;
  out.rows = static_cast<std::uint32_t>(m_size);
  out.cols = n_size;
  out.values.assign(out.rows * out.cols, 0.0);
  return out;
}

/// reduce_dst[p] = the `op` reduction of row p of `m` (the float32 results, before dst's
/// rounding), stored like dst.
void store_row_reduction(MemoryImage& image, const Instruction& instruction, const Matrix& m,
                         AluOp op, bool input_non_finite, ExecutionNotes& notes) {
  Matrix reduced;
  reduced.rows = m.rows;
  reduced.cols = 1;
  reduced.values.resize(m.rows);
  for (std::uint32_t row = 0; row < m.rows; ++row) {
    double acc = m.cols > 0 ? f32(m.at(row, 0)) : 0.0;
    for (std::uint64_t col = 1; col < m.cols; ++col) acc = alu(op, acc, m.at(row, col));
    reduced.at(row, 0) = acc;
  }
  Instruction reduce_store = instruction;
  reduce_store.operand(Slot::kDst) = instruction.operand(Slot::kReduceDst);
  ExecutionNotes reduce_notes;
  store_matrix(image, reduce_store, reduced, input_non_finite, reduce_notes);
  if (!notes.first_non_finite && reduce_notes.first_non_finite) {
    notes.first_non_finite = reduce_notes.first_non_finite;
  }
}

/// bn_stats: per partition (count, mean, mean-centred sum of squares) of the even-indexed and
/// of the odd-indexed elements.
void bn_stats(const Instruction& instruction, MemoryImage& image, ExecutionNotes& notes) {
  Reader reader(image, notes);
  const Matrix in = reader.matrix(instruction, Slot::kSrc);
  Matrix out;
  out.rows = in.rows;
  out.cols = 6;
  out.values.assign(static_cast<std::size_t>(in.rows) * 6, 0.0);
  for (std::uint32_t row = 0; row < in.rows; ++row) {
    for (std::uint64_t parity = 0; parity < 2; ++parity) {
      double count = 0;
      double sum = 0;
      for (std::uint64_t col = parity; col < in.cols; col += 2) {
        sum += f32(in.at(row, col));
        ++count;
      }
      const double mean = count > 0 ? sum / count : 0.0;
      double squares = 0;
      for (std::uint64_t col = parity; col < in.cols; col += 2) {
        const double d = f32(in.at(row, col)) - mean;
        squares += d * d;
      }
      out.at(row, 3 * parity) = count;
      out.at(row, 3 * parity + 1) = f32(mean);
      out.at(row, 3 * parity + 2) = f32(squares);
    }
  }
  store_matrix(image, instruction, out, reader.input_non_finite(), notes);
}

/// bn_aggr: combines the (count, mean, sum of squares) triples of each partition into its
/// (mean, variance), the variance over all counted elements (Chan et al.'s pairwise update).
void bn_aggr(const Instruction& instruction, MemoryImage& image, ExecutionNotes& notes) {
  Reader reader(image, notes);
  const Matrix in = reader.matrix(instruction, Slot::kSrc);
  Matrix out;
  out.rows = in.rows;
  out.cols = 2;
  out.values.assign(static_cast<std::size_t>(in.rows) * 2, 0.0);
  for (std::uint32_t row = 0; row < in.rows; ++row) {
    double count = 0;
    double mean = 0;
    double squares = 0;
    for (std::uint64_t triple = 0; triple + 2 < in.cols; triple += 3) {
      const double n = in.at(row, triple);
      if (n <= 0) continue;
      const double m = in.at(row, triple + 1);
      const double delta = m - mean;
      const double total = count + n;
      mean += delta * n / total;
      squares += in.at(row, triple + 2) + delta * delta * count * n / total;
      count = total;
    }
    out.at(row, 0) = f32(mean);
    out.at(row, 1) = f32(count > 0 ? squares / count : 0.0);
  }
  store_matrix(image, instruction, out, reader.input_non_finite(), notes);
}

/// Reduction across partitions: dst[f] = op over p of src[p, f] (average: the mean).
void partition_reduce(const Instruction& instruction, MemoryImage& image, ExecutionNotes& notes) {
  Reader reader(image, notes);
  const Matrix in = reader.matrix(instruction, Slot::kSrc);
  const bool average = instruction.alu == AluOp::kAverage;
  const AluOp op = average ? AluOp::kAdd : instruction.alu;
  std::vector<double> out(in.cols, 0.0);
  for (std::uint64_t col = 0; col < in.cols; ++col) {
    double acc = in.rows > 0 ? f32(in.at(0, col)) : 0.0;
    for (std::uint32_t row = 1; row < in.rows; ++row) acc = alu(op, acc, in.at(row, col));
    out[col] = average ? f32(acc) / static_cast<float>(in.rows) : acc;
  }
  store_flat(image, instruction, out, reader.input_non_finite(), notes);
}

/// dma_transpose: a 2-D src [A, B] (size-1 dimensions dropped) into dst [B, A].
void dma_transpose(const Instruction& instruction, MemoryImage& image, ExecutionNotes& notes) {
  Reader reader(image, notes);
  const std::vector<double> in = reader.flat(instruction, Slot::kSrc);
  std::array<std::uint64_t, kernel::kMaxPatternDims + 1> shape{};
  const std::uint8_t rank = instruction.src().logical_shape(shape);
  std::uint64_t rows = 1;
  for (std::uint8_t d = 0; d < rank; ++d) {
    if (shape[d] != 1) {
      rows = shape[d];
      break;
    }
  }
  const std::uint64_t cols = rows == 0 ? 0 : in.size() / rows;
  std::vector<double> out(in.size());
  for (std::uint64_t r = 0; r < rows; ++r) {
    for (std::uint64_t c = 0; c < cols; ++c) out[c * rows + r] = in[r * cols + c];
  }
  store_flat(image, instruction, out, reader.input_non_finite(), notes);
}

/// The pattern's value at every element of dst, as a matrix of dst's partitions.
Matrix pattern_matrix(const Instruction& instruction, const PatternFunction& pattern) {
  const kernel::AccessPattern& dst = instruction.dst();
  Matrix m;
  m.rows = rows_of(dst);
  m.cols = dst.elements_per_partition();
  m.values.resize(static_cast<std::size_t>(m.rows) * m.cols);
  std::uint64_t free[kernel::kMaxPatternDims] = {};
  for (std::uint32_t row = 0; row < m.rows; ++row) {
    for (std::uint64_t col = 0; col < m.cols; ++col) {
      std::uint64_t rest = col;
      for (int d = dst.rank - 1; d >= 0; --d) {
        free[d] = dst.sizes[d] == 0 ? 0 : rest % dst.sizes[d];
        rest = dst.sizes[d] == 0 ? 0 : rest / dst.sizes[d];
      }
      m.at(row, col) = static_cast<double>(pattern(row, col, free));
    }
  }
  return m;
}

bool compare(kernel::CompareOp op, double value) {
  switch (op) {
    case kernel::CompareOp::kEq:
      return value == 0;
    case kernel::CompareOp::kNe:
      return value != 0;
    case kernel::CompareOp::kGe:
      return value >= 0;
    case kernel::CompareOp::kGt:
      return value > 0;
    case kernel::CompareOp::kLe:
      return value <= 0;
    case kernel::CompareOp::kLt:
      return value < 0;
  }
  return false;
}

}  // namespace

std::optional<std::string> unsupported_reason(const Instruction& instruction) {
  const bool raw_copy =
      (instruction.opcode == Opcode::kDmaCopy || instruction.opcode == Opcode::kTensorCopy) &&
      instruction.src().dtype == instruction.dst().dtype;
  for (const kernel::AccessPattern& operand : instruction.operands) {
    if (instruction.opcode == Opcode::kNcMatmulMx || raw_copy) break;
    if (operand.used() && !is_supported(operand.dtype)) {
      return "element type " + std::string(kernel::dtype_name(operand.dtype));
    }
  }
  const std::string op(kernel::opcode_name(instruction.opcode));
  switch (instruction.opcode) {
    case Opcode::kDmaCopy:
    case Opcode::kDmaTranspose:
    case Opcode::kTensorCopy:
    case Opcode::kMemset:
    case Opcode::kTensorTensor:
    case Opcode::kTensorScalar:
    case Opcode::kScalarTensorTensor:
    case Opcode::kTensorTensorScan:
    case Opcode::kReciprocal:
    case Opcode::kNcTranspose:
    case Opcode::kTensorReduce:
    case Opcode::kTensorPartitionReduce:
    case Opcode::kBnStats:
    case Opcode::kBnAggr:
    case Opcode::kSelect:
    case Opcode::kExponential:
    case Opcode::kIota:
    case Opcode::kAffineSelect:
    case Opcode::kCoreBarrier:
    case Opcode::kAllReduce:
    case Opcode::kAllGather:
    case Opcode::kReduceScatter:
    case Opcode::kAllToAll:
    case Opcode::kSend:
    case Opcode::kRecv:
      return std::nullopt;
    case Opcode::kNcMatmulMx:
      for (const Slot scale : {Slot::kAux0, Slot::kAux1}) {
        if (instruction.operand(scale).dtype != kernel::DType::kUInt8) {
          return op + " with " + std::string(kernel::dtype_name(instruction.operand(scale).dtype)) +
                 " scales";
        }
      }
      return std::nullopt;
    case Opcode::kActivation:
      if (instruction.func == ActivationFunc::kPrelu) return "activation function prelu";
      return std::nullopt;
    case Opcode::kNcMatmul:
      if (instruction.is_transpose) return op + " with is_transpose";
      return std::nullopt;
    default:
      return op;
  }
}

std::vector<ExecutionNotes> execute_collective(std::span<const Instruction* const> members,
                                               MemoryImage& image) {
  const std::size_t n = members.size();
  std::vector<ExecutionNotes> notes(n);
  std::vector<std::vector<double>> inputs(n);
  bool input_non_finite = false;
  for (std::size_t i = 0; i < n; ++i) {
    Reader reader(image, notes[i]);
    inputs[i] = reader.flat(*members[i], Slot::kSrc);
    input_non_finite = input_non_finite || reader.input_non_finite();
  }
  const Instruction& first = *members.front();
  const AluOp op = first.alu == AluOp::kNone ? AluOp::kAdd : first.alu;
  const auto reduce_all = [&]() {
    std::vector<double> sum(inputs[0].begin(), inputs[0].end());
    for (double& v : sum) v = f32(v);
    for (std::size_t j = 1; j < n; ++j) {
      for (std::size_t e = 0; e < sum.size() && e < inputs[j].size(); ++e) {
        sum[e] = alu(op, sum[e], inputs[j][e]);
      }
    }
    return sum;
  };
  std::vector<std::vector<double>> outputs(n);
  switch (first.opcode) {
    case Opcode::kAllReduce: {
      const std::vector<double> sum = reduce_all();
      for (auto& out : outputs) out = sum;
      break;
    }
    case Opcode::kAllGather: {
      std::vector<double> all;
      for (const auto& in : inputs) all.insert(all.end(), in.begin(), in.end());
      for (auto& out : outputs) out = all;
      break;
    }
    case Opcode::kReduceScatter: {
      const std::vector<double> sum = reduce_all();
      const std::size_t chunk = sum.size() / n;
      for (std::size_t i = 0; i < n; ++i) {
        outputs[i].assign(sum.begin() + static_cast<std::ptrdiff_t>(i * chunk),
                          sum.begin() + static_cast<std::ptrdiff_t>((i + 1) * chunk));
      }
      break;
    }
    case Opcode::kAllToAll: {
      for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
          const std::size_t chunk = inputs[j].size() / n;
          outputs[i].insert(outputs[i].end(),
                            inputs[j].begin() + static_cast<std::ptrdiff_t>(i * chunk),
                            inputs[j].begin() + static_cast<std::ptrdiff_t>((i + 1) * chunk));
        }
      }
      break;
    }
    default:
      throw std::logic_error("internal error: execute_collective() of " +
                             std::string(kernel::opcode_name(first.opcode)));
  }
  for (std::size_t i = 0; i < n; ++i) {
    store_flat(image, *members[i], outputs[i], input_non_finite, notes[i]);
  }
  return notes;
}

ExecutionNotes execute_transfer(const Instruction& send, const Instruction& recv,
                                MemoryImage& image) {
  ExecutionNotes notes;
  Reader reader(image, notes);
  const std::vector<double> values = reader.flat(send, Slot::kSrc);
  store_flat(image, recv, values, reader.input_non_finite(), notes);
  return notes;
}

ExecutionNotes execute(const Instruction& instruction, MemoryImage& image,
                       const PatternFunction& pattern) {
  ExecutionNotes notes;
  switch (instruction.opcode) {
    case Opcode::kIota:
    case Opcode::kAffineSelect: {
      if (!pattern) {
        throw std::logic_error("internal error: execute() of " +
                               std::string(kernel::opcode_name(instruction.opcode)) +
                               " without its pattern");
      }
      Reader reader(image, notes);
      Matrix m = pattern_matrix(instruction, pattern);
      if (instruction.opcode == Opcode::kAffineSelect) {
        const Matrix src = reader.matrix(instruction, Slot::kSrc);
        for (std::size_t i = 0; i < m.values.size(); ++i) {
          m.values[i] =
              compare(instruction.cmp, m.values[i]) ? src.values[i] : instruction.fill_value;
        }
      }
      store_matrix(image, instruction, m, reader.input_non_finite(), notes);
      return notes;
    }
    case Opcode::kDmaCopy:
    case Opcode::kTensorCopy:
      elementwise_copy(instruction, image, notes);
      return notes;
    case Opcode::kDmaTranspose:
      dma_transpose(instruction, image, notes);
      return notes;
    case Opcode::kMemset: {
      const std::vector<double> values(instruction.dst().elements(), instruction.fill_value);
      store_flat(image, instruction, values, !std::isfinite(instruction.fill_value), notes);
      return notes;
    }
    case Opcode::kTensorTensor: {
      Reader reader(image, notes);
      std::vector<double> a = reader.flat(instruction, Slot::kSrc);
      const std::vector<double> b = reader.flat(instruction, Slot::kIn1);
      for (std::size_t i = 0; i < a.size(); ++i) a[i] = alu(instruction.alu, a[i], b[i]);
      store_flat(image, instruction, a, reader.input_non_finite(), notes);
      return notes;
    }
    case Opcode::kTensorScalar: {
      Reader reader(image, notes);
      Matrix m = reader.matrix(instruction, Slot::kSrc);
      const Scalar a0 = scalar(reader, instruction, instruction.operand0_kind,
                               instruction.operand0_value, Slot::kAux0, 0.0);
      const Scalar a1 = scalar(reader, instruction, instruction.operand1_kind,
                               instruction.operand1_value, Slot::kAux1, 0.0);
      for (std::uint32_t row = 0; row < m.rows; ++row) {
        for (std::uint64_t col = 0; col < m.cols; ++col) {
          double v = apply_op(instruction.op0, instruction.reverse0, m.at(row, col), a0.at(row));
          if (instruction.op1 != AluOp::kNone) {
            v = apply_op(instruction.op1, instruction.reverse1, v, a1.at(row));
          }
          m.at(row, col) = v;
        }
      }
      store_matrix(image, instruction, m, reader.input_non_finite(), notes);
      if (instruction.operand(Slot::kReduceDst).used()) {
        store_row_reduction(image, instruction, m, instruction.alu, reader.input_non_finite(),
                            notes);
      }
      return notes;
    }
    case Opcode::kScalarTensorTensor: {
      Reader reader(image, notes);
      Matrix m = reader.matrix(instruction, Slot::kSrc);
      const Matrix in1 = reader.matrix(instruction, Slot::kIn1);
      const Scalar a0 = scalar(reader, instruction, instruction.operand0_kind,
                               instruction.operand0_value, Slot::kAux0, 0.0);
      for (std::uint32_t row = 0; row < m.rows; ++row) {
        for (std::uint64_t col = 0; col < m.cols; ++col) {
          const double v =
              apply_op(instruction.op0, instruction.reverse0, m.at(row, col), a0.at(row));
          m.at(row, col) = apply_op(instruction.op1, instruction.reverse1, v, in1.at(row, col));
        }
      }
      store_matrix(image, instruction, m, reader.input_non_finite(), notes);
      return notes;
    }
    case Opcode::kTensorTensorScan: {
      Reader reader(image, notes);
      Matrix m = reader.matrix(instruction, Slot::kSrc);
      const Matrix in1 = reader.matrix(instruction, Slot::kIn1);
      const Scalar initial = scalar(reader, instruction, instruction.operand0_kind,
                                    instruction.operand0_value, Slot::kAux0, 0.0);
      for (std::uint32_t row = 0; row < m.rows; ++row) {
        double carry = f32(initial.at(row));
        for (std::uint64_t col = 0; col < m.cols; ++col) {
          carry =
              alu(instruction.op1, alu(instruction.op0, m.at(row, col), carry), in1.at(row, col));
          m.at(row, col) = carry;
        }
      }
      store_matrix(image, instruction, m, reader.input_non_finite(), notes);
      return notes;
    }
    case Opcode::kSelect: {
      Reader reader(image, notes);
      Matrix pred = reader.matrix(instruction, Slot::kSrc);
      const bool true_tensor = instruction.operand0_kind == ScalarKind::kTensor;
      const bool false_tensor = instruction.operand1_kind == ScalarKind::kTensor;
      const Matrix on_true = true_tensor ? reader.matrix(instruction, Slot::kIn1) : Matrix{};
      const Matrix on_false = false_tensor ? reader.matrix(instruction, Slot::kAux0) : Matrix{};
      for (std::uint32_t row = 0; row < pred.rows; ++row) {
        for (std::uint64_t col = 0; col < pred.cols; ++col) {
          const bool take = pred.at(row, col) != 0;
          pred.at(row, col) =
              take ? (true_tensor ? on_true.at(row, col) : instruction.operand0_value)
                   : (false_tensor ? on_false.at(row, col) : instruction.operand1_value);
        }
      }
      store_matrix(image, instruction, pred, reader.input_non_finite(), notes);
      return notes;
    }
    case Opcode::kExponential: {
      Reader reader(image, notes);
      Matrix m = reader.matrix(instruction, Slot::kSrc);
      const Scalar max = scalar(reader, instruction, instruction.operand0_kind,
                                instruction.operand0_value, Slot::kAux0, 0.0);
      for (std::uint32_t row = 0; row < m.rows; ++row) {
        for (std::uint64_t col = 0; col < m.cols; ++col) {
          m.at(row, col) =
              f32(std::exp(static_cast<double>(f32(m.at(row, col)) - f32(max.at(row)))));
        }
      }
      store_matrix(image, instruction, m, reader.input_non_finite(), notes);
      if (instruction.operand(Slot::kReduceDst).used()) {
        store_row_reduction(image, instruction, m, AluOp::kAdd, reader.input_non_finite(), notes);
      }
      return notes;
    }
    case Opcode::kBnStats:
      bn_stats(instruction, image, notes);
      return notes;
    case Opcode::kBnAggr:
      bn_aggr(instruction, image, notes);
      return notes;
    case Opcode::kTensorPartitionReduce:
      partition_reduce(instruction, image, notes);
      return notes;
    case Opcode::kActivation: {
      Reader reader(image, notes);
      Matrix m = reader.matrix(instruction, Slot::kSrc);
      const Scalar scale = scalar(reader, instruction, instruction.scale_kind,
                                  instruction.scale_value, Slot::kAux1, 1.0);
      const Scalar bias = scalar(reader, instruction, instruction.bias_kind, instruction.bias_value,
                                 Slot::kAux0, 0.0);
      for (std::uint32_t row = 0; row < m.rows; ++row) {
        for (std::uint64_t col = 0; col < m.cols; ++col) {
          const float x = f32(m.at(row, col)) * f32(scale.at(row)) + f32(bias.at(row));
          m.at(row, col) = f32(activation(instruction.func, x));
        }
      }
      store_matrix(image, instruction, m, reader.input_non_finite(), notes);
      if (instruction.operand(Slot::kReduceDst).used()) {
        store_row_reduction(image, instruction, m, AluOp::kAdd, reader.input_non_finite(), notes);
      }
      return notes;
    }
    case Opcode::kReciprocal: {
      Reader reader(image, notes);
      std::vector<double> values = reader.flat(instruction, Slot::kSrc);
      for (double& v : values) v = 1.0f / f32(v);
      store_flat(image, instruction, values, reader.input_non_finite(), notes);
      return notes;
    }
    case Opcode::kNcTranspose: {
      Reader reader(image, notes);
      const Matrix in = reader.matrix(instruction, Slot::kSrc);
      Matrix out;
      out.rows = static_cast<std::uint32_t>(in.cols);
      out.cols = in.rows;
      out.values.resize(in.values.size());
      for (std::uint32_t row = 0; row < in.rows; ++row) {
        for (std::uint64_t col = 0; col < in.cols; ++col) out.at(col, row) = in.at(row, col);
      }
      store_matrix(image, instruction, out, reader.input_non_finite(), notes);
      return notes;
    }
    case Opcode::kNcMatmul: {
      Reader reader(image, notes);
      const Matrix stationary = reader.matrix(instruction, Slot::kStationary);  // [K, M]
      const Matrix moving = reader.matrix(instruction, Slot::kSrc);             // [K, N]
      // double_row: [K/2 partitions, 2 rows, M] and [K/2, 2, N]: each partition holds two
      // rows of the contraction dimension.
      const std::uint64_t rows_per_partition = instruction.double_row ? 2 : 1;
      const std::uint64_t m_size = stationary.cols / rows_per_partition;
      const std::uint64_t n_size = moving.cols / rows_per_partition;
      Matrix out = matmul_start(reader, instruction, m_size, n_size);
      // [K, M] and [K, N] row-major with K = partitions x rows_per_partition.
      const std::vector<float> st(stationary.values.begin(), stationary.values.end());
      const std::vector<float> mv(moving.values.begin(), moving.values.end());
      std::vector<float> acc(out.values.begin(), out.values.end());
      accumulate_product(acc, st.data(), mv.data(), stationary.rows * rows_per_partition, m_size,
                         n_size);
      std::copy(acc.begin(), acc.end(), out.values.begin());
      store_matrix(image, instruction, out, reader.input_non_finite(), notes);
      return notes;
    }
    case Opcode::kNcMatmulMx: {
      Reader reader(image, notes);
      const std::vector<float> st =
          dequantize_mx(image, instruction, Slot::kStationary, Slot::kAux0, notes);
      const std::vector<float> mv =
          dequantize_mx(image, instruction, Slot::kSrc, Slot::kAux1, notes);
      const std::uint64_t k_size =
          4 * std::uint64_t{instruction.operand(Slot::kStationary).partitions};
      const std::uint64_t m_size = instruction.operand(Slot::kStationary).elements_per_partition();
      const std::uint64_t n_size = instruction.src().elements_per_partition();
      Matrix out = matmul_start(reader, instruction, m_size, n_size);
      std::vector<float> acc(out.values.begin(), out.values.end());
      accumulate_product(acc, st.data(), mv.data(), k_size, m_size, n_size);
      std::copy(acc.begin(), acc.end(), out.values.begin());
      store_matrix(image, instruction, out, reader.input_non_finite(), notes);
      return notes;
    }
    case Opcode::kTensorReduce:
      tensor_reduce(instruction, image, notes);
      return notes;
    case Opcode::kCoreBarrier:  // orders cores; no values
      return notes;
    default:
      throw std::logic_error("internal error: execute() of " +
                             std::string(kernel::opcode_name(instruction.opcode)) +
                             ", which has no functional model");
  }
}

}  // namespace trnsim::numerics
