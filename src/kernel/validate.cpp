#include "kernel/validate.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "kernel/opcodes.hpp"
#include "util/error.hpp"
#include "util/strings.hpp"

namespace trnsim::kernel {
namespace {

std::string dtype_list(const std::vector<DType>& dtypes) {
  std::vector<std::string> names;
  for (DType d : dtypes) names.emplace_back(dtype_name(d));
  return util::join(names, ", ");
}

// A logical shape without its size-1 dimensions (spec section 4: how operands "match").
struct Squeezed {
  std::uint8_t rank = 0;
  std::array<std::uint64_t, kMaxPatternDims + 1> dims{};
  void push(std::uint64_t size) {
    if (size != 1) dims[rank++] = size;
  }
  bool operator==(const Squeezed& o) const {
    if (rank != o.rank) return false;
    for (std::uint8_t d = 0; d < rank; ++d) {
      if (dims[d] != o.dims[d]) return false;
    }
    return true;
  }
};

Squeezed squeezed_shape(const AccessPattern& pattern) {
  std::array<std::uint64_t, kMaxPatternDims + 1> shape{};
  const std::uint8_t rank = pattern.logical_shape(shape);
  Squeezed out;
  for (std::uint8_t d = 0; d < rank; ++d) out.push(shape[d]);
  return out;
}

// Context for the messages of one statement or one dynamic instruction.
class Checker {
 public:
  Checker(const PreparedKernel& kernel, std::uint32_t statement, const SourceRef* source)
      : program_(*kernel.program),
        target_(kernel.target),
        statement_(statement),
        source_(source),
        spec_(program_.instructions[program_.statements[statement].instruction]) {}

  [[noreturn]] void fail(const std::string& message, const std::string& suffix = "") const {
    throw InputError(source_ != nullptr ? program_.location(*source_, suffix)
                                        : program_.location(statement_, suffix),
                     message);
  }
  const InstructionSpec& spec() const { return spec_; }
  const Target& target() const { return target_; }
  /// "in1 'b_sb[t % 2]'"
  std::string describe(Slot slot) const {
    return std::string(operand_key(spec_.opcode, slot)) + " '" +
           program_.operand(spec_, slot).text + "'";
  }
  std::string suffix(Slot slot) const { return "/" + std::string(operand_key(spec_.opcode, slot)); }
  MemoryKind memory(Slot slot) const {
    return program_.tensors[program_.operand(spec_, slot).tensor].memory;
  }
  DType dtype(Slot slot) const {
    return program_.tensors[program_.operand(spec_, slot).tensor].dtype;
  }
  bool present(Slot slot) const { return spec_.has(slot); }
  std::string generation_note() const {
    return "the target '" + target_.name + "' is " + target_.nc_name();
  }
  /// A feature the configuration switches: `available` is its flag, `key` the config key.
  void need_feature(bool available, int version, const std::string& what,
                    const std::string& key) const {
    if (!available) {
      fail("op-generation: " + what + " needs NeuronCore-v" + std::to_string(version) +
           " or later; " + generation_note() + " (" + key + " = false)");
    }
  }
  void need_generation(int version, const std::string& what) const {
    if (target_.nc_version < version) {
      fail("op-generation: " + what + " needs NeuronCore-v" + std::to_string(version) +
           " or later; " + generation_note());
    }
  }

 private:
  const Program& program_;
  const Target& target_;
  std::uint32_t statement_;
  const SourceRef* source_;
  const InstructionSpec& spec_;
};

const std::vector<DType>& matmul_input_dtypes(int nc_version) {
  static const std::vector<DType> base{DType::kFloat8E4M3, DType::kFloat8E5M2, DType::kBFloat16,
                                       DType::kFloat16,    DType::kTFloat32,   DType::kFloat32};
  static const std::vector<DType> v4{DType::kFloat8E4M3, DType::kFloat8E5M2, DType::kFloat8E4M3Fn,
                                     DType::kBFloat16,   DType::kFloat16,    DType::kTFloat32,
                                     DType::kFloat32};
  return nc_version >= 4 ? v4 : base;
}

bool is_fp32_like(DType d) {
  return d == DType::kFloat32 || d == DType::kTFloat32;
}

void check_matmul_dtypes(const Checker& c) {
  const Target& t = c.target();
  const std::string gen = t.nc_name();
  if (c.spec().opcode == Opcode::kNcMatmulMx) {
    const std::vector<DType> data{DType::kFloat8E5M2X4, DType::kFloat8E4M3FnX4,
                                  DType::kFloat4E2M1FnX4};
    for (Slot slot : {Slot::kStationary, Slot::kSrc}) {
      if (std::find(data.begin(), data.end(), c.dtype(slot)) == data.end()) {
        c.fail("matmul-dtype: " + c.describe(slot) + " is " +
                   std::string(dtype_name(c.dtype(slot))) +
                   "; nc_matmul_mx takes packed MX types (" + dtype_list(data) + ")",
               c.suffix(slot));
      }
    }
    for (Slot slot : {Slot::kAux0, Slot::kAux1}) {
      const DType d = c.dtype(slot);
      if (d != DType::kUInt8 && d != DType::kFloat8E8M0Fnu) {
        c.fail("matmul-dtype: " + c.describe(slot) + " is " + std::string(dtype_name(d)) +
                   "; MX scales are uint8 or float8_e8m0fnu",
               c.suffix(slot));
      }
    }
    const DType dst = c.dtype(Slot::kDst);
    if (dst != DType::kFloat32 && (dst != DType::kBFloat16 || !t.bf16_dst_supported)) {
      c.fail("matmul-dtype: " + c.describe(Slot::kDst) + " is " + std::string(dtype_name(dst)) +
                 ", but " + gen + " matmuls write " +
                 (t.bf16_dst_supported ? "float32 or bfloat16" : "float32"),
             "/dst");
    }
    return;
  }
  const auto& allowed = matmul_input_dtypes(t.nc_version);
  for (Slot slot : {Slot::kStationary, Slot::kSrc}) {
    const DType d = c.dtype(slot);
    if (std::find(allowed.begin(), allowed.end(), d) == allowed.end()) {
      c.fail("matmul-dtype: " + c.describe(slot) + " is " + std::string(dtype_name(d)) +
                 ", not a Tensor Engine input type on " + gen +
                 " (allowed: " + dtype_list(allowed) + ")",
             c.suffix(slot));
    }
  }
  const DType s = c.dtype(Slot::kStationary);
  const DType m = c.dtype(Slot::kSrc);
  if (is_fp32_like(s) != is_fp32_like(m)) {
    c.fail("matmul-dtype: stationary is " + std::string(dtype_name(s)) + " but moving is " +
           std::string(dtype_name(m)) +
           "; when one input is float32 or tfloat32 the other must be too");
  }
  const auto legacy_e4m3 = [](DType d) { return d == DType::kFloat8E4M3; };
  if ((legacy_e4m3(s) && m == DType::kFloat8E4M3Fn) ||
      (legacy_e4m3(m) && s == DType::kFloat8E4M3Fn)) {
    c.fail("matmul-dtype: float8_e4m3 and float8_e4m3fn cannot be mixed in one matmul");
  }
  if (c.spec().double_row && (!dtype_is_fp8(s) || !dtype_is_fp8(m))) {
    c.fail("matmul-dtype: perf_mode double_row needs float8 inputs, found stationary " +
           std::string(dtype_name(s)) + " and moving " + std::string(dtype_name(m)));
  }
}

}  // namespace

std::string format_shape(const AccessPattern& pattern) {
  std::array<std::uint64_t, kMaxPatternDims + 1> shape{};
  const std::uint8_t rank = pattern.logical_shape(shape);
  std::string out = "[";
  for (std::uint8_t d = 0; d < rank; ++d) {
    if (d > 0) out += ", ";
    out += std::to_string(shape[d]);
  }
  return out + "]";
}

std::uint32_t check_core_index(std::int64_t value, std::uint32_t cores, const std::string& where) {
  if (value < 0 || value >= static_cast<std::int64_t>(cores)) {
    throw InputError(where, "core-group: core " + std::to_string(value) +
                                " does not exist; the kernel runs on " + std::to_string(cores) +
                                " core(s), 0-" + std::to_string(cores - 1));
  }
  return static_cast<std::uint32_t>(value);
}

void check_core_group(const std::vector<std::uint32_t>& group, const std::string& where) {
  for (std::size_t i = 0; i < group.size(); ++i) {
    for (std::size_t j = i + 1; j < group.size(); ++j) {
      if (group[i] == group[j]) {
        throw InputError(where,
                         "core-group: core " + std::to_string(group[i]) + " is listed twice");
      }
    }
  }
}

void validate_statement(const PreparedKernel& kernel, std::uint32_t statement) {
  const Checker c(kernel, statement, nullptr);
  const InstructionSpec& spec = c.spec();
  const Target& t = kernel.target;
  const std::string op(opcode_name(spec.opcode));

  // op-generation
  if (spec.opcode == Opcode::kNcMatmulMx) {
    c.need_feature(t.mx_supported, 4, "nc_matmul_mx", "tensor.mx_supported");
  }
  if (spec.opcode == Opcode::kExponential) c.need_generation(4, "exponential");
  if (spec.opcode == Opcode::kTensorCopy && spec.engine == Engine::kScalar) {
    c.need_generation(3, "tensor_copy on the scalar engine");
  }
  if (spec.opcode == Opcode::kTensorScalar && spec.engine == Engine::kScalar) {
    c.need_generation(4, "tensor_scalar on the scalar engine");
  }
  if (spec.double_row) {
    c.need_feature(t.double_row_supported, 3, "perf_mode double_row",
                   "tensor.double_row_supported");
  }
  if (spec.dge == DgeMode::kHwdge) c.need_generation(3, "dge hwdge");

  // engine-memory
  const std::string engine(engine_name(spec.engine));
  for (std::size_t i = 0; i < kSlotCount; ++i) {
    const Slot slot = static_cast<Slot>(i);
    if (!c.present(slot)) continue;
    const MemoryKind memory = c.memory(slot);
    const std::string found = c.describe(slot) + " is in " + std::string(memory_kind_name(memory));
    const bool written = slot == Slot::kDst || slot == Slot::kReduceDst;
    switch (spec.engine) {
      case Engine::kTensor:
        if (written && memory != MemoryKind::kPsum) {
          c.fail("engine-memory: " + found + ", but the tensor engine writes only psum",
                 c.suffix(slot));
        }
        if (!written && memory != MemoryKind::kSbuf) {
          c.fail("engine-memory: " + found + ", but the tensor engine reads only sbuf",
                 c.suffix(slot));
        }
        break;
      case Engine::kVector:
      case Engine::kScalar:
        if (memory == MemoryKind::kHbm) {
          c.fail("engine-memory: " + found + ", but the " + engine +
                     " engine reads and writes only sbuf and psum (move it with dma_copy)",
                 c.suffix(slot));
        }
        break;
      case Engine::kGpSimd:
        if (memory != MemoryKind::kSbuf) {
          c.fail("engine-memory: " + found + ", but the gpsimd engine reads and writes only sbuf",
                 c.suffix(slot));
        }
        break;
      case Engine::kDma:
        if (!written && memory == MemoryKind::kPsum && t.nc_version <= 2) {
          c.fail("engine-memory: " + found + ", but " + t.nc_name() + " DMA cannot read psum",
                 c.suffix(slot));
        }
        break;
      case Engine::kCollective:
        if (is_collective(spec.opcode) && memory != MemoryKind::kHbm) {
          c.fail("engine-memory: " + found + ", but collectives read and write only hbm",
                 c.suffix(slot));
        }
        if (!is_collective(spec.opcode) && memory == MemoryKind::kPsum) {
          c.fail("engine-memory: " + found + ", but " + op + " transfers only hbm or sbuf",
                 c.suffix(slot));
        }
        break;
      case Engine::kSync:
        break;
    }
  }

  // dtypes decided by declarations
  if (is_matmul(spec.opcode)) {
    check_matmul_dtypes(c);
  }
  if (spec.opcode == Opcode::kDmaTranspose) {
    const DType src = c.dtype(Slot::kSrc);
    if (dtype_bytes(src) != 2 || dtype_is_packed_mx(src)) {
      c.fail(
          "dma-dtype: dma_transpose moves 2-byte dtypes, found src " + std::string(dtype_name(src)),
          "/src");
    }
    if (c.dtype(Slot::kDst) != src) {
      c.fail("dma-dtype: dma_transpose does not cast: dst is " +
                 std::string(dtype_name(c.dtype(Slot::kDst))) + " but src is " +
                 std::string(dtype_name(src)),
             "/dst");
    }
  }
  if (spec.opcode == Opcode::kDmaCopy) {
    const DType src = c.dtype(Slot::kSrc);
    const DType dst = c.dtype(Slot::kDst);
    if ((dtype_is_packed_mx(src) || dtype_is_packed_mx(dst)) && src != dst) {
      c.fail("dma-dtype: DMA cannot cast packed MX types: src is " + std::string(dtype_name(src)) +
             ", dst is " + std::string(dtype_name(dst)));
    }
  }
}

namespace {

/// Compute engines reach partitions in 32-partition quadrants (hardware-facts.md §7): an access of
/// n partitions starts at a multiple of the smallest power of two >= max(n, 32). On 128 partitions:
/// more than 64 at 0, 33-64 at 0 or 64, at most 32 at 0, 32, 64 or 96; a larger PE array (more
/// partitions) has more such starts.
void check_partition_start(const Checker& c, Slot slot, const AccessPattern& p) {
  constexpr std::uint32_t kQuadrant = 32;
  const std::uint32_t n = p.partitions;
  const std::uint32_t s = p.partition_start;
  std::uint32_t block = kQuadrant;
  while (block < n) block *= 2;
  if (s % block == 0) return;
  const std::uint32_t partitions = c.target().partitions;
  const std::string sizes = block == kQuadrant ? "at most " + std::to_string(kQuadrant)
                            : block >= partitions
                                ? "more than " + std::to_string(block / 2)
                                : std::to_string(block / 2 + 1) + "-" + std::to_string(block);
  std::vector<std::string> starts;
  for (std::uint32_t start = 0; start == 0 || start < partitions; start += block) {
    starts.push_back(std::to_string(start));
  }
  std::string start_list = starts.back();
  if (starts.size() > 1) {
    starts.pop_back();
    start_list = util::join(starts, ", ") + " or " + start_list;
  }
  c.fail("partition-start: " + c.describe(slot) + " starts at partition " + std::to_string(s) +
             " with " + std::to_string(n) + " partitions; an access of " + sizes +
             " partitions must start at partition " + start_list,
         c.suffix(slot));
}

void check_match(const Checker& c, const Instruction& inst, Slot a, Slot b) {
  const AccessPattern& pa = inst.operand(a);
  const AccessPattern& pb = inst.operand(b);
  if (!pa.used() || !pb.used()) return;
  if (!(squeezed_shape(pa) == squeezed_shape(pb))) {
    c.fail("shape-mismatch: " + c.describe(a) + " has shape " + format_shape(pa) + " but " +
               c.describe(b) + " has shape " + format_shape(pb),
           c.suffix(a));
  }
  if (engine_info(inst.engine).compute && pa.on_chip() && pb.on_chip() &&
      pa.partitions != pb.partitions) {
    c.fail("shape-mismatch: " + c.describe(a) + " spans " + std::to_string(pa.partitions) +
               (pa.partitions == 1 ? " partition but " : " partitions but ") + c.describe(b) +
               " spans " + std::to_string(pb.partitions) +
               "; compute engines map partitions one to one",
           c.suffix(a));
  }
}

void check_column(const Checker& c, const Instruction& inst, Slot slot, std::uint32_t partitions) {
  const AccessPattern& p = inst.operand(slot);
  if (!p.used()) return;
  if (p.partitions != partitions || p.elements_per_partition() != 1) {
    c.fail("shape-mismatch: " + c.describe(slot) +
               " must be [P, 1] with P = " + std::to_string(partitions) +
               " (the partitions of the input), found " + format_shape(p),
           c.suffix(slot));
  }
}

void check_psum_bank(const Checker& c, const Instruction& inst) {
  const Target& t = c.target();
  const AccessPattern& dst = inst.dst();
  const Region region = dst.region();
  const std::uint64_t begin = region.byte_begin;
  const std::uint64_t end = region.byte_end();
  const std::uint64_t first = begin / t.psum_bank_bytes;
  const std::uint64_t last = (end - 1) / t.psum_bank_bytes;
  if (first == last) return;
  if (t.nc_version >= 4 && begin % t.psum_bank_bytes == 0) return;
  c.fail(
      "psum-bank: " + c.describe(Slot::kDst) + " covers bytes " + std::to_string(begin) + "-" +
          std::to_string(end - 1) + " of each partition, crossing from PSUM bank " +
          std::to_string(first) + " into bank " + std::to_string(first + 1) + " (banks of " +
          std::to_string(t.psum_bank_bytes) + " bytes)" +
          (t.nc_version >= 4 ? "; a dst spanning several banks must start at a bank boundary" : ""),
      "/dst");
}

void check_matmul(const Checker& c, const Instruction& inst) {
  const Target& t = c.target();
  const AccessPattern& st = inst.operand(Slot::kStationary);
  const AccessPattern& mv = inst.operand(Slot::kSrc);
  const AccessPattern& dst = inst.dst();
  if (inst.is_transpose) c.need_generation(3, "is_transpose");
  if (st.partitions != mv.partitions) {
    c.fail("shape-mismatch: " + c.describe(Slot::kStationary) + " has " +
           std::to_string(st.partitions) + " partitions (the contraction K) but " +
           c.describe(Slot::kSrc) + " has " + std::to_string(mv.partitions));
  }
  std::uint64_t pair = 1;
  if (inst.double_row) {
    pair = 2;
    if (st.rank < 2 || st.sizes[0] != 2 || mv.rank < 2 || mv.sizes[0] != 2) {
      c.fail(
          "tile-limit: perf_mode double_row needs stationary [K, 2, M] and moving [K, 2, N], "
          "found stationary " +
          format_shape(st) + " and moving " + format_shape(mv));
    }
  }
  const std::uint64_t m = st.elements_per_partition() / pair;
  const std::uint64_t n = mv.elements_per_partition() / pair;
  if (m > t.gemm_stationary_fmax) {
    c.fail("tile-limit: stationary free size M = " + std::to_string(m) +
               " exceeds gemm_stationary_fmax = " + std::to_string(t.gemm_stationary_fmax) +
               " (Tensor Engine columns)",
           "/stationary");
  }
  const bool bf16_dst = dst.dtype == DType::kBFloat16 && t.bf16_dst_supported;
  const std::uint64_t n_limit = bf16_dst ? t.moving_fmax_bf16_dst : t.moving_fmax_fp32_dst;
  if (n > n_limit) {
    c.fail("tile-limit: moving free size N = " + std::to_string(n) + " exceeds the limit of " +
               std::to_string(n_limit) + " for a " + std::string(dtype_name(dst.dtype)) +
               " dst on " + t.nc_name(),
           "/moving");
  }
  if (inst.opcode == Opcode::kNcMatmulMx) {
    if (st.partitions % 32 != 0) {
      c.fail("tile-limit: nc_matmul_mx needs a multiple of 32 partitions, found " +
             std::to_string(st.partitions));
    }
    if (m % 2 != 0) {
      c.fail("tile-limit: nc_matmul_mx needs an even stationary free size, found M = " +
             std::to_string(m));
    }
  }
  if (dst.partitions != m || dst.elements_per_partition() != n) {
    c.fail("shape-mismatch: " + c.describe(Slot::kDst) + " is [" + std::to_string(dst.partitions) +
               " partitions x " + std::to_string(dst.elements_per_partition()) +
               "] but stationary.T @ moving is [M = " + std::to_string(m) +
               " partitions x N = " + std::to_string(n) + "]",
           "/dst");
  }
  if (inst.opcode == Opcode::kNcMatmul) {
    const DType d = dst.dtype;
    if (inst.is_transpose) {
      if (d != DType::kFloat32 && dtype_bytes(d) != 2) {
        c.fail("matmul-dtype: a transposing matmul writes float32 or a 2-byte type, found " +
                   c.describe(Slot::kDst) + " " + std::string(dtype_name(d)),
               "/dst");
      }
    } else if (d != DType::kFloat32 && (d != DType::kBFloat16 || !t.bf16_dst_supported)) {
      c.fail("matmul-dtype: " + c.describe(Slot::kDst) + " is " + std::string(dtype_name(d)) +
                 ", but " + t.nc_name() + " matmuls write " +
                 (t.bf16_dst_supported ? "float32 or bfloat16" : "float32"),
             "/dst");
    }
  }
  check_psum_bank(c, inst);
}

void check_transpose(const Checker& c, const Instruction& inst) {
  const Target& t = c.target();
  const AccessPattern& src = inst.src();
  const AccessPattern& dst = inst.dst();
  const bool tensor = inst.engine == Engine::kTensor;
  const std::uint64_t limit = tensor ? t.tensor_transpose_max : t.vector_transpose_max;
  const std::uint64_t p = src.partitions;
  const std::uint64_t f = src.elements_per_partition();
  if (p > limit || f > limit) {
    c.fail("tile-limit: nc_transpose on the " + std::string(engine_name(inst.engine)) +
               " engine handles at most [" + std::to_string(limit) + ", " + std::to_string(limit) +
               "], found src [" + std::to_string(p) + ", " + std::to_string(f) + "]",
           "/src");
  }
  if (dst.partitions != f || dst.elements_per_partition() != p) {
    c.fail("shape-mismatch: nc_transpose of src [" + std::to_string(p) + ", " + std::to_string(f) +
               "] needs dst [" + std::to_string(f) + ", " + std::to_string(p) + "], found " +
               c.describe(Slot::kDst) + " [" + std::to_string(dst.partitions) + ", " +
               std::to_string(dst.elements_per_partition()) + "]",
           "/dst");
  }
  if (tensor) check_psum_bank(c, inst);
}

void check_reduce(const Checker& c, const Instruction& inst) {
  const AccessPattern& src = inst.src();
  std::array<std::uint64_t, kMaxPatternDims + 1> shape{};
  const std::uint8_t rank = src.logical_shape(shape);
  std::array<std::uint64_t, kMaxPatternDims + 1> expected{};
  std::size_t expected_rank = 0;
  std::uint8_t free_index = 0;
  for (std::uint8_t d = 0; d < rank; ++d) {
    const bool is_partition = src.on_chip() && d == src.partition_axis;
    const bool reduced = !is_partition && (inst.reduce_axes >> free_index & 1u) != 0;
    if (!is_partition) ++free_index;
    if (reduced) {
      if (inst.keepdims) expected[expected_rank++] = 1;
      continue;
    }
    expected[expected_rank++] = shape[d];
  }
  Squeezed squeezed;
  for (std::size_t i = 0; i < expected_rank; ++i) squeezed.push(expected[i]);
  if (!(squeezed_shape(inst.dst()) == squeezed)) {
    std::string text = "[";
    for (std::size_t i = 0; i < expected_rank; ++i) {
      text += (i > 0 ? ", " : "") + std::to_string(expected[i]);
    }
    c.fail("shape-mismatch: reducing " + c.describe(Slot::kSrc) + " of shape " + format_shape(src) +
               " gives " + text + "], but " + c.describe(Slot::kDst) + " has shape " +
               format_shape(inst.dst()),
           "/dst");
  }
}

}  // namespace

void validate_instruction(const PreparedKernel& kernel, const Instruction& inst,
                          std::span<const std::uint32_t> group) {
  const Checker c(kernel, inst.source.statement, &inst.source);
  const Target& t = kernel.target;
  const bool compute = engine_info(inst.engine).compute;

  if (compute) {
    for (std::size_t i = 0; i < kSlotCount; ++i) {
      const AccessPattern& p = inst.operands[i];
      if (!p.used() || !p.on_chip()) continue;
      check_partition_start(c, static_cast<Slot>(i), p);
      if (inst.engine != Engine::kTensor) {
        const bool psum = p.memory == MemoryKind::kPsum;
        const std::uint64_t limit = psum ? t.engine_free_max_psum : t.engine_free_max_sbuf;
        if (p.elements_per_partition() > limit) {
          c.fail("tile-limit: " + c.describe(static_cast<Slot>(i)) + " has " +
                     std::to_string(p.elements_per_partition()) + " elements per partition in " +
                     (psum ? "psum" : "sbuf") + "; the " + std::string(engine_name(inst.engine)) +
                     " engine accesses at most " + std::to_string(limit) + " per partition there",
                 c.suffix(static_cast<Slot>(i)));
        }
      }
    }
  }

  const std::uint32_t partitions = inst.src().used() ? inst.src().partitions : 0;
  switch (inst.opcode) {
    case Opcode::kDmaCopy:
      check_match(c, inst, Slot::kDst, Slot::kSrc);
      break;
    case Opcode::kDmaTranspose: {
      const Squeezed src = squeezed_shape(inst.src());
      Squeezed dst = squeezed_shape(inst.dst());
      std::reverse(dst.dims.begin(), dst.dims.begin() + dst.rank);
      if (src.rank != 2 || !(dst == src)) {
        c.fail("shape-mismatch: dma_transpose needs a 2-D src [A, B] and dst [B, A], found src " +
               format_shape(inst.src()) + " and dst " + format_shape(inst.dst()));
      }
      break;
    }
    case Opcode::kNcMatmul:
    case Opcode::kNcMatmulMx:
      check_matmul(c, inst);
      break;
    case Opcode::kNcTranspose:
      check_transpose(c, inst);
      break;
    case Opcode::kActivation:
      check_match(c, inst, Slot::kDst, Slot::kSrc);
      check_column(c, inst, Slot::kAux0, partitions);
      check_column(c, inst, Slot::kAux1, partitions);
      check_column(c, inst, Slot::kReduceDst, partitions);
      break;
    case Opcode::kTensorTensor:
    case Opcode::kScalarTensorTensor:
    case Opcode::kTensorTensorScan:
      check_match(c, inst, Slot::kSrc, Slot::kDst);
      check_match(c, inst, Slot::kIn1, Slot::kDst);
      check_column(c, inst, Slot::kAux0, partitions);
      break;
    case Opcode::kTensorScalar:
      check_match(c, inst, Slot::kDst, Slot::kSrc);
      check_column(c, inst, Slot::kAux0, partitions);
      check_column(c, inst, Slot::kAux1, partitions);
      check_column(c, inst, Slot::kReduceDst, partitions);
      break;
    case Opcode::kTensorReduce:
      check_reduce(c, inst);
      break;
    case Opcode::kTensorPartitionReduce: {
      Squeezed free;
      for (std::uint8_t d = 0; d < inst.src().rank; ++d) free.push(inst.src().sizes[d]);
      if (!(squeezed_shape(inst.dst()) == free)) {
        c.fail("shape-mismatch: reducing " + c.describe(Slot::kSrc) + " of shape " +
                   format_shape(inst.src()) + " across partitions gives its free shape, but " +
                   c.describe(Slot::kDst) + " has shape " + format_shape(inst.dst()),
               "/dst");
      }
      break;
    }
    case Opcode::kTensorCopy:
    case Opcode::kReciprocal:
    case Opcode::kAffineSelect:
      check_match(c, inst, Slot::kDst, Slot::kSrc);
      break;
    case Opcode::kExponential:
      check_match(c, inst, Slot::kDst, Slot::kSrc);
      check_column(c, inst, Slot::kAux0, partitions);
      check_column(c, inst, Slot::kReduceDst, partitions);
      break;
    case Opcode::kBnStats:
    case Opcode::kBnAggr: {
      const bool stats = inst.opcode == Opcode::kBnStats;
      if (stats && inst.src().elements_per_partition() > t.bn_stats_fmax) {
        c.fail("tile-limit: bn_stats takes at most " + std::to_string(t.bn_stats_fmax) +
                   " elements per partition, found " + c.describe(Slot::kSrc) + " with " +
                   std::to_string(inst.src().elements_per_partition()),
               "/src");
      }
      const std::uint64_t outputs = stats ? 6 : 2;
      if (inst.dst().partitions != partitions || inst.dst().elements_per_partition() != outputs) {
        c.fail("shape-mismatch: " + std::string(opcode_name(inst.opcode)) + " writes [P, " +
                   std::to_string(outputs) + "] with P = " + std::to_string(partitions) +
                   ", found " + c.describe(Slot::kDst) + " " + format_shape(inst.dst()),
               "/dst");
      }
      break;
    }
    case Opcode::kSelect:
      check_match(c, inst, Slot::kDst, Slot::kSrc);
      check_match(c, inst, Slot::kIn1, Slot::kSrc);
      check_match(c, inst, Slot::kAux0, Slot::kSrc);
      break;
    case Opcode::kCoreBarrier:
    case Opcode::kAllReduce:
    case Opcode::kAllGather:
    case Opcode::kReduceScatter:
    case Opcode::kAllToAll: {
      const char* key = inst.opcode == Opcode::kCoreBarrier ? "/cores" : "/group";
      if (!group.empty() && std::find(group.begin(), group.end(), inst.pid) == group.end()) {
        std::string list;
        for (auto core : group) list += (list.empty() ? "" : ", ") + std::to_string(core);
        c.fail("core-group: core " + std::to_string(inst.pid) + " executes " +
                   std::string(opcode_name(inst.opcode)) + " but is not in its group [" + list +
                   "]",
               key);
      }
      if (inst.opcode == Opcode::kCoreBarrier) break;
      const std::uint64_t n = group.empty() ? kernel.cores : group.size();
      const std::uint64_t src = inst.src().elements();
      const std::uint64_t dst = inst.dst().elements();
      std::uint64_t expected = src;
      if (inst.opcode == Opcode::kAllGather) expected = src * n;
      if (inst.opcode == Opcode::kReduceScatter) {
        if (src % n != 0) {
          c.fail("shape-mismatch: reduce_scatter over " + std::to_string(n) +
                     " cores needs src elements divisible by " + std::to_string(n) + ", found " +
                     std::to_string(src),
                 "/src");
        }
        expected = src / n;
      }
      if (dst != expected) {
        c.fail("shape-mismatch: " + std::string(opcode_name(inst.opcode)) + " over " +
                   std::to_string(n) + " cores of src with " + std::to_string(src) +
                   " elements needs dst with " + std::to_string(expected) + " elements, found " +
                   std::to_string(dst),
               "/dst");
      }
      break;
    }
    case Opcode::kMemset:
    case Opcode::kIota:
    case Opcode::kSend:
    case Opcode::kRecv:
      break;
  }
}

}  // namespace trnsim::kernel
