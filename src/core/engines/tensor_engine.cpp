#include "core/engines/tensor_engine.hpp"

#include <algorithm>

#include "core/core_stats.hpp"
#include "core/engines/engine_run.hpp"
#include "core/neuron_core.hpp"
#include "kernel/opcodes.hpp"
#include "util/sim_time.hpp"

namespace trnsim::core {

using kernel::Instruction;
using kernel::Opcode;
using sc_core::sc_time;

namespace {

bool same_pattern(const kernel::AccessPattern& a, const kernel::AccessPattern& b) {
  return a.tensor == b.tensor && a.offset == b.offset && a.partition_start == b.partition_start &&
         a.partitions == b.partitions && a.rank == b.rank && a.sizes == b.sizes &&
         a.strides == b.strides && a.dtype == b.dtype;
}

bool is_matmul(const Instruction& instruction) {
  return kernel::is_matmul(instruction.opcode);
}

}  // namespace

TensorEngine::TensorEngine(sc_core::sc_module_name name, NeuronCore& core)
    : Engine(name, core, kernel::Engine::kTensor),
      cycle_ns_(core.params().tensor.cycle_ns()),
      peak_bf16_flops_(core.params().peak_bf16_flops_per_core()),
      peak_fp8_flops_(core.params().peak_fp8_flops_per_core()),
      peak_fp32_flops_(core.params().peak_fp32_flops_per_core()),
      peak_mxfp8_flops_(core.params().peak_mxfp8_flops_per_core()),
      peak_mxfp4_flops_(core.params().peak_mxfp4_flops_per_core()),
      throttle_(core.params().tensor) {
  set_own_prepare();
  const config::TensorEngineParams& tensor = params_.tensor;
  const auto granularity = static_cast<std::size_t>(std::max(1, tensor.pe_tile_granularity));
  pe_cells_.reset(std::max<std::size_t>(1, static_cast<std::size_t>(tensor.rows) / granularity),
                  std::max<std::size_t>(1, static_cast<std::size_t>(tensor.cols) / granularity));
}

void TensorEngine::run() {
  run_loop(*this);
}

std::uint32_t TensorEngine::prepare(QueuedInstruction& item) {
  const Instruction& instruction = item.instruction;
  // A DMA on TensorE's queue uses no PE cell and completes out of order.
  if (instruction.engine != kernel::Engine::kTensor) return Engine::prepare(item);
  item.placement = pe_placement(instruction);
  constexpr std::uint32_t kTensorStreams = 1u << 20;
  if (item.placement.background) return kTensorStreams;
  return kTensorStreams + 1 + static_cast<std::uint32_t>(item.placement.first_cell);
}

PePlacement TensorEngine::pe_placement(const Instruction& instruction) {
  if (instruction.content_key == 0) return compute_pe_placement(instruction);
  PlacementMemo& memo = placement_memo_[instruction.content_key & (kPlacementMemoEntries - 1)];
  if (memo.key != instruction.content_key) {
    memo.key = instruction.content_key;
    memo.placement = compute_pe_placement(instruction);
  }
  return memo.placement;
}

PePlacement TensorEngine::compute_pe_placement(const Instruction& instruction) const {
  PePlacement placement;
  if (params_.tensor.background_transpose && instruction.opcode == Opcode::kNcTranspose) {
    placement.background = true;
    return placement;
  }
  const cost::PeTile tile = cost::pe_tile(instruction, params_);
  const auto granularity = static_cast<std::uint32_t>(params_.tensor.pe_tile_granularity);
  placement.first_cell = static_cast<std::uint32_t>(
      (tile.row_begin / granularity) * pe_cells_.cols() + tile.col_begin / granularity);
  placement.cell_rows =
      static_cast<std::uint32_t>(std::max<std::size_t>(1, tile.rows / granularity));
  placement.cell_cols =
      static_cast<std::uint32_t>(std::max<std::size_t>(1, tile.cols / granularity));
  return placement;
}

sc_time TensorEngine::available_at(const QueuedInstruction& item, std::uint32_t& lane) {
  // In issue order, and once the PE tiles it uses (or the background lane) are free: not the
  // whole array. A DMA it triggers has an empty placement: no PE cell.
  if (item.placement.background) {
    lane = static_cast<std::uint32_t>(pe_cells_.size());
    return std::max(issue_at_, background_transpose_free_at_);
  }
  lane = static_cast<std::uint32_t>(item.placement.first_cell);
  return std::max(issue_at_, pe_cells_.free_at(item.placement));
}

sc_time TensorEngine::plan_compute(const QueuedInstruction& item, cost::CostContext context,
                                   sc_time start) {
  const Instruction& instruction = item.instruction;
  if (is_matmul(instruction)) {
    const kernel::AccessPattern& stationary = instruction.operand(kernel::Slot::kStationary);
    // Conservative: any producer newer than the previous matmul may have rewritten it.
    const bool written_since = item.any_dependency([&](std::uint64_t dependency) {
      return last_matmul_id_ == kNoId || dependency > last_matmul_id_;
    });
    context.stationary_reused =
        have_stationary_ && !written_since && same_pattern(stationary, last_stationary_);
    last_stationary_ = stationary;
    have_stationary_ = true;
    last_matmul_id_ = item.id;
  }
  cost_ = cost_of(instruction, context);
  const double cycle_ns = cycle_ns_;
  // LoadStationary runs in the background as soon as the instruction is fetched and its inputs
  // are ready. The stationary is in SBUF, which TensorE never writes: only other engines'
  // results can delay it.
  ls_start_ =
      std::max({core_.other_engines_ready(item, engine_kind()), ls_free_at_, item.fetched_at});
  const sc_time ls_end = ls_start_ + sim_time::from_ns(cost_.load_stationary_cycles * cycle_ns);
  ls_free_at_ = ls_end;
  return std::max(start, ls_end);
}

double TensorEngine::trigger_issued(const sc_time& start, const sc_time& end) {
  issue_at_ = end;
  // Busy time is the union over the concurrent PE tiles and this trigger.
  const double busy_ns =
      end > busy_until_ ? sim_time::to_ns(end - std::max(start, busy_until_)) : 0.0;
  busy_until_ = std::max(busy_until_, end);
  return busy_ns;
}

double TensorEngine::idle_wait_ns(const QueuedInstruction& item) {
  // Not idle while other PE tiles run, nor once this instruction's LoadStationary started.
  const sc_time own_start = std::min(std::max(ls_start_, engine_available()), planned_start());
  const sc_time wait_begin = std::max(engine_available(), item.fetched_at);
  const sc_time wait_end = wait_begin + sim_time::from_ns(wait_ns());
  if (busy_until_ <= wait_begin && own_start >= wait_end) return wait_ns();
  return sim_time::to_ns(idle_wait_ticks(wait_begin.value(), wait_end.value(), busy_until_.value(),
                                         own_start.value()));
}

Engine::Completion TensorEngine::commit_compute(const QueuedInstruction& item,
                                                const sc_time& start) {
  const Instruction& instruction = item.instruction;
  Completion completion;
  const double cycle_ns = cycle_ns_;
  const double full_rate_ns = cost_.cycles * cycle_ns;
  const double start_ns = sim_time::to_ns(start);
  const double end_ns = throttle_.run(start_ns, full_rate_ns);
  CoreStats& core_stats = core_.mutable_stats();
  core_stats.throttled_ns += end_ns - start_ns - full_rate_ns;
  completion.end = sim_time::from_ns(end_ns);
  completion.visible = completion.end + sim_time::from_ns(cost_.latency_cycles * cycle_ns);
  // One conversion of the later time (sim_time::to_ns() is monotonic).
  double slice_start_ns = sim_time::to_ns(std::max(ls_start_, engine_available()));
  slice_start_ns = std::min(slice_start_ns, start_ns);
  completion.slice_start_ns = slice_start_ns;
  // Busy time is the union over concurrent tiles.
  completion.busy_ns = completion.end > busy_until_
                           ? end_ns - std::max(slice_start_ns, sim_time::to_ns(busy_until_))
                           : 0.0;
  busy_until_ = std::max(busy_until_, completion.end);
  issue_at_ = start;
  if (item.placement.background) {
    background_transpose_free_at_ = completion.end;
  } else {
    pe_cells_.occupy(item.placement, completion.end);
  }
  if (is_matmul(instruction)) {
    core_stats.matmul_flops += instruction.flops;
    core_stats.tensor_ideal_ns +=
        static_cast<double>(instruction.flops) / peak_flops_for(instruction) * 1e9;
  }
  return completion;
}

double TensorEngine::peak_flops_for(const Instruction& instruction) const {
  const kernel::DType dtype = instruction.operand(kernel::Slot::kSrc).dtype;
  if (instruction.opcode == Opcode::kNcMatmulMx) {
    return dtype == kernel::DType::kFloat4E2M1FnX4 ? peak_mxfp4_flops_ : peak_mxfp8_flops_;
  }
  if (dtype == kernel::DType::kFloat32) return peak_fp32_flops_;
  if (instruction.double_row) return peak_fp8_flops_;
  return peak_bf16_flops_;
}

}  // namespace trnsim::core
