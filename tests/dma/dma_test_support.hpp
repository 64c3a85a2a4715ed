// Test support for the DMA tests: operand and instruction builders, and a SystemC testbench that
// submits DMAs to a PacketMemorySystem at given times and records their completions. One testbench
// per test process (SystemC elaborates once per process; gtest_discover_tests runs each TEST
// alone).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <systemc>
#include <vector>

#include "config/load.hpp"
#include "config/params.hpp"
#include "core/dma_backend.hpp"
#include "dma/packet_memory_system.hpp"
#include "kernel/instruction.hpp"
#include "memory/hbm_stack.hpp"
#include "util/sim_time.hpp"

namespace trnsim::dma::test {

using kernel::AccessPattern;
using kernel::DType;
using kernel::Instruction;
using kernel::MemoryKind;
using kernel::Opcode;

/// Row-major contiguous pattern: on-chip `partitions` x free sizes, or HBM `sizes` at `address`.
inline AccessPattern pattern(MemoryKind memory, DType dtype, std::uint32_t partitions,
                             std::initializer_list<std::uint32_t> sizes, std::uint64_t offset = 0) {
  AccessPattern p;
  p.memory = memory;
  p.dtype = dtype;
  p.tensor = 0;
  p.partitions = memory == MemoryKind::kHbm ? 1 : partitions;
  p.offset = offset;
  p.rank = static_cast<std::uint8_t>(sizes.size());
  std::size_t d = 0;
  for (std::uint32_t size : sizes) p.sizes[d++] = size;
  std::int64_t stride = 1;
  for (int i = static_cast<int>(p.rank) - 1; i >= 0; --i) {
    p.strides[i] = stride;
    stride *= p.sizes[i];
  }
  return p;
}
inline AccessPattern sbuf(DType dtype, std::uint32_t partitions,
                          std::initializer_list<std::uint32_t> free_sizes,
                          std::uint64_t offset = 0) {
  return pattern(MemoryKind::kSbuf, dtype, partitions, free_sizes, offset);
}
inline AccessPattern hbm(DType dtype, std::initializer_list<std::uint32_t> sizes,
                         std::uint64_t address = 0) {
  return pattern(MemoryKind::kHbm, dtype, 1, sizes, address);
}

inline Instruction dma_copy(const AccessPattern& dst, const AccessPattern& src,
                            std::uint8_t queue = 0) {
  Instruction instruction;
  instruction.opcode = Opcode::kDmaCopy;
  instruction.engine = kernel::Engine::kDma;
  instruction.operand(kernel::Slot::kDst) = dst;
  instruction.operand(kernel::Slot::kSrc) = src;
  instruction.dma_queue = queue;
  return instruction;
}

/// [rows, bytes_per_row] BF16 HBM -> SBUF load, HBM address `address`.
inline Instruction load(std::uint32_t rows, std::uint32_t bytes_per_row, std::uint64_t address,
                        std::uint8_t queue = 0) {
  const std::uint32_t elements = bytes_per_row / 2;
  return dma_copy(sbuf(DType::kBFloat16, rows, {elements}),
                  hbm(DType::kBFloat16, {rows, elements}, address), queue);
}

/// [rows, bytes_per_row] BF16 SBUF -> HBM store, HBM address `address`.
inline Instruction store(std::uint32_t rows, std::uint32_t bytes_per_row, std::uint64_t address,
                         std::uint8_t queue = 0) {
  const std::uint32_t elements = bytes_per_row / 2;
  return dma_copy(hbm(DType::kBFloat16, {rows, elements}, address),
                  sbuf(DType::kBFloat16, rows, {elements}), queue);
}

/// [rows, bytes_per_row] BF16 HBM -> HBM copy from `src_address` to `dst_address`.
inline Instruction hbm_copy(std::uint32_t rows, std::uint32_t bytes_per_row,
                            std::uint64_t src_address, std::uint64_t dst_address) {
  const std::uint32_t elements = bytes_per_row / 2;
  return dma_copy(hbm(DType::kBFloat16, {rows, elements}, dst_address),
                  hbm(DType::kBFloat16, {rows, elements}, src_address));
}

inline config::Params builtin(const std::string& name,
                              const std::vector<std::string>& overrides = {}) {
  return config::load_config(name, overrides).params;
}

struct Completion {
  double complete_ns = -1;
  double transfer_ns = -1;
};

/// Submits DMAs at their times (from one thread, in time order) and records completions.
class Testbench : public sc_core::sc_module, public core::DmaClient {
 public:
  SC_HAS_PROCESS(Testbench);

  struct Submission {
    double time_ns;
    std::uint32_t pid;
    Instruction instruction;
  };

  Testbench(sc_core::sc_module_name name, core::DmaBackend& system)
      : sc_core::sc_module(name), system_(system) {
    SC_THREAD(run);
  }

  /// Adds a DMA submitted at `time_ns` by core `pid`; returns its id.
  std::uint64_t add(double time_ns, std::uint32_t pid, const Instruction& instruction) {
    submissions_.push_back({time_ns, pid, instruction});
    return submissions_.size() - 1;
  }

  void dma_complete(std::uint64_t id, const sc_core::sc_time& complete,
                    double transfer_ns) override {
    EXPECT_GE(complete, sc_core::sc_time_stamp()) << "completion reported in the past";
    EXPECT_EQ(completions_.count(id), 0u) << "DMA " << id << " completed twice";
    completions_[id] = {sim_time::to_ns(complete), transfer_ns};
  }

  const Completion& completion(std::uint64_t id) const { return completions_.at(id); }
  std::size_t completed() const { return completions_.size(); }

  /// Runs the simulation to the end; every submitted DMA must have completed.
  void run_all() {
    sc_core::sc_start();
    EXPECT_EQ(completions_.size(), submissions_.size());
  }

 private:
  void run() {
    for (std::size_t i = 0; i < submissions_.size(); ++i) {
      const Submission& s = submissions_[i];
      const double now = sim_time::now_ns();
      if (s.time_ns > now) sc_core::wait(sim_time::from_ns(s.time_ns - now));
      system_.submit(s.pid, i, s.instruction, *this);
    }
  }

  core::DmaBackend& system_;
  std::vector<Submission> submissions_;
  std::map<std::uint64_t, Completion> completions_;
};

/// Bytes per ns moved by DMAs [first, last] of a stream submitted together: their bytes over
/// the time between the completion before `first` and that of `last`.
inline double steady_rate(const Testbench& bench, std::uint64_t first, std::uint64_t last,
                          double bytes_each) {
  const double span = bench.completion(last).complete_ns - bench.completion(first - 1).complete_ns;
  return static_cast<double>(last - first + 1) * bytes_each / span;
}

/// Runs `instruction` alone on `system` (core 0, submitted at 0); returns its completion, ns.
inline double complete_alone(core::DmaBackend& system, const Instruction& instruction) {
  Testbench bench("bench", system);
  const std::uint64_t id = bench.add(0, 0, instruction);
  bench.run_all();
  return bench.completion(id).complete_ns;
}

/// Submits 12 HBM -> SBUF loads of [128, 16 KiB] on queue 0 (DMAs 0-11) and 12 SBUF -> HBM
/// stores of the same size on queue 1 (DMAs 12-23), from core 0 at time 0. Returns the bytes of
/// each DMA.
inline std::uint64_t add_loads_and_stores(Testbench& bench) {
  const std::uint64_t bytes = 128ull * 16384;
  for (std::uint64_t i = 0; i < 12; ++i) bench.add(0, 0, load(128, 16384, i * bytes, 0));
  for (std::uint64_t i = 0; i < 12; ++i) {
    bench.add(0, 0,
              dma_copy(hbm(DType::kBFloat16, {128, 8192}, (1ull << 28) + i * bytes),
                       sbuf(DType::kBFloat16, 128, {8192}), 1));
  }
  return bytes;
}

}  // namespace trnsim::dma::test
