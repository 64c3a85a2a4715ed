// The stream's reuse paths (memo of recurring signatures, address shift of HBM operands) must
// yield exactly the instructions a full build yields, and the same errors at the same places;
// instructions sharing a content key must share their content, and instructions sharing a family
// key all of it but their addresses and DMA queue.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "test_support.hpp"

namespace trnsim::kernel {
namespace {
using namespace testing;

/// Every field of an instruction that a consumer reads, as one comparable vector.
std::vector<double> fields(const Instruction& in) {
  std::vector<double> out;
  const auto add = [&out](auto value) { out.push_back(static_cast<double>(value)); };
  add(static_cast<int>(in.opcode));
  add(static_cast<int>(in.engine));
  add(in.pid);
  add(in.sequence);
  add(in.source.statement);
  add(in.source.depth);
  for (std::uint8_t d = 0; d < in.source.depth; ++d) add(in.source.loop_values[d]);
  for (const AccessPattern& p : in.operands) {
    add(p.tensor);
    if (!p.used()) continue;
    add(static_cast<int>(p.memory));
    add(static_cast<int>(p.dtype));
    add(p.rank);
    add(p.partition_axis);
    add(p.space);
    add(p.partition_start);
    add(p.partitions);
    add(p.offset);
    for (std::uint8_t d = 0; d < p.rank; ++d) {
      add(p.sizes[d]);
      add(p.strides[d]);
    }
  }
  const auto add_region = [&](const Region& r) {
    add(static_cast<int>(r.memory));
    add(r.space);
    add(r.partition_begin);
    add(r.partition_end);
    add(r.byte_begin);
    add(r.run_bytes);
    add(r.stride_bytes);
    add(r.count);
  };
  add(in.num_reads);
  add(in.num_writes);
  for (std::uint8_t i = 0; i < in.num_reads; ++i) add_region(in.reads[i]);
  for (std::uint8_t i = 0; i < in.num_writes; ++i) add_region(in.writes[i]);
  add(in.elements_per_partition);
  add(in.partitions);
  add(in.flops);
  add(in.bytes_read);
  add(in.bytes_written);
  add(in.hbm_bytes);
  for (auto e :
       {static_cast<int>(in.alu), static_cast<int>(in.op0), static_cast<int>(in.op1),
        static_cast<int>(in.func), static_cast<int>(in.cmp), static_cast<int>(in.scale_kind),
        static_cast<int>(in.bias_kind), static_cast<int>(in.operand0_kind),
        static_cast<int>(in.operand1_kind), static_cast<int>(in.dma_trigger),
        static_cast<int>(in.dge), static_cast<int>(in.algorithm)}) {
    add(e);
  }
  for (bool b : {in.accumulate, in.double_row, in.is_transpose, in.reverse0, in.reverse1, in.negate,
                 in.keepdims}) {
    add(b);
  }
  add(in.reduce_axes);
  add(in.dma_queue);
  add(in.scale_value);
  add(in.bias_value);
  add(in.operand0_value);
  add(in.operand1_value);
  add(in.fill_value);
  add(in.core_group);
  add(in.peer);
  return out;
}

/// A digest of fields() but `sequence` and `source`: what instructions with one content key
/// share (Instruction::content_key).
std::uint64_t content_digest(Instruction in) {
  in.sequence = 0;
  in.source = SourceRef{};
  std::uint64_t digest = 0x9E3779B97F4A7C15ull;
  for (const double value : fields(in)) {
    digest = (digest ^ std::hash<double>{}(value)) * 0xFF51AFD7ED558CCDull;
  }
  return digest;
}

/// A digest of fields() but what the members of a family may change (Instruction::family_key):
/// sequence, source, operand offsets, regions and DMA queue.
std::uint64_t family_digest(Instruction in) {
  for (AccessPattern& pattern : in.operands) pattern.offset = 0;
  in.num_reads = 0;
  in.num_writes = 0;
  in.dma_queue = 0;
  return content_digest(in);
}

/// Instructions with equal nonzero content keys must have equal content, and those with equal
/// nonzero family keys equal content apart from their addresses and DMA queue.
class ContentKeyCheck {
 public:
  void check(const Instruction& in, const std::string& what, std::uint64_t n) {
    if (in.family_key != 0) {
      const auto [it, inserted] = families_.emplace(in.family_key, family_digest(in));
      if (!inserted) {
        EXPECT_EQ(it->second, family_digest(in))
            << what << ": instruction " << n << " shares family key " << in.family_key
            << " with an instruction that differs in more than addresses and DMA queue";
        if (in.content_key == 0) ++shifted_members_;
      }
    }
    if (in.content_key == 0) return;
    const std::uint64_t digest = content_digest(in);
    const auto [it, inserted] = digests_.emplace(in.content_key, digest);
    if (inserted) return;
    ++recurring_;
    EXPECT_EQ(it->second, digest) << what << ": instruction " << n << " shares content key "
                                  << in.content_key << " with a different instruction";
  }
  std::uint64_t recurring() const { return recurring_; }
  /// Instructions without a content key that joined an earlier one's family (address shifts).
  std::uint64_t shifted_members() const { return shifted_members_; }

 private:
  std::unordered_map<std::uint64_t, std::uint64_t> digests_;
  std::unordered_map<std::uint64_t, std::uint64_t> families_;
  std::uint64_t recurring_ = 0;
  std::uint64_t shifted_members_ = 0;
};

/// Walks core `pid` with and without reuse in lockstep (at most `limit` instructions) and
/// expects identical instructions and the same error, if any; checks the reusing stream's
/// content keys in `keys` when given. Returns the instructions compared.
std::uint64_t expect_same_stream(const PreparedKernel& kernel, std::uint32_t pid,
                                 std::uint64_t limit, const std::string& what,
                                 ContentKeyCheck* keys = nullptr) {
  InstructionStream reused(kernel, pid);
  InstructionStream built(kernel, pid);
  built.set_reuse(false);
  Instruction a;
  Instruction b;
  std::uint64_t n = 0;
  for (; n < limit; ++n) {
    std::optional<bool> more_a;
    std::optional<bool> more_b;
    std::string error_a;
    std::string error_b;
    try {
      more_a = reused.next(a);
    } catch (const InputError& e) {
      error_a = e.what();
    }
    try {
      more_b = built.next(b);
    } catch (const InputError& e) {
      error_b = e.what();
    }
    EXPECT_EQ(error_a, error_b) << what << " instruction " << n;
    EXPECT_EQ(more_a, more_b) << what << " instruction " << n;
    if (!more_a || !*more_a || !more_b || !*more_b) break;
    if (fields(a) != fields(b)) {
      ADD_FAILURE() << what << ": instruction " << n << " differs with reuse";
      break;
    }
    // Queue entries are copied with assign_compact(), which relies on it.
    if (!is_compact(a) || !is_compact(b)) {
      ADD_FAILURE() << what << ": instruction " << n << " is not in compact form";
      break;
    }
    if (keys != nullptr) keys->check(a, what, n);
  }
  return n;
}

TEST(StreamReuse, EveryExampleKernelGivesTheFullBuildsInstructions) {
  const std::string dir = std::string(TRNSIM_SOURCE_DIR) + "/examples/kernels";
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".json") paths.push_back(entry.path().string());
  }
  std::sort(paths.begin(), paths.end());
  ASSERT_GE(paths.size(), 20u);
  std::uint64_t compared = 0;
  std::uint64_t recurring_keys = 0;
  std::uint64_t shifted_members = 0;
  for (const std::string& path : paths) {
    for (const Target& target : std::vector<Target>{trn2_target(), trn3_target()}) {
      std::optional<PreparedKernel> kernel;
      try {
        kernel = prepare_kernel(std::make_shared<const Program>(parse_program_file(path)), target);
      } catch (const InputError&) {
        continue;  // not for this generation
      }
      ContentKeyCheck keys;  // per stream: keys are unique within one stream only
      compared += expect_same_stream(*kernel, 0, 300'000, path, &keys);
      recurring_keys += keys.recurring();
      shifted_members += keys.shifted_members();
      if (kernel->cores > 1)
        compared += expect_same_stream(*kernel, kernel->cores - 1, 20'000, path);
    }
  }
  EXPECT_GT(compared, 100'000u);
  EXPECT_GT(recurring_keys, compared / 10);    // the keys do recur: memoising by them pays
  EXPECT_GT(shifted_members, compared / 100);  // and shifted instructions join families
}

TEST(StreamReuse, AssignCompactEqualsAssignment) {
  // Instructions of every example kernel, each written over each other (a queue entry holds
  // the previous instruction when the next is copied in): the result is the source.
  const std::string dir = std::string(TRNSIM_SOURCE_DIR) + "/examples/kernels";
  std::vector<Instruction> sample;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    try {
      const PreparedKernel kernel =
          prepare_kernel(std::make_shared<const Program>(parse_program_file(entry.path().string())),
                         trn3_target());
      InstructionStream stream(kernel, 0);
      Instruction next;
      for (int i = 0; i < 40 && stream.next(next); ++i) {
        if (i % 8 == 0) sample.push_back(next);
      }
    } catch (const InputError&) {
      continue;  // not for this generation
    }
  }
  ASSERT_GE(sample.size(), 40u);
  for (const Instruction& from : sample) {
    for (const Instruction& previous : sample) {
      Instruction to = previous;
      assign_compact(to, from);
      ASSERT_EQ(fields(to), fields(from));
      ASSERT_TRUE(is_compact(to));
    }
  }
  // is_compact() sees stale state past the used parts.
  const auto one_write = std::find_if(sample.begin(), sample.end(),
                                      [](const Instruction& in) { return in.num_writes == 1; });
  ASSERT_NE(one_write, sample.end());
  Instruction stale = *one_write;
  stale.writes[1].byte_begin = 64;
  EXPECT_FALSE(is_compact(stale));
  stale = *one_write;
  for (AccessPattern& pattern : stale.operands) {
    if (!pattern.used()) pattern.offset = 64;
  }
  EXPECT_FALSE(is_compact(stale));
}

// Shift path: HBM integer index, HBM slice window, rotating DMA queue; memo path: recurring
// on-chip buffers; a loop long enough that memoisation is dropped for the x[t] loads
// (kMemoTrial = 256 lookups); and an out-of-bounds index on the last iteration, which must be
// reported exactly as a full build reports it.
TEST(StreamReuse, ShiftedAndMemoisedInstructionsEqualFullBuildsAndErrorsStayPut) {
  const std::string tensors = R"({
    "x": {"memory": "hbm", "dtype": "bfloat16", "shape": [600, 128, 64]},
    "w": {"memory": "hbm", "dtype": "bfloat16", "shape": [128, 8192]},
    "x_sb": {"memory": "sbuf", "dtype": "bfloat16", "shape": [2, 128, 64], "partition_dim": 1},
    "w_sb": {"memory": "sbuf", "dtype": "bfloat16", "shape": [128, 128]}})";
  const auto program = [](const std::string& stop) {
    return R"([{"for": "t", "range": )" + stop + R"(, "body": [
      {"op": "dma_copy", "dst": "x_sb[t % 2]", "src": "x[t]", "queue": "t % 4"},
      {"op": "dma_copy", "dst": "w_sb", "src": "w[:, (t % 64) * 128:(t % 64 + 1) * 128]"},
      {"op": "tensor_copy", "dst": "x_sb[(t + 1) % 2]", "src": "x_sb[t % 2]"}]}])";
  };
  const PreparedKernel good = prepare_text(kernel_json(tensors, program("600")));
  EXPECT_EQ(expect_same_stream(good, 0, 10'000, "good"), 1800u);
  const PreparedKernel bad = prepare_text(kernel_json(tensors, program("601")));
  expect_same_stream(bad, 0, 10'000, "bad");
  EXPECT_NE(run_error(kernel_json(tensors, program("601"))).find("out of bounds"),
            std::string::npos);
}

// Explicit patterns: the OFFSET of an HBM pattern moves by the shift path (its bounds checked
// with the base's extent), on-chip patterns recur through the memo; the pattern leaving x on
// the last iteration is reported as a full build reports it.
TEST(StreamReuse, ExplicitPatternsEqualFullBuildsAndErrorsStayPut) {
  const std::string tensors = R"json({
    "x": {"memory": "hbm", "dtype": "bfloat16", "shape": [600, 128, 64]},
    "x_sb": {"memory": "sbuf", "dtype": "bfloat16", "shape": [2, 128, 64], "partition_dim": 1},
    "y_sb": {"memory": "sbuf", "dtype": "bfloat16", "shape": [128, 64]}})json";
  const auto program = [](const std::string& stop) {
    return R"json([{"for": "t", "range": )json" + stop + R"json(, "body": [
      {"op": "dma_copy", "dst": "x_sb.ap(0:128, (t % 2) * 64, [16, 4], [1, 16])",
                         "src": "x.ap(t * 8192 + (t % 3), [64, 128], [16, 4], [1, 16])"},
      {"op": "tensor_copy", "dst": "y_sb.ap(0:128, 0, [8, 8], [1, 8])",
                            "src": "x_sb.ap(0:128, (t % 2) * 64, [1, 8], [8, 8])"}]}])json";
  };
  const PreparedKernel good = prepare_text(kernel_json(tensors, program("599")));
  EXPECT_EQ(expect_same_stream(good, 0, 10'000, "good"), 1198u);
  // x has 600 x 128 x 64 = 4915200 elements; a pattern spans 127 x 64 + 3 x 16 + 15 = 8191
  // elements past its offset. t = 599: 599 x 8192 + 599 % 3 + 8191 = 4915201 is outside.
  const PreparedKernel bad = prepare_text(kernel_json(tensors, program("600")));
  expect_same_stream(bad, 0, 10'000, "bad");
  EXPECT_NE(run_error(kernel_json(tensors, program("600"))).find("reaches element 4915201"),
            std::string::npos);
}

// A load cycling through B on-chip buffers (x_sb[t % B] <- x[t], each buffer's base built
// once) is a shifted copy of the base of its own buffer from the second round on: B full
// builds, and every other load joins the family of its buffer's first load.
TEST(StreamReuse, ALoadCyclingThroughBuffersShiftsFromItsOwnBuffersBase) {
  for (const int buffers : {2, 4, 8, 12}) {
    const std::string tensors = R"({
      "x": {"memory": "hbm", "dtype": "bfloat16", "shape": [1000, 128, 64]},
      "x_sb": {"memory": "sbuf", "dtype": "bfloat16", "shape": [)" +
                                std::to_string(buffers) + R"(, 128, 64], "partition_dim": 1}})";
    const std::string program = R"([{"for": "t", "range": 1000, "body": [
      {"op": "dma_copy", "dst": "x_sb[t % )" +
                                std::to_string(buffers) + R"(]", "src": "x[t]"}]}])";
    const PreparedKernel kernel = prepare_text(kernel_json(tensors, program));
    ContentKeyCheck keys;
    const std::string what = std::to_string(buffers) + " buffers";
    EXPECT_EQ(expect_same_stream(kernel, 0, 10'000, what, &keys), 1000u);
    EXPECT_EQ(keys.shifted_members(), 1000u - static_cast<std::uint64_t>(buffers)) << what;
  }
}

}  // namespace
}  // namespace trnsim::kernel
