// One `trnsim run` invocation as data (kernel, config, --param and --set overrides; --input,
// --kwarg and --grid for an NKI Python kernel), its command line for a worker process, and the
// identity hashes recorded beside its results. Paths written in a spec or baseline are relative
// to that file's directory; built-in config names are not paths. Leaves out running it
// (workers.hpp).
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trnsim::sweep {

using Assignments = std::vector<std::pair<std::string, std::string>>;  ///< NAME -> value text

struct RunRequest {
  std::string kernel;       ///< kernel as the user wrote it (recorded): JSON file or FILE.py::F
  std::string kernel_path;  ///< the path to open (an NKI kernel's keeps its ::FUNCTION)
  std::string config;       ///< config name or file as the user wrote it (recorded)
  std::string config_path;  ///< built-in name or path to load
  Assignments params;       ///< --param NAME=VALUE, in spec order (JSON kernels)
  Assignments inputs;       ///< --input NAME=SPEC, .npy paths resolved (NKI kernels)
  Assignments kwargs;       ///< --kwarg NAME=VALUE, VALUE a Python literal (NKI kernels)
  std::string grid;         ///< --grid D0[,D1], or empty (NKI kernels)
  Assignments sets;         ///< --set key=value, in spec order

  bool is_nki() const;
};

/// argv of `trnsim run KERNEL --config C [--set k=v]... [--param N=V]... [--input N=S]...
/// [--kwarg N=V]... [--grid G] --json`.
std::vector<std::string> run_command_line(const RunRequest& request,
                                          const std::string& trnsim_binary);

/// A file named in a spec at `base_dir`: absolute paths stay, relative ones join base_dir.
std::string resolve_path(const std::string& file, const std::filesystem::path& base_dir);

/// A config reference: built-in names stay, anything else is a file resolved like resolve_path.
std::string resolve_config(const std::string& config, const std::filesystem::path& base_dir);

/// Content hash of a kernel run (FNV-1a 64, util/hash.hpp): the kernel file's bytes, then the
/// --param assignments in order; for an NKI kernel, the Python file's bytes, then its --input,
/// --kwarg and --grid arguments. For a JSON kernel it equals /provenance/kernel/hash of
/// `trnsim run`; an NKI run's provenance hashes the traced JSON instead, which only the run
/// knows (it depends on the config too).
std::string kernel_hash(std::string_view kernel_text, const RunRequest& request);

/// A spec or baseline value as a Python literal for --kwarg: numbers as written, true/false/null
/// as True/False/None, lists and objects recursively, and strings quoted, except a dotted name
/// such as bfloat16 or nl.bfloat16, which the tracer reads as that string anyway.
std::string python_literal(const nlohmann::ordered_json& value);

/// An --input value from a spec or baseline: a .npy file resolves against `base_dir` like a
/// kernel file; a DTYPE[SHAPE] stays as written.
std::string resolve_input(const std::string& value, const std::filesystem::path& base_dir);

/// Hash of a resolved config's values: its effective JSON without "sources" (which says where
/// values came from, not what they are).
std::string config_hash(const nlohmann::ordered_json& effective);

/// The command-line text of a JSON scalar: 4, 2.8, true, abc (strings verbatim).
std::string value_text(const nlohmann::json& value);

/// Assignments as a JSON object in order ({"T": 4}); values that read back as JSON numbers or
/// booleans are stored as such.
nlohmann::ordered_json assignments_json(const Assignments& assignments);

/// --kwarg assignments as a JSON object in order: numbers and True/False/None as the JSON values
/// they are; any other literal as its text.
nlohmann::ordered_json kwargs_json(const Assignments& kwargs);

/// Reads each file once (a kernel file is shared by many points).
class FileCache {
 public:
  /// The file's bytes; throws InputError naming the file when it cannot be read.
  const std::string& text(const std::string& path);

 private:
  std::map<std::string, std::string> texts_;
};

}  // namespace trnsim::sweep
