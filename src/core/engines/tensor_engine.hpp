// The Tensor Engine (PE array) of a NeuronCore: issues in order, but runs instructions on
// disjoint PE tiles (and, where the generation has it, transposes in the background lane)
// concurrently; LoadStationary runs in the background as soon as its inputs are ready, so a
// MultiplyMoving starts at max(previous MM end, its LS end), and is skipped when the stationary
// is the previous matmul's and nothing newer was written; the result is visible
// tensor.pipeline_latency_cycles after the MM ends; throttling (Trn2/3) stretches MMs
// (cost::TensorThrottle). Costs: cost::tensor_cost (docs/cost-models.md).
// Leaves out the PE array's data: a tile is busy or free, nothing in between.
#pragma once

#include <cstddef>
#include <cstdint>
#include <systemc>
#include <vector>

#include "core/cost/tensor_throttle.hpp"
#include "core/engines/engine.hpp"

namespace trnsim::core {

class TensorEngine final : public Engine {
 public:
  TensorEngine(sc_core::sc_module_name name, NeuronCore& core);

  /// Sets the PE placement and returns the in-order stream: one per first PE cell of a tile
  /// (tiles with the same first cell share it, so the later waits for the earlier) and one for
  /// the background-transpose lane.
  std::uint32_t prepare(QueuedInstruction& item) override;
  void run() override;

 protected:
  friend class Engine;  // run_loop() calls the hooks below, bound statically
  sc_core::sc_time available_at(const QueuedInstruction& item, std::uint32_t& lane) override;
  sc_core::sc_time plan_compute(const QueuedInstruction& item, cost::CostContext context,
                                sc_core::sc_time start) override;
  Completion commit_compute(const QueuedInstruction& item, const sc_core::sc_time& start) override;
  double trigger_issued(const sc_core::sc_time& start, const sc_core::sc_time& end) override;
  double idle_wait_ns(const QueuedInstruction& item) override;

 private:
  /// When each cell of the PE array (row-major grid of pe_tile_granularity cells) is free.
  /// A cell's time only grows (an instruction starts once its cells are free), so an
  /// instruction on the whole array is O(1): it reads the latest time of any cell and sets
  /// `whole_`, which every cell's own time is read against.
  class PeCells {
   public:
    void reset(std::size_t rows, std::size_t cols) {
      cols_ = cols;
      cells_.assign(rows * cols, sc_core::SC_ZERO_TIME);
    }
    std::size_t size() const { return cells_.size(); }
    std::size_t cols() const { return cols_; }
    /// When every cell of `placement` is free (zero for an empty placement).
    sc_core::sc_time free_at(const PePlacement& placement) const {
      if (is_whole(placement)) return latest_;
      sc_core::sc_time free;
      for (std::size_t r = 0; r < placement.cell_rows; ++r) {
        for (std::size_t c = 0; c < placement.cell_cols; ++c) {
          free = std::max(free, cells_[placement.first_cell + r * cols_ + c]);
        }
      }
      return std::max(free, placement.cell_rows > 0 ? whole_ : sc_core::SC_ZERO_TIME);
    }
    /// The cells of `placement` are busy until `end` (not before free_at(placement)).
    void occupy(const PePlacement& placement, const sc_core::sc_time& end) {
      if (placement.cell_rows == 0) return;
      latest_ = std::max(latest_, end);
      if (is_whole(placement)) {
        whole_ = end;
        return;
      }
      for (std::size_t r = 0; r < placement.cell_rows; ++r) {
        for (std::size_t c = 0; c < placement.cell_cols; ++c) {
          cells_[placement.first_cell + r * cols_ + c] = end;
        }
      }
    }

   private:
    bool is_whole(const PePlacement& placement) const {
      return placement.first_cell == 0 &&
             placement.cell_rows * placement.cell_cols == cells_.size();
    }
    std::size_t cols_ = 1;
    std::vector<sc_core::sc_time> cells_;  ///< own times, read as max(cell, whole_)
    sc_core::sc_time whole_;               ///< end of the latest whole-array instruction
    sc_core::sc_time latest_;              ///< the latest time of any cell
  };

  /// The PE placement of a TensorE instruction, memoised by content key.
  PePlacement pe_placement(const kernel::Instruction& instruction);
  PePlacement compute_pe_placement(const kernel::Instruction& instruction) const;

  /// Peak FLOP/s of the Tensor Engine for this matmul's input type.
  double peak_flops_for(const kernel::Instruction& instruction) const;

  const double cycle_ns_;  ///< tensor.cycle_ns()
  // The config's peak rates per input type (Params::peak_*_flops_per_core()).
  const double peak_bf16_flops_;
  const double peak_fp8_flops_;
  const double peak_fp32_flops_;
  const double peak_mxfp8_flops_;
  const double peak_mxfp4_flops_;
  PeCells pe_cells_;
  sc_core::sc_time background_transpose_free_at_;
  sc_core::sc_time issue_at_;    ///< issue order: the previous start (a DMA trigger: its end)
  sc_core::sc_time busy_until_;  ///< end of the union of the engine's busy intervals
  sc_core::sc_time ls_free_at_;  ///< the LoadStationary unit is free
  kernel::AccessPattern last_stationary_;
  bool have_stationary_ = false;
  std::uint64_t last_matmul_id_ = kNoId;
  sc_core::sc_time ls_start_;  ///< the planned instruction's LoadStationary start
  cost::TensorThrottle throttle_;

  struct PlacementMemo {
    std::uint64_t key = 0;
    PePlacement placement;
  };
  static constexpr std::size_t kPlacementMemoEntries = 64;  // power of two
  std::vector<PlacementMemo> placement_memo_ = std::vector<PlacementMemo>(kPlacementMemoEntries);
};

}  // namespace trnsim::core
