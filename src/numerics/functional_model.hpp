// Functional execution of a whole kernel: the values its instructions compute, alongside (and
// independent of) their timing. Owns the memory image of the system, binds the kernel's HBM
// tensors to values (from .npy files, or seeded random data for an input without one), applies
// each instruction as it executes (execute.hpp) and collects what users want to know: reads of
// memory nothing wrote and the first NaN or infinity, each with the instruction's location.
//
// Inputs: an HBM tensor that an instruction reads before anything wrote it is an input. Its
// values come from the file set_input() gave it, else from a generator seeded by (seed, tensor
// name): uniform in [-1, 1) for floating-point types, integers in [-8, 8] (unsigned: [0, 16]),
// 0 or 1 for bool, each rounded to the tensor's type. The same seed gives the same values on
// every machine (the generator is SplitMix64, the mapping to values is fixed here).
// Instances: a per-core HBM tensor (`per_core`) has one per core (in its chip's HBM), any other
// HBM tensor one per chip the kernel runs on. Arrays of a tensor with several instances have a
// leading axis of them (cores, or chips); an input file may also give one instance's shape,
// copied to all.
// Leaves out: the ops execute.hpp leaves out (rejected with a located InputError before the
// run).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kernel/instruction.hpp"
#include "kernel/prepare.hpp"
#include "numerics/execute.hpp"
#include "numerics/memory_image.hpp"
#include "numerics/npy.hpp"

namespace trnsim::numerics {

/// Something functional execution noticed about a kernel (a likely bug in it).
struct Finding {
  enum class Kind { kUnwrittenRead, kNonFinite };
  Kind kind = Kind::kUnwrittenRead;
  std::string location;  ///< the instruction's kernel location (Program::location)
  std::string message;   ///< what happened, e.g. "in1 reads sbuf tensor b_sb ... never written"
};

class FunctionalModel {
 public:
  /// `kernel` must outlive the model. Throws InputError when the kernel needs what functional
  /// execution leaves out (more than one chip; an op without semantics is found by check()).
  FunctionalModel(const kernel::PreparedKernel& kernel, std::uint64_t seed);

  /// Gives HBM tensor `name` the values of `array` (converted to its type, rounded). `where`
  /// names the source in messages ("--input a=a.npy"). Throws InputError for an unknown or
  /// non-HBM tensor, or a shape that differs from the tensor's.
  void set_input(const std::string& name, const NpyArray& array, const std::string& where);

  /// Throws InputError (at the instruction's location) when execute() has no semantics for it.
  void check(const kernel::Instruction& instruction) const;

  /// Applies the instruction's effect on values; records findings. `group`: a collective's cores
  /// in rank order (empty: every core of the kernel). A collective takes effect when the last
  /// member of its group joins it (the k-th collective of a group on each core is one
  /// collective); a send or recv when its counterpart arrives (the k-th send from p to q
  /// matches the k-th recv on q from p).
  void execute(const kernel::Instruction& instruction, std::span<const std::uint32_t> group = {});

  /// The findings so far: at most `kMaxFindings` of each kind (counts() has the totals).
  static constexpr std::size_t kMaxFindings = 20;
  const std::vector<Finding>& findings() const { return findings_; }
  std::uint64_t unwritten_reads() const { return unwritten_reads_; }
  std::uint64_t non_finite_results() const { return non_finite_results_; }

  /// Names of the HBM tensors that hold values (set, seeded or written), in declaration order.
  std::vector<std::string> tensors_with_values() const;
  /// The contents of HBM tensor `name` as an array: float32, float16, the integer types and
  /// bool in their own type, the other floating-point types as float32 (which holds each of
  /// their values exactly). Elements nothing wrote read as 0.
  NpyArray tensor_values(const std::string& name) const;
  /// The tensor's element type.
  kernel::DType tensor_dtype(const std::string& name) const;
  /// The shape of tensor_values(name) (per-core tensors: a leading axis of instances). Throws
  /// InputError at `where` when `name` is not an HBM tensor of the kernel.
  std::vector<std::uint64_t> tensor_shape(const std::string& name, const std::string& where);

 private:
  /// One copy of an HBM tensor: in the HBM of `chip`, at `address`.
  struct Instance {
    std::uint32_t chip = 0;
    std::uint64_t address = 0;
  };
  struct HbmTensor {
    std::uint32_t index = 0;          ///< into Program::tensors
    std::vector<Instance> instances;  ///< per core (per_core), else per chip
    std::uint64_t bytes = 0;          ///< of one instance
    bool leading_axis = false;        ///< arrays have an axis of instances (several may differ)
    bool has_values = false;          ///< set, seeded or written
  };
  static SpaceKey hbm_key(const Instance& instance) {
    return SpaceKey{kernel::MemoryKind::kHbm, instance.chip, 0};
  }
  HbmTensor& hbm_tensor(const std::string& name, const std::string& where);
  const HbmTensor* find_hbm_tensor(const std::string& name) const;
  /// The HBM tensor of Program::tensors[tensor_index], or null (an on-chip tensor).
  HbmTensor* hbm_tensor_of(std::uint32_t tensor_index);
  void seed_inputs_read_by(const kernel::Instruction& instruction);
  void write_instance_values(const HbmTensor& tensor, std::size_t instance,
                             const std::vector<double>& values);
  std::string describe(const kernel::AccessPattern& pattern, std::uint64_t address,
                       std::uint32_t partition) const;
  void add_finding(Finding::Kind kind, const kernel::Instruction& instruction, std::string message);
  /// Turns an instruction's notes into findings and marks the HBM tensor it wrote as holding
  /// values.
  void record(const kernel::Instruction& instruction, const ExecutionNotes& notes,
              const kernel::Instruction& writer);
  void join_collective(const kernel::Instruction& instruction,
                       std::span<const std::uint32_t> group);
  void join_transfer(const kernel::Instruction& instruction);
  /// The iota expr / affine_select pred of `instruction` with its core's and loops' values.
  std::int64_t pattern_value(const kernel::Instruction& instruction, std::uint32_t p,
                             std::uint64_t f, const std::uint64_t* free);

  const kernel::PreparedKernel& kernel_;
  const std::uint64_t seed_;
  MemoryImage image_;
  static constexpr std::uint32_t kNotHbm = ~0u;
  std::vector<HbmTensor> hbm_;                ///< in declaration order
  std::vector<std::uint32_t> hbm_of_tensor_;  ///< by tensor index: index into hbm_, or kNotHbm
  std::vector<Finding> findings_;
  std::uint64_t unwritten_reads_ = 0;
  std::uint64_t non_finite_results_ = 0;
  /// Environment for pattern expressions (slots up to kPatternSlotP + kPatternSlotCount) and the
  /// core whose values it holds (kNoCore: none yet).
  static constexpr std::uint32_t kNoCore = ~0u;
  std::vector<std::int64_t> pattern_env_;
  std::uint32_t pattern_env_core_ = kNoCore;
  /// Collectives waiting for members: by group (rank order), per member core, in order.
  std::map<std::vector<std::uint32_t>, std::map<std::uint32_t, std::deque<kernel::Instruction>>>
      waiting_collectives_;
  /// send and recv waiting for their counterpart, by (sender, receiver).
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::deque<kernel::Instruction>> waiting_sends_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::deque<kernel::Instruction>> waiting_recvs_;
};

}  // namespace trnsim::numerics
