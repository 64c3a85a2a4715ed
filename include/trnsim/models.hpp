// Models of your own, selected by name from the config like the built-in ones: the HBM stack's
// timing (hbm.model; the interface and its contract are in trnsim/hbm_target.hpp) and an
// engine's instruction costs (tensor.cost_model, vector.cost_model, scalar.cost_model,
// gpsimd.cost_model; docs/cost-models.md).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "trnsim/hbm_target.hpp"

namespace trnsim {

/// Makes `name` a value of `hbm.model`: under dma.model = packet, every HBM stack of a config
/// that selects it is built by `factory`. Registering a name again replaces its factory (also
/// the built-in `banked`). Call before loading a config that names it (Config::load checks the
/// name) and from one thread.
void register_hbm_model(const std::string& name, HbmTargetFactory factory);

/// How long an instruction keeps its engine busy, in cycles of the engine's clock.
struct EngineCycles {
  /// Busy time: the initiation interval to the engine's next instruction.
  std::uint64_t cycles = 0;
  /// TensorE: LoadStationary cycles before `cycles`, which may overlap the previous matmul's
  /// stream (0: the stationary is reused or the op has none).
  std::uint64_t load_stationary_cycles = 0;
  /// TensorE: cycles after `cycles` until the result is visible in PSUM.
  std::uint64_t latency_cycles = 0;
};

/// What an engine cost model knows of one instruction (docs/cost-models.md has the notation).
struct CostQuery {
  std::string_view opcode;  ///< as kernels spell it: "nc_matmul", "tensor_tensor", ...
  std::string_view engine;  ///< "tensor", "vector", "scalar" or "gpsimd"
  std::string_view dtype;   ///< element type of the main input ("bfloat16", ...)
  std::uint64_t elements_per_partition = 0;  ///< N: elements per partition of the main input
  std::uint32_t partitions = 0;              ///< partitions of the main input
  std::uint64_t flops = 0;                   ///< matmuls: 2 x K x M x N; other ops 0
  std::uint64_t bytes_read = 0;              ///< all operands read
  std::uint64_t bytes_written = 0;           ///< all operands written
  double clock_ghz = 0;                      ///< the engine's clock
  /// The instruction waited on the result of the one just before it on this engine.
  bool depends_on_recent = false;
  /// TensorE: the matmul reuses the stationary already loaded.
  bool stationary_reused = false;
  /// ScalarE: the activation function differs from the one whose table is loaded.
  bool activation_table_switch = false;
  /// The built-in `analytic` model's answer, to adjust or to ignore.
  EngineCycles analytic;
};

/// An engine cost model: a pure function of the query (the engine memoises its answers).
using CostModelFunction = std::function<EngineCycles(const CostQuery& query)>;

/// Makes `name` a value of `<engine>.cost_model` for `engine` = "tensor", "vector", "scalar" or
/// "gpsimd" (std::invalid_argument otherwise, or for an empty `model`): every instruction that
/// engine runs under a config that selects it is timed by `model`. Registering a name again
/// replaces its model. Call before loading a config that names it and from one thread.
void register_cost_model(const std::string& engine, const std::string& name,
                         CostModelFunction model);

}  // namespace trnsim
