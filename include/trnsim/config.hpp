// A generation config for the public API: a built-in name (`trn2`) or a JSON file, with
// `--set`-style overrides, loaded and validated exactly as `trnsim run --config NAME --set K=V`
// does (docs/config-reference.md). Immutable and cheap to copy (shared state).
// Leaves out reading or changing individual parameters: override them by key when loading.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace trnsim {

namespace detail {
struct ConfigState;
}  // namespace detail

class Config {
 public:
  /// Loads a built-in config by name, or else a JSON file by path (which may `extends` another),
  /// then applies `overrides` ("dma.fixed_cost_ns=1000", typed and range-checked) in order.
  /// Throws InvalidInput.
  static Config load(const std::string& name_or_path,
                     const std::vector<std::string>& overrides = {});

  /// The config's name ("trn2"), as the statistics' provenance reports it.
  std::string name() const;
  /// Where it came from: "built-in config 'trn2'" or the file path.
  std::string origin() const;
  /// One line per override of an informational key (it applies but changes no result).
  std::vector<std::string> warnings() const;
  /// The fully resolved config as JSON text (`trnsim config show`), without "extends".
  std::string effective_json() const;

  /// The internal state, for the library's own implementation.
  const detail::ConfigState& state() const { return *state_; }

 private:
  explicit Config(std::shared_ptr<const detail::ConfigState> state);
  std::shared_ptr<const detail::ConfigState> state_;
};

/// The built-in config names (`trnsim config list`), sorted.
std::vector<std::string> builtin_config_names();

}  // namespace trnsim
