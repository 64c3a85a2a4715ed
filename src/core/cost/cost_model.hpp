// Engine cost models: how long one instruction keeps its engine busy, as a pure function of the
// instruction and the generation's parameters (hardware-facts.md §2-7, §13; formulas in
// docs/cost-models.md). Models TensorE (LoadStationary/MultiplyMoving, transpose, FP8 double row,
// MX, PE tiles), VectorE, ScalarE and GpSimdE per-op costs; DMA timing lives in src/dma. Leaves out
// everything that needs time or other instructions: dependencies, queueing, LS/MM overlap,
// concurrent PE tiles, shared ports, DMA/HBM contention (the timing model's job; it passes what it
// knows in CostContext). TensorE throttling is the separate TensorThrottle.
#pragma once

#include <cstdint>

#include "config/params.hpp"
#include "kernel/instruction.hpp"

namespace trnsim::cost {

/// Facts about an instruction's situation that the timing model knows and a pure function cannot.
struct CostContext {
  /// The instruction waited on a result of the instruction that just finished on its engine:
  /// VectorE/ScalarE add their dependent_overhead_cycles (the pipeline cannot overlap).
  bool depends_on_recent = false;
  /// TensorE matmul: same stationary as the previous matmul, no LoadStationary is needed.
  bool stationary_reused = false;
  /// ScalarE activation: the activation function differs from the one whose table is loaded;
  /// adds scalar.table_switch_cycles.
  bool activation_table_switch = false;
};

/// Cost of one instruction on its engine. Cycles are in that engine's clock.
struct EngineCost {
  /// Engine busy time (initiation interval to the next instruction on the engine), cycles.
  std::uint64_t cycles = 0;
  /// cycles / engine clock, ns.
  double ns = 0;
  /// TensorE only: LoadStationary cycles, NOT included in `cycles`. The LS may run while the
  /// previous MultiplyMoving streams, so the timing model starts this instruction's MM at
  /// max(previous MM end, this LS end). 0 when the stationary is reused.
  std::uint64_t load_stationary_cycles = 0;
  /// TensorE only: pipeline latency after `cycles` before the PSUM result is visible, cycles.
  std::uint64_t latency_cycles = 0;
};

/// Each function requires instruction.engine to be its engine and the op to be one the engine
/// runs (the kernel validator guarantees both); otherwise it throws std::logic_error.
EngineCost tensor_cost(const kernel::Instruction& instruction, const config::Params& params,
                       const CostContext& context = {});
EngineCost vector_cost(const kernel::Instruction& instruction, const config::Params& params,
                       const CostContext& context = {});
EngineCost scalar_cost(const kernel::Instruction& instruction, const config::Params& params,
                       const CostContext& context = {});
EngineCost gpsimd_cost(const kernel::Instruction& instruction, const config::Params& params,
                       const CostContext& context = {});
/// The clock of a compute engine, GHz (std::logic_error for another engine).
double engine_clock_ghz(kernel::Engine engine, const config::Params& params);

/// The `instant` model of every compute engine (cost_models.hpp): one cycle of the engine's
/// clock, no LoadStationary, no pipeline latency; the what-if "this engine costs nothing".
EngineCost instant_cost(const kernel::Instruction& instruction, const config::Params& params,
                        const CostContext& context = {});
/// The `analytic` models (the four above), dispatched on instruction.engine; only the four
/// compute engines (std::logic_error otherwise).
EngineCost engine_cost(const kernel::Instruction& instruction, const config::Params& params,
                       const CostContext& context = {});

/// The rectangle of PEs a TensorE instruction occupies, rounded out to pe_tile_granularity.
/// Rows are the contraction partitions (PE row i reads SBUF partition i); columns are the
/// output partitions (PE column j writes PSUM partition j). Instructions on disjoint tiles may
/// run concurrently (timing model). nc_matmul_mx and double_row use all columns (no column
/// tiling, hardware-facts.md §3.4, §3.5).
struct PeTile {
  std::uint32_t row_begin = 0;
  std::uint32_t rows = 0;
  std::uint32_t col_begin = 0;
  std::uint32_t cols = 0;

  bool overlaps(const PeTile& other) const {
    return row_begin < other.row_begin + other.rows && other.row_begin < row_begin + rows &&
           col_begin < other.col_begin + other.cols && other.col_begin < col_begin + cols;
  }
};
PeTile pe_tile(const kernel::Instruction& instruction, const config::Params& params);

}  // namespace trnsim::cost
