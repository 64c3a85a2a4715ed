// Sweep specs (trnsim-sweep/1, docs/sweeps.md): kernels with fixed params or param grids (JSON
// kernels) or fixed and gridded inputs and kwargs (NKI Python kernels), a base config with fixed
// overrides, axes over config keys, kernel params, NKI kwargs and inputs, or configs (value lists
// or ranges, combined as a product or zipped), and the metrics to record. A spec expands into
// numbered points in a fixed order, so point i is the same run on every machine and shard.
// Leaves out running the points (driver.hpp).
#pragma once

#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sweep/metrics.hpp"
#include "sweep/run_request.hpp"

namespace trnsim::sweep {

enum class AxisTarget {
  kConfigKey,  ///< a --set key, e.g. "dma.fixed_cost_ns"
  kParam,      ///< a JSON kernel's --param, e.g. "T"
  kKwarg,      ///< an NKI kernel's --kwarg, e.g. "T" (values are JSON, passed as Python literals)
  kInput,      ///< an NKI kernel's --input, e.g. "a" (values "float32[128,512]" or "x.npy")
  kConfig,     ///< the config itself (name or file); key "config"
};

struct Axis {
  AxisTarget target = AxisTarget::kConfigKey;
  std::string key;                             ///< the name under "values" in results
  std::vector<nlohmann::ordered_json> values;  ///< scalars, in sweep order
};

/// Axes that vary together (a zip); a lone axis is a group of one. Groups combine as a product.
using AxisGroup = std::vector<Axis>;

struct SweepKernel {
  std::string file;   ///< as written in the spec (an NKI kernel's with its ::FUNCTION)
  std::string path;   ///< resolved
  std::string label;  ///< the "kernel" value when a spec has several kernels
  bool nki = false;   ///< an NKI Python kernel (inputs, kwargs, grid) rather than JSON (params)
  Assignments fixed_params;
  Assignments fixed_inputs;  ///< .npy paths resolved
  Assignments fixed_kwargs;  ///< Python literals
  std::string grid;
  /// Params, inputs and kwargs given as lists: a product, outside the axes.
  std::vector<Axis> param_grid;
};

struct SweepSpec {
  std::string file;                ///< the spec's path ("" when parsed from memory)
  std::filesystem::path base_dir;  ///< relative kernel and config files resolve against it
  std::string name;
  std::vector<SweepKernel> kernels;
  std::string config;       ///< base config as written
  std::string config_path;  ///< resolved
  Assignments fixed_sets;
  std::vector<AxisGroup> groups;  ///< combined as a product, first group outermost
  std::vector<Metric> metrics;
};

struct SweepPoint {
  std::size_t index = 0;
  RunRequest request;
  nlohmann::ordered_json values;  ///< the varied values of this point, key -> scalar
};

/// Reads and validates a spec file. Throws InputError "FILE: /json/pointer: ..." on bad input.
SweepSpec load_sweep_spec(const std::string& path);

/// Validates a parsed spec; relative paths resolve against `base_dir`; `file` names it in errors.
SweepSpec parse_sweep_spec(const nlohmann::ordered_json& document, const std::string& file,
                           const std::filesystem::path& base_dir);

/// Number of points.
std::size_t point_count(const SweepSpec& spec);

/// Point `index` (< point_count). Points run kernels in spec order, then the param grid, then
/// axis groups; the last group varies fastest.
SweepPoint make_point(const SweepSpec& spec, std::size_t index);

/// A slice of a sweep: point i belongs to shard `index` of `count` when i % count == index.
struct Shard {
  std::size_t index = 0;
  std::size_t count = 1;
  bool contains(std::size_t point) const { return point % count == index; }
};

/// Parses "I/N" (0 <= I < N). Throws InputError naming `where`.
Shard parse_shard(const std::string& text, const std::string& where);

}  // namespace trnsim::sweep
