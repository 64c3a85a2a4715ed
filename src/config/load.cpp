#include "config/load.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <type_traits>

#include "config/builtin.hpp"
#include "config/schema.hpp"
#include "util/error.hpp"
#include "util/json_input.hpp"
#include "util/strings.hpp"

namespace trnsim::config {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;
namespace fs = std::filesystem;

constexpr std::string_view kOverrideSource = "--set on the command line";

// ---- small formatting helpers ------------------------------------------------------------------

std::string format_number(double value) {
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    return fmt::format("{}", static_cast<long long>(value));
  }
  return fmt::format("{}", value);
}

using util::describe_json;

// ---- built-ins
// -----------------------------------------------------------------------------------

const BuiltinConfigText* find_builtin(std::string_view name) {
  for (const auto& builtin : builtin_config_texts()) {
    if (builtin.name == name) return &builtin;
  }
  return nullptr;
}

std::string builtin_origin(std::string_view name) {
  return "built-in config '" + std::string(name) + "'";
}

// ---- documents and resolution
// --------------------------------------------------------------------

struct Document {
  json body;
  std::string origin;        ///< for messages
  std::string identity;      ///< for cycle detection
  fs::path directory;        ///< base for a relative "extends" (empty for built-ins)
  std::string default_name;  ///< name when the document has none
};

struct Value {
  json value;
  std::string origin;
};

struct Resolved {
  std::map<std::string, Value> values;         ///< dotted key -> value and who set it
  std::map<std::string, std::string> sources;  ///< dotted key -> this config's source text
  /// Derived keys a config file states, with the JSON pointer that states them; checked against
  /// the derived value after Params::derive().
  std::map<std::string, Value> stated_derived;
  std::vector<std::string> warnings;  ///< LoadedConfig::warnings
};

bool is_derived(const FieldInfo& field) {
  return !field.meta.derived_from.empty();
}

/// The dotted keys a derivation formula names ("psum.banks x psum.bank_bytes" -> both keys).
std::vector<std::string> keys_in_formula(std::string_view formula) {
  std::vector<std::string> keys;
  std::size_t begin = 0;
  while (begin < formula.size()) {
    std::size_t end = formula.find(' ', begin);
    if (end == std::string_view::npos) end = formula.size();
    const std::string word(formula.substr(begin, end - begin));
    if (find_field(word) != nullptr) keys.push_back(word);
    begin = end + 1;
  }
  return keys;
}

/// "sbuf.partitions is derived (sbuf.partitions = tensor.rows): set tensor.rows instead".
std::string derived_explanation(const FieldInfo& field) {
  return fmt::format("{} is derived ({} = {}; {}) and cannot be set: set {} instead", field.key,
                     field.key, field.meta.derived_from, field.meta.description,
                     util::join(keys_in_formula(field.meta.derived_from), " and "));
}

json parse_json_text(std::string_view text, const std::string& origin) {
  return util::parse_json_input<json>(text, origin);
}

/// A built-in name, else a file path (relative to `base` when given and the path is relative).
Document read_document(const std::string& reference, const fs::path& base,
                       const std::string& referrer) {
  if (const auto* builtin = find_builtin(reference)) {
    const std::string origin = builtin_origin(reference);
    return {parse_json_text(builtin->json, origin), origin, "builtin:" + reference, fs::path(),
            reference};
  }
  fs::path path(reference);
  if (path.is_relative() && !base.empty()) path = base / path;
  std::error_code error;
  if (!fs::exists(path, error)) {
    std::string message = "no built-in config and no file named '" + reference + "'";
    if (path.string() != reference) message += " (looked for " + path.string() + ")";
    const std::vector<std::string> names = builtin_config_names();
    message += util::did_you_mean(reference, names);
    message += "; built-in configs: " + util::join(names, ", ");
    throw InputError(referrer.empty() ? "" : referrer + ": /extends", message);
  }
  const std::string origin = path.string();
  const std::string text = util::read_input_file(origin, "config file");
  const fs::path canonical = fs::weakly_canonical(path, error);
  return {parse_json_text(text, origin), origin,
          "file:" + (error ? path.string() : canonical.string()), path.parent_path(),
          path.stem().string()};
}

/// Type, range and choice check of one value; `where` names file and pointer (or override).
void check_value(const FieldInfo& field, const json& value, const std::string& where) {
  const auto wrong_type = [&] {
    const bool show_unit = !field.meta.unit.empty() && field.meta.unit != "bool";
    throw InputError(where, "expected " + expected_type(field) +
                                (show_unit ? " (" + std::string(field.meta.unit) + ")" : "") +
                                ", found " + describe_json(value));
  };
  const auto check_range = [&](double number) {
    if (number < field.meta.min || number > field.meta.max) {
      throw InputError(where,
                       fmt::format("{} must be between {} and {}{}, found {}", field.key,
                                   format_number(field.meta.min), format_number(field.meta.max),
                                   field.meta.unit.empty() || field.meta.unit == "bool"
                                       ? ""
                                       : " " + std::string(field.meta.unit),
                                   value.dump()));
    }
  };
  switch (field.kind) {
    case FieldKind::integer:
    case FieldKind::integer64: {
      if (!value.is_number_integer()) wrong_type();
      if (value.is_number_unsigned() &&
          value.get<std::uint64_t>() >
              static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        check_range(std::numeric_limits<double>::infinity());
      }
      check_range(static_cast<double>(value.get<std::int64_t>()));
      if (field.kind == FieldKind::integer &&
          (value.get<std::int64_t>() > std::numeric_limits<int>::max() ||
           value.get<std::int64_t>() < std::numeric_limits<int>::min())) {
        check_range(std::numeric_limits<double>::infinity());
      }
      break;
    }
    case FieldKind::number:
      if (!value.is_number()) wrong_type();
      check_range(value.get<double>());
      break;
    case FieldKind::boolean:
      if (!value.is_boolean()) wrong_type();
      break;
    case FieldKind::string:
      if (!value.is_string()) wrong_type();
      break;
    case FieldKind::enumeration: {
      if (!value.is_string()) wrong_type();
      const auto text = value.get<std::string>();
      if (std::find(field.choices.begin(), field.choices.end(), text) == field.choices.end()) {
        throw InputError(where, "expected " + expected_type(field) + ", found " +
                                    describe_json(value) + util::did_you_mean(text, field.choices));
      }
      break;
    }
  }
}

std::vector<std::string> section_field_names(const std::string& section) {
  std::vector<std::string> names;
  for (const auto& field : parameter_fields()) {
    if (field.section == section) names.push_back(field.name);
  }
  return names;
}

std::vector<std::string> top_level_keys() {
  std::vector<std::string> keys = section_field_names("");
  for (const auto& section : parameter_sections()) keys.push_back(section.key);
  keys.emplace_back("extends");
  keys.emplace_back("sources");
  return keys;
}

const SectionInfo* find_section(std::string_view key) {
  for (const auto& section : parameter_sections()) {
    if (section.key == key) return &section;
  }
  return nullptr;
}

void set_value(Resolved& into, const FieldInfo& field, const json& value,
               const std::string& origin) {
  into.values[field.key] = {value, origin};
  into.sources.erase(field.key);  // a source describes the value it came with, not a new one
}

void collect(const Document& document, Resolved& into, std::vector<std::string>& chain,
             std::vector<std::string>& chain_origins) {
  if (std::find(chain.begin(), chain.end(), document.identity) != chain.end()) {
    chain_origins.push_back(document.origin);
    throw InputError(chain_origins[chain_origins.size() - 2] + ": /extends",
                     "extends cycle: " + util::join(chain_origins, " -> "));
  }
  chain.push_back(document.identity);
  chain_origins.push_back(document.origin);
  const json& body = document.body;
  if (!body.is_object()) {
    throw InputError(document.origin,
                     "expected a JSON object at the top level, found " + describe_json(body));
  }

  std::string parent_name;
  if (const auto extends = body.find("extends"); extends != body.end()) {
    if (!extends->is_string()) {
      throw InputError(document.origin + ": /extends",
                       "expected the name of a built-in config or a file path, found " +
                           describe_json(*extends));
    }
    const Document parent =
        read_document(extends->get<std::string>(), document.directory, document.origin);
    collect(parent, into, chain, chain_origins);
    parent_name = into.values.count("name") ? into.values["name"].value.get<std::string>() : "";
  }

  for (const auto& [key, value] : body.items()) {
    if (key == "extends" || key == "sources") continue;
    const std::string pointer = document.origin + ": /" + key;
    if (const FieldInfo* field = find_field(key); field != nullptr && field->section.empty()) {
      check_value(*field, value, pointer);
      set_value(into, *field, value, document.origin);
      continue;
    }  // (no top-level field is derived)
    const SectionInfo* section = find_section(key);
    if (section == nullptr) {
      throw InputError(pointer,
                       "unknown key '" + key + "'" + util::did_you_mean(key, top_level_keys()) +
                           "; valid top-level keys: " + util::join(top_level_keys(), ", "));
    }
    if (!value.is_object()) {
      throw InputError(pointer, "expected an object (" + section->description + "), found " +
                                    describe_json(value));
    }
    for (const auto& [name, member] : value.items()) {
      const FieldInfo* field = find_field(key + "." + name);
      const std::string member_pointer = pointer + "/" + name;
      if (field == nullptr) {
        std::string hint = util::did_you_mean(name, section_field_names(key));
        if (hint.empty()) hint = util::did_you_mean(key + "." + name, parameter_keys());
        throw InputError(member_pointer, "unknown key '" + name + "' in '" + key + "'" + hint);
      }
      check_value(*field, member, member_pointer);
      if (is_derived(*field)) {
        into.stated_derived[field->key] = {member, member_pointer};
      } else {
        set_value(into, *field, member, document.origin);
      }
    }
  }

  // name and description describe one document: they are not inherited.
  if (!body.contains("name")) {
    set_value(into, *find_field("name"), document.default_name, document.origin);
  }
  if (!body.contains("description")) {
    const std::string text =
        parent_name.empty() ? "config " + document.origin : "extends " + parent_name;
    set_value(into, *find_field("description"), text, document.origin);
  }

  if (const auto sources = body.find("sources"); sources != body.end()) {
    const std::string pointer = document.origin + ": /sources";
    if (!sources->is_object()) {
      throw InputError(pointer, "expected an object mapping dotted keys to source text, found " +
                                    describe_json(*sources));
    }
    for (const auto& [key, text] : sources->items()) {
      const FieldInfo* field = find_field(key);
      if (field == nullptr) {
        throw InputError(pointer + "/" + key, "unknown parameter '" + key + "'" +
                                                  util::did_you_mean(key, parameter_keys()));
      }
      if (is_derived(*field)) {
        throw InputError(pointer + "/" + key, "a derived parameter has no source of its own: " +
                                                  derived_explanation(*field));
      }
      if (!text.is_string()) {
        throw InputError(pointer + "/" + key, "expected a string, found " + describe_json(text));
      }
      into.sources[key] = text.get<std::string>();
    }
  }
  chain.pop_back();
  chain_origins.pop_back();
}

// ---- overrides
// -----------------------------------------------------------------------------------

json parse_override_value(const FieldInfo& field, const std::string& text,
                          const std::string& where) {
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  switch (field.kind) {
    case FieldKind::integer:
    case FieldKind::integer64: {
      std::int64_t number = 0;
      const auto [ptr, error] = std::from_chars(begin, end, number);
      if (error != std::errc() || ptr != end || text.empty()) {
        throw InputError(where, "expected " + expected_type(field) + ", found '" + text + "'");
      }
      return number;
    }
    case FieldKind::number: {
      double number = 0;
      const auto [ptr, error] = std::from_chars(begin, end, number);
      if (error != std::errc() || ptr != end || text.empty() || !std::isfinite(number)) {
        throw InputError(where, "expected " + expected_type(field) + ", found '" + text + "'");
      }
      return number;
    }
    case FieldKind::boolean:
      if (text == "true") return true;
      if (text == "false") return false;
      throw InputError(where, "expected true or false, found '" + text + "'");
    case FieldKind::string:
    case FieldKind::enumeration:
      return text;
  }
  return json();
}

void apply_override(Resolved& into, const std::string& override_text) {
  const std::string where = "--set " + override_text;
  const auto equals = override_text.find('=');
  if (equals == std::string::npos || equals == 0) {
    throw InputError(where, "expected KEY=VALUE with a dotted key, e.g. tensor.clock_ghz=2.8");
  }
  const std::string key = override_text.substr(0, equals);
  const FieldInfo* field = find_field(key);
  if (field == nullptr) {
    throw InputError(where,
                     "unknown parameter '" + key + "'" + util::did_you_mean(key, parameter_keys()));
  }
  if (is_derived(*field)) throw InputError(where, derived_explanation(*field));
  const json value = parse_override_value(*field, override_text.substr(equals + 1), where);
  check_value(*field, value, where);
  set_value(into, *field, value, where);
  into.sources[key] = std::string(kOverrideSource);
  if (!field->meta.informational.empty()) {
    into.warnings.push_back(
        fmt::format("{}: {} is informational ({}); it changes no simulated "
                    "result",
                    where, key, field->meta.informational));
  }
}

// ---- reading and writing Params -----------------------------------------------------------------

class ReadVisitor {
 public:
  explicit ReadVisitor(const Resolved& resolved) : resolved_(resolved) {}

  template <class T>
  void field(std::string_view key, T& value, const FieldMeta& meta) {
    if (!meta.derived_from.empty()) return;  // Params::derive() sets it
    const std::string dotted =
        section_.empty() ? std::string(key) : section_ + "." + std::string(key);
    const json& stored = resolved_.values.at(dotted).value;  // presence checked before
    if constexpr (ConfigEnum<T>) {
      value = *parse_enum<T>(stored.get<std::string>());  // choice checked before
    } else {
      value = stored.get<T>();
    }
  }

  template <class S>
  void section(std::string_view key, S& block, std::string_view /*description*/) {
    section_ = std::string(key);
    block.visit(*this);
    section_.clear();
  }

 private:
  const Resolved& resolved_;
  std::string section_;
};

class WriteVisitor {
 public:
  ordered_json out = ordered_json::object();

  template <class T>
  void field(std::string_view key, T& value, const FieldMeta& /*meta*/) {
    ordered_json& target = section_.empty() ? out : out[section_];
    if constexpr (ConfigEnum<T>) {
      target[std::string(key)] = std::string(enum_name(value));
    } else {
      target[std::string(key)] = value;
    }
  }

  template <class S>
  void section(std::string_view key, S& block, std::string_view /*description*/) {
    section_ = std::string(key);
    out[section_] = ordered_json::object();
    block.visit(*this);
    section_.clear();
  }

 private:
  std::string section_;
};

// ---- cross-field rules
// ---------------------------------------------------------------------------

using Origins = std::map<std::string, Value>;

std::string from(const Origins& origins, const std::string& key) {
  const auto& value = origins.at(key);
  return fmt::format("{} = {} (from {})", key, value.value.dump(), value.origin);
}

/// The value of every field of `params` as JSON, by dotted key.
class ValueCollector {
 public:
  std::map<std::string, json> values;

  template <class T>
  void field(std::string_view key, T& value, const FieldMeta& /*meta*/) {
    const std::string dotted =
        section_.empty() ? std::string(key) : section_ + "." + std::string(key);
    if constexpr (ConfigEnum<T>) {
      values[dotted] = std::string(enum_name(value));
    } else {
      values[dotted] = value;
    }
  }

  template <class S>
  void section(std::string_view key, S& block, std::string_view /*description*/) {
    section_ = std::string(key);
    block.visit(*this);
    section_.clear();
  }

 private:
  std::string section_;
};

/// Checks each derived value against its declared range and against what a config file
/// stated for it (a file may repeat a derived value, never change it).
void check_derived(const Params& params, const Resolved& resolved, const std::string& origin) {
  ValueCollector collector;
  Params copy = params;
  copy.visit(collector);
  for (const auto& field : parameter_fields()) {
    if (!is_derived(field)) continue;
    const json& value = collector.values.at(field.key);
    const std::vector<std::string> inputs = keys_in_formula(field.meta.derived_from);
    std::vector<std::string> input_texts;
    for (const auto& input : inputs) input_texts.push_back(from(resolved.values, input));
    const double number = value.get<double>();
    if (number < field.meta.min || number > field.meta.max) {
      throw InputError(
          origin, fmt::format("{} = {} = {} must be between {} and {} {} ({})", field.key,
                              field.meta.derived_from, value.dump(), format_number(field.meta.min),
                              format_number(field.meta.max), field.meta.unit,
                              util::join(input_texts, "; ")));
    }
    if (const auto stated = resolved.stated_derived.find(field.key);
        stated != resolved.stated_derived.end() && stated->second.value != value) {
      throw InputError(stated->second.origin,
                       fmt::format("{} = {} disagrees with the derived value {} ({}); {}",
                                   field.key, stated->second.value.dump(), value.dump(),
                                   util::join(input_texts, "; "), derived_explanation(field)));
    }
  }
}

struct Rule {
  std::string_view text;
  std::string (*check)(const Params&, const Origins&);  ///< "" when satisfied
};

bool is_power_of_two(long long value) {
  return value > 0 && (value & (value - 1)) == 0;
}

const std::vector<Rule>& rules() {
  static const std::vector<Rule> list = {
      {"chip.cores = chip.hbm_stacks x hbm.cores_per_stack",
       [](const Params& p, const Origins& o) -> std::string {
         if (p.chip.cores == p.chip.hbm_stacks * p.hbm.cores_per_stack) return "";
         return fmt::format(
             "{} must equal chip.hbm_stacks x hbm.cores_per_stack = {} x {} = {} "
             "({}; {})",
             from(o, "chip.cores"), p.chip.hbm_stacks, p.hbm.cores_per_stack,
             p.chip.hbm_stacks * p.hbm.cores_per_stack, from(o, "chip.hbm_stacks"),
             from(o, "hbm.cores_per_stack"));
       }},
      {"sbuf.usable_partition_bytes <= sbuf.partition_bytes",
       [](const Params& p, const Origins& o) -> std::string {
         if (p.sbuf.usable_partition_bytes <= p.sbuf.partition_bytes) return "";
         return fmt::format("{} must not exceed {}", from(o, "sbuf.usable_partition_bytes"),
                            from(o, "sbuf.partition_bytes"));
       }},
      {"sbuf.alignment_bytes and psum.alignment_bytes are powers of two",
       [](const Params& p, const Origins& o) -> std::string {
         if (!is_power_of_two(p.sbuf.alignment_bytes)) {
           return from(o, "sbuf.alignment_bytes") + " must be a power of two";
         }
         if (!is_power_of_two(p.psum.alignment_bytes)) {
           return from(o, "psum.alignment_bytes") + " must be a power of two";
         }
         return "";
       }},
      {"4 x tensor.moving_fmax and 2 x tensor.moving_fmax_bf16_dst <= psum.partition_bytes "
       "(one matmul output fits PSUM)",
       [](const Params& p, const Origins& o) -> std::string {
         const std::string psum_bytes =
             fmt::format("psum.partition_bytes = psum.banks x psum.bank_bytes = {} ({}; {})",
                         p.psum.partition_bytes, from(o, "psum.banks"), from(o, "psum.bank_bytes"));
         if (4LL * p.tensor.moving_fmax > p.psum.partition_bytes) {
           return fmt::format("4 bytes x {} exceeds {}", from(o, "tensor.moving_fmax"), psum_bytes);
         }
         if (p.tensor.bf16_dst_supported &&
             2LL * p.tensor.moving_fmax_bf16_dst > p.psum.partition_bytes) {
           return fmt::format("2 bytes x {} exceeds {}", from(o, "tensor.moving_fmax_bf16_dst"),
                              psum_bytes);
         }
         return "";
       }},
      {"compiler.dma_queues <= dma.queues_per_engine (the NKI front end uses existing queues)",
       [](const Params& p, const Origins& o) -> std::string {
         if (p.compiler.dma_queues <= p.dma.queues_per_engine) return "";
         return fmt::format("{} must not exceed {}", from(o, "compiler.dma_queues"),
                            from(o, "dma.queues_per_engine"));
       }},
      {"dma.hwdge_cost_ns <= dma.hwdge_latency_ns (a DGE cannot start instructions faster than "
       "it finishes them)",
       [](const Params& p, const Origins& o) -> std::string {
         if (p.dma.hwdge_cost_ns <= p.dma.hwdge_latency_ns) return "";
         return fmt::format("{} must not exceed {}", from(o, "dma.hwdge_cost_ns"),
                            from(o, "dma.hwdge_latency_ns"));
       }},
      {"compiler.dge_mode hwdge needs a NeuronCore with hardware DGE (nc_version >= 3)",
       [](const Params& p, const Origins& o) -> std::string {
         if (p.compiler.dge_mode != CompilerDge::hwdge || p.nc_version >= 3) return "";
         return fmt::format(
             "{} needs a hardware DGE, which {} does not have (NeuronCore-v3 and later); set "
             "compiler.dge_mode to none",
             from(o, "compiler.dge_mode"), from(o, "nc_version"));
       }},
      {"collective.mesh_max_bytes <= collective.rdh_max_bytes",
       [](const Params& p, const Origins& o) -> std::string {
         if (p.collective.mesh_max_bytes <= p.collective.rdh_max_bytes) return "";
         return fmt::format("{} must not exceed {}", from(o, "collective.mesh_max_bytes"),
                            from(o, "collective.rdh_max_bytes"));
       }},
      {"system.topology single: system.chips = 1",
       [](const Params& p, const Origins& o) -> std::string {
         if (p.system.topology != Topology::single || p.system.chips == 1) return "";
         return from(o, "system.chips") + " needs a multi-chip system.topology (" +
                from(o, "system.topology") + ")";
       }},
      {"system.topology torus2d: torus_x x torus_y = chips and torus_z = 1; torus3d: "
       "torus_x x torus_y x torus_z = chips",
       [](const Params& p, const Origins& o) -> std::string {
         const auto& s = p.system;
         if (s.topology == Topology::torus2d &&
             (s.torus_x * s.torus_y != s.chips || s.torus_z != 1)) {
           return fmt::format(
               "a torus2d needs torus_x x torus_y = chips and torus_z = 1; found "
               "{} x {} (z = {}) for {}",
               s.torus_x, s.torus_y, s.torus_z, from(o, "system.chips"));
         }
         if (s.topology == Topology::torus3d && s.torus_x * s.torus_y * s.torus_z != s.chips) {
           return fmt::format(
               "a torus3d needs torus_x x torus_y x torus_z = chips; found "
               "{} x {} x {} = {} for {}",
               s.torus_x, s.torus_y, s.torus_z, s.torus_x * s.torus_y * s.torus_z,
               from(o, "system.chips"));
         }
         return "";
       }},
      {"system.topology switch or nvlink_switch: system.switch_levels >= 1 and "
       "system.switch_port_bandwidth_gbps > 0",
       [](const Params& p, const Origins& o) -> std::string {
         const auto& s = p.system;
         if (s.topology != Topology::switch_ && s.topology != Topology::nvlink_switch) return "";
         if (s.switch_levels < 1) {
           return from(o, "system.switch_levels") + " must be at least 1 for " +
                  from(o, "system.topology");
         }
         if (s.switch_port_bandwidth_gbps <= 0) {
           return from(o, "system.switch_port_bandwidth_gbps") + " must be positive for " +
                  from(o, "system.topology");
         }
         return "";
       }},
      {"system.chips is a multiple of system.chips_per_instance",
       [](const Params& p, const Origins& o) -> std::string {
         if (p.system.chips % p.system.chips_per_instance == 0) return "";
         return fmt::format("{} must be a multiple of {}", from(o, "system.chips"),
                            from(o, "system.chips_per_instance"));
       }},
  };
  return list;
}

}  // namespace

// ---- public API
// ----------------------------------------------------------------------------------

LoadedConfig load_config(const std::string& name_or_path,
                         const std::vector<std::string>& overrides) {
  const Document top = read_document(name_or_path, fs::path(), "");
  Resolved resolved;
  std::vector<std::string> chain;
  std::vector<std::string> chain_origins;
  collect(top, resolved, chain, chain_origins);
  for (const auto& override_text : overrides) apply_override(resolved, override_text);

  std::vector<std::string> missing;
  for (const auto& field : parameter_fields()) {
    if (!is_derived(field) && !resolved.values.count(field.key)) missing.push_back(field.key);
  }
  if (!missing.empty()) {
    const std::size_t shown = std::min<std::size_t>(missing.size(), 8);
    std::string list =
        util::join(std::vector<std::string>(missing.begin(), missing.begin() + shown), ", ");
    if (shown < missing.size()) list += fmt::format(", ... ({} more)", missing.size() - shown);
    throw InputError(top.origin,
                     fmt::format("incomplete config: {} parameter{} not set: {}; set them or "
                                 "extend a complete config (e.g. \"extends\": \"trn2\")",
                                 missing.size(), missing.size() == 1 ? "" : "s", list));
  }

  LoadedConfig loaded;
  loaded.origin = top.origin;
  ReadVisitor reader(resolved);
  loaded.params.visit(reader);
  loaded.params.derive();
  check_derived(loaded.params, resolved, top.origin);

  for (const auto& rule : rules()) {
    const std::string problem = rule.check(loaded.params, resolved.values);
    if (!problem.empty()) throw InputError(top.origin, problem);
  }

  WriteVisitor writer;
  loaded.params.visit(writer);
  loaded.effective = std::move(writer.out);
  ordered_json sources = ordered_json::object();
  for (const auto& field : parameter_fields()) {
    if (const auto it = resolved.sources.find(field.key); it != resolved.sources.end()) {
      sources[field.key] = it->second;
    }
  }
  loaded.effective["sources"] = std::move(sources);
  loaded.warnings = std::move(resolved.warnings);
  return loaded;
}

std::vector<std::string> builtin_config_names() {
  std::vector<std::string> names;
  for (const auto& builtin : builtin_config_texts()) names.emplace_back(builtin.name);
  std::sort(names.begin(), names.end());
  return names;
}

std::string builtin_config_text(const std::string& name) {
  const auto* builtin = find_builtin(name);
  if (builtin == nullptr) {
    throw InputError("", "no built-in config named '" + name + "'" +
                             util::did_you_mean(name, builtin_config_names()));
  }
  return std::string(builtin->json);
}

std::string builtin_config_description(const std::string& name) {
  const json body = parse_json_text(builtin_config_text(name), builtin_origin(name));
  return body.is_object() && body.contains("description") && body["description"].is_string()
             ? body["description"].get<std::string>()
             : "";
}

bool is_generation_config(const std::string& name) {
  const json body = parse_json_text(builtin_config_text(name), builtin_origin(name));
  return body.is_object() && !body.contains("extends");
}

std::string source_of(const LoadedConfig& config, const std::string& dotted_key) {
  const auto& sources = config.effective.at("sources");
  if (const auto it = sources.find(dotted_key); it != sources.end()) {
    return it->get<std::string>();
  }
  const FieldInfo* field = find_field(dotted_key);
  return field == nullptr ? "" : std::string(field->meta.source);
}

std::vector<std::string> validation_rules() {
  std::vector<std::string> texts;
  for (const auto& rule : rules()) texts.emplace_back(rule.text);
  return texts;
}

}  // namespace trnsim::config
