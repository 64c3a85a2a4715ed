// Throughput of deps::DependencyTracker on realistic instruction streams: add() + retire() pairs
// per second with a steady in-flight window, and the process's peak resident set size.
// Usage: deps_bench [instructions per stream, default 5000000] [vector_add|matmul|random]
#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/deps/dependency_tracker.hpp"

namespace {

using trnsim::deps::Dependency;
using trnsim::deps::DependencyTracker;
using trnsim::kernel::MemoryKind;
using trnsim::kernel::Region;

Region sbuf(std::uint64_t begin, std::uint64_t bytes, std::uint32_t partitions = 128) {
  return {MemoryKind::kSbuf, 0, 0, partitions, begin, bytes, 0, 1};
}
Region psum(std::uint64_t begin, std::uint64_t bytes) {
  return {MemoryKind::kPsum, 0, 0, 128, begin, bytes, 0, 1};
}
Region hbm(std::uint64_t begin, std::uint64_t run, std::uint64_t stride = 0,
           std::uint64_t count = 1) {
  return {MemoryKind::kHbm, 0, 0, 1, begin, run, stride, count};
}

/// One dynamic instruction's regions (at most 4 reads, 2 writes).
struct Instr {
  Region reads[4];
  Region writes[2];
  unsigned read_count = 0;
  unsigned write_count = 0;
  void read(const Region& r) { reads[read_count++] = r; }
  void write(const Region& r) { writes[write_count++] = r; }
};

/// vector_add of spec section 8, F = 2048 float32, double-buffered; T wraps every 4096 tiles.
class VectorAddStream {
 public:
  void next(Instr& in) {
    const std::uint64_t t = (n_ / 4) % 4096;
    const std::uint64_t buffer = t % 2 * 8192;
    constexpr std::uint64_t kTile = 1 << 20;
    switch (n_++ % 4) {
      case 0:
        in.read(hbm(t * kTile, kTile)), in.write(sbuf(buffer, 8192));
        break;
      case 1:
        in.read(hbm((1ull << 32) + t * kTile, kTile)), in.write(sbuf(16384 + buffer, 8192));
        break;
      case 2:
        in.read(sbuf(buffer, 8192)), in.read(sbuf(16384 + buffer, 8192));
        in.write(sbuf(32768 + buffer, 8192));
        break;
      default:
        in.read(sbuf(32768 + buffer, 8192)), in.write(hbm((2ull << 32) + t * kTile, kTile));
    }
  }

 private:
  std::uint64_t n_ = 0;
};

/// C[M, N] = A[K, M]^T B[K, N] in bf16, tiles 128 (K) x 128 (M) x 512 (N); M = N = K = 4096.
/// Per (n, m): for k: dma A tile (strided HBM rows) -> a_sb[k%2], dma B tile -> b_sb[k%2],
/// matmul into PSUM bank m%2 (accumulating for k > 0); then copy PSUM -> c_sb[m%2], dma to C.
class MatmulStream {
 public:
  void next(Instr& in) {
    constexpr std::uint64_t kDim = 4096, kTiles = kDim / 128, kBf16 = 2;
    const std::uint64_t k_steps = kTiles;
    const std::uint64_t per_mn = 3 * k_steps + 2;
    const std::uint64_t mn = n_ / per_mn, step = n_ % per_mn;
    const std::uint64_t m = mn % kTiles, n = (mn / kTiles) % (kDim / 512);
    const std::uint64_t bank = m % 2 * 2048;
    ++n_;
    if (step < 3 * k_steps) {
      const std::uint64_t k = step / 3, buf = k % 2;
      switch (step % 3) {
        case 0:  // A[k*128 : +128, m*128 : +128]: 128 rows of 256 bytes, pitch 8192
          in.read(hbm(k * 128 * kDim * kBf16 + m * 128 * kBf16, 256, kDim * kBf16, 128));
          in.write(sbuf(buf * 256, 256));
          break;
        case 1:  // B[k*128 : +128, n*512 : +512]: 128 rows of 1024 bytes
          in.read(hbm((1ull << 32) + k * 128 * kDim * kBf16 + n * 512 * kBf16, 1024, kDim * kBf16,
                      128));
          in.write(sbuf(512 + buf * 1024, 1024));
          break;
        default:
          in.read(sbuf(buf * 256, 256));
          in.read(sbuf(512 + buf * 1024, 1024));
          if (k > 0) in.read(psum(bank, 2048));
          in.write(psum(bank, 2048));
      }
    } else if (step == 3 * k_steps) {
      in.read(psum(bank, 2048));
      in.write(sbuf(4096 + m % 2 * 2048, 2048));
    } else {  // C[m*128 : +128, n*512 : +512] fp32 rows of 2048 bytes, pitch 16384
      in.read(sbuf(4096 + m % 2 * 2048, 2048));
      in.write(hbm((2ull << 32) + m * 128 * kDim * 4 + n * 512 * 4, 2048, kDim * 4, 128));
    }
  }

 private:
  std::uint64_t n_ = 0;
};

/// Random mix: 1-3 reads and 1 write anywhere in a 192 KiB-per-partition SBUF, 2-16 KiB PSUM
/// and a 1 GiB HBM; some strided. Little reuse: mostly tests index lookups, not dependencies.
class RandomStream {
 public:
  void next(Instr& in) {
    const unsigned reads = 1 + rng_() % 3;
    for (unsigned i = 0; i < reads; ++i) in.read(pick());
    in.write(pick());
  }

 private:
  Region pick() {
    switch (rng_() % 4) {
      case 0:
        return psum(rng_() % 8 * 2048, 2048);
      case 1:
        return hbm(rng_() % (1 << 30) / 64 * 64, 256, 1024 * (1 + rng_() % 4), 128);
      default: {
        const std::uint64_t bytes = 512u << (rng_() % 4);
        return sbuf(rng_() % (196608 / bytes) * bytes, bytes, 32 << (rng_() % 3));
      }
    }
  }
  std::mt19937_64 rng_{42};
};

long peak_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

/// Runs `count` instructions keeping `window` in flight; retires one of the 8 oldest each time
/// (engines finish roughly, not strictly, in order).
template <class Stream>
void run(const char* name, std::uint64_t count, std::size_t window) {
  Stream stream;
  DependencyTracker tracker;
  std::vector<Dependency> out;
  out.reserve(64);
  // In-flight ids, roughly oldest first, in a ring of kRing slots from live_begin.
  constexpr std::size_t kRing = 1024;
  std::vector<std::uint64_t> live(kRing);
  std::size_t live_begin = 0;
  std::mt19937 rng(1);
  std::uint64_t deps = 0;
  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t id = 0; id < count; ++id) {
    Instr in;
    stream.next(in);
    out.clear();
    tracker.add(id, {in.reads, in.read_count}, {in.writes, in.write_count}, out);
    deps += out.size();
    live[id % kRing] = id;
    if (id - live_begin >= window) {
      // Retire one of the 8 oldest; the oldest takes its place.
      const std::size_t pick = (live_begin + rng() % 8) % kRing;
      tracker.retire(live[pick]);
      live[pick] = live[live_begin % kRing];
      ++live_begin;
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "%-11s %9.2f M add+retire/s  %5.2f deps/instr  window %zu  tracker %6.1f KiB  "
      "peak RSS %ld KiB\n",
      name, static_cast<double>(count) / seconds / 1e6,
      static_cast<double>(deps) / static_cast<double>(count), window,
      static_cast<double>(tracker.footprint_bytes()) / 1024.0, peak_rss_kib());
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t count = 5'000'000;
  if (argc > 1 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
    std::printf("usage: deps_bench [COUNT] [vector_add|matmul|random]\n");
    return 0;
  }
  if (argc > 1) {
    char* end = nullptr;
    count = std::strtoull(argv[1], &end, 10);
    if (*end != '\0' || count == 0 || argv[1][0] == '-') {
      std::fprintf(stderr,
                   "deps_bench: command line: COUNT: expected a positive integer, found '%s'\n"
                   "usage: deps_bench [COUNT] [vector_add|matmul|random]\n",
                   argv[1]);
      return 2;
    }
  }
  const std::string only = argc > 2 ? argv[2] : "";
  if (!only.empty() && only != "vector_add" && only != "matmul" && only != "random") {
    std::fprintf(stderr,
                 "deps_bench: command line: expected vector_add, matmul or random, found '%s'\n",
                 only.c_str());
    return 2;
  }
  std::printf("deps_bench: %llu instructions per stream (stream generation time included)\n",
              static_cast<unsigned long long>(count));
  if (only.empty() || only == "vector_add") run<VectorAddStream>("vector_add", count, 256);
  if (only.empty() || only == "matmul") run<MatmulStream>("matmul", count, 256);
  if (only.empty() || only == "random") run<RandomStream>("random", count, 300);
  return 0;
}
