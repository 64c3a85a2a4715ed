// A kernel in the JSON kernel format (trnsim-kernel/1, docs/kernel-format.md) for the public API:
// parsed, its params resolved (with `--param`-style overrides), shapes and on-chip buffers
// allocated and validated against a config's target, as `trnsim run KERNEL --param N=V` does.
// Immutable and cheap to copy (shared state).
// Leaves out NKI Python kernels: lower one to JSON first with `trnsim nki trace`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "trnsim/config.hpp"

namespace trnsim {

namespace detail {
struct KernelState;
}  // namespace detail

struct KernelOptions {
  /// Kernel param overrides "NAME=VALUE" (an integer expression), applied in order.
  std::vector<std::string> params;
};

class Kernel {
 public:
  /// Reads a JSON kernel file and prepares it for `config`. Throws InvalidInput.
  static Kernel load(const std::string& path, const Config& config,
                     const KernelOptions& options = {});
  /// The same for JSON text; `origin` names it in error messages and in the statistics.
  static Kernel parse(const std::string& json_text, const std::string& origin, const Config& config,
                      const KernelOptions& options = {});

  /// The kernel's "name".
  std::string name() const;
  /// NeuronCores it runs on (SPMD).
  std::uint32_t cores() const;
  /// Content hash of the kernel text and its param overrides (the statistics' provenance).
  std::string hash() const;
  /// The config it was prepared for.
  const Config& config() const;

  /// The internal state, for the library's own implementation.
  const detail::KernelState& state() const { return *state_; }

 private:
  explicit Kernel(std::shared_ptr<const detail::KernelState> state);
  std::shared_ptr<const detail::KernelState> state_;
};

}  // namespace trnsim
