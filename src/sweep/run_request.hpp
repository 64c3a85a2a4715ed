// One `trnsim run` invocation as data (kernel, config, --param and --set overrides), its command
// line for a worker process, and the identity hashes recorded beside its results. Paths written
// in a spec or baseline are relative to that file's directory; built-in config names are not
// paths. Leaves out running it (workers.hpp).
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
  std::string kernel;       ///< kernel file as the user wrote it (recorded)
  std::string kernel_path;  ///< the path to open
  std::string config;       ///< config name or file as the user wrote it (recorded)
  std::string config_path;  ///< built-in name or path to load
  Assignments params;       ///< --param NAME=VALUE, in spec order
  Assignments sets;         ///< --set key=value, in spec order
};

/// argv of `trnsim run KERNEL --config C [--set k=v]... [--param N=V]... --json`.
std::vector<std::string> run_command_line(const RunRequest& request,
                                          const std::string& trnsim_binary);

/// A file named in a spec at `base_dir`: absolute paths stay, relative ones join base_dir.
std::string resolve_path(const std::string& file, const std::filesystem::path& base_dir);

/// A config reference: built-in names stay, anything else is a file resolved like resolve_path.
std::string resolve_config(const std::string& config, const std::filesystem::path& base_dir);

/// Content hash of a kernel run: kernel file bytes and the --param assignments in order. Equals
/// /provenance/kernel/hash of `trnsim run` (FNV-1a 64, util/hash.hpp).
std::string kernel_hash(std::string_view kernel_text, const Assignments& params);

/// Hash of a resolved config's values: its effective JSON without "sources" (which says where
/// values came from, not what they are).
std::string config_hash(const nlohmann::ordered_json& effective);

/// The command-line text of a JSON scalar: 4, 2.8, true, abc (strings verbatim).
std::string value_text(const nlohmann::json& value);

/// Assignments as a JSON object in order ({"T": 4}); values that read back as JSON numbers or
/// booleans are stored as such.
nlohmann::ordered_json assignments_json(const Assignments& assignments);

/// Reads each file once (a kernel file is shared by many points).
class FileCache {
 public:
  /// The file's bytes; throws InputError naming the file when it cannot be read.
  const std::string& text(const std::string& path);

 private:
  std::map<std::string, std::string> texts_;
};

}  // namespace trnsim::sweep
