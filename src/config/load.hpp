// Loading a configuration: a built-in name or a JSON file, its `extends` chain, `--set`
// overrides, strict validation (unknown keys, types, ranges, cross-field rules), and the
// resolved effective JSON. Every error is a trnsim::InputError naming the file or override
// and the JSON pointer. Loading is deterministic and never consults the working directory
// for built-in names.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config/params.hpp"

namespace trnsim::config {

struct LoadedConfig {
  Params params;
  /// Fully resolved config in declaration order, without "extends", with "sources" (dotted key
  /// -> where this config's value came from; keys without an entry use the declaration's
  /// source). Loading it back as a file gives the same effective JSON.
  nlohmann::ordered_json effective;
  /// Where the config came from: "built-in config 'trn2'" or the file path.
  std::string origin;
  /// One line per `--set` of an informational parameter (FieldMeta::informational), which
  /// applies but changes no simulated result; commands print them on stderr.
  std::vector<std::string> warnings;
};

/// Loads a built-in config by name, or else a JSON file by path, then applies overrides
/// ("tensor.clock_ghz=3.0", typed by the declaration) in order, computes the derived fields
/// (Params::derive()) and validates. An override of a derived field is an InputError naming the
/// keys it derives from.
LoadedConfig load_config(const std::string& name_or_path,
                         const std::vector<std::string>& overrides = {});

/// Built-in config names, sorted.
std::vector<std::string> builtin_config_names();
/// The built-in config's one-line "description"; throws InputError for an unknown name.
std::string builtin_config_description(const std::string& name);
/// True for a built-in that does not extend another (a complete generation config).
bool is_generation_config(const std::string& name);
/// The raw text of a built-in config as embedded (for tests and `config show --raw`).
std::string builtin_config_text(const std::string& name);

/// The declared source of `dotted_key` for this config: its "sources" entry, else the
/// declaration's generic source.
std::string source_of(const LoadedConfig& config, const std::string& dotted_key);

/// One line per cross-field validation rule (for the reference documentation).
std::vector<std::string> validation_rules();

}  // namespace trnsim::config
