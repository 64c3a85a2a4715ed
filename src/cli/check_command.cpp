// `trnsim check KERNEL`: parse, validate and allocate a kernel on a configuration, walk every
// core's instruction stream (checking what depends on loop values) and print the tensors with
// their placement, the dynamic instruction counts per engine and op, the FLOPs and HBM bytes.
// Exit 0 when valid; an invalid kernel throws InputError (exit 2, message on stderr).
#include <fmt/format.h>

#include <array>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/kernel_loading.hpp"
#include "kernel/allocate.hpp"
#include "kernel/stream.hpp"
#include "util/error.hpp"

namespace trnsim::cli {
namespace {

struct Counts {
  std::uint64_t total = 0;
  std::array<std::uint64_t, kernel::kEngineCount> per_engine{};
  std::array<std::uint64_t, kernel::kOpcodeCount> per_op{};
  std::vector<std::uint64_t> per_core;
  std::uint64_t flops = 0;
  std::uint64_t hbm_bytes = 0;
};

Counts count_instructions(const kernel::PreparedKernel& prepared) {
  Counts counts;
  kernel::Instruction instruction;
  for (std::uint32_t pid = 0; pid < prepared.cores; ++pid) {
    kernel::InstructionStream stream(prepared, pid);
    while (stream.next(instruction)) {
      ++counts.per_engine[static_cast<std::size_t>(instruction.engine)];
      ++counts.per_op[static_cast<std::size_t>(instruction.opcode)];
      counts.flops += instruction.flops;
      counts.hbm_bytes += instruction.hbm_bytes;
    }
    counts.per_core.push_back(stream.issued());
    counts.total += stream.issued();
  }
  return counts;
}

std::string human_bytes(std::uint64_t bytes) {
  if (bytes >= (1ull << 30))
    return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / (1ull << 30));
  if (bytes >= (1ull << 20))
    return fmt::format("{:.2f} MiB", static_cast<double>(bytes) / (1ull << 20));
  if (bytes >= (1ull << 10))
    return fmt::format("{:.2f} KiB", static_cast<double>(bytes) / (1ull << 10));
  return fmt::format("{} B", bytes);
}

nlohmann::ordered_json to_json(const LoadedKernel& loaded, const Counts& counts) {
  const kernel::PreparedKernel& prepared = loaded.prepared;
  const kernel::Program& program = *loaded.program;
  nlohmann::ordered_json out;
  out["kernel"] = program.name;
  out["file"] = program.file;
  out["config"] = loaded.config.params.name;
  out["valid"] = true;
  out["cores"] = prepared.cores;
  nlohmann::ordered_json params = nlohmann::ordered_json::object();
  for (std::size_t i = 0; i < program.params.size(); ++i) {
    if (!program.params[i].per_core) {
      params[program.params[i].name] = prepared.global_env[program.param_slot(i)];
    }
  }
  out["params"] = params;
  nlohmann::ordered_json tensors = nlohmann::ordered_json::array();
  for (std::size_t t = 0; t < program.tensors.size(); ++t) {
    const kernel::TensorDecl& decl = program.tensors[t];
    const kernel::TensorLayout& layout = prepared.layouts[t];
    const kernel::Placement& placement = prepared.allocation.placements[t];
    nlohmann::ordered_json entry;
    entry["name"] = decl.name;
    entry["memory"] = kernel::memory_kind_name(decl.memory);
    entry["dtype"] = kernel::dtype_name(decl.dtype);
    entry["shape"] = layout.shape;
    if (decl.memory == kernel::MemoryKind::kHbm) {
      entry["address"] = placement.offset;
      entry["bytes"] = layout.bytes;
      entry["per_core"] = decl.per_core;
      if (decl.per_core) entry["instance_stride"] = placement.instance_stride;
    } else {
      entry["partition_start"] = placement.partition_start;
      entry["partitions"] = layout.partitions;
      entry["offset"] = placement.offset;
      entry["bytes_per_partition"] = layout.bytes_per_partition;
      entry["bytes"] = layout.bytes;
      entry["explicitly_placed"] = placement.explicitly_placed;
    }
    tensors.push_back(entry);
  }
  out["tensors"] = tensors;
  nlohmann::ordered_json overlaps = nlohmann::ordered_json::array();
  for (const auto& [a, b] : prepared.allocation.overlaps) {
    overlaps.push_back({program.tensors[a].name, program.tensors[b].name});
  }
  out["overlaps"] = overlaps;
  out["memory"] = {{"sbuf_bytes_per_partition_used", prepared.allocation.sbuf_bytes_used},
                   {"sbuf_bytes_per_partition_usable", prepared.target.sbuf_partition_bytes},
                   {"psum_bytes_per_partition_used", prepared.allocation.psum_bytes_used},
                   {"psum_bytes_per_partition", prepared.target.psum_partition_bytes()},
                   {"hbm_bytes_per_chip_used", prepared.allocation.hbm_bytes_used}};
  nlohmann::ordered_json per_engine = nlohmann::ordered_json::object();
  for (std::size_t e = 0; e < kernel::kEngineCount; ++e) {
    if (counts.per_engine[e] > 0) {
      per_engine[std::string(kernel::engine_name(static_cast<kernel::Engine>(e)))] =
          counts.per_engine[e];
    }
  }
  nlohmann::ordered_json per_op = nlohmann::ordered_json::object();
  for (std::size_t o = 0; o < kernel::kOpcodeCount; ++o) {
    if (counts.per_op[o] > 0) {
      per_op[std::string(kernel::opcode_name(static_cast<kernel::Opcode>(o)))] = counts.per_op[o];
    }
  }
  out["instructions"] = {{"total", counts.total},
                         {"per_core", counts.per_core},
                         {"per_engine", per_engine},
                         {"per_op", per_op}};
  out["flops"] = counts.flops;
  out["hbm_bytes"] = counts.hbm_bytes;
  return out;
}

std::string to_text(const LoadedKernel& loaded, const Counts& counts) {
  const kernel::PreparedKernel& prepared = loaded.prepared;
  const kernel::Program& program = *loaded.program;
  std::string out = fmt::format("kernel '{}' ({}) on {}: valid\n", program.name, program.file,
                                loaded.config.params.name);
  std::string params;
  for (std::size_t i = 0; i < program.params.size(); ++i) {
    params += params.empty() ? "" : ", ";
    params +=
        program.params[i].name + "=" +
        (program.params[i].per_core ? std::string("per core")
                                    : std::to_string(prepared.global_env[program.param_slot(i)]));
  }
  out += fmt::format("cores: {}; params: {}\n\n", prepared.cores, params.empty() ? "none" : params);
  out += kernel::format_allocation(program, prepared.layouts, prepared.allocation, prepared.target);
  out += fmt::format("\ndynamic instructions: {}", counts.total);
  if (prepared.cores > 1) {
    std::string per_core;
    for (auto n : counts.per_core) per_core += (per_core.empty() ? "" : ", ") + std::to_string(n);
    out += fmt::format(" (per core: {})", per_core);
  }
  out += "\n  per engine:";
  for (std::size_t e = 0; e < kernel::kEngineCount; ++e) {
    if (counts.per_engine[e] == 0) continue;
    out += fmt::format(" {} {}", kernel::engine_name(static_cast<kernel::Engine>(e)),
                       counts.per_engine[e]);
  }
  out += "\n  per op:";
  for (std::size_t o = 0; o < kernel::kOpcodeCount; ++o) {
    if (counts.per_op[o] == 0) continue;
    out += fmt::format(" {} {}", kernel::opcode_name(static_cast<kernel::Opcode>(o)),
                       counts.per_op[o]);
  }
  out += fmt::format("\ntotal FLOPs: {}\nHBM bytes moved: {} ({})\n", counts.flops,
                     counts.hbm_bytes, human_bytes(counts.hbm_bytes));
  return out;
}

}  // namespace

void register_check_command(CLI::App& app, CommandContext& context) {
  struct Options {
    KernelArguments kernel;
    bool json = false;
  };
  auto options = std::make_shared<Options>();
  CLI::App* check = app.add_subcommand(
      "check", "Validate a kernel on a configuration: allocation, instruction counts, FLOPs");
  add_kernel_arguments(*check, options->kernel);
  check->add_flag("--json", options->json, "Print the result as JSON");
  check->callback([options, &context] {
    const LoadedKernel loaded = load_kernel(options->kernel, context.verbosity);
    const Counts counts = count_instructions(loaded.prepared);
    if (options->json) {
      std::cout << to_json(loaded, counts).dump(2) << "\n";
    } else {
      std::cout << to_text(loaded, counts);
    }
    context.exit_code = kExitOk;
  });
}

}  // namespace trnsim::cli
