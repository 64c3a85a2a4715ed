// Hardware parameters of one simulated system: a Trainium generation (per-NeuronCore engines,
// on-chip memories, DMA, HBM, collectives) plus the chips and fabric around it.
// Every parameter is declared ONCE, in a visit() below, with key, unit, description, source and
// range; JSON reading, validation, `trnsim config explain` and docs/config-reference.md are all
// visitors over these declarations. Defaults are Trainium2 (NeuronCore-v3) values. Instruction-
// specific cost formulas (e.g. reciprocal = 8N) belong to the cost models, not here.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace trnsim::config {

// ---- enumerations ------------------------------------------------------------------------------
// A config enum E has EnumNames<E>::names listing its JSON spellings in enumerator order.

enum class Generation { trn1, trn2, trn3, trn4 };
enum class DmaArbitration { round_robin, strict_priority };
enum class AddressHash { crc, bitslice };
enum class Topology { single, torus2d, torus3d, switch_, nvlink_switch };
enum class MemsetEngine { gpsimd, vector };
/// Descriptor generation the NKI front end gives a DMA whose kernel does not choose one.
enum class CompilerDge { none, hwdge };
enum class CopyEngine { vector, scalar, gpsimd };

template <class E>
struct EnumNames;
template <>
struct EnumNames<Generation> {
  static constexpr std::array<std::string_view, 4> names{"trn1", "trn2", "trn3", "trn4"};
};
template <>
struct EnumNames<DmaArbitration> {
  static constexpr std::array<std::string_view, 2> names{"round_robin", "strict_priority"};
};
template <>
struct EnumNames<AddressHash> {
  static constexpr std::array<std::string_view, 2> names{"crc", "bitslice"};
};
template <>
struct EnumNames<Topology> {
  static constexpr std::array<std::string_view, 5> names{"single", "torus2d", "torus3d", "switch",
                                                         "nvlink_switch"};
};

template <>
struct EnumNames<MemsetEngine> {
  static constexpr std::array<std::string_view, 2> names{"gpsimd", "vector"};
};
template <>
struct EnumNames<CompilerDge> {
  static constexpr std::array<std::string_view, 2> names{"none", "hwdge"};
};
template <>
struct EnumNames<CopyEngine> {
  static constexpr std::array<std::string_view, 3> names{"vector", "scalar", "gpsimd"};
};

template <class E>
concept ConfigEnum = std::is_enum_v<E> && requires {
  EnumNames<E>::names;
};

template <ConfigEnum E>
constexpr std::string_view enum_name(E value) {
  return EnumNames<E>::names[static_cast<std::size_t>(value)];
}

template <ConfigEnum E>
constexpr std::optional<E> parse_enum(std::string_view text) {
  for (std::size_t i = 0; i < EnumNames<E>::names.size(); ++i) {
    if (EnumNames<E>::names[i] == text) return static_cast<E>(i);
  }
  return std::nullopt;
}

// ---- declaration metadata ----------------------------------------------------------------------

/// What a visit() says about one field. `source` is the generic origin of the parameter
/// ("hardware-facts.md §N ..." or "assumed: why"); a config file's "sources" entry overrides it per
/// value. min/max bound numeric fields (inclusive); ignored for bool, enum and string fields.
///
/// A field is one of three kinds:
///  - settable (the default): config files and `--set` give its value;
///  - derived (`derived_from` non-empty): Params::derive() computes it when the config loads,
///    from the settable keys its formula names. `--set` on it is an error naming those keys; a
///    config file may state it only with the derived value (so `config show` output loads back);
///  - informational (`informational` non-empty): it changes no simulated result (a label, or a
///    hardware figure trnsim does not model), and `informational` says why. Config files set it
///    like any field; `--set` on it still applies but warns on stderr.
struct FieldMeta {
  std::string_view unit;
  std::string_view description;
  std::string_view source;
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  /// Formula over settable dotted keys, e.g. "tensor.rows" or "psum.banks x psum.bank_bytes".
  std::string_view derived_from = {};
  /// Why the field cannot change a simulated result.
  std::string_view informational = {};
  /// A std::string field naming a pluggable model (a backend selected by name): its built-in
  /// models, "a|b|c"; more may be registered at run time (schema.hpp, add_model_name).
  std::string_view models = {};

  /// This declaration, marked derived from `formula` (see derived_from).
  constexpr FieldMeta derived(std::string_view formula) const {
    FieldMeta copy = *this;
    copy.derived_from = formula;
    return copy;
  }
  /// This declaration, marked a choice between the models `names` ("a|b|c", see models).
  constexpr FieldMeta choosing(std::string_view names) const {
    FieldMeta copy = *this;
    copy.models = names;
    return copy;
  }
  /// This declaration, marked informational because `why` (see informational).
  constexpr FieldMeta no_effect(std::string_view why) const {
    FieldMeta copy = *this;
    copy.informational = why;
    return copy;
  }
};

// Visitor contract (all visit() functions call only these two members):
//   template <class T> void field(std::string_view key, T& value, const FieldMeta& meta);
//       T is int, std::int64_t, double, bool, std::string or a ConfigEnum.
//   template <class S> void section(std::string_view key, S& block, std::string_view description);
//       S has its own visit(); the visitor descends by calling block.visit(*this).

/// The declaration of every compute engine's `cost_model` key (core/cost/cost_models.hpp).
inline constexpr FieldMeta kEngineCostModelField =
    FieldMeta{"",
              "the engine's cost model: how long an instruction keeps the engine busy; "
              "`analytic` is the per-op formulas of docs/cost-models.md, `instant` one cycle per "
              "instruction (the what-if: this engine costs nothing); others may be registered "
              "(docs/cost-models.md)",
              "modelling choice, not hardware (docs/cost-models.md)"}
        .choosing("analytic|instant");

// ---- one struct per hardware block -------------------------------------------------------------

struct ChipParams {
  int cores = 8;
  int hbm_stacks = 4;
  int collective_cores = 16;
  int neuronlink_links = 4;

  template <class V>
  void visit(V& v) {
    v.field("cores", cores,
            {"count", "NeuronCores per chip (physical)", "hardware-facts.md §1", 1, 1024});
    v.field("hbm_stacks", hbm_stacks,
            {"count", "HBM stacks per chip", "hardware-facts.md §1 (HBM capacity row)", 1, 64});
    v.field("collective_cores", collective_cores,
            {"count", "CC-Cores (collective-communication sequencers) per chip",
             "hardware-facts.md §1, §11.5 (sources disagree, see §15)", 0, 1024});
    v.field("neuronlink_links", neuronlink_links,
            {"count", "chip-to-chip links per chip (NeuronLink or switch ports)",
             "hardware-facts.md §1 (Chip-to-chip row)", 0, 64});
  }
};

struct TensorEngineParams {
  double clock_ghz = 2.4;
  int rows = 128;
  int cols = 128;
  int moving_fmax = 512;
  bool bf16_dst_supported = false;
  int moving_fmax_bf16_dst = 512;
  int mm_min_ii_cycles = 64;
  double fp32_cost_factor = 4;
  double load_stationary_speedup = 4;
  bool double_row_supported = true;
  double fp8_double_row_speedup = 2;
  bool mx_supported = false;
  double mx_speedup = 4;
  double mxfp4_speedup = 4;
  int pipeline_latency_cycles = 256;
  double transpose_fp32_mode_speedup = 2;
  bool background_transpose = false;
  int pe_tile_granularity = 32;
  bool throttle_enabled = true;
  double throttle_initial_fraction = 0.5;
  double throttle_ramp_ns = 3000;
  double throttle_window_ns = 3000;
  double throttle_reengage_utilization = 0.5;
  std::string cost_model = "analytic";

  double cycle_ns() const { return 1.0 / clock_ghz; }

  template <class V>
  void visit(V& v) {
    v.field("clock_ghz", clock_ghz, {"GHz", "TensorE clock", "hardware-facts.md §2", 0.01, 20});
    v.field("rows", rows,
            {"PEs",
             "PE-array size: rows = columns (the array is square) = contraction (K) partitions = "
             "SBUF and PSUM partitions = pmax; the keys derived from tensor.rows follow it",
             "hardware-facts.md §3.1", 1, 4096});
    v.field("cols", cols,
            FieldMeta{"PEs",
                      "PE-array columns = stationary free size limit (gemm_stationary_fmax) = "
                      "matmul output (PSUM) partitions; the array is square, as non-square arrays "
                      "are not modelled: SBUF (rows) and PSUM (columns) share one partition count",
                      "hardware-facts.md §3.1", 1, 4096}
                .derived("tensor.rows"));
    v.field("moving_fmax", moving_fmax,
            {"elements", "largest moving free size of one matmul with FP32 PSUM output",
             "hardware-facts.md §3.1 (512 on NC-v2/v3, 4096 on NC-v4)", 1, 1 << 20});
    v.field(
        "bf16_dst_supported", bf16_dst_supported,
        {"bool", "matmul may write BF16 to PSUM (NC-v4+)", "hardware-facts.md §3.1, §3.7", 0, 1});
    v.field("moving_fmax_bf16_dst", moving_fmax_bf16_dst,
            {"elements", "largest moving free size with BF16 PSUM output (if supported)",
             "hardware-facts.md §3.1 (8192 on NC-v4)", 1, 1 << 20});
    v.field("mm_min_ii_cycles", mm_min_ii_cycles,
            {"cycles", "minimum initiation interval of MultiplyMoving (MM_INIT_LATENCY)",
             "hardware-facts.md §3.2 (64 on NC-v2; assumed same later)", 1, 100000});
    v.field("fp32_cost_factor", fp32_cost_factor,
            {"x", "FP32 matmul cost relative to BF16", "hardware-facts.md §3.2 (4x)", 1, 64});
    v.field("load_stationary_speedup", load_stationary_speedup,
            {"x", "LoadStationary speed relative to a MultiplyMoving of the same free size",
             "hardware-facts.md §3.2 (up to 4x)", 1, 64});
    v.field(
        "double_row_supported", double_row_supported,
        {"bool", "FP8 double-row perf mode available (NC-v3+)", "hardware-facts.md §3.4", 0, 1});
    v.field(
        "fp8_double_row_speedup", fp8_double_row_speedup,
        {"x", "FP8 double-row throughput relative to BF16", "hardware-facts.md §3.4 (2x)", 1, 64});
    v.field(
        "mx_supported", mx_supported,
        {"bool", "nc_matmul_mx (MXFP8/MXFP4) available (NC-v4+)", "hardware-facts.md §3.5", 0, 1});
    v.field(
        "mx_speedup", mx_speedup,
        {"x", "MXFP8 matmul throughput relative to BF16", "hardware-facts.md §3.5 (4x)", 1, 64});
    v.field("mxfp4_speedup", mxfp4_speedup,
            {"x", "MXFP4 matmul throughput relative to BF16",
             "hardware-facts.md §1, §3.5 (same rate as MXFP8 on Trn3)", 1, 64});
    v.field(
        "pipeline_latency_cycles", pipeline_latency_cycles,
        FieldMeta{"cycles",
                  "latency from MM issue to last PSUM write (systolic fill/drain: rows + cols)",
                  "assumed: rows + cols; stage count not published (hardware-facts.md §3.2, §16)",
                  0, 100000}
            .derived("2 x tensor.rows"));
    v.field("transpose_fp32_mode_speedup", transpose_fp32_mode_speedup,
            {"x", "FP32 transpose speed-up of is_transpose mode (1 = no transpose mode)",
             "hardware-facts.md §3.3 (2x on NC-v3+)", 1, 64});
    v.field("background_transpose", background_transpose,
            {"bool", "a transpose may overlap another matmul/transpose (NC-v4)",
             "hardware-facts.md §3.3", 0, 1});
    v.field("pe_tile_granularity", pe_tile_granularity,
            {"PEs", "smallest row/column PE tile for tile_position/tile_size",
             "hardware-facts.md §3.2 (32; 64 on NC-v2)", 1, 4096});
    v.field("throttle_enabled", throttle_enabled,
            {"bool", "dI/dt utilization throttling modelled", "hardware-facts.md §3.8 (Trn2, Trn3)",
             0, 1});
    v.field("throttle_initial_fraction", throttle_initial_fraction,
            {"fraction", "TensorE utilization limit when work starts",
             "hardware-facts.md §3.8 (~50%)", 0.01, 1});
    v.field("throttle_ramp_ns", throttle_ramp_ns,
            {"ns", "time to ramp linearly from the initial limit to full rate",
             "hardware-facts.md §3.8 (~3 us; linear shape assumed)", 0, 1e9});
    v.field("throttle_window_ns", throttle_window_ns,
            {"ns", "utilization averaging window for re-engaging the throttle",
             "hardware-facts.md §3.8 (~3 us)", 1, 1e9});
    v.field("throttle_reengage_utilization", throttle_reengage_utilization,
            {"fraction", "throttle re-engages when window utilization falls below this",
             "hardware-facts.md §3.8 (50%)", 0, 1});
    v.field("cost_model", cost_model, kEngineCostModelField);
  }
};

struct VectorEngineParams {
  double clock_ghz = 0.96;
  int lanes = 128;
  int min_ii_cycles = 64;
  int dependent_overhead_cycles = 100;
  int access_overhead_cycles = 60;
  double bf16_fast_copy_speedup = 4;
  double bf16_2x_speedup = 2;
  int max_free_elems_sbuf = 65536;
  int max_free_elems_psum = 4096;
  int bn_stats_fmax = 512;
  int transpose_max = 32;
  bool shares_sbuf_port_with_gpsimd = false;
  bool shares_psum_port_with_scalar = false;
  double exponential_speedup = 1;
  std::string cost_model = "analytic";

  double cycle_ns() const { return 1.0 / clock_ghz; }

  template <class V>
  void visit(V& v) {
    v.field("clock_ghz", clock_ghz, {"GHz", "VectorE clock", "hardware-facts.md §2", 0.01, 20});
    v.field("lanes", lanes,
            FieldMeta{"lanes", "parallel lanes, one per partition", "hardware-facts.md §4", 1, 4096}
                .derived("tensor.rows"));
    v.field("min_ii_cycles", min_ii_cycles,
            {"cycles", "minimum initiation interval of one instruction (MIN_II)",
             "hardware-facts.md §4, §13 (N-ISA-COST, ~64)", 0, 100000});
    v.field("dependent_overhead_cycles", dependent_overhead_cycles,
            {"cycles", "static overhead of an instruction that depends on the previous one",
             "hardware-facts.md §4 (~100, NC-v2)", 0, 100000});
    v.field("access_overhead_cycles", access_overhead_cycles,
            FieldMeta{"cycles", "static overhead per tensor access request",
                      "hardware-facts.md §7 (~60, NC-v2)", 0, 100000}
                .no_effect("not modelled: VectorE costs use min_ii_cycles and "
                           "dependent_overhead_cycles, which the measured figures include"));
    v.field("bf16_fast_copy_speedup", bf16_fast_copy_speedup,
            {"x", "tensor_copy/tensor_scalar speed-up, SBUF->SBUF, BF16/FP16, unit stride",
             "hardware-facts.md §4 (4x on NC-v3+, 1 on NC-v2)", 1, 64});
    v.field("bf16_2x_speedup", bf16_2x_speedup,
            {"x", "speed-up of the 2x perf mode (strided or PSUM BF16/FP16, bf16 tensor_tensor)",
             "hardware-facts.md §4 (2x on NC-v3+, 1 on NC-v2)", 1, 64});
    v.field("max_free_elems_sbuf", max_free_elems_sbuf,
            {"elements", "largest free size of one instruction on SBUF",
             "hardware-facts.md §4 (64K)", 1, 1 << 30});
    v.field("max_free_elems_psum", max_free_elems_psum,
            {"elements", "largest free size of one instruction on PSUM",
             "hardware-facts.md §4 (4K)", 1, 1 << 30});
    v.field(
        "bn_stats_fmax", bn_stats_fmax,
        {"elements", "largest free size of bn_stats", "hardware-facts.md §4 (512)", 1, 1 << 30});
    v.field("transpose_max", transpose_max,
            {"elements", "largest square VectorE nc_transpose (both dims)",
             "hardware-facts.md §4 (32x32)", 1, 4096});
    v.field("shares_sbuf_port_with_gpsimd", shares_sbuf_port_with_gpsimd,
            {"bool", "VectorE and GpSimdE cannot access SBUF at the same time",
             "hardware-facts.md §7 (NC-v2 only)", 0, 1});
    v.field("shares_psum_port_with_scalar", shares_psum_port_with_scalar,
            {"bool", "VectorE and ScalarE cannot access PSUM at the same time",
             "hardware-facts.md §7 (NC-v2 only)", 0, 1});
    v.field("exponential_speedup", exponential_speedup,
            {"x", "VectorE exponential throughput relative to ScalarE activation(exp)",
             "hardware-facts.md §4 (4x on NC-v4; instruction absent before)", 1, 64});
    v.field("cost_model", cost_model, kEngineCostModelField);
  }
};

struct ScalarEngineParams {
  double clock_ghz = 1.2;
  int lanes = 128;
  int min_ii_cycles = 64;
  int dependent_overhead_cycles = 200;
  int accumulator_read_cycles = 64;
  double bf16_speedup = 1;
  int table_switch_cycles = 500;
  std::string cost_model = "analytic";

  double cycle_ns() const { return 1.0 / clock_ghz; }

  template <class V>
  void visit(V& v) {
    v.field("clock_ghz", clock_ghz,
            {"GHz", "ScalarE (activation engine) clock", "hardware-facts.md §2", 0.01, 20});
    v.field("lanes", lanes,
            FieldMeta{"lanes", "parallel lanes, one per partition", "hardware-facts.md §5", 1, 4096}
                .derived("tensor.rows"));
    v.field("min_ii_cycles", min_ii_cycles,
            {"cycles", "minimum initiation interval of one instruction (MIN_II)",
             "hardware-facts.md §5 (N-ISA-COST, ~64)", 0, 100000});
    v.field("dependent_overhead_cycles", dependent_overhead_cycles,
            {"cycles", "extra cycles when an instruction depends on the previous one",
             "hardware-facts.md §5: 264 measured (189 ns, NC-v2) - 64 MIN_II", 0, 100000});
    v.field("accumulator_read_cycles", accumulator_read_cycles,
            {"cycles", "cost of ActReadAccumulator (reading reduce_regs)",
             "hardware-facts.md §5 (~64)", 0, 100000});
    v.field("bf16_speedup", bf16_speedup,
            {"x", "BF16/FP16 tensor_scalar/tensor_copy speed-up on ScalarE",
             "hardware-facts.md §5 (up to 2x on NC-v4, 1 before)", 1, 64});
    v.field("table_switch_cycles", table_switch_cycles,
            {"cycles", "activation-table reload when the function changes",
             "assumed: not published (hardware-facts.md §5, §16); order of a short table load", 0,
             1000000});
    v.field("cost_model", cost_model, kEngineCostModelField);
  }
};

struct GpSimdEngineParams {
  double clock_ghz = 1.2;
  int lanes = 128;
  int processors = 8;
  int start_cycles = 150;
  int dynamic_copy_min_cycles = 600;
  double dma_bandwidth_gbps = 307;
  std::string cost_model = "analytic";

  double cycle_ns() const { return 1.0 / clock_ghz; }

  template <class V>
  void visit(V& v) {
    v.field("clock_ghz", clock_ghz, {"GHz", "GpSimdE clock", "hardware-facts.md §2", 0.01, 20});
    v.field("lanes", lanes,
            FieldMeta{"lanes",
                      "32-bit lanes over all processors, one per partition (one element per "
                      "partition per cycle)",
                      "hardware-facts.md §6", 1, 4096}
                .derived("tensor.rows"));
    v.field("processors", processors,
            FieldMeta{"count", "SIMD processors, each serving partitions/processors partitions",
                      "hardware-facts.md §6 (8)", 1, 1024}
                .no_effect("not modelled: GpSimd costs depend on its lanes, not on how they are "
                           "grouped into processors"));
    v.field("start_cycles", start_cycles,
            {"cycles", "fixed start cost of an instruction (GPSIMD_START)",
             "hardware-facts.md §6 (~150)", 0, 100000});
    v.field("dynamic_copy_min_cycles", dynamic_copy_min_cycles,
            FieldMeta{"cycles", "minimum cost of tensor_copy_dynamic_src/dst",
                      "hardware-facts.md §6 (~600)", 0, 1000000}
                .no_effect("not modelled: the kernel format has no tensor_copy_dynamic_src/dst"));
    v.field(
        "dma_bandwidth_gbps", dma_bandwidth_gbps,
        FieldMeta{"GB/s", "bandwidth of the DMA engines integrated in the processors (0 = none)",
                  "hardware-facts.md §6 (307 GB/s on NC-v3)", 0, 1e6}
            .no_effect("not modelled: every DMA runs on the core's DMA engines (dma.*)"));
    v.field("cost_model", cost_model, kEngineCostModelField);
  }
};

struct SequencerParams {
  int fetch_buffer_instructions = 64;
  double fetch_latency_ns = 100;
  double fetch_instructions_per_ns = 0.5;
  int max_in_flight_instructions = 1024;
  int registers = 64;
  double semaphore_latency_ns = 50;
  double issue_ns = 2;
  double launch_overhead_us = 16.2;

  template <class V>
  void visit(V& v) {
    v.field("fetch_buffer_instructions", fetch_buffer_instructions,
            {"instructions",
             "instructions an engine holds fetched (or being fetched) from its own instruction "
             "stream and not yet started; the launch fills it, and a slot is refetched when its "
             "instruction starts",
             "assumed: not published (hardware-facts.md §16); 64 hides "
             "fetch_latency_ns behind 64 instructions of at least 1.6 ns each",
             1, 1 << 16});
    v.field(
        "fetch_latency_ns", fetch_latency_ns,
        {"ns", "from a fetch-buffer slot coming free to the next instruction of the stream in it",
         "assumed: not published (hardware-facts.md §16); about one HBM "
         "read (controller 50 + tRCD 14 + tCL 14 ns on Trainium2) and the on-chip path",
         0, 1e6});
    v.field("fetch_instructions_per_ns", fetch_instructions_per_ns,
            {"instructions/ns", "instructions one engine's fetch unit delivers per ns",
             "assumed: not published (hardware-facts.md §16); one instruction "
             "per sequencer issue (issue_ns), so fetch bounds only streams of instructions "
             "shorter than an issue",
             1e-6, 1e6});
    v.field(
        "max_in_flight_instructions", max_in_flight_instructions,
        {"instructions",
         "simulator memory bound, not hardware: instructions the program walk has handed to "
         "the engines' streams (in program order, to find their dependencies) and that have "
         "not retired; an engine whose next instruction is further ahead waits, so a bound "
         "too small couples the streams; memory grows with what a kernel uses of it",
         "simulator bound: 1,024 runs the worked example of docs/architecture.md at the "
         "matmuls' time without slowing the simulation down; "
         "65,536 moves two examples (flash_attention_fwd up to +1.5 %, T1 v2 +0.05 %: more DMAs "
         "triggered early share the bandwidth) and costs memory and speed",
         64, 1 << 20});
    v.field("registers", registers,
            FieldMeta{"count", "32-bit registers per engine sequencer",
                      "hardware-facts.md §2 (64, NC-v2..v4)", 1, 4096}
                .no_effect("not modelled: the kernel format has no register instructions"));
    v.field("semaphore_latency_ns", semaphore_latency_ns,
            {"ns", "from a semaphore update to a waiting engine seeing it",
             "assumed: not published (hardware-facts.md §2, §16)", 0, 1e6});
    v.field("issue_ns", issue_ns,
            {"ns",
             "sequencer issue cost of an instruction without a data path (DMA or collective "
             "trigger, core_barrier)",
             "assumed: small next to MIN_II; not published", 0, 1e6});
    v.field("launch_overhead_us", launch_overhead_us,
            {"us", "per-kernel runtime preamble/postamble, reported separately",
             "calibration-targets.md T3 (12-19 us without DMA activity)", 0, 1e6});
  }
};

struct SbufParams {
  int partitions = 128;
  int partition_bytes = 229376;
  int usable_partition_bytes = 196608;
  int alignment_bytes = 32;
  int full_rate_max_stride_bytes = 16;

  template <class V>
  void visit(V& v) {
    v.field("partitions", partitions,
            FieldMeta{"partitions", "SBUF partitions (pmax), one per PE-array row",
                      "hardware-facts.md §8 (128)", 1, 4096}
                .derived("tensor.rows"));
    v.field(
        "partition_bytes", partition_bytes,
        FieldMeta{"bytes", "physical SBUF bytes per partition", "hardware-facts.md §8", 1, 1 << 30}
            .no_effect("kernels allocate sbuf.usable_partition_bytes, which must not exceed "
                       "it; the rest is reserved for the runtime"));
    v.field("usable_partition_bytes", usable_partition_bytes,
            {"bytes", "bytes per partition a kernel may allocate (rest reserved for runtime)",
             "hardware-facts.md §8 (NC-v2 176 KiB; later generations see the config)", 1, 1 << 30});
    v.field("alignment_bytes", alignment_bytes,
            {"bytes", "allocation alignment of a tensor's per-partition start",
             "assumed: sbuf_min_align value not published (hardware-facts.md §8)", 1, 1 << 20});
    v.field("full_rate_max_stride_bytes", full_rate_max_stride_bytes,
            {"bytes", "largest innermost stride read/written at full rate (half above)",
             "hardware-facts.md §7 (16 B)", 1, 1 << 20});
  }
};

struct PsumParams {
  int partition_bytes = 16384;
  int banks = 8;
  int bank_bytes = 2048;
  int alignment_bytes = 4;

  template <class V>
  void visit(V& v) {
    v.field(
        "partition_bytes", partition_bytes,
        FieldMeta{"bytes", "PSUM bytes per partition", "hardware-facts.md §8 (16 KiB)", 1, 1 << 30}
            .derived("psum.banks x psum.bank_bytes"));
    v.field("banks", banks,
            {"count", "PSUM banks per partition (accumulation groups)", "hardware-facts.md §8 (8)",
             1, 1024});
    v.field("bank_bytes", bank_bytes,
            {"bytes", "bytes per bank per partition (512 FP32)", "hardware-facts.md §8 (2 KiB)", 1,
             1 << 30});
    v.field("alignment_bytes", alignment_bytes,
            {"bytes", "allocation alignment inside a bank",
             "assumed: psum_min_align not published; one FP32 element", 1, 1 << 20});
  }
};

struct DmaParams {
  std::string model = "flow";
  int engines_per_core = 16;
  int queues_per_engine = 16;
  double engine_bandwidth_gbps = 23;
  double core_bandwidth_gbps = 437.5;
  double hbm_port_bandwidth_gbps = 437.5;
  double fixed_cost_ns = 450;
  double hwdge_cost_ns = 600;
  double hwdge_latency_ns = 750;
  double swdge_cost_ns = 1000;
  double descriptor_overhead_ns = 25;
  int descriptor_prefetch = 8;
  int packet_bytes = 4096;
  DmaArbitration arbitration = DmaArbitration::round_robin;
  int priority_classes = 1;
  double transpose_efficiency_hbm = 0.9;
  double transpose_efficiency_sbuf = 0.5;
  double compute_efficiency = 0.5;
  double sbuf_bandwidth_gbps = 10000;
  double psum_bandwidth_gbps = 10000;

  template <class V>
  void visit(V& v) {
    v.field("model", model,
            FieldMeta{"",
                      "DMA/HBM timing granularity: packet (every packet and HBM request: queue "
                      "interleaving, banks, row buffers), flow (each DMA's share per engine as a "
                      "fluid: queue sharing, the same engines, descriptor costs and caps, no HBM "
                      "banks) or transfer (one closed-form computation per DMA, queues served in "
                      "submission order; docs/performance.md)",
                      "modelling choice, not hardware (docs/architecture.md)"}
                .choosing("packet|transfer|flow"));
    v.field("engines_per_core", engines_per_core,
            {"count", "DMA engines per NeuronCore", "hardware-facts.md §9.1 (16)", 1, 1024});
    v.field("queues_per_engine", queues_per_engine,
            {"count", "DMA queues (rings) per engine", "hardware-facts.md §9.2 (16)", 1, 1024});
    v.field("engine_bandwidth_gbps", engine_bandwidth_gbps,
            {"GB/s", "peak bandwidth of one DMA engine",
             "hardware-facts.md §9.1 (17/23/33 B/ns for Trn1/2/3; conflicts in §15)", 0.001, 1e6});
    v.field("core_bandwidth_gbps", core_bandwidth_gbps,
            {"GB/s", "cap on all DMA traffic of one NeuronCore (chip DMA bandwidth / cores)",
             "hardware-facts.md §1, §9.1 (chip DMA bandwidth)", 0.001, 1e7});
    v.field("hbm_port_bandwidth_gbps", hbm_port_bandwidth_gbps,
            {"GB/s",
             "cap on one NeuronCore's DMA traffic from HBM, and separately on its traffic to "
             "HBM (reads and writes have their own channels)",
             "hardware-facts.md §10: the profiler's dma_ddr_bandwidth, 'maximum DMA DDR bandwidth "
             "available to a single physical NeuronCore', value not published",
             0.001, 1e7});
    v.field(
        "fixed_cost_ns", fixed_cost_ns,
        {"ns",
         "per-DMA latency from issue to data movement (synchronisation, semaphore-to-start) "
         "of a DMA with prebuilt descriptors; overlaps every other DMA in flight on the same "
         "and other queues (it occupies no engine)",
         "fitted on calibration-targets.md T3 transpose and T4 curve (hardware-facts.md §9.2 gives "
         "~1300 ns for descriptor setup, synchronisation and semaphore-to-start together)",
         0, 1e9});
    v.field("hwdge_cost_ns", hwdge_cost_ns,
            {"ns",
             "hardware descriptor generation (dge hwdge, NC-v3+): DGE occupancy per DMA "
             "instruction. The DGE of the triggering sequencer starts one instruction every "
             "hwdge_cost_ns at most, so a stream of hwdge DMAs from one sequencer moves at most "
             "one DMA per hwdge_cost_ns",
             "hardware-facts.md §9.3 (~600 ns per hwdge instruction)", 0, 1e9});
    v.field(
        "hwdge_latency_ns", hwdge_latency_ns,
        {"ns",
         "hardware descriptor generation latency: from the DGE starting a DMA instruction to "
         "its descriptors being ready, before fixed_cost_ns; at least hwdge_cost_ns (the DGE "
         "pipelines: it starts the next instruction after hwdge_cost_ns)",
         "fitted on calibration-targets.md T4 curve: with fixed_cost_ns it makes the ~1300 "
         "ns of descriptor setup, synchronisation and semaphore-to-start of hardware-facts.md §9.2",
         0, 1e9});
    v.field("swdge_cost_ns", swdge_cost_ns,
            {"ns",
             "GpSimd software descriptor generation (dge swdge) per DMA instruction, before "
             "fixed_cost_ns; one instruction at a time per core (occupancy and latency)",
             "assumed: not published (hardware-facts.md §9.3); of the order of the fixed cost", 0,
             1e9});
    v.field("descriptor_overhead_ns", descriptor_overhead_ns,
            {"ns",
             "engine occupancy per descriptor (contiguous buffer): an engine's descriptor unit "
             "takes this long per descriptor, pipelined with its data path, so it bounds "
             "descriptors smaller than engine bandwidth x this only",
             "fitted: bounded by calibration-targets.md T3 transpose (1,024 descriptors of 512 B "
             "per engine in 28-35 us of DMA activity: at most 27-34 ns each); T4's curve leaves "
             "it open below that bound; 25 ns",
             0, 1e6});
    v.field("descriptor_prefetch", descriptor_prefetch,
            {"descriptors",
             "descriptors an engine may process ahead of the one its data path is moving",
             "assumed: not published (hardware-facts.md §16); one [128, F] transfer's 8 per engine",
             1, 1 << 20});
    v.field("packet_bytes", packet_bytes,
            {"bytes", "DMA packet size; queue arbitration switches at packet boundaries",
             "hardware-facts.md §9.2 (4 KiB default)", 1, 1 << 30});
    v.field("arbitration", arbitration,
            {"", "arbitration between DMA queues",
             "hardware-facts.md §9.2 (round robin; QoS on NC-v4)"});
    v.field("priority_classes", priority_classes,
            {"count", "DMA priority classes (dma_copy priority 0..n-1)",
             "hardware-facts.md §9.2 (4 on NC-v4; 1 = none)", 1, 64});
    v.field("transpose_efficiency_hbm", transpose_efficiency_hbm,
            {"fraction", "dma_transpose HBM->SBUF throughput relative to a copy",
             "hardware-facts.md §9.4 (up to 90%)", 0.001, 1});
    v.field("transpose_efficiency_sbuf", transpose_efficiency_sbuf,
            {"fraction", "dma_transpose SBUF->SBUF throughput relative to a copy",
             "hardware-facts.md §9.4 (up to 50%)", 0.001, 1});
    v.field("compute_efficiency", compute_efficiency,
            FieldMeta{"fraction", "dma_compute / SBUF read-add-write throughput relative to a copy",
                      "hardware-facts.md §8 (50% before NC-v4, 100% on NC-v4)", 0.001, 1}
                .no_effect("not modelled: the kernel format has no dma_compute, and all-reduce "
                           "reductions run at collective.reduce_bandwidth_gbps"));
    v.field("sbuf_bandwidth_gbps", sbuf_bandwidth_gbps,
            {"GB/s", "SBUF bandwidth available to the DMA engines of one core (DMA endpoint)",
             "hardware-facts.md §8 (SBUF ~10 TB/s per NeuronCore)", 0.001, 1e7});
    v.field("psum_bandwidth_gbps", psum_bandwidth_gbps,
            {"GB/s", "PSUM bandwidth available to the DMA engines of one core (DMA endpoint)",
             "hardware-facts.md §8 (PSUM ~10 TB/s per NeuronCore)", 0.001, 1e7});
  }
};

struct HbmParams {
  std::string model = "banked";
  double stack_bandwidth_gbps = 725;
  double stack_capacity_gib = 24;
  int cores_per_stack = 2;
  int channels_per_stack = 16;
  int banks_per_channel = 32;
  int row_bytes = 1024;
  int interleave_bytes = 256;
  int burst_bytes = 64;
  AddressHash address_hash = AddressHash::crc;
  double t_rcd_ns = 14;
  double t_rp_ns = 14;
  double t_cl_ns = 14;
  double t_refi_ns = 3900;
  double t_rfc_ns = 350;
  int refresh_postpone_max = 8;
  double t_wtr_ns = 8;
  double t_rtw_ns = 4;
  double controller_latency_ns = 50;
  int queue_depth = 64;

  /// Capacity of one stack in bytes (stack_capacity_gib x 2^30, rounded to the nearest byte).
  std::uint64_t stack_capacity_bytes() const {
    return static_cast<std::uint64_t>(std::llround(stack_capacity_gib * 1024.0 * 1024.0 * 1024.0));
  }

  /// Time one channel needs to transfer one burst at its share of the stack bandwidth, in ns.
  double burst_ns() const { return burst_bytes / (stack_bandwidth_gbps / channels_per_stack); }

  template <class V>
  void visit(V& v) {
    v.field("model", model,
            FieldMeta{"",
                      "timing model of an HBM stack under dma.model = packet: banked (channels, "
                      "banks, row buffers, bus turnarounds, refresh; the hbm.* timings below), "
                      "ideal (the stack bandwidth and hbm.controller_latency_ns only: a bound), "
                      "or a model registered by a program that embeds trnsim "
                      "(docs/embedding.md). The transfer and flow DMA models compute HBM time "
                      "themselves",
                      "modelling choice, not hardware (docs/architecture.md)"}
                .choosing("banked|ideal"));
    v.field("stack_bandwidth_gbps", stack_bandwidth_gbps,
            {"GB/s", "peak bandwidth of one HBM stack (chip HBM bandwidth / stacks)",
             "hardware-facts.md §1, §10", 0.001, 1e7});
    v.field("stack_capacity_gib", stack_capacity_gib,
            {"GiB", "capacity of one HBM stack (chip capacity / stacks)",
             "hardware-facts.md §1, §10", 0.001, 1e6});
    v.field("cores_per_stack", cores_per_stack,
            {"count", "NeuronCores sharing one stack (cores = stacks x this)",
             "hardware-facts.md §10 (Trn2: each bank shared by 2 NCs)", 1, 1024});
    v.field("channels_per_stack", channels_per_stack,
            {"count", "independent channels per stack",
             "assumed: JEDEC-typical (HBM3 16, HBM2e 8); not published (hardware-facts.md §10)", 1,
             1024});
    v.field("banks_per_channel", banks_per_channel,
            {"count", "banks per channel", "assumed: JEDEC-typical; not published", 1, 1024});
    v.field("row_bytes", row_bytes,
            {"bytes", "DRAM row (page) size", "assumed: JEDEC-typical 1 KiB", 1, 1 << 20});
    v.field("interleave_bytes", interleave_bytes,
            {"bytes", "address-interleaving granule across channels",
             "assumed: not published (hardware-facts.md §10)", 1, 1 << 30});
    v.field("burst_bytes", burst_bytes,
            {"bytes", "bytes per channel burst; burst time = burst_bytes / per-channel bandwidth",
             "assumed: JEDEC-typical", 1, 1 << 20});
    v.field("address_hash", address_hash,
            {"", "physical address to channel/bank mapping",
             "hardware-facts.md §10 (N-CRC: CRC hashing)"});
    v.field("t_rcd_ns", t_rcd_ns,
            {"ns", "activate to read/write (tRCD)", "assumed: JEDEC-typical", 0, 1e6});
    v.field("t_rp_ns", t_rp_ns, {"ns", "precharge (tRP)", "assumed: JEDEC-typical", 0, 1e6});
    v.field("t_cl_ns", t_cl_ns,
            {"ns", "read command to data (CAS latency)", "assumed: JEDEC-typical", 0, 1e6});
    v.field("t_refi_ns", t_refi_ns,
            {"ns", "refresh interval (tREFI)", "assumed: JEDEC-typical", 1, 1e9});
    v.field("t_rfc_ns", t_rfc_ns,
            {"ns", "refresh cycle time (tRFC)", "assumed: JEDEC-typical", 0, 1e6});
    v.field(
        "refresh_postpone_max", refresh_postpone_max,
        {"refreshes", "refreshes a busy channel may postpone (pulled into idle time when possible)",
         "assumed: JEDEC-typical (8)", 0, 1000});
    v.field("t_wtr_ns", t_wtr_ns,
            {"ns", "write-to-read turnaround (tWTR)", "assumed: JEDEC-typical", 0, 1e6});
    v.field("t_rtw_ns", t_rtw_ns,
            {"ns", "read-to-write turnaround", "assumed: JEDEC-typical", 0, 1e6});
    v.field("controller_latency_ns", controller_latency_ns,
            {"ns", "controller + on-chip network latency added to each access",
             "assumed: not published", 0, 1e6});
    v.field("queue_depth", queue_depth,
            {"requests", "requests buffered per channel controller", "assumed: not published", 1,
             1 << 20});
  }
};

struct CollectiveParams {
  double reduce_bandwidth_gbps = 184;
  double intra_hop_latency_ns = 1500;
  double inter_node_latency_ns = 15000;
  std::int64_t mesh_max_bytes = 1048576;
  std::int64_t rdh_max_bytes = 58720256;
  int packet_bytes = 65536;
  double op_overhead_ns = 52000;
  bool kangaring = true;
  std::string algorithm = "auto";

  template <class V>
  void visit(V& v) {
    v.field("reduce_bandwidth_gbps", reduce_bandwidth_gbps,
            {"GB/s", "per-core rate of the reduction (DMA compute) in all-reduce",
             "assumed: 16 engines x engine bandwidth x compute_efficiency (hardware-facts.md §9.4)",
             0.001, 1e7});
    v.field("intra_hop_latency_ns", intra_hop_latency_ns,
            {"ns", "per-hop latency of ring algorithms inside an instance",
             "hardware-facts.md §11.5 (about 1-2 us)", 0, 1e9});
    v.field("inter_node_latency_ns", inter_node_latency_ns,
            {"ns", "per-hop latency of collective algorithms between instances",
             "hardware-facts.md §11.2, §11.5 (~15 us)", 0, 1e9});
    v.field("mesh_max_bytes", mesh_max_bytes,
            {"bytes", "largest message for the Mesh algorithm (Ring/RDH above)",
             "hardware-facts.md §11.5 (< 1 MB, read as MiB)", 0, 1e15});
    v.field("rdh_max_bytes", rdh_max_bytes,
            {"bytes", "largest message for RDH (KangaRing above)",
             "hardware-facts.md §11.5 (56 MB, read as MiB)", 0, 1e15});
    v.field("packet_bytes", packet_bytes,
            FieldMeta{"bytes", "collective DMA packet size", "hardware-facts.md §9.2 (64 KiB)", 1,
                      1 << 30}
                .no_effect("not modelled: a collective step moves its chunk over the links and "
                           "reduction units as one transfer"));
    v.field("op_overhead_ns", op_overhead_ns,
            {"ns",
             "fixed cost of one collective operation (CC-core program start, group handshake, "
             "completion), paid once before its first step",
             "fitted: calibration-targets.md T5 on trn1-32xl: 58 us floor of the 2-rank "
             "all-reduce = this + 2 ring steps of 3 us; assumed the same on later generations",
             0, 1e9});
    v.field("kangaring", kangaring,
            {"bool", "KangaRing available: `auto` uses it above rdh_max_bytes (else Ring)",
             "hardware-facts.md §11.5 (KangaRing is documented for Trainium2)", 0, 1});
    v.field("algorithm", algorithm,
            FieldMeta{"",
                      "the algorithm of collectives whose kernel asks for `auto`: `auto` is the "
                      "runtime's choice by message size (docs/collectives.md); another name runs "
                      "that algorithm wherever it can (else Ring)",
                      "modelling choice; `auto` follows the runtime's documented choice "
                      "(hardware-facts.md §11.5)"}
                .choosing("auto|ring|mesh|rdh|kangaring|hierarchical"));
  }
};

struct SystemParams {
  int chips = 1;
  Topology topology = Topology::single;
  int torus_x = 1;
  int torus_y = 1;
  int torus_z = 1;
  int chips_per_instance = 1;
  double link_bandwidth_gbps = 128;
  double inter_instance_link_bandwidth_gbps = 64;
  double link_latency_ns = 200;
  double switch_port_bandwidth_gbps = 0;
  double switch_latency_ns = 0;
  int switch_levels = 0;
  double efa_bandwidth_gbps = 25;
  double efa_latency_ns = 15000;
  int lnc = 1;

  template <class V>
  void visit(V& v) {
    v.field("chips", chips,
            {"count", "chips in the simulated system", "instance definition", 1, 1 << 20});
    v.field("topology", topology,
            {"", "how chips are connected (single = one chip)", "hardware-facts.md §11"});
    v.field("torus_x", torus_x,
            {"chips", "torus size along X", "hardware-facts.md §11", 1, 1 << 20});
    v.field("torus_y", torus_y,
            {"chips", "torus size along Y", "hardware-facts.md §11", 1, 1 << 20});
    v.field("torus_z", torus_z,
            {"chips", "torus size along Z (instances in a 3D torus)", "hardware-facts.md §11.2", 1,
             1 << 20});
    v.field("chips_per_instance", chips_per_instance,
            {"count", "chips per server instance (beyond it: inter-instance links or EFA)",
             "hardware-facts.md §11", 1, 1 << 20});
    v.field("link_bandwidth_gbps", link_bandwidth_gbps,
            {"GB/s", "chip-to-chip link bandwidth per link per direction inside an instance",
             "hardware-facts.md §11 (chip figure / links / 2 directions: assumed split)", 0, 1e7});
    v.field(
        "inter_instance_link_bandwidth_gbps", inter_instance_link_bandwidth_gbps,
        {"GB/s", "per link per direction between instances (torus Z links)",
         "hardware-facts.md §11.2 (256 GB/s per chip over 2 Z links, both directions)", 0, 1e7});
    v.field("link_latency_ns", link_latency_ns,
            {"ns", "one-way latency of a chip-to-chip link",
             "assumed: not published; well below the 1-2 us algorithm hop", 0, 1e9});
    v.field("switch_port_bandwidth_gbps", switch_port_bandwidth_gbps,
            {"GB/s", "switch port bandwidth per direction (switched topologies)",
             "hardware-facts.md §11.3", 0, 1e7});
    v.field("switch_latency_ns", switch_latency_ns,
            {"ns", "latency through one switch level",
             "assumed: not published (hardware-facts.md §16)", 0, 1e9});
    v.field("switch_levels", switch_levels,
            {"count", "switch levels between the farthest chips (0 without switches)",
             "hardware-facts.md §11.3", 0, 16});
    v.field(
        "efa_bandwidth_gbps", efa_bandwidth_gbps,
        {"GB/s", "EFA network bandwidth per chip per direction", "hardware-facts.md §11", 0, 1e7});
    v.field("efa_latency_ns", efa_latency_ns,
            {"ns", "one-way EFA latency between instances", "hardware-facts.md §11.2 (~15 us)", 0,
             1e9});
    v.field("lnc", lnc,
            {"count",
             "logical NeuronCore size: physical cores per collective rank (2 = LNC=2: core pairs "
             "2k, 2k+1 act as one rank, each moving half its data)",
             "hardware-facts.md §12 (LNC=1 or 2 on Trn2/Trn3; runtime default 2). Assumed 1: "
             "kernel pids "
             "are physical cores",
             1, 2});
  }
};

/// Choices the Neuron compiler makes when it lowers an NKI Python kernel, which the NKI front end
/// (src/frontend, docs/nki-frontend.md) imitates. They shape the traced instruction stream, not
/// the hardware, and apply only to NKI Python kernels (a JSON kernel already says all of this).
/// The compiler's heuristics are not published: every value is an assumption.
struct CompilerParams {
  int loop_tile_buffers = 2;
  int dma_queues = 16;
  MemsetEngine sbuf_memset_engine = MemsetEngine::gpsimd;
  CopyEngine copy_engine = CopyEngine::vector;
  bool fold_zero_fill = true;
  CompilerDge dge_mode = CompilerDge::hwdge;

  template <class V>
  void visit(V& v) {
    v.field("loop_tile_buffers", loop_tile_buffers,
            {"buffers",
             "physical buffers that a tile created inside a traced loop rotates through (2 = "
             "double buffering: iteration i+1 loads while iteration i computes)",
             "assumed: double buffering, the usual choice for loop tiles; the compiler's "
             "allocation heuristics are not published",
             1, 64});
    v.field("dma_queues", dma_queues,
            {"queues",
             "DMA queues the front end spreads a kernel's DMA call sites over, round robin "
             "(at most dma.queues_per_engine)",
             "assumed: every queue of an engine (hardware-facts.md §9.2: 16); the compiler's queue "
             "assignment is not published",
             1, 1024});
    v.field("sbuf_memset_engine", sbuf_memset_engine,
            {"",
             "engine of a constant fill of an SBUF tile that the kernel does not put on an engine "
             "itself (nl.zeros, nl.full, tile[...] = c); PSUM fills stay on Vector",
             "assumed: GpSimd, keeping Vector free for arithmetic; the compiler's engine choice "
             "is not published"});
    v.field("copy_engine", copy_engine,
            {"",
             "engine of a tile copy that the kernel does not put on an engine itself (nl.copy, "
             "tile assignments); a GpSimd copy touching PSUM goes to Vector",
             "assumed: Vector, the engine of tensor_copy in NKI's ISA; the compiler's engine "
             "balancing is not published"});
    v.field("fold_zero_fill", fold_zero_fill,
            {"bool",
             "a zero-fill of a whole tile whose next access is an accumulation (+=, a matmul "
             "into PSUM) is folded into that accumulation instead of being an instruction",
             "assumed: the compiler drops such fills (a first accumulation overwrites); not "
             "published",
             0, 1});
    v.field("dge_mode", dge_mode,
            {"",
             "descriptor generation of a dma_copy whose kernel leaves dge_mode unset (or "
             "unknown): none (descriptors prebuilt by the runtime) or hwdge (the hardware DGE of "
             "the triggering sequencer, NeuronCore-v3 and later); a kernel's own dge_mode wins",
             "hardware-facts.md §9.3: hwdge is the hardware path on NC-v3+, and the published trn2 "
             "profiles made with prebuilt descriptors say the compiler's descriptor generation "
             "was disabled for them; the compiler's default is otherwise not published"});
  }
};

// ---- the whole configuration --------------------------------------------------------------------

struct Params {
  std::string name = "trn2";
  std::string description = "Trainium2 chip (NeuronCore-v3, 8 cores), one chip";
  Generation generation = Generation::trn2;
  int nc_version = 3;

  ChipParams chip;
  TensorEngineParams tensor;
  VectorEngineParams vector;
  ScalarEngineParams scalar;
  GpSimdEngineParams gpsimd;
  SequencerParams sequencer;
  SbufParams sbuf;
  PsumParams psum;
  DmaParams dma;
  HbmParams hbm;
  CollectiveParams collective;
  SystemParams system;
  CompilerParams compiler;

  template <class V>
  void visit(V& v) {
    v.field("name", name,
            FieldMeta{"", "configuration name", "config file"}.no_effect(
                "a label: it names the config in outputs"));
    v.field("description", description,
            FieldMeta{"", "one-line description", "config file"}.no_effect("a label"));
    v.field("generation", generation,
            FieldMeta{"", "Trainium generation", "hardware-facts.md §1"}.no_effect(
                "a label: what a generation can do is in nc_version and the other parameters"));
    v.field("nc_version", nc_version,
            {"", "NeuronCore version: 2 Trn1, 3 Trn2, 4 Trn3, 5 Trn4 (projected); ISA availability",
             "hardware-facts.md §1", 2, 5});
    v.section("chip", chip, "Chip composition");
    v.section("tensor", tensor, "Tensor Engine (PE array), per NeuronCore");
    v.section("vector", vector, "Vector Engine, per NeuronCore");
    v.section("scalar", scalar, "Scalar (activation) Engine, per NeuronCore");
    v.section("gpsimd", gpsimd, "GpSimd Engine, per NeuronCore");
    v.section("sequencer", sequencer, "Engine sequencers and kernel launch");
    v.section("sbuf", sbuf, "State buffer (SBUF), per NeuronCore");
    v.section("psum", psum, "Partial-sum buffer (PSUM), per NeuronCore");
    v.section("dma", dma, "DMA engines and queues, per NeuronCore");
    v.section("hbm", hbm, "HBM stacks");
    v.section("collective", collective, "Collective communication (CC-Cores, algorithms)");
    v.section("system", system, "Chips, topology and links of the simulated system");
    v.section("compiler", compiler,
              "Neuron compiler choices imitated when tracing NKI Python kernels (assumed)");
  }

  /// Sets every derived field (FieldMeta::derived) from the settable keys its formula names;
  /// load_config calls it after reading the settable fields. The PE array is square and
  /// tensor.rows is its size: the columns, the SBUF/PSUM partition count (the contraction lies
  /// on SBUF partitions, a matmul's output on PSUM partitions, one per column) and the Vector,
  /// Scalar and GpSimd lanes (one per partition) follow it, and so does the systolic fill/drain
  /// latency (rows + cols cycles). PSUM bytes per partition are its banks.
  void derive() {
    tensor.cols = tensor.rows;
    tensor.pipeline_latency_cycles = tensor.rows + tensor.cols;
    vector.lanes = tensor.rows;
    scalar.lanes = tensor.rows;
    gpsimd.lanes = tensor.rows;
    sbuf.partitions = tensor.rows;
    // Saturates instead of overflowing; load_config then rejects the value as out of range.
    const std::int64_t psum_bytes = std::int64_t{psum.banks} * psum.bank_bytes;
    psum.partition_bytes = psum_bytes > std::numeric_limits<int>::max()
                               ? std::numeric_limits<int>::max()
                               : static_cast<int>(psum_bytes);
  }

  // Derived quantities (pure).
  int cores_per_chip() const { return chip.cores; }
  int total_cores() const { return chip.cores * system.chips; }
  double hbm_capacity_gib() const { return chip.hbm_stacks * hbm.stack_capacity_gib; }
  double hbm_bandwidth_gbps() const { return chip.hbm_stacks * hbm.stack_bandwidth_gbps; }
  double tensor_cycle_ns() const { return tensor.cycle_ns(); }
  /// rows x cols MACs x 2 FLOP x clock, in FLOP/s (Trn2: 128*128*2*2.4e9 = 78.6e12).
  double peak_bf16_flops_per_core() const {
    return static_cast<double>(tensor.rows) * tensor.cols * 2.0 * tensor.clock_ghz * 1e9;
  }
  double peak_fp32_flops_per_core() const {
    return peak_bf16_flops_per_core() / tensor.fp32_cost_factor;
  }
  /// FP8 with double row (when supported), else the BF16 rate.
  double peak_fp8_flops_per_core() const {
    return peak_bf16_flops_per_core() *
           (tensor.double_row_supported ? tensor.fp8_double_row_speedup : 1.0);
  }
  double peak_mxfp8_flops_per_core() const {
    return tensor.mx_supported ? peak_bf16_flops_per_core() * tensor.mx_speedup : 0.0;
  }
  double peak_mxfp4_flops_per_core() const {
    return tensor.mx_supported ? peak_bf16_flops_per_core() * tensor.mxfp4_speedup : 0.0;
  }
  /// Fp32 elements in one PSUM bank per partition (psum_fmax).
  int psum_fmax() const { return psum.bank_bytes / 4; }
};

}  // namespace trnsim::config
