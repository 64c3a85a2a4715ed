#include "numerics/functional_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernel/program.hpp"
#include "kernel/stream.hpp"
#include "numerics/elements.hpp"
#include "numerics/execute.hpp"
#include "numerics/expect.hpp"
#include "numerics/float_formats.hpp"
#include "util/error.hpp"

namespace trnsim::numerics {

namespace {

using kernel::DType;
using kernel::MemoryKind;

/// SplitMix64 (Steele, Lea and Flood 2014): a fixed, portable sequence for a seed.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1), 53 bits.
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  std::uint64_t state_;
};

/// FNV-1a of the tensor name, mixed with the seed: each tensor gets its own sequence.
std::uint64_t stream_seed(std::uint64_t seed, const std::string& name) {
  std::uint64_t h = 0xCBF29CE484222325ull;
  for (const unsigned char c : name) h = (h ^ c) * 0x100000001B3ull;
  return h ^ (seed * 0x9E3779B97F4A7C15ull);
}

double random_value(DType dtype, SplitMix64& rng) {
  switch (dtype) {
    case DType::kBool:
      return static_cast<double>(rng.next() >> 63);
    case DType::kUInt8:
    case DType::kUInt16:
    case DType::kUInt32:
      return static_cast<double>(rng.next() % 17);
    case DType::kInt8:
    case DType::kInt16:
    case DType::kInt32:
      return static_cast<double>(rng.next() % 17) - 8.0;
    default:
      return rng.unit() * 2.0 - 1.0;
  }
}

/// The .npy description of the array a tensor of `dtype` is written as: its own type where NumPy
/// has it, else float32 (which holds every value of the other floating-point types).
std::string output_descr(DType dtype) {
  return std::string(npy_descr_of(dtype).value_or("<f4"));
}

}  // namespace

FunctionalModel::FunctionalModel(const kernel::PreparedKernel& kernel, std::uint64_t seed)
    : kernel_(kernel), seed_(seed) {
  const kernel::Program& program = kernel.prog();
  const std::uint32_t per_chip = std::max(1u, kernel.target.cores_per_chip);
  const std::uint32_t chips = (kernel.cores + per_chip - 1) / per_chip;
  for (std::uint32_t t = 0; t < program.tensors.size(); ++t) {
    const kernel::TensorDecl& decl = program.tensors[t];
    if (decl.memory != MemoryKind::kHbm) continue;
    HbmTensor tensor;
    tensor.index = t;
    tensor.bytes = kernel.layouts[t].bytes;
    if (decl.per_core) {  // one instance per core, in the HBM of its chip
      for (std::uint32_t pid = 0; pid < kernel.cores; ++pid) {
        tensor.instances.push_back(
            Instance{pid / per_chip, kernel.allocation.hbm_address(t, pid, per_chip)});
      }
    } else {  // one instance per chip
      for (std::uint32_t chip = 0; chip < chips; ++chip) {
        tensor.instances.push_back(
            Instance{chip, kernel.allocation.hbm_address(t, chip * per_chip, per_chip)});
      }
    }
    tensor.leading_axis = decl.per_core || chips > 1;
    hbm_.push_back(std::move(tensor));
  }
  hbm_of_tensor_.assign(program.tensors.size(), kNotHbm);
  for (std::size_t i = 0; i < hbm_.size(); ++i) {
    hbm_of_tensor_[hbm_[i].index] = static_cast<std::uint32_t>(i);
  }
}

const FunctionalModel::HbmTensor* FunctionalModel::find_hbm_tensor(const std::string& name) const {
  for (const HbmTensor& tensor : hbm_) {
    if (kernel_.prog().tensors[tensor.index].name == name) return &tensor;
  }
  return nullptr;
}

FunctionalModel::HbmTensor& FunctionalModel::hbm_tensor(const std::string& name,
                                                        const std::string& where) {
  const HbmTensor* found = find_hbm_tensor(name);
  if (found == nullptr) {
    std::vector<std::string> names;
    for (const HbmTensor& tensor : hbm_) names.push_back(kernel_.prog().tensors[tensor.index].name);
    const bool exists = kernel_.prog().find_tensor(name).has_value();
    throw InputError(where, fmt::format("expected one of the kernel's HBM tensors ({}), found "
                                        "'{}'{}",
                                        fmt::join(names, ", "), name,
                                        exists ? ", which is an on-chip tensor" : ""));
  }
  return const_cast<HbmTensor&>(*found);
}

FunctionalModel::HbmTensor* FunctionalModel::hbm_tensor_of(std::uint32_t tensor_index) {
  if (tensor_index >= hbm_of_tensor_.size() || hbm_of_tensor_[tensor_index] == kNotHbm) {
    return nullptr;
  }
  return &hbm_[hbm_of_tensor_[tensor_index]];
}

void FunctionalModel::write_instance_values(const HbmTensor& tensor, std::size_t instance,
                                            const std::vector<double>& values) {
  const DType dtype = kernel_.prog().tensors[tensor.index].dtype;
  const std::uint32_t element_bytes = kernel::dtype_bytes(dtype);
  std::vector<std::uint8_t> bytes(values.size() * element_bytes);
  for (std::size_t i = 0; i < values.size(); ++i) {
    encode_element(dtype, values[i], bytes.data() + i * element_bytes);
  }
  image_.write(hbm_key(tensor.instances[instance]), tensor.instances[instance].address, bytes);
}

void FunctionalModel::set_input(const std::string& name, const NpyArray& array,
                                const std::string& where) {
  HbmTensor& tensor = hbm_tensor(name, where);
  const kernel::TensorDecl& decl = kernel_.prog().tensors[tensor.index];
  const std::vector<std::uint64_t>& shape = kernel_.layouts[tensor.index].shape;
  std::vector<std::uint64_t> all_instances = shape;
  all_instances.insert(all_instances.begin(), tensor.instances.size());
  const bool one_instance = array.shape == shape;
  if (!one_instance && !(tensor.leading_axis && array.shape == all_instances)) {
    throw InputError(where, fmt::format("expected an array of tensor '{}''s shape {}{}, found "
                                        "shape {}",
                                        name, format_shape(shape),
                                        tensor.leading_axis
                                            ? " (or " + format_shape(all_instances) + ", one per " +
                                                  (decl.per_core ? "core)" : "chip)")
                                            : "",
                                        format_shape(array.shape)));
  }
  if (kernel::dtype_is_packed_mx(decl.dtype)) {
    // Packed MX containers, bit for bit: unsigned integers (or raw bytes) of their size.
    const std::uint32_t size = kernel::dtype_bytes(decl.dtype);
    const bool matches = (size == 4 && array.descr == "<u4") ||
                         (size == 2 && (array.descr == "<u2" || array.descr == "|V2"));
    if (!matches) {
      throw InputError(where, fmt::format("expected the {}-byte containers of tensor '{}''s "
                                          "packed type {} as a '{}' array, found '{}'",
                                          size, name, kernel::dtype_name(decl.dtype),
                                          size == 4 ? "<u4" : "<u2", array.descr));
    }
    const std::size_t instances = tensor.instances.size();
    const std::size_t per_instance = array.data.size() / (one_instance ? 1 : instances);
    for (std::size_t instance = 0; instance < instances; ++instance) {
      const std::size_t offset = one_instance ? 0 : instance * per_instance;
      image_.write(hbm_key(tensor.instances[instance]), tensor.instances[instance].address,
                   std::span<const std::uint8_t>(array.data.data() + offset, per_instance));
    }
    tensor.has_values = true;
    return;
  }
  // Element values: NumPy's own types, or raw 1-2 byte elements of the tensor's type.
  const bool raw = array.descr == "|V1" || array.descr == "|V2";
  if (!raw && !dtype_of_npy(array.descr) && array.descr != "<f8") {
    throw InputError(
        where, fmt::format("expected a float, integer or bool array, found '{}'", array.descr));
  }
  if (raw && npy_item_bytes(array.descr) != kernel::dtype_bytes(decl.dtype)) {
    throw InputError(
        where, fmt::format("expected {}-byte elements of tensor '{}''s type {} in a "
                           "'{}' array, found {}-byte elements",
                           kernel::dtype_bytes(decl.dtype), name, kernel::dtype_name(decl.dtype),
                           array.descr, npy_item_bytes(array.descr)));
  }
  std::vector<double> values;
  if (raw) {
    values.resize(array.elements());
    for (std::size_t i = 0; i < values.size(); ++i) {
      values[i] =
          decode_element(decl.dtype, array.data.data() + i * kernel::dtype_bytes(decl.dtype));
    }
  } else {
    values = array_values(array, where);
  }
  const std::size_t instances = tensor.instances.size();
  const std::size_t per_instance = values.size() / (one_instance ? 1 : instances);
  for (std::size_t instance = 0; instance < instances; ++instance) {
    if (one_instance) {
      write_instance_values(tensor, instance, values);
    } else {
      write_instance_values(
          tensor, instance,
          std::vector<double>(
              values.begin() + static_cast<std::ptrdiff_t>(instance * per_instance),
              values.begin() + static_cast<std::ptrdiff_t>((instance + 1) * per_instance)));
    }
  }
  tensor.has_values = true;
}

void FunctionalModel::check(const kernel::Instruction& instruction) const {
  if (const auto reason = unsupported_reason(instruction)) {
    throw InputError(kernel_.prog().location(instruction.source),
                     "--numerics: " + *reason +
                         " has no functional model yet (run without "
                         "--numerics for its timing)");
  }
}

void FunctionalModel::seed_inputs_read_by(const kernel::Instruction& instruction) {
  for (std::size_t s = 0; s < kernel::kSlotCount; ++s) {
    if (static_cast<kernel::Slot>(s) == kernel::Slot::kDst && !instruction.accumulate) continue;
    const kernel::AccessPattern& operand = instruction.operands[s];
    if (!operand.used() || operand.memory != MemoryKind::kHbm) continue;
    HbmTensor* tensor = hbm_tensor_of(operand.tensor);
    if (tensor == nullptr || tensor->has_values) continue;
    // Read before anything wrote it: an input without a file.
    const kernel::TensorDecl& decl = kernel_.prog().tensors[tensor->index];
    SplitMix64 rng(stream_seed(seed_, decl.name));
    if (kernel::dtype_is_packed_mx(decl.dtype)) {
      // Packed MX containers: each value uniform in [-1, 1) (FP8) or any of the 16 FP4 codes.
      std::vector<std::uint8_t> bytes(tensor->bytes);
      for (const Instance& instance : tensor->instances) {
        for (std::uint8_t& byte : bytes) {
          if (decl.dtype == DType::kFloat4E2M1FnX4) {
            byte = static_cast<std::uint8_t>(rng.next() >> 56);
          } else {
            const FloatFormat& format =
                decl.dtype == DType::kFloat8E5M2X4 ? kFloat8E5M2 : kFloat8E4M3Fn;
            byte = static_cast<std::uint8_t>(
                encode(format, static_cast<float>(rng.unit() * 2.0 - 1.0)));
          }
        }
        image_.write(hbm_key(instance), instance.address, bytes);
      }
      tensor->has_values = true;
      continue;
    }
    std::vector<double> values(tensor->bytes / kernel::dtype_bytes(decl.dtype));
    for (std::size_t instance = 0; instance < tensor->instances.size(); ++instance) {
      for (double& v : values) v = random_value(decl.dtype, rng);
      write_instance_values(*tensor, instance, values);
    }
    tensor->has_values = true;
  }
}

std::string FunctionalModel::describe(const kernel::AccessPattern& pattern, std::uint64_t address,
                                      std::uint32_t partition) const {
  const kernel::Program& program = kernel_.prog();
  if (pattern.memory == MemoryKind::kHbm) {
    for (const HbmTensor& tensor : hbm_) {
      for (const Instance& instance : tensor.instances) {
        if (instance.chip == pattern.space && address >= instance.address &&
            address < instance.address + tensor.bytes) {
          return fmt::format("hbm tensor '{}' (byte {})", program.tensors[tensor.index].name,
                             address - instance.address);
        }
      }
    }
    return fmt::format("hbm byte {}", address);
  }
  for (std::uint32_t t = 0; t < program.tensors.size(); ++t) {
    const kernel::TensorDecl& decl = program.tensors[t];
    if (decl.memory != pattern.memory) continue;
    const kernel::Placement& placement = kernel_.allocation.placements[t];
    const kernel::TensorLayout& layout = kernel_.layouts[t];
    if (partition >= placement.partition_start &&
        partition < placement.partition_start + layout.partitions && address >= placement.offset &&
        address < placement.offset + layout.bytes_per_partition) {
      return fmt::format("{} tensor '{}' (partition {}, byte {})",
                         kernel::memory_kind_name(pattern.memory), decl.name,
                         partition - placement.partition_start, address - placement.offset);
    }
  }
  return fmt::format("{} partition {} byte {}", kernel::memory_kind_name(pattern.memory), partition,
                     address);
}

void FunctionalModel::add_finding(Finding::Kind kind, const kernel::Instruction& instruction,
                                  std::string message) {
  std::uint64_t& count =
      kind == Finding::Kind::kUnwrittenRead ? unwritten_reads_ : non_finite_results_;
  if (++count > kMaxFindings) return;
  findings_.push_back(
      Finding{kind, kernel_.prog().location(instruction.source), std::move(message)});
}

void FunctionalModel::record(const kernel::Instruction& instruction, const ExecutionNotes& notes,
                             const kernel::Instruction& writer) {
  const std::string op(kernel::opcode_name(instruction.opcode));
  if (notes.unwritten) {
    const kernel::AccessPattern& operand = instruction.operand(notes.unwritten_slot);
    add_finding(
        Finding::Kind::kUnwrittenRead, instruction,
        fmt::format("{} reads {}, which nothing wrote (element {} of the operand in "
                    "logical order; read as zero)",
                    op,
                    describe(operand, notes.unwritten->address, notes.unwritten->where.partition),
                    notes.unwritten->index));
  }
  if (notes.first_non_finite) {
    add_finding(Finding::Kind::kNonFinite, writer,
                fmt::format("{} makes the first non-finite value from finite inputs (element {} "
                            "of dst in logical order)",
                            kernel::opcode_name(writer.opcode), *notes.first_non_finite));
  }
  const kernel::AccessPattern& dst = writer.dst();
  if (dst.used() && dst.memory == MemoryKind::kHbm) {
    if (HbmTensor* tensor = hbm_tensor_of(dst.tensor)) tensor->has_values = true;
  }
}

void FunctionalModel::join_collective(const kernel::Instruction& instruction,
                                      std::span<const std::uint32_t> group) {
  std::vector<std::uint32_t> members(group.begin(), group.end());
  if (members.empty()) {
    for (std::uint32_t pid = 0; pid < kernel_.cores; ++pid) members.push_back(pid);
  }
  auto& waiting = waiting_collectives_[members];
  waiting[instruction.pid].push_back(instruction);
  for (const std::uint32_t pid : members) {
    const auto it = waiting.find(pid);
    if (it == waiting.end() || it->second.empty()) return;
  }
  // Every member joined: take the first waiting instance of each, in rank order.
  std::vector<kernel::Instruction> instances;
  instances.reserve(members.size());
  for (const std::uint32_t pid : members) {
    instances.push_back(std::move(waiting[pid].front()));
    waiting[pid].pop_front();
  }
  std::vector<const kernel::Instruction*> ranks;
  for (const kernel::Instruction& member : instances) ranks.push_back(&member);
  const std::vector<ExecutionNotes> notes = execute_collective(ranks, image_);
  for (std::size_t i = 0; i < instances.size(); ++i) record(instances[i], notes[i], instances[i]);
}

void FunctionalModel::join_transfer(const kernel::Instruction& instruction) {
  const bool send = instruction.opcode == kernel::Opcode::kSend;
  const std::pair<std::uint32_t, std::uint32_t> key =
      send ? std::pair{instruction.pid, instruction.peer}
           : std::pair{instruction.peer, instruction.pid};
  auto& counterparts = send ? waiting_recvs_[key] : waiting_sends_[key];
  if (counterparts.empty()) {
    (send ? waiting_sends_[key] : waiting_recvs_[key]).push_back(instruction);
    return;
  }
  const kernel::Instruction other = std::move(counterparts.front());
  counterparts.pop_front();
  const kernel::Instruction& sender = send ? instruction : other;
  const kernel::Instruction& receiver = send ? other : instruction;
  record(sender, execute_transfer(sender, receiver, image_), receiver);
}

void FunctionalModel::execute(const kernel::Instruction& instruction,
                              std::span<const std::uint32_t> group) {
  seed_inputs_read_by(instruction);
  switch (instruction.opcode) {
    case kernel::Opcode::kAllReduce:
    case kernel::Opcode::kAllGather:
    case kernel::Opcode::kReduceScatter:
    case kernel::Opcode::kAllToAll:
      join_collective(instruction, group);
      return;
    case kernel::Opcode::kSend:
    case kernel::Opcode::kRecv:
      join_transfer(instruction);
      return;
    default:
      break;
  }
  PatternFunction pattern;
  if (instruction.opcode == kernel::Opcode::kIota ||
      instruction.opcode == kernel::Opcode::kAffineSelect) {
    pattern = [this, &instruction](std::uint32_t p, std::uint64_t f, const std::uint64_t* free) {
      return pattern_value(instruction, p, f, free);
    };
  }
  record(instruction, numerics::execute(instruction, image_, pattern), instruction);
}

std::int64_t FunctionalModel::pattern_value(const kernel::Instruction& instruction, std::uint32_t p,
                                            std::uint64_t f, const std::uint64_t* free) {
  const kernel::Program& program = kernel_.prog();
  if (pattern_env_core_ != instruction.pid) {
    std::vector<std::int64_t> env = kernel::core_environment(kernel_, instruction.pid);
    pattern_env_.assign(kernel::kPatternSlotP + kernel::kPatternSlotCount, 0);
    std::copy(env.begin(), env.end(), pattern_env_.begin());
    pattern_env_core_ = instruction.pid;
  }
  const kernel::SourceRef& source = instruction.source;
  for (std::uint8_t d = 0; d < source.depth; ++d) {
    pattern_env_[program.loop_slot(d)] = source.loop_values[d];
  }
  pattern_env_[kernel::kPatternSlotP] = p;
  pattern_env_[kernel::kPatternSlotP + 1] = static_cast<std::int64_t>(f);
  for (std::size_t d = 0; d < kernel::kMaxFreeDims; ++d) {
    pattern_env_[kernel::kPatternSlotP + 2 + d] =
        d < instruction.dst().rank ? static_cast<std::int64_t>(free[d]) : 0;
  }
  const kernel::Statement& statement = program.statements[source.statement];
  const kernel::InstructionSpec& spec = program.instructions[statement.instruction];
  const std::optional<kernel::Expr>& expr = program.attributes[spec.attributes].pattern;
  try {
    return expr ? expr->eval(pattern_env_.data()) : 0;
  } catch (const kernel::ExprEvalError& e) {
    throw InputError(program.location(source), e.describe(expr->text()));
  }
}

std::vector<std::string> FunctionalModel::tensors_with_values() const {
  std::vector<std::pair<std::uint32_t, std::string>> named;
  for (const HbmTensor& tensor : hbm_) {
    if (tensor.has_values) {
      named.emplace_back(tensor.index, kernel_.prog().tensors[tensor.index].name);
    }
  }
  std::sort(named.begin(), named.end());
  std::vector<std::string> names;
  for (auto& [index, name] : named) names.push_back(std::move(name));
  return names;
}

kernel::DType FunctionalModel::tensor_dtype(const std::string& name) const {
  const HbmTensor* tensor = find_hbm_tensor(name);
  if (tensor == nullptr) throw std::logic_error("internal error: no HBM tensor " + name);
  return kernel_.prog().tensors[tensor->index].dtype;
}

std::vector<std::uint64_t> FunctionalModel::tensor_shape(const std::string& name,
                                                         const std::string& where) {
  const HbmTensor& tensor = hbm_tensor(name, where);
  std::vector<std::uint64_t> shape = kernel_.layouts[tensor.index].shape;
  if (tensor.leading_axis) shape.insert(shape.begin(), tensor.instances.size());
  return shape;
}

NpyArray FunctionalModel::tensor_values(const std::string& name) const {
  const HbmTensor* tensor = find_hbm_tensor(name);
  if (tensor == nullptr) throw std::logic_error("internal error: no HBM tensor " + name);
  const kernel::TensorDecl& decl = kernel_.prog().tensors[tensor->index];
  NpyArray array;
  array.descr = output_descr(decl.dtype);
  array.shape = kernel_.layouts[tensor->index].shape;
  if (tensor->leading_axis) array.shape.insert(array.shape.begin(), tensor->instances.size());
  const std::uint32_t element_bytes = kernel::dtype_bytes(decl.dtype);
  if (kernel::dtype_is_packed_mx(decl.dtype)) {
    // Packed MX containers as unsigned integers of their size, bit for bit.
    array.descr = element_bytes == 4 ? "<u4" : "<u2";
    std::vector<std::uint8_t> bytes(tensor->bytes);
    for (const Instance& instance : tensor->instances) {
      image_.read(hbm_key(instance), instance.address, bytes);
      array.data.insert(array.data.end(), bytes.begin(), bytes.end());
    }
    return array;
  }
  const std::uint32_t out_bytes = npy_item_bytes(array.descr);
  const DType out_type = dtype_of_npy(array.descr).value();
  const std::uint64_t per_instance = tensor->bytes / element_bytes;
  array.data.resize(per_instance * tensor->instances.size() * out_bytes);
  std::vector<std::uint8_t> bytes(tensor->bytes);
  std::size_t next = 0;
  for (const Instance& instance : tensor->instances) {
    image_.read(hbm_key(instance), instance.address, bytes);
    for (std::uint64_t i = 0; i < per_instance; ++i, ++next) {
      const double value = decode_element(decl.dtype, bytes.data() + i * element_bytes);
      encode_element(out_type, value, array.data.data() + next * out_bytes);
    }
  }
  return array;
}

}  // namespace trnsim::numerics
