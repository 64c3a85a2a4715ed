#include "collective/benchmark.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "collective/collective_system.hpp"
#include "config/load.hpp"
#include "core/stream_source.hpp"
#include "fabric/resource_pool.hpp"
#include "kernel/parse.hpp"
#include "kernel/prepare.hpp"
#include "kernel/target_from_config.hpp"
#include "system/simulation.hpp"
#include "util/child_process.hpp"
#include "util/error.hpp"
#include "util/sim_time.hpp"

namespace trnsim::collective {

namespace {

std::uint32_t lanes_of(const BenchmarkPoint& point, const config::Params& params) {
  if (point.operation == Operation::kPermute) return 1;
  return static_cast<std::uint32_t>(std::clamp(params.system.lnc, 1, 2));
}

std::uint32_t ranks_per_chip(const BenchmarkPoint& point, const config::Params& params) {
  const std::uint32_t lanes = lanes_of(point, params);
  const auto cores = static_cast<std::uint32_t>(params.chip.cores);
  const std::uint32_t most = std::max(1u, cores / lanes);
  if (point.ranks_per_chip == 0) return most;
  if (point.ranks_per_chip > most) {
    throw InputError("--ranks-per-chip",
                     fmt::format("a {} chip holds at most {} rank(s) of {} core(s) each ({} cores "
                                 "per chip, system.lnc = {}); found {}",
                                 params.name, most, lanes, cores, lanes, point.ranks_per_chip));
  }
  return point.ranks_per_chip;
}

/// Submits one collective per core at time 0 straight to the backend and records completions.
class DirectDriver : public sc_core::sc_module, public core::CollectiveClient {
 public:
  SC_HAS_PROCESS(DirectDriver);
  DirectDriver(sc_core::sc_module_name name, core::CollectiveBackend& backend,
               std::vector<kernel::Instruction> instructions, std::vector<std::uint32_t> group)
      : sc_core::sc_module(name),
        backend_(backend),
        instructions_(std::move(instructions)),
        group_(std::move(group)) {
    SC_METHOD(run);  // once, at time 0 (a method: no coroutine for AddressSanitizer to lose)
  }
  void collective_complete(std::uint64_t /*id*/, const sc_core::sc_time& /*complete*/) override {
    ++completed_;
  }
  std::size_t completed() const { return completed_; }

 private:
  void run() {
    for (std::size_t i = 0; i < instructions_.size(); ++i) {
      const kernel::Instruction& instruction = instructions_[i];
      const bool p2p = instruction.opcode == kernel::Opcode::kSend ||
                       instruction.opcode == kernel::Opcode::kRecv;
      backend_.submit(instruction.pid, i, instruction,
                      p2p ? std::span<const std::uint32_t>() : std::span(group_), *this);
    }
  }
  core::CollectiveBackend& backend_;
  std::vector<kernel::Instruction> instructions_;
  std::vector<std::uint32_t> group_;
  std::size_t completed_ = 0;
};

/// The direct benchmark's DMA model: per core one server at min(engines x engine bandwidth,
/// core DMA bandwidth), per HBM stack one server at the stack bandwidth (a leg reads the sending
/// core's stack and writes the receiving core's, Instruction::peer), after dma.fixed_cost_ns.
class DirectDmaBackend final : public core::DmaBackend {
 public:
  DirectDmaBackend(const config::Params& params, std::uint32_t cores)
      : fixed_ns_(params.dma.fixed_cost_ns),
        cores_per_chip_(static_cast<std::uint32_t>(std::max(1, params.chip.cores))),
        stacks_per_chip_(static_cast<std::uint32_t>(std::max(1, params.chip.hbm_stacks))),
        cores_per_stack_(static_cast<std::uint32_t>(std::max(1, params.hbm.cores_per_stack))) {
    sim_time::scale();  // before any conversion (util/sim_time.hpp)
    const double dma = std::min(params.dma.engines_per_core * params.dma.engine_bandwidth_gbps,
                                params.dma.core_bandwidth_gbps);
    for (std::uint32_t pid = 0; pid < cores; ++pid) {
      pool_.add(dma, fmt::format("core{}.dma", pid));
    }
    first_stack_ = static_cast<fabric::ResourceId>(pool_.size());
    const std::uint32_t chips = (cores + cores_per_chip_ - 1) / cores_per_chip_;
    for (std::uint32_t stack = 0; stack < chips * stacks_per_chip_; ++stack) {
      pool_.add(params.hbm.stack_bandwidth_gbps, fmt::format("hbm{}", stack));
    }
  }
  void add_statistics(stats::Group& memory_system, double /*elapsed_ns*/) const override {
    memory_system.add("model", "direct", stats::Unit::kText);
  }
  void submit(std::uint32_t pid, std::uint64_t id, const kernel::Instruction& instruction,
              core::DmaClient& client) override {
    const double now = sim_time::now_ns();
    const double bytes =
        static_cast<double>(std::max(instruction.src().bytes(), instruction.dst().bytes()));
    std::array<fabric::ResourceId, 3> path{pid, 0, 0};
    std::size_t length = 1;
    if (!instruction.src().on_chip()) path[length++] = stack_of(pid);
    if (!instruction.dst().on_chip()) path[length++] = stack_of(instruction.peer);
    const double done = pool_.reserve({path.data(), length}, now + fixed_ns_, bytes);
    client.dma_complete(id, sim_time::from_ns(done - now) + sc_core::sc_time_stamp(),
                        done - now - fixed_ns_);
  }

 private:
  fabric::ResourceId stack_of(std::uint32_t pid) const {
    const std::uint32_t local =
        std::min(stacks_per_chip_ - 1, (pid % cores_per_chip_) / cores_per_stack_);
    return first_stack_ + (pid / cores_per_chip_) * stacks_per_chip_ + local;
  }
  const double fixed_ns_;
  const std::uint32_t cores_per_chip_;
  const std::uint32_t stacks_per_chip_;
  const std::uint32_t cores_per_stack_;
  fabric::ResourcePool pool_;
  fabric::ResourceId first_stack_ = 0;
};

kernel::AccessPattern hbm_operand(kernel::DType dtype, std::uint64_t elements, std::uint32_t chip,
                                  std::uint32_t tensor) {
  kernel::AccessPattern pattern;
  pattern.memory = kernel::MemoryKind::kHbm;
  pattern.dtype = dtype;
  pattern.tensor = tensor;
  pattern.space = chip;
  pattern.rank = 1;
  pattern.sizes[0] = static_cast<std::uint32_t>(elements);
  pattern.strides[0] = 1;
  return pattern;
}

std::string_view kernel_op_name(Operation operation) {
  return operation == Operation::kPermute ? "send" : operation_name(operation);
}

}  // namespace

std::uint64_t benchmark_bytes(const BenchmarkPoint& point, const config::Params& params) {
  const std::uint64_t lanes = lanes_of(point, params);
  std::uint64_t unit = kernel::dtype_bytes(point.dtype) * lanes;
  if (point.operation == Operation::kAllGather || point.operation == Operation::kReduceScatter) {
    unit *= static_cast<std::uint64_t>(point.ranks) * lanes;
  }
  return std::max(unit, point.bytes / unit * unit);
}

std::vector<std::uint32_t> benchmark_cores(const BenchmarkPoint& point,
                                           const config::Params& params) {
  if (point.ranks == 0) throw InputError("--ranks", "expected at least one rank, found 0");
  if (point.operation == Operation::kPermute && point.ranks < 2) {
    throw InputError("--ranks", "permute needs at least 2 ranks, found 1");
  }
  const std::uint32_t lanes = lanes_of(point, params);
  const std::uint32_t per_chip = ranks_per_chip(point, params);
  const auto cores_per_chip = static_cast<std::uint32_t>(params.chip.cores);
  const std::uint32_t chips = (point.ranks + per_chip - 1) / per_chip;
  if (chips > static_cast<std::uint32_t>(params.system.chips)) {
    throw InputError("--ranks",
                     fmt::format("{} ranks at {} per chip need {} chips; config '{}' has "
                                 "{} (try a system config, e.g. trn2-48xl, or more "
                                 "ranks per chip)",
                                 point.ranks, per_chip, chips, params.name, params.system.chips));
  }
  std::vector<std::uint32_t> cores;
  for (std::uint32_t rank = 0; rank < point.ranks; ++rank) {
    for (std::uint32_t lane = 0; lane < lanes; ++lane) {
      cores.push_back((rank / per_chip) * cores_per_chip + (rank % per_chip) * lanes + lane);
    }
  }
  return cores;
}

std::string benchmark_kernel(const BenchmarkPoint& point, const config::Params& params) {
  const std::vector<std::uint32_t> cores = benchmark_cores(point, params);
  const std::uint64_t bytes = benchmark_bytes(point, params);
  const std::uint64_t lanes = lanes_of(point, params);
  const std::uint64_t element = kernel::dtype_bytes(point.dtype);
  const std::uint64_t physical = cores.size();
  // Per-core operand elements (kernel-format semantics, validate.cpp).
  std::uint64_t src = bytes / lanes / element;
  std::uint64_t dst = src;
  if (point.operation == Operation::kAllGather) {
    dst = bytes / lanes / element;
    src = dst / physical;
  } else if (point.operation == Operation::kReduceScatter) {
    dst = src / physical;
  }
  const std::uint32_t per_chip = ranks_per_chip(point, params);
  const auto cpc = static_cast<std::uint32_t>(params.chip.cores);
  nlohmann::ordered_json tensors = {{"inp",
                                     {{"memory", "hbm"},
                                      {"dtype", kernel::dtype_name(point.dtype)},
                                      {"shape", {src}},
                                      {"per_core", true}}},
                                    {"out",
                                     {{"memory", "hbm"},
                                      {"dtype", kernel::dtype_name(point.dtype)},
                                      {"shape", {dst}},
                                      {"per_core", true}}}};
  nlohmann::ordered_json body = nlohmann::ordered_json::array();
  if (point.operation == Operation::kPermute) {
    // rank(pid) = (pid // cpc) * per_chip + pid % cpc; pid(rank) = (rank // per_chip) * cpc +
    // rank % per_chip.
    const std::string rank = fmt::format("((pid // {}) * {} + pid % {})", cpc, per_chip, cpc);
    auto pid_of = [&](const std::string& r) {
      return fmt::format("(({}) // {}) * {} + ({}) % {}", r, per_chip, cpc, r, per_chip);
    };
    const std::string next = fmt::format("({} + 1) % {}", rank, point.ranks);
    const std::string prev = fmt::format("({} + {}) % {}", rank, point.ranks - 1, point.ranks);
    body.push_back({{"op", "send"}, {"src", "inp"}, {"peer", pid_of(next)}});
    body.push_back({{"op", "recv"}, {"dst", "out"}, {"peer", pid_of(prev)}});
  } else {
    body.push_back({{"op", kernel_op_name(point.operation)},
                    {"dst", "out"},
                    {"src", "inp"},
                    {"group", cores},
                    {"algorithm", kernel::collective_algorithm_name(point.algorithm)}});
  }
  nlohmann::ordered_json kernel = {
      {"format", "trnsim-kernel/1"},
      {"name", fmt::format("collective_{}", operation_name(point.operation))},
      {"cores", cores.back() + 1},
      {"tensors", tensors},
      {"program", {{{"if", fmt::format("pid % {} < {}", cpc, per_chip * lanes)}, {"then", body}}}}};
  return kernel.dump();
}

namespace {

void simulate_kernel(const BenchmarkPoint& point, const config::Params& params,
                     const std::shared_ptr<CollectiveLog>& log) {
  const std::string text = benchmark_kernel(point, params);
  auto program = std::make_shared<const kernel::Program>(
      kernel::parse_program_text(text, "<collective benchmark>"));
  const kernel::PreparedKernel prepared =
      kernel::prepare_kernel(program, kernel::target_from_params(params));
  try {
    system::simulate(
        params, prepared.cores,
        [&prepared](std::uint32_t pid) {
          return std::make_unique<core::StreamSource>(prepared, pid);
        },
        {}, backend_factory(log));
  } catch (const InputError&) {
    rethrow_if_failed(*log);
    throw;
  }
}

void simulate_direct(const BenchmarkPoint& point, const config::Params& params,
                     const std::shared_ptr<CollectiveLog>& log) {
  const std::vector<std::uint32_t> cores = benchmark_cores(point, params);
  const std::uint64_t bytes = benchmark_bytes(point, params);
  const std::uint64_t lanes = lanes_of(point, params);
  const std::uint64_t element = kernel::dtype_bytes(point.dtype);
  std::uint64_t src = bytes / lanes / element;
  std::uint64_t dst = src;
  if (point.operation == Operation::kAllGather) {
    dst = bytes / lanes / element;
    src = dst / cores.size();
  } else if (point.operation == Operation::kReduceScatter) {
    dst = src / cores.size();
  }
  const auto cpc = static_cast<std::uint32_t>(params.chip.cores);
  std::vector<kernel::Instruction> instructions;
  for (std::size_t i = 0; i < cores.size(); ++i) {
    kernel::Instruction instruction;
    instruction.engine = kernel::Engine::kCollective;
    instruction.pid = cores[i];
    instruction.algorithm = point.algorithm;
    instruction.operand(kernel::Slot::kSrc) = hbm_operand(point.dtype, src, cores[i] / cpc, 0);
    instruction.operand(kernel::Slot::kDst) = hbm_operand(point.dtype, dst, cores[i] / cpc, 1);
    if (point.operation == Operation::kPermute) {
      instruction.opcode = kernel::Opcode::kSend;
      instruction.operand(kernel::Slot::kDst) = kernel::AccessPattern{};
      instruction.peer = cores[(i + 1) % cores.size()];
      instructions.push_back(instruction);
      instruction.opcode = kernel::Opcode::kRecv;
      instruction.operand(kernel::Slot::kDst) = hbm_operand(point.dtype, dst, cores[i] / cpc, 1);
      instruction.operand(kernel::Slot::kSrc) = kernel::AccessPattern{};
      instruction.peer = cores[(i + cores.size() - 1) % cores.size()];
    } else {
      instruction.opcode = point.operation == Operation::kAllGather ? kernel::Opcode::kAllGather
                           : point.operation == Operation::kReduceScatter
                               ? kernel::Opcode::kReduceScatter
                           : point.operation == Operation::kAllToAll ? kernel::Opcode::kAllToAll
                                                                     : kernel::Opcode::kAllReduce;
    }
    instructions.push_back(instruction);
  }
  sc_core::sc_set_time_resolution(1, sc_core::SC_FS);
  system::route_systemc_reports_to_stderr();
  const std::uint32_t kernel_cores = cores.back() + 1;
  DirectDmaBackend dma(params, kernel_cores);
  CollectiveSystem backend("collectives", params, kernel_cores, dma, log);
  DirectDriver driver("driver", backend, std::move(instructions), cores);
  sc_core::sc_start();
  rethrow_if_failed(*log);
}

}  // namespace

BenchmarkResult run_point(const BenchmarkPoint& point) {
  const auto wall_start = std::chrono::steady_clock::now();
  const config::LoadedConfig loaded = config::load_config(point.config, point.sets);
  const config::Params& params = loaded.params;
  auto log = std::make_shared<CollectiveLog>();
  if (point.direct) {
    simulate_direct(point, params, log);
  } else {
    simulate_kernel(point, params, log);
  }
  rethrow_if_failed(*log);
  BenchmarkResult result;
  result.bytes = benchmark_bytes(point, params);
  result.elements = result.bytes / kernel::dtype_bytes(point.dtype);
  double joined = std::numeric_limits<double>::infinity();
  double end = 0;
  for (const OperationRecord& record : log->operations) {
    joined = std::min(joined, record.joined_ns);
    end = std::max(end, record.end_ns);
    result.algorithm = record.algorithm;
    result.steps = std::max(result.steps, record.steps);
  }
  result.time_ns = log->operations.empty() ? 0 : end - joined;
  const std::vector<std::uint32_t> cores = benchmark_cores(point, params);
  result.chips = cores.back() / static_cast<std::uint32_t>(params.chip.cores) + 1;
  if (result.time_ns > 0) {
    result.algbw_gibps = static_cast<double>(result.bytes) / result.time_ns * 1e9 / (1ull << 30);
    result.busbw_gibps = result.algbw_gibps * bus_bandwidth_factor(point.operation, point.ranks);
  }
  result.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return result;
}

BenchmarkResult run_point_in_child(const BenchmarkPoint& point) {
  const auto body = [&point] {
    nlohmann::json out;
    try {
      const BenchmarkResult r = run_point(point);
      out = {{"bytes", r.bytes},       {"elements", r.elements},
             {"time_ns", r.time_ns},   {"algorithm", static_cast<int>(r.algorithm)},
             {"steps", r.steps},       {"chips", r.chips},
             {"algbw", r.algbw_gibps}, {"busbw", r.busbw_gibps},
             {"wall_s", r.wall_s}};
    } catch (const std::exception& e) {
      out = {{"error", e.what()}};
    }
    return out.dump();
  };
  int status = 0;
  const std::optional<std::string> text = util::run_in_child(body, status);
  BenchmarkResult result;
  if (!text) {
    result.error = fmt::format("simulation process failed (status {})", status);
    return result;
  }
  const nlohmann::json out = nlohmann::json::parse(*text);
  if (out.contains("error")) {
    result.error = out["error"].get<std::string>();
    return result;
  }
  result.bytes = out["bytes"].get<std::uint64_t>();
  result.elements = out["elements"].get<std::uint64_t>();
  result.time_ns = out["time_ns"].get<double>();
  result.algorithm = static_cast<Algorithm>(out["algorithm"].get<int>());
  result.steps = out["steps"].get<std::uint32_t>();
  result.chips = out["chips"].get<std::uint32_t>();
  result.algbw_gibps = out["algbw"].get<double>();
  result.busbw_gibps = out["busbw"].get<double>();
  result.wall_s = out["wall_s"].get<double>();
  return result;
}

std::uint64_t parse_size(const std::string& text) {
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) {
    ++digits;
  }
  std::string unit = text.substr(digits);
  for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::uint64_t multiplier = 0;
  if (unit.empty() || unit == "b") multiplier = 1;
  if (unit == "k" || unit == "kb" || unit == "kib") multiplier = 1ull << 10;
  if (unit == "m" || unit == "mb" || unit == "mib") multiplier = 1ull << 20;
  if (unit == "g" || unit == "gb" || unit == "gib") multiplier = 1ull << 30;
  if (digits == 0 || digits > 12 || multiplier == 0) {
    throw InputError("--sizes",
                     "expected a size like 1024, 1KiB, 64MiB or 1GiB (K, M, G are "
                     "binary multiples, as in nccom-test), found '" +
                         text + "'");
  }
  const std::uint64_t value = std::stoull(text.substr(0, digits)) * multiplier;
  if (value == 0) throw InputError("--sizes", "sizes must be positive, found '" + text + "'");
  return value;
}

std::vector<std::uint64_t> parse_sizes(const std::string& text) {
  std::vector<std::uint64_t> sizes;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t comma = std::min(text.find(',', begin), text.size());
    const std::string item = text.substr(begin, comma - begin);
    const std::size_t colon = item.find(':');
    if (colon == std::string::npos) {
      sizes.push_back(parse_size(item));
    } else {
      const std::size_t colon2 = item.find(':', colon + 1);
      const std::uint64_t first = parse_size(item.substr(0, colon));
      const std::uint64_t last = parse_size(item.substr(
          colon + 1, colon2 == std::string::npos ? std::string::npos : colon2 - colon - 1));
      std::uint64_t factor = 2;
      if (colon2 != std::string::npos) {
        const std::string f = item.substr(colon2 + 1);
        if (f.empty() || f.size() > 6 ||
            !std::all_of(f.begin(), f.end(), [](char c) { return std::isdigit(c) != 0; }) ||
            std::stoull(f) < 2) {
          throw InputError("--sizes",
                           "expected FIRST:LAST[:FACTOR] with an integer factor >= 2, "
                           "found '" +
                               item + "'");
        }
        factor = std::stoull(f);
      }
      if (last < first) {
        throw InputError("--sizes", "range '" + item + "' ends below its start");
      }
      for (std::uint64_t size = first; size <= last; size *= factor) sizes.push_back(size);
    }
    begin = comma + 1;
  }
  return sizes;
}

std::string format_size(std::uint64_t bytes) {
  if (bytes >= (1ull << 30) && bytes % (1ull << 30) == 0) return fmt::format("{}GiB", bytes >> 30);
  if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0) return fmt::format("{}MiB", bytes >> 20);
  if (bytes >= (1ull << 10) && bytes % (1ull << 10) == 0) return fmt::format("{}KiB", bytes >> 10);
  return fmt::format("{}B", bytes);
}

}  // namespace trnsim::collective
