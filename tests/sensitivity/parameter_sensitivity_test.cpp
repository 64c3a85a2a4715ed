// Every parameter an architect can set changes a simulated result. kSensitivities lists, for
// each settable parameter (not derived, not informational: config/params.hpp), a perturbation,
// a workload that exercises it (a `trnsim` command line with --json), a metric of that output
// (JSON pointer) and the documented direction of its change; the test runs every workload with
// and without the perturbation as child processes and checks each direction. A parameter
// declared without an entry fails the test, and so does an entry for a key that is not a
// settable parameter. Informational parameters are run too and must change nothing.
#include <gtest/gtest.h>

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "config/load.hpp"
#include "config/schema.hpp"
#include "sweep/workers.hpp"

namespace trnsim {
namespace {

const std::string kExamples = std::string(TRNSIM_SOURCE_DIR) + "/examples/";
const std::string kKernels = std::string(TRNSIM_SOURCE_DIR) + "/tests/sensitivity/kernels/";

/// How the metric moves when the parameter takes the entry's value.
enum class Effect {
  kIncreases,
  kDecreases,
  kChanges,  ///< an algorithm or topology choice: no direction is documented, only that it moves
  kRejects,  ///< the workload becomes invalid: exit code 2 (a capacity, limit or feature)
};

/// Arguments after `trnsim` of a run that prints JSON. Fast and small on purpose: the transfer
/// DMA model unless the parameter is one of the packet model's.
struct Workload {
  std::string_view name;
  std::vector<std::string> arguments;
};

std::vector<std::string> run_kernel(const std::string& kernel, const std::string& config,
                                    std::vector<std::string> extra, std::string_view dma_model) {
  std::vector<std::string> arguments = {
      "run", kernel, "--config", config, "--json", "--set", "dma.model=" + std::string(dma_model)};
  arguments.insert(arguments.end(), extra.begin(), extra.end());
  return arguments;
}

std::vector<std::string> collective(const std::string& config, int ranks, const std::string& size,
                                    std::vector<std::string> extra) {
  std::vector<std::string> arguments = {
      "collective",       "--config", config,    "--ranks", std::to_string(ranks),
      "--ranks-per-chip", "1",        "--sizes", size,      "--json"};
  arguments.insert(arguments.end(), extra.begin(), extra.end());
  return arguments;
}

/// DMA engines and ports fast enough that the HBM stacks bound a stream (packet model).
const std::vector<std::string> kHbmBound = {"--set", "dma.core_bandwidth_gbps=10000",
                                            "--set", "dma.hbm_port_bandwidth_gbps=10000",
                                            "--set", "dma.engine_bandwidth_gbps=1000"};

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

const std::vector<Workload>& workloads() {
  static const std::vector<Workload> list = {
      // TensorE.
      {"matmul_trn2", run_kernel(kExamples + "kernels/matmul_tiled.json", "trn2", {}, "transfer")},
      {"short_moving_trn2",
       run_kernel(kExamples + "kernels/matmul_tiled.json", "trn2", {"-p", "TN=32"}, "transfer")},
      {"fp32_transpose_trn2",
       run_kernel(kExamples + "kernels/transpose_tensor_engine.json", "trn2", {}, "transfer")},
      {"fp8_double_row_trn2",
       run_kernel(kExamples + "kernels/matmul_fp8_double_row.json", "trn2",
                  {"-p", "M=2048", "-p", "K=2048", "-p", "N=1024"}, "transfer")},
      {"mxfp8_trn3", run_kernel(kExamples + "kernels/matmul_mx.json", "trn3",
                                {"-p", "M=1024", "-p", "K=2048", "-p", "N=2048"}, "transfer")},
      {"mxfp4_trn3", run_kernel(kKernels + "mx_matmuls.json", "trn3", {}, "transfer")},
      {"tensor_concurrency_trn2",
       run_kernel(kKernels + "tensor_concurrency.json", "trn2", {}, "transfer")},
      {"bf16_psum_trn3", run_kernel(kKernels + "bf16_psum.json", "trn3", {}, "transfer")},
      // Vector, Scalar, GpSimd, sequencers, SBUF, PSUM.
      {"engines_trn3", run_kernel(kKernels + "engines.json", "trn3", {}, "transfer")},
      {"engines_trn3_packet", run_kernel(kKernels + "engines.json", "trn3", {}, "packet")},
      {"instruction_fetch_trn3",
       run_kernel(kKernels + "instruction_fetch.json", "trn3", {}, "transfer")},
      {"engine_streams_trn1", run_kernel(std::string(TRNSIM_SOURCE_DIR) +
                                             "/tests/core/kernels/matmuls_beside_vector_adds.json",
                                         "trn1", {"-p", "N=2000"}, "transfer")},
      {"shared_ports_trn3", run_kernel(kKernels + "shared_ports.json", "trn3", {}, "transfer")},
      {"psum_tiles_trn2", run_kernel(kKernels + "psum_tiles.json", "trn2", {}, "transfer")},
      // DMA and HBM.
      {"dma_stream_trn2",
       run_kernel(kExamples + "kernels/dma_load_stream.json", "trn2", {"-p", "F=256"}, "transfer")},
      {"dge_stream_trn2", run_kernel(kExamples + "kernels/dma_load_stream_hwdge.json", "trn2",
                                     {"-p", "F=512", "-p", "BUFFERS=8"}, "transfer")},
      {"dma_transpose_trn2", run_kernel(kKernels + "dma_transpose.json", "trn2", {}, "transfer")},
      {"dma_priority_trn3", run_kernel(kKernels + "dma_priority.json", "trn3", {}, "packet")},
      {"hbm_stream_trn2",
       run_kernel(kExamples + "kernels/dma_load_stream.json", "trn2", kHbmBound, "packet")},
      {"hbm_read_write_trn2",
       run_kernel(kExamples + "kernels/vector_add.json", "trn2", kHbmBound, "packet")},
      {"hbm_strided_trn2", run_kernel(kKernels + "hbm_strided.json", "trn2", kHbmBound, "packet")},
      {"hbm_cores_trn2", run_kernel(kKernels + "hbm_cores.json", "trn2", kHbmBound, "transfer")},
      // Collectives and the fabric.
      {"collectives_trn2", run_kernel(kKernels + "collectives.json", "trn2", {}, "transfer")},
      {"all_reduce_64MiB_trn2_48xl", collective("trn2-48xl", 16, "64MiB", {})},
      {"all_reduce_4MiB_trn2_48xl", collective("trn2-48xl", 16, "4MiB", {})},
      {"all_reduce_256KiB_trn2_48xl", collective("trn2-48xl", 16, "256KiB", {})},
      {"all_reduce_trn2_ultraserver", collective("trn2-ultraserver", 64, "64MiB", {})},
      {"all_reduce_over_efa", collective("trn2-ultraserver", 64, "64MiB",
                                         {"--set", "system.inter_instance_link_bandwidth_gbps=0"})},
      {"ring_across_switches",
       collective("trn3-ultraserver-144", 8, "1KiB",
                  {"--algorithm", "ring", "--set", "collective.intra_hop_latency_ns=0", "--set",
                   "system.switch_latency_ns=2500"})},
      {"all_reduce_trn3_ultraserver_144", collective("trn3-ultraserver-144", 144, "64MiB", {})},
      // NKI front end.
      {"nki_vector_add_trn2",
       with(run_kernel(kExamples + "nki/vector_add.py::vector_add", "trn2", {}, "transfer"),
            {"--input", "a=float32[8,128,2048]", "--input", "b=float32[8,128,2048]"})},
      {"nki_compiler_choices_trn2",
       with(run_kernel(kKernels + "compiler_choices.py::compiler_choices", "trn2", {}, "transfer"),
            {"--input", "a=float32[512,2048]"})},
  };
  return list;
}

// Metrics (JSON pointers into `trnsim run --json` or `trnsim collective --json`).
constexpr std::string_view kTime = "/time/kernel_ns";
constexpr std::string_view kTensorBusy = "/cores/0/engines/tensor/active_ns";
constexpr std::string_view kVectorBusy = "/cores/0/engines/vector/active_ns";
constexpr std::string_view kScalarBusy = "/cores/0/engines/scalar/active_ns";
constexpr std::string_view kGpSimdBusy = "/cores/0/engines/gpsimd/active_ns";
constexpr std::string_view kDmaBusy = "/cores/0/engines/dma/active_ns";
constexpr std::string_view kCollectiveTime = "/points/0/time_us";

struct Sensitivity {
  std::string_view key;
  std::string_view value;  ///< --set key=value
  std::string_view workload;
  std::string_view metric;
  Effect effect;
  std::string_view why;  ///< the documented effect
  /// Other overrides of the perturbed run, where a cross-field rule ties the key to another.
  std::vector<std::string_view> also = {};
};

using E = Effect;

// clang-format off
const std::vector<Sensitivity> kSensitivities = {
  {"nc_version", "3", "engines_trn3", kTime, E::kRejects, "NeuronCore-v3 has no VectorE exponential"},
  {"chip.cores", "2", "hbm_cores_trn2", kTime, E::kRejects, "a 4-core kernel on a 2-core chip", {"chip.hbm_stacks=1"}},
  {"chip.hbm_stacks", "8", "hbm_cores_trn2", kTime, E::kDecreases, "each core streams from its own stack", {"hbm.cores_per_stack=1"}},
  {"chip.collective_cores", "8", "collectives_trn2", kTime, E::kIncreases, "one CC-core per NeuronCore: the four all-reduces run one at a time"},
  {"chip.neuronlink_links", "1", "all_reduce_trn3_ultraserver_144", kCollectiveTime, E::kIncreases, "fewer switch ports per chip"},

  {"tensor.clock_ghz", "4.8", "matmul_trn2", kTensorBusy, E::kDecreases, "a cycle takes 1 / clock"},
  {"tensor.rows", "256", "matmul_trn2", kTensorBusy, E::kDecreases, "a 256 x 256 array: tiles of pmax x gemm_stationary_fmax hold 4x the work in the same cycles"},
  {"tensor.moving_fmax", "256", "matmul_trn2", kTime, E::kRejects, "the kernel's moving tiles are 512 wide"},
  {"tensor.bf16_dst_supported", "false", "bf16_psum_trn3", kTime, E::kRejects, "a BF16 PSUM result"},
  {"tensor.moving_fmax_bf16_dst", "512", "bf16_psum_trn3", kTime, E::kRejects, "the BF16-dst matmul is 1024 wide"},
  {"tensor.mm_min_ii_cycles", "128", "short_moving_trn2", kTensorBusy, E::kIncreases, "a 32-wide moving tile costs max(min(ii, 128), 32) cycles"},
  {"tensor.fp32_cost_factor", "8", "fp32_transpose_trn2", kTensorBusy, E::kIncreases, "FP32 transposes cost factor / transpose speed-up"},
  {"tensor.load_stationary_speedup", "1", "matmul_trn2", kTensorBusy, E::kIncreases, "each new stationary loads slower"},
  {"tensor.double_row_supported", "false", "fp8_double_row_trn2", kTime, E::kRejects, "double_row matmuls"},
  {"tensor.fp8_double_row_speedup", "4", "fp8_double_row_trn2", kTensorBusy, E::kDecreases, "double-row matmuls stream faster"},
  {"tensor.mx_supported", "false", "mxfp8_trn3", kTime, E::kRejects, "nc_matmul_mx"},
  {"tensor.mx_speedup", "8", "mxfp8_trn3", kTensorBusy, E::kDecreases, "MXFP8 matmuls stream faster"},
  {"tensor.mxfp4_speedup", "8", "mxfp4_trn3", kTensorBusy, E::kDecreases, "MXFP4 matmuls stream faster"},
  {"tensor.transpose_fp32_mode_speedup", "4", "fp32_transpose_trn2", kTensorBusy, E::kDecreases, "FP32 transposes run faster"},
  {"tensor.background_transpose", "true", "tensor_concurrency_trn2", kTensorBusy, E::kDecreases, "transposes overlap the matmuls"},
  {"tensor.pe_tile_granularity", "128", "tensor_concurrency_trn2", kTensorBusy, E::kIncreases, "32 x 32 matmuls on disjoint quadrants share one 128-PE tile and serialise"},
  {"tensor.throttle_enabled", "false", "matmul_trn2", kTensorBusy, E::kDecreases, "no dI/dt throttling"},
  {"tensor.throttle_initial_fraction", "1", "matmul_trn2", kTensorBusy, E::kDecreases, "work starts at full rate"},
  {"tensor.throttle_ramp_ns", "6000", "matmul_trn2", kTensorBusy, E::kIncreases, "a slower ramp to full rate"},
  {"tensor.throttle_window_ns", "100000", "matmul_trn2", kTensorBusy, E::kDecreases, "over a longer window the DMA gaps do not pull utilisation below the re-engage level"},
  {"tensor.throttle_reengage_utilization", "0.9", "matmul_trn2", kTensorBusy, E::kIncreases, "the throttle re-engages after shorter gaps"},
  {"tensor.cost_model", "instant", "matmul_trn2", kTensorBusy, E::kDecreases, "one cycle per instruction"},

  {"vector.clock_ghz", "2.4", "engines_trn3", kVectorBusy, E::kDecreases, "a cycle takes 1 / clock"},
  {"vector.min_ii_cycles", "128", "engines_trn3", kVectorBusy, E::kIncreases, "short instructions cost MIN_II"},
  {"vector.dependent_overhead_cycles", "200", "engines_trn3", kVectorBusy, E::kIncreases, "a chain of dependent tensor_scalars"},
  {"vector.bf16_fast_copy_speedup", "8", "engines_trn3", kVectorBusy, E::kDecreases, "a BF16 SBUF-to-SBUF copy"},
  {"vector.bf16_2x_speedup", "4", "engines_trn3", kVectorBusy, E::kDecreases, "a BF16 add"},
  {"vector.max_free_elems_sbuf", "256", "engines_trn3", kTime, E::kRejects, "512-element SBUF operands"},
  {"vector.max_free_elems_psum", "256", "engines_trn3", kTime, E::kRejects, "a 512-element PSUM read"},
  {"vector.bn_stats_fmax", "256", "engines_trn3", kTime, E::kRejects, "bn_stats of 512 elements"},
  {"vector.transpose_max", "16", "engines_trn3", kTime, E::kRejects, "a 32 x 32 VectorE transpose"},
  {"vector.shares_sbuf_port_with_gpsimd", "true", "shared_ports_trn3", "/cores/0/engines/gpsimd/port_wait_ns", E::kIncreases, "GpSimd copies wait for VectorE's SBUF stream"},
  {"vector.shares_psum_port_with_scalar", "true", "shared_ports_trn3", "/cores/0/engines/scalar/port_wait_ns", E::kIncreases, "ScalarE PSUM reads wait for VectorE's PSUM stream"},
  {"vector.exponential_speedup", "8", "engines_trn3", kVectorBusy, E::kDecreases, "VectorE exponential"},
  {"vector.cost_model", "instant", "engines_trn3", kVectorBusy, E::kDecreases, "one cycle per instruction"},

  {"scalar.clock_ghz", "2.4", "engines_trn3", kScalarBusy, E::kDecreases, "a cycle takes 1 / clock"},
  {"scalar.min_ii_cycles", "1024", "engines_trn3", kScalarBusy, E::kIncreases, "512-element activations cost MIN_II"},
  {"scalar.dependent_overhead_cycles", "400", "engines_trn3", kScalarBusy, E::kIncreases, "each activation depends on the one before"},
  {"scalar.accumulator_read_cycles", "1000", "engines_trn3", kScalarBusy, E::kIncreases, "an activation with reduce_dst"},
  {"scalar.bf16_speedup", "4", "engines_trn3", kScalarBusy, E::kDecreases, "a BF16 copy on ScalarE"},
  {"scalar.table_switch_cycles", "1000", "engines_trn3", kScalarBusy, E::kIncreases, "tanh and exp alternate"},
  {"scalar.cost_model", "instant", "engines_trn3", kScalarBusy, E::kDecreases, "one cycle per instruction"},

  {"gpsimd.cost_model", "instant", "engines_trn3", kGpSimdBusy, E::kDecreases, "one cycle per instruction"},
  {"gpsimd.clock_ghz", "2.4", "engines_trn3", kGpSimdBusy, E::kDecreases, "a cycle takes 1 / clock"},
  {"gpsimd.start_cycles", "300", "engines_trn3", kGpSimdBusy, E::kIncreases, "every instruction pays it"},

  {"sequencer.fetch_buffer_instructions", "1", "instruction_fetch_trn3", kTime, E::kIncreases, "every instruction waits for its fetch"},
  {"sequencer.fetch_latency_ns", "10000", "instruction_fetch_trn3", kTime, E::kIncreases, "64 short instructions run out before the next arrive"},
  {"sequencer.fetch_instructions_per_ns", "0.001", "instruction_fetch_trn3", kTime, E::kIncreases, "one instruction per us"},
  {"sequencer.max_in_flight_instructions", "64", "engine_streams_trn1", kTime, E::kIncreases, "the adds wait for matmuls ahead of them in program order to retire"},
  {"sequencer.semaphore_latency_ns", "500", "engines_trn3", kTime, E::kIncreases, "every cross-engine dependency waits longer"},
  {"sequencer.issue_ns", "100", "engines_trn3", kTime, E::kIncreases, "every instruction issues slower"},
  {"sequencer.launch_overhead_us", "29", "engines_trn3", "/time/launch_overhead_ns", E::kIncreases, "reported beside the kernel time"},

  {"sbuf.usable_partition_bytes", "16384", "engines_trn3", kTime, E::kRejects, "the kernel's tiles need more SBUF"},
  {"sbuf.alignment_bytes", "65536", "engines_trn3", kTime, E::kRejects, "only three tensors fit at 64 KiB boundaries"},
  {"sbuf.full_rate_max_stride_bytes", "4", "engines_trn3", kVectorBusy, E::kIncreases, "an 8-byte-stride read runs at half rate"},

  {"psum.banks", "2", "tensor_concurrency_trn2", kTime, E::kRejects, "the kernel's PSUM tiles need three banks"},
  {"psum.bank_bytes", "1024", "matmul_trn2", kTime, E::kRejects, "a [128, 512] FP32 matmul result is 2 KiB per partition"},
  {"psum.alignment_bytes", "4096", "psum_tiles_trn2", kTime, E::kRejects, "six PSUM tiles at 4 KiB boundaries"},

  {"dma.model", "transfer", "engines_trn3_packet", kTime, E::kChanges, "closed-form transfers instead of packets"},
  {"dma.engines_per_core", "4", "dma_stream_trn2", kTime, E::kIncreases, "fewer engines share the rows"},
  {"dma.queues_per_engine", "4", "engines_trn3", kTime, E::kRejects, "the kernel uses queue 5", {"compiler.dma_queues=4"}},
  {"dma.engine_bandwidth_gbps", "5", "dma_stream_trn2", kTime, E::kIncreases, "slower engines"},
  {"dma.core_bandwidth_gbps", "50", "dma_stream_trn2", kTime, E::kIncreases, "a lower cap on the core's DMA"},
  {"dma.hbm_port_bandwidth_gbps", "50", "dma_stream_trn2", kTime, E::kIncreases, "a lower cap on reads from HBM"},
  {"dma.fixed_cost_ns", "2600", "dma_stream_trn2", kTime, E::kIncreases, "every DMA pays it"},
  {"dma.hwdge_cost_ns", "750", "dge_stream_trn2", kTime, E::kIncreases, "the DGE starts one load per 750 ns instead of 600"},
  {"dma.hwdge_latency_ns", "3000", "engines_trn3", kTime, E::kIncreases, "the hardware-DGE load moves data later"},
  {"dma.swdge_cost_ns", "3000", "engines_trn3", kTime, E::kIncreases, "the software-DGE load moves data later"},
  {"dma.descriptor_overhead_ns", "400", "dma_stream_trn2", kTime, E::kIncreases, "512-byte descriptors"},
  {"dma.descriptor_prefetch", "1", "dma_stream_trn2", kTime, E::kIncreases, "descriptor work no longer overlaps data movement"},
  {"dma.packet_bytes", "512", "dma_transpose_trn2", kTime, E::kIncreases, "smaller packets expose more HBM latency"},
  {"dma.arbitration", "round_robin", "dma_priority_trn3", "/cores/0/engines/vector/dependency_wait_ns", E::kIncreases, "the small loads no longer overtake the bulk stream"},
  {"dma.priority_classes", "1", "dma_priority_trn3", "/cores/0/engines/vector/dependency_wait_ns", E::kIncreases, "queues 0 and 15 share one class"},
  {"dma.transpose_efficiency_hbm", "0.3", "dma_transpose_trn2", kTime, E::kIncreases, "HBM-to-SBUF transposes move slower"},
  {"dma.transpose_efficiency_sbuf", "0.1", "engines_trn3", kDmaBusy, E::kIncreases, "an SBUF-to-SBUF transpose moves slower"},
  {"dma.sbuf_bandwidth_gbps", "10", "engines_trn3_packet", kTime, E::kIncreases, "the SBUF endpoint limits every DMA"},
  {"dma.psum_bandwidth_gbps", "10", "engines_trn3_packet", kTime, E::kIncreases, "the store from PSUM"},

  {"hbm.model", "ideal", "hbm_stream_trn2", kTime, E::kDecreases, "no banks, rows or refresh: each stack serves at its peak"},
  {"hbm.stack_bandwidth_gbps", "200", "hbm_stream_trn2", kTime, E::kIncreases, "the stack bounds the stream"},
  {"hbm.stack_capacity_gib", "0.001", "hbm_stream_trn2", kTime, E::kRejects, "4 MiB of HBM cannot hold the source"},
  {"hbm.cores_per_stack", "4", "hbm_cores_trn2", kTime, E::kIncreases, "four cores share one stack", {"chip.hbm_stacks=2"}},
  {"hbm.channels_per_stack", "2", "hbm_stream_trn2", kTime, E::kIncreases, "fewer channels, fewer banks in flight"},
  {"hbm.banks_per_channel", "1", "hbm_stream_trn2", kTime, E::kIncreases, "every request waits for the one bank"},
  {"hbm.row_bytes", "64", "hbm_strided_trn2", kTime, E::kIncreases, "more row activations (a contiguous stream hides them behind bank parallelism)"},
  {"hbm.interleave_bytes", "65536", "hbm_stream_trn2", kTime, E::kIncreases, "requests spread over fewer channels at once"},
  {"hbm.burst_bytes", "512", "hbm_stream_trn2", kTime, E::kIncreases, "coarser bursts occupy the channel longer"},
  {"hbm.address_hash", "bitslice", "hbm_strided_trn2", kTime, E::kIncreases, "a 4 KiB stride maps to the same channel"},
  {"hbm.t_rcd_ns", "100", "hbm_stream_trn2", kTime, E::kIncreases, "slower row activation"},
  {"hbm.t_rp_ns", "100", "hbm_stream_trn2", kTime, E::kIncreases, "slower precharge"},
  {"hbm.t_cl_ns", "1000", "hbm_stream_trn2", kTime, E::kIncreases, "every read waits longer"},
  {"hbm.t_refi_ns", "500", "hbm_stream_trn2", kTime, E::kIncreases, "more frequent refreshes"},
  {"hbm.t_rfc_ns", "2000", "hbm_read_write_trn2", kTime, E::kIncreases, "longer refreshes"},
  {"hbm.refresh_postpone_max", "0", "hbm_stream_trn2", kTime, E::kIncreases, "refreshes interrupt the stream"},
  {"hbm.t_wtr_ns", "200", "hbm_read_write_trn2", kTime, E::kIncreases, "reads follow stores"},
  {"hbm.t_rtw_ns", "200", "hbm_read_write_trn2", kTime, E::kIncreases, "stores follow reads"},
  {"hbm.controller_latency_ns", "1000", "hbm_stream_trn2", kTime, E::kIncreases, "every access waits longer"},
  {"hbm.queue_depth", "1", "hbm_stream_trn2", kTime, E::kIncreases, "one request in flight per channel"},

  {"collective.reduce_bandwidth_gbps", "50", "all_reduce_64MiB_trn2_48xl", kCollectiveTime, E::kIncreases, "the reduction bounds a large all-reduce"},
  {"collective.intra_hop_latency_ns", "5000", "all_reduce_256KiB_trn2_48xl", kCollectiveTime, E::kIncreases, "every step waits longer"},
  {"collective.inter_node_latency_ns", "100000", "all_reduce_over_efa", kCollectiveTime, E::kIncreases, "steps between instances wait longer"},
  {"collective.mesh_max_bytes", "0", "all_reduce_256KiB_trn2_48xl", kCollectiveTime, E::kChanges, "RDH instead of Mesh"},
  {"collective.rdh_max_bytes", "1048576", "all_reduce_4MiB_trn2_48xl", kCollectiveTime, E::kChanges, "KangaRing instead of RDH"},
  {"collective.op_overhead_ns", "100000", "all_reduce_64MiB_trn2_48xl", kCollectiveTime, E::kIncreases, "paid once per operation"},
  {"collective.kangaring", "false", "all_reduce_64MiB_trn2_48xl", kCollectiveTime, E::kChanges, "Ring instead of KangaRing"},
  {"collective.algorithm", "ring", "all_reduce_256KiB_trn2_48xl", kCollectiveTime, E::kChanges, "Ring instead of the Mesh auto picks"},

  {"system.chips", "8", "all_reduce_4MiB_trn2_48xl", kCollectiveTime, E::kRejects, "16 ranks at one per chip need 16 chips", {"system.torus_x=2", "system.chips_per_instance=8"}},
  {"system.topology", "switch", "all_reduce_4MiB_trn2_48xl", kCollectiveTime, E::kChanges, "a switch instead of the torus", {"system.switch_levels=1", "system.switch_port_bandwidth_gbps=128"}},
  {"system.torus_x", "8", "all_reduce_4MiB_trn2_48xl", kCollectiveTime, E::kChanges, "an 8 x 2 torus", {"system.torus_y=2"}},
  {"system.torus_y", "8", "all_reduce_4MiB_trn2_48xl", kCollectiveTime, E::kChanges, "a 2 x 8 torus", {"system.torus_x=2"}},
  {"system.torus_z", "1", "all_reduce_trn2_ultraserver", kCollectiveTime, E::kChanges, "a 4 x 16 x 1 torus", {"system.torus_y=16"}},
  {"system.chips_per_instance", "144", "ring_across_switches", kCollectiveTime, E::kDecreases, "every ring hop stays under the first switch level"},
  {"system.link_bandwidth_gbps", "32", "all_reduce_64MiB_trn2_48xl", kCollectiveTime, E::kIncreases, "the links bound a large all-reduce"},
  {"system.inter_instance_link_bandwidth_gbps", "8", "all_reduce_trn2_ultraserver", kCollectiveTime, E::kIncreases, "the Z links between instances"},
  {"system.link_latency_ns", "2000", "ring_across_switches", kCollectiveTime, E::kIncreases, "every hop waits longer"},
  {"system.switch_port_bandwidth_gbps", "32", "all_reduce_trn3_ultraserver_144", kCollectiveTime, E::kIncreases, "the switch ports bound a large all-reduce"},
  {"system.switch_latency_ns", "5000", "ring_across_switches", kCollectiveTime, E::kIncreases, "every switch level waits longer"},
  {"system.switch_levels", "3", "ring_across_switches", kCollectiveTime, E::kIncreases, "hops between servers cross more levels"},
  {"system.efa_bandwidth_gbps", "1", "all_reduce_over_efa", kCollectiveTime, E::kIncreases, "EFA bounds the steps between instances"},
  {"system.efa_latency_ns", "100000", "all_reduce_over_efa", kCollectiveTime, E::kIncreases, "every EFA step waits longer"},
  {"system.lnc", "2", "all_reduce_64MiB_trn2_48xl", kCollectiveTime, E::kDecreases, "core pairs share a rank and each moves half"},

  {"compiler.loop_tile_buffers", "1", "nki_vector_add_trn2", kTime, E::kIncreases, "loads no longer overlap the adds"},
  {"compiler.dma_queues", "1", "nki_compiler_choices_trn2", "/memory_system/dma/cores/0/queues/0/transfers", E::kIncreases, "the store joins the loads on queue 0"},
  {"compiler.sbuf_memset_engine", "vector", "nki_compiler_choices_trn2", "/cores/0/engines/vector/instructions", E::kIncreases, "the SBUF zero fill moves to VectorE"},
  {"compiler.copy_engine", "scalar", "nki_compiler_choices_trn2", "/cores/0/engines/scalar/instructions", E::kIncreases, "nl.copy runs on ScalarE"},
  {"compiler.dge_mode", "none", "nki_vector_add_trn2", kTime, E::kDecreases, "prebuilt descriptors skip the DGE's latency"},
  {"compiler.fold_zero_fill", "false", "nki_compiler_choices_trn2", "/system/instructions", E::kIncreases, "the zero fill before += becomes a memset"},
};
// clang-format on

bool is_settable(const config::FieldInfo& field) {
  return field.meta.derived_from.empty() && field.meta.informational.empty();
}

const Workload* find_workload(std::string_view name) {
  for (const Workload& workload : workloads()) {
    if (workload.name == name) return &workload;
  }
  return nullptr;
}

TEST(ParameterSensitivity, EverySettableParameterHasExactlyOneEntry) {
  std::map<std::string, int> entries;
  for (const Sensitivity& s : kSensitivities) ++entries[std::string(s.key)];
  for (const config::FieldInfo& field : config::parameter_fields()) {
    const int count = entries.count(field.key) ? entries.at(field.key) : 0;
    if (is_settable(field)) {
      EXPECT_EQ(count, 1) << field.key
                          << ": every settable parameter needs one entry in kSensitivities (a "
                             "workload that exercises it and the direction of a metric), or a "
                             "declaration as derived or informational (config/params.hpp)";
    } else {
      EXPECT_EQ(count, 0) << field.key << " is derived or informational: it has no entry";
    }
    entries.erase(field.key);
  }
  for (const auto& [key, count] : entries) ADD_FAILURE() << key << " is not a parameter";
  for (const Sensitivity& s : kSensitivities) {
    EXPECT_NE(find_workload(s.workload), nullptr) << s.key << ": no workload " << s.workload;
  }
}

/// One child run of `trnsim`: its arguments and, once run, the outcome.
struct ChildRun {
  std::vector<std::string> arguments;
  int exit_code = -1;
  std::string out = {};
  std::string err = {};
};

/// Runs every run (two at a time) and fills in the outcomes.
void run_all(std::vector<ChildRun>& runs) {
  std::size_t next = 0;
  sweep::WorkerOptions options;
  options.parallel = 2;
  sweep::run_workers(
      options,
      [&]() -> std::optional<sweep::WorkerTask> {
        if (next == runs.size()) return std::nullopt;
        sweep::WorkerTask task;
        task.id = next;
        task.argv = {TRNSIM_BINARY};
        task.argv.insert(task.argv.end(), runs[next].arguments.begin(), runs[next].arguments.end());
        ++next;
        return task;
      },
      [&](const sweep::WorkerTask& task, sweep::WorkerOutcome&& outcome) {
        ChildRun& child = runs[task.id];
        child.exit_code = outcome.exit_code;
        child.out = std::move(outcome.out);
        child.err = std::move(outcome.err);
      });
}

std::optional<double> metric_of(const ChildRun& run, std::string_view pointer) {
  if (run.exit_code != 0) return std::nullopt;
  const nlohmann::json json = nlohmann::json::parse(run.out, nullptr, false);
  const nlohmann::json::json_pointer at{std::string(pointer)};
  if (json.is_discarded() || !json.contains(at) || !json.at(at).is_number()) return std::nullopt;
  return json.at(at).get<double>();
}

std::vector<std::string> perturbed(const Workload& workload, std::string_view key,
                                   std::string_view value,
                                   const std::vector<std::string_view>& also) {
  std::vector<std::string> arguments = workload.arguments;
  arguments.push_back("--set");
  arguments.push_back(std::string(key) + "=" + std::string(value));
  for (std::string_view set : also) {
    arguments.push_back("--set");
    arguments.push_back(std::string(set));
  }
  return arguments;
}

/// A value of an informational field other than `current`, within its range.
std::string other_value(const config::FieldInfo& field, const nlohmann::ordered_json& current) {
  switch (field.kind) {
    case config::FieldKind::boolean:
      return current.get<bool>() ? "false" : "true";
    case config::FieldKind::enumeration:
      return field.choices.front() == current.get<std::string>() ? field.choices.back()
                                                                 : field.choices.front();
    case config::FieldKind::string:
      return current.get<std::string>() + "_other";
    case config::FieldKind::integer:
    case config::FieldKind::integer64:
    case config::FieldKind::number: {
      const double value = current.get<double>();
      const double doubled = value * 2;
      const double other = doubled <= field.meta.max && doubled != value ? doubled : value / 2;
      return field.kind == config::FieldKind::number
                 ? std::to_string(other)
                 : std::to_string(static_cast<long long>(other));
    }
  }
  return "";
}

TEST(ParameterSensitivity, EveryPerturbationMovesItsMetricAsDocumented) {
  // Baselines first (one per workload), then one perturbed run per entry.
  std::vector<ChildRun> runs;
  std::map<std::string_view, std::size_t> baseline;
  for (const Workload& workload : workloads()) {
    baseline[workload.name] = runs.size();
    runs.push_back({workload.arguments});
  }
  std::vector<std::size_t> perturbed_run;
  for (const Sensitivity& s : kSensitivities) {
    const Workload* workload = find_workload(s.workload);
    ASSERT_NE(workload, nullptr) << s.workload;
    perturbed_run.push_back(runs.size());
    runs.push_back({perturbed(*workload, s.key, s.value, s.also)});
  }
  run_all(runs);

  for (std::size_t i = 0; i < kSensitivities.size(); ++i) {
    const Sensitivity& s = kSensitivities[i];
    const ChildRun& base = runs[baseline.at(s.workload)];
    const ChildRun& changed = runs[perturbed_run[i]];
    SCOPED_TRACE(std::string(s.key) + "=" + std::string(s.value) + " on " +
                 std::string(s.workload) + " (" + std::string(s.why) + ")");
    const std::optional<double> before = metric_of(base, s.metric);
    ASSERT_TRUE(before.has_value()) << "baseline: " << base.err;
    if (s.effect == Effect::kRejects) {
      EXPECT_EQ(changed.exit_code, 2) << changed.err;
      EXPECT_NE(changed.err.find("trnsim: error: "), std::string::npos) << changed.err;
      continue;
    }
    const std::optional<double> after = metric_of(changed, s.metric);
    ASSERT_TRUE(after.has_value()) << changed.err;
    switch (s.effect) {
      case Effect::kIncreases:
        EXPECT_GT(*after, *before) << s.metric;
        break;
      case Effect::kDecreases:
        EXPECT_LT(*after, *before) << s.metric;
        break;
      case Effect::kChanges:
        EXPECT_NE(*after, *before) << s.metric;
        break;
      case Effect::kRejects:
        break;
    }
  }
}

TEST(ParameterSensitivity, InformationalParametersChangeNoResult) {
  // Each informational parameter, set to another value, leaves a kernel run's and a collective's
  // times exactly as they were (and --set says it is informational).
  const std::vector<std::pair<std::string_view, std::string_view>> checks = {
      {"engines_trn3", kTime}, {"all_reduce_64MiB_trn2_48xl", kCollectiveTime}};
  const config::LoadedConfig trn3 = config::load_config("trn3");
  std::vector<ChildRun> runs;
  std::vector<std::string> keys;
  for (const auto& [name, metric] : checks) runs.push_back({find_workload(name)->arguments});
  for (const config::FieldInfo& field : config::parameter_fields()) {
    if (field.meta.informational.empty()) continue;
    const auto& current = field.section.empty() ? trn3.effective.at(field.name)
                                                : trn3.effective.at(field.section).at(field.name);
    const std::string value = other_value(field, current);
    keys.push_back(field.key + "=" + value);
    for (const auto& [name, metric] : checks) {
      runs.push_back({perturbed(*find_workload(name), field.key, value, {})});
    }
  }
  ASSERT_FALSE(keys.empty());
  run_all(runs);
  for (std::size_t k = 0; k < keys.size(); ++k) {
    for (std::size_t c = 0; c < checks.size(); ++c) {
      const ChildRun& changed = runs[checks.size() * (k + 1) + c];
      SCOPED_TRACE(keys[k] + " on " + std::string(checks[c].first));
      const std::optional<double> before = metric_of(runs[c], checks[c].second);
      const std::optional<double> after = metric_of(changed, checks[c].second);
      ASSERT_TRUE(before.has_value() && after.has_value()) << changed.err;
      EXPECT_EQ(*after, *before);
      EXPECT_NE(changed.err.find("is informational"), std::string::npos) << changed.err;
    }
  }
}

}  // namespace
}  // namespace trnsim
