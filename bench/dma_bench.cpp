// Simulator speed of the DMA/HBM model (dma::PacketMemorySystem) alone, without NeuronCores:
// simulated DMA bytes, packets and HBM transactions per wall-second, and the simulated DMA
// throughput. Usage: dma_bench [t1v1|stream|curve] [CONFIG (default trn2; t1v1: trn1)]
// [BYTES_PER_PARTITION]
//   t1v1    the DMA stream of calibration target T1's matmul v1: for m in 32, n in 16: for k in 64
//           load lhsT [128,128] and rhs [128,512] bf16; then store [128,512]. 65,536 loads and 512
//           stores, at most 4 DMAs in flight (double-buffered pairs).
//   stream  4,000 loads of [128, 8 KiB] over 16 queues, 64 in flight (the peak rate).
//   curve   2,000 loads of [128, BYTES_PER_PARTITION] on one queue, 32 in flight; prints the
//           steady-state efficiency against the core's peak.
// Prints one line of numbers (see docs/performance.md); not a test.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <string>
#include <systemc>
#include <vector>

#include "config/load.hpp"
#include "core/dma_backend.hpp"
#include "dma/packet_memory_system.hpp"
#include "kernel/instruction.hpp"
#include "memory/hbm_stack.hpp"
#include "util/error.hpp"
#include "util/sim_time.hpp"

namespace {

using trnsim::kernel::AccessPattern;
using trnsim::kernel::DType;
using trnsim::kernel::Instruction;
using trnsim::kernel::MemoryKind;

AccessPattern pattern(MemoryKind memory, std::uint32_t partitions, std::uint32_t rows,
                      std::uint32_t columns, std::uint64_t offset) {
  AccessPattern p;
  p.memory = memory;
  p.dtype = DType::kBFloat16;
  p.tensor = 0;
  p.offset = offset;
  if (memory == MemoryKind::kHbm) {
    p.rank = 2;
    p.sizes = {rows, columns};
    p.strides = {columns, 1};
  } else {
    p.partitions = partitions;
    p.rank = 1;
    p.sizes = {columns};
    p.strides = {1};
  }
  return p;
}

Instruction copy(const AccessPattern& dst, const AccessPattern& src, std::uint8_t queue) {
  Instruction instruction;
  instruction.opcode = trnsim::kernel::Opcode::kDmaCopy;
  instruction.engine = trnsim::kernel::Engine::kDma;
  instruction.operand(trnsim::kernel::Slot::kDst) = dst;
  instruction.operand(trnsim::kernel::Slot::kSrc) = src;
  instruction.dma_queue = queue;
  return instruction;
}

/// Submits a list of DMAs with at most `window` in flight (oldest retired first).
class Driver : public sc_core::sc_module, public trnsim::core::DmaClient {
 public:
  SC_HAS_PROCESS(Driver);
  Driver(sc_core::sc_module_name name, trnsim::dma::PacketMemorySystem& system,
         std::vector<Instruction> dmas, std::size_t window)
      : sc_core::sc_module(name), system_(system), dmas_(std::move(dmas)), window_(window) {
    complete_.resize(dmas_.size(), -1.0);
    SC_THREAD(run);
  }
  void dma_complete(std::uint64_t id, const sc_core::sc_time& complete, double) override {
    complete_[id] = trnsim::sim_time::to_ns(complete);
    completed_.notify();
  }
  const std::vector<double>& completions() const { return complete_; }

 private:
  void run() {
    std::size_t retired = 0;
    for (std::size_t i = 0; i < dmas_.size(); ++i) {
      while (i - retired >= window_) {
        if (complete_[retired] < 0) {
          sc_core::wait(completed_);
          continue;
        }
        const double now = trnsim::sim_time::now_ns();
        if (complete_[retired] > now)
          sc_core::wait(trnsim::sim_time::from_ns(complete_[retired] - now));
        ++retired;
      }
      system_.submit(0, i, dmas_[i], *this);
    }
  }

  trnsim::dma::PacketMemorySystem& system_;
  std::vector<Instruction> dmas_;
  std::size_t window_;
  std::vector<double> complete_;
  sc_core::sc_event completed_;
};

}  // namespace

// libsystemc.so refers to sc_main; this benchmark has its own main().
extern "C" int sc_main(int, char*[]) {
  return 1;
}

namespace {

constexpr const char* kUsage =
    "usage: dma_bench [t1v1|stream|curve] [CONFIG] [BYTES_PER_PARTITION (even, 2..65536)]";

int run(int argc, char** argv) {
  const std::string scenario = argc > 1 ? argv[1] : "t1v1";
  if (scenario == "--help" || scenario == "-h") {
    std::printf("%s\n", kUsage);
    return trnsim::kExitOk;
  }
  const std::string config = argc > 2 ? argv[2] : (scenario == "t1v1" ? "trn1" : "trn2");
  std::uint32_t curve_bytes = 1024;
  if (argc > 3) {
    char* end = nullptr;
    const unsigned long value = std::strtoul(argv[3], &end, 10);
    if (*end != '\0' || value < 2 || value > 65536 || value % 2 != 0) {
      throw trnsim::InputError("command line", std::string("BYTES_PER_PARTITION: expected an even "
                                                           "number from 2 to 65536, found '") +
                                                   argv[3] + "'");
    }
    curve_bytes = static_cast<std::uint32_t>(value);
  }
  const trnsim::config::Params params = trnsim::config::load_config(config).params;

  std::vector<Instruction> dmas;
  std::size_t window = 4;
  if (scenario == "t1v1") {
    const std::uint64_t lhs = 0;
    const std::uint64_t rhs = 1ull << 30;
    const std::uint64_t out = 2ull << 30;
    for (std::uint64_t m = 0; m < 32; ++m) {
      for (std::uint64_t n = 0; n < 16; ++n) {
        for (std::uint64_t k = 0; k < 64; ++k) {
          // lhsT [8192 K, 4096 M] bf16: the [128,128] tile at (k, m); rhs [8192, 8192] tile (k, n).
          AccessPattern a =
              pattern(MemoryKind::kHbm, 1, 128, 128, lhs + (k * 128 * 4096 + m * 128) * 2);
          a.strides[0] = 4096;
          AccessPattern b =
              pattern(MemoryKind::kHbm, 1, 128, 512, rhs + (k * 128 * 8192 + n * 512) * 2);
          b.strides[0] = 8192;
          dmas.push_back(copy(pattern(MemoryKind::kSbuf, 128, 1, 128, (k % 2) * 256), a, 0));
          dmas.push_back(
              copy(pattern(MemoryKind::kSbuf, 128, 1, 512, 4096 + (k % 2) * 1024), b, 1));
        }
        AccessPattern c =
            pattern(MemoryKind::kHbm, 1, 128, 512, out + (m * 128 * 8192 + n * 512) * 2);
        c.strides[0] = 8192;
        dmas.push_back(copy(c, pattern(MemoryKind::kSbuf, 128, 1, 512, 8192), 2));
      }
    }
  } else if (scenario == "stream") {
    window = 64;
    for (std::uint64_t i = 0; i < 4000; ++i) {
      dmas.push_back(copy(pattern(MemoryKind::kSbuf, 128, 1, 4096, 0),
                          pattern(MemoryKind::kHbm, 1, 128, 4096, i * 1048576 % (1ull << 34)),
                          static_cast<std::uint8_t>(i % 16)));
    }
  } else if (scenario == "curve") {
    window = 32;
    const std::uint32_t columns = curve_bytes / 2;
    for (std::uint64_t i = 0; i < 2000; ++i) {
      dmas.push_back(copy(pattern(MemoryKind::kSbuf, 128, 1, columns, 0),
                          pattern(MemoryKind::kHbm, 1, 128, columns, i * 128 * curve_bytes), 0));
    }
  } else {
    throw trnsim::InputError("command line", "unknown scenario '" + scenario + "'\n" + kUsage);
  }

  trnsim::dma::PacketMemorySystem system("memory", params, 1,
                                         trnsim::memory::banked_stacks(params.hbm));
  Driver driver("driver", system, dmas, window);
  const auto start = std::chrono::steady_clock::now();
  const std::clock_t cpu_start = std::clock();
  sc_core::sc_start();
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double cpu = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;

  const nlohmann::json stats = system.statistics();
  const auto& core = stats["dma"]["cores"][0];
  std::uint64_t hbm_requests = 0;
  for (const auto& stack : stats["hbm"]["stacks"])
    hbm_requests += stack["requests"].get<std::uint64_t>();
  const double simulated_ns = stats["hbm"]["elapsed_ns"].get<double>();
  const double bytes = core["bytes"].get<double>();
  const double packets = core["packets"].get<double>();
  std::printf(
      "dma_bench %s %s: %zu DMAs, %.0f MB, %.0f packets, %llu HBM requests in %.2f s wall "
      "(%.2f s CPU; %.1f simulated us): per wall-second %.0f MB, %.2f M packets, %.2f M HBM "
      "requests, %.0f DMAs simulated; simulated DMA throughput %.1f GB/s",
      scenario.c_str(), config.c_str(), dmas.size(), bytes / 1e6, packets,
      static_cast<unsigned long long>(hbm_requests), wall, cpu, simulated_ns / 1e3,
      bytes / 1e6 / wall, packets / 1e6 / wall, hbm_requests / 1e6 / wall, dmas.size() / wall,
      bytes / simulated_ns);
  if (scenario == "curve") {
    const auto& done = driver.completions();
    const std::size_t first = 500;
    const std::size_t last = done.size() - 1;
    const double rate = (last - first) * 128.0 * curve_bytes / (done[last] - done[first]);
    std::printf("; %u B per partition: efficiency %.1f%% of %.1f GB/s", curve_bytes,
                100.0 * rate / system.core_peak_bytes_per_ns(), system.core_peak_bytes_per_ns());
  }
  std::printf("\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const trnsim::InputError& error) {
    std::fprintf(stderr, "dma_bench: %s\n", error.what());
    return trnsim::kExitInvalidInput;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "dma_bench: internal error: %s\n", error.what());
    return trnsim::kExitInternal;
  }
}
