#include "sweep/spec.hpp"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <set>

#include "config/load.hpp"
#include "config/schema.hpp"
#include "nki/kernel_reference.hpp"
#include "sweep/json_checks.hpp"
#include "util/error.hpp"
#include "util/json_input.hpp"
#include "util/strings.hpp"

namespace trnsim::sweep {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

namespace {

constexpr std::string_view kFormat = "trnsim-sweep/1";
constexpr std::size_t kMaxPoints = 10'000'000;

using Checker = JsonChecker;

[[noreturn]] void fail_missing(const Checker& check, const std::string& pointer,
                               const std::string& key) {
  check.fail(pointer, "missing required key \"" + key + "\"");
}

/// 12 significant digits: a range step of 0.1 gives 0.3, not 0.30000000000000004.
double tidy(double value) {
  const std::string text = fmt::format("{:.12g}", value);
  double out = value;
  std::from_chars(text.data(), text.data() + text.size(), out);
  return out;
}

constexpr std::uint64_t kMaxInt64 = std::numeric_limits<std::int64_t>::max();

bool integral(const ordered_json& value) {
  return value.is_number_integer();
}

std::vector<ordered_json> expand_range(const Checker& check, const ordered_json& range,
                                       const std::string& pointer) {
  check.object(range, pointer,
               "an object {\"from\", \"to\", and one of \"step\", \"times\", "
               "\"count\"}");
  check.keys(range, pointer, {"from", "to", "step", "times", "count"});
  for (const char* required : {"from", "to"}) {
    if (!range.contains(required)) fail_missing(check, pointer, required);
    if (!range[required].is_number()) {
      check.fail(pointer + "/" + required,
                 "expected a number, found " + describe_json(range[required]));
    }
  }
  const int kinds = static_cast<int>(range.contains("step")) +
                    static_cast<int>(range.contains("times")) +
                    static_cast<int>(range.contains("count"));
  if (kinds != 1) {
    check.fail(pointer,
               "expected exactly one of \"step\" (arithmetic), \"times\" (geometric) "
               "or \"count\" (evenly spaced), found " +
                   std::to_string(kinds));
  }
  const double from = range["from"].get<double>();
  const double to = range["to"].get<double>();
  std::vector<ordered_json> values;
  const auto too_many = [&](const std::string& at) {
    check.fail(at, fmt::format("the range has more than {} values", kMaxPoints));
  };
  if (range.contains("step")) {
    const ordered_json& step_json = range["step"];
    if (!step_json.is_number() || step_json.get<double>() == 0) {
      check.fail(pointer + "/step",
                 "expected a non-zero number, found " + describe_json(step_json));
    }
    const double step = step_json.get<double>();
    if ((to - from) / step < 0) {
      check.fail(pointer + "/step",
                 fmt::format("a step of {} never goes from {} to {}", step_json.dump(),
                             range["from"].dump(), range["to"].dump()));
    }
    const double steps = std::floor((to - from) / step + 1e-9);
    if (steps + 1 > static_cast<double>(kMaxPoints)) too_many(pointer);
    const bool integers = integral(range["from"]) && integral(step_json);
    for (std::size_t i = 0; i <= static_cast<std::size_t>(steps); ++i) {
      if (integers) {
        std::int64_t value = 0;
        if ((range["from"].is_number_unsigned() &&
             range["from"].get<std::uint64_t>() > kMaxInt64) ||
            (step_json.is_number_unsigned() && step_json.get<std::uint64_t>() > kMaxInt64) ||
            __builtin_mul_overflow(static_cast<std::int64_t>(i), step_json.get<std::int64_t>(),
                                   &value) ||
            __builtin_add_overflow(range["from"].get<std::int64_t>(), value, &value)) {
          check.fail(pointer, "expected values that fit a 64-bit signed integer (at most " +
                                  std::to_string(kMaxInt64) + ")");
        }
        values.emplace_back(value);
      } else {
        values.emplace_back(tidy(from + static_cast<double>(i) * step));
      }
    }
  } else if (range.contains("times")) {
    const ordered_json& times_json = range["times"];
    if (!times_json.is_number() || times_json.get<double>() <= 1) {
      check.fail(pointer + "/times",
                 "expected a number greater than 1, found " + describe_json(times_json));
    }
    if (from <= 0 || to < from) {
      check.fail(pointer, fmt::format("a geometric range needs 0 < from <= to, found from {} "
                                      "and to {}",
                                      range["from"].dump(), range["to"].dump()));
    }
    const double times = times_json.get<double>();
    const bool integers = integral(range["from"]) && integral(times_json);
    double value = from;
    for (std::size_t i = 0; value <= to * (1 + 1e-12); ++i) {
      if (i >= kMaxPoints) too_many(pointer);
      if (integers) {
        values.emplace_back(static_cast<std::int64_t>(std::llround(value)));
      } else {
        values.emplace_back(tidy(value));
      }
      value *= times;
    }
  } else {
    const ordered_json& count_json = range["count"];
    if (!count_json.is_number_integer() || count_json.get<std::int64_t>() < 1) {
      check.fail(pointer + "/count",
                 "expected a positive integer, found " + describe_json(count_json));
    }
    const auto count = count_json.get<std::int64_t>();
    if (static_cast<std::size_t>(count) > kMaxPoints) too_many(pointer + "/count");
    for (std::int64_t i = 0; i < count; ++i) {
      const double value =
          count == 1 ? from : from + (to - from) * static_cast<double>(i) / (count - 1);
      const double rounded = tidy(value);
      if (integral(range["from"]) && integral(range["to"]) && rounded == std::floor(rounded)) {
        values.emplace_back(static_cast<std::int64_t>(rounded));
      } else {
        values.emplace_back(rounded);
      }
    }
  }
  return values;
}

/// A --set value must have the declared parameter's type.
void check_config_value(const Checker& check, const config::FieldInfo& field,
                        const ordered_json& value, const std::string& pointer) {
  bool ok = false;
  switch (field.kind) {
    case config::FieldKind::integer:
    case config::FieldKind::integer64:
      ok = value.is_number_integer();
      break;
    case config::FieldKind::number:
      ok = value.is_number();
      break;
    case config::FieldKind::boolean:
      ok = value.is_boolean();
      break;
    case config::FieldKind::string:
      ok = value.is_string();
      break;
    case config::FieldKind::enumeration:
      ok = value.is_string();
      if (ok) {
        bool known = false;
        for (const auto& choice : field.choices)
          known = known || choice == value.get<std::string>();
        if (!known) {
          check.fail(pointer, "'" + field.key + "' expects one of " +
                                  util::join(field.choices, "|") + ", found " +
                                  describe_json(value) +
                                  util::did_you_mean(value.get<std::string>(), field.choices));
        }
      }
      break;
  }
  if (!ok) {
    check.fail(pointer, "'" + field.key + "' expects " + config::expected_type(field) + ", found " +
                            describe_json(value));
  }
}

const config::FieldInfo& config_field(const Checker& check, const std::string& key,
                                      const std::string& pointer) {
  const config::FieldInfo* field = config::find_field(key);
  if (field == nullptr) {
    check.fail(pointer, "unknown config parameter '" + key + "'" +
                            util::did_you_mean(key, config::parameter_keys()) +
                            " (see `trnsim config explain`)");
  }
  return *field;
}

void check_param_value(const Checker& check, const ordered_json& value,
                       const std::string& pointer) {
  if (!value.is_number_integer() && !(value.is_string() && !value.get<std::string>().empty())) {
    check.fail(pointer,
               "expected a kernel param value: an integer or an integer expression "
               "string, found " +
                   describe_json(value));
  }
}

/// Declared param names of a kernel file, or empty when the file declares none.
std::vector<std::string> declared_params(const Checker& check, const std::string& path,
                                         const std::string& pointer) {
  std::string text;
  try {
    text = util::read_input_file(path, "kernel file");
  } catch (const InputError& e) {  // missing, a directory, unreadable: located at the spec
    check.fail(pointer, e.message() + " ('" + path + "')");
  }
  const auto document = ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  std::vector<std::string> names;
  // A malformed kernel is reported by the runs, which say exactly where it is malformed.
  if (document.is_object() && document.contains("params") && document["params"].is_object()) {
    for (const auto& [name, value] : document["params"].items()) names.push_back(name);
  }
  return names;
}

void check_param_name(const Checker& check, const SweepKernel& kernel,
                      const std::vector<std::string>& declared, const std::string& name,
                      const std::string& pointer) {
  for (const auto& known : declared) {
    if (known == name) return;
  }
  check.fail(pointer, "kernel '" + kernel.file + "' has no param '" + name + "'" +
                          (declared.empty() ? std::string(" (it declares none)")
                                            : "; it declares " + util::join(declared, ", ") +
                                                  util::did_you_mean(name, declared)));
}

std::vector<ordered_json> axis_values(const Checker& check, const ordered_json& axis,
                                      const std::string& pointer) {
  const bool has_values = axis.contains("values");
  const bool has_range = axis.contains("range");
  if (has_values == has_range) {
    check.fail(pointer, "expected exactly one of \"values\" (a list) or \"range\"");
  }
  if (has_range) return expand_range(check, axis["range"], pointer + "/range");
  const ordered_json& list = axis["values"];
  if (!list.is_array() || list.empty()) {
    check.fail(pointer + "/values",
               "expected a non-empty list of values, found " + describe_json(list));
  }
  return {list.begin(), list.end()};
}

/// A name an NKI kernel's argument can have (a Python identifier).
void check_argument_name(const Checker& check, const std::string& name,
                         const std::string& pointer) {
  bool ok = !name.empty() && !std::isdigit(static_cast<unsigned char>(name.front()));
  for (const char c : name) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (!ok) {
    check.fail(pointer, "expected an NKI kernel argument name (a Python identifier), found \"" +
                            name + "\"");
  }
}

void check_input_value(const Checker& check, const ordered_json& value,
                       const std::string& pointer) {
  if (!value.is_string() || value.get<std::string>().empty()) {
    check.fail(pointer,
               "expected an NKI kernel input: \"DTYPE[D0,D1,..]\" (e.g. \"float32[128,512]\") or "
               "a .npy file, found " +
                   describe_json(value));
  }
}

/// A sweep value of an axis or grid of `target`, checked for its kind.
void check_axis_value(const Checker& check, AxisTarget target, const ordered_json& value,
                      const std::string& pointer) {
  if (target == AxisTarget::kParam) check_param_value(check, value, pointer);
  if (target == AxisTarget::kInput) check_input_value(check, value, pointer);
}

Axis parse_axis(const Checker& check, const ordered_json& json, const std::string& pointer) {
  check.object(json, pointer,
               "an axis object: {\"set\": KEY, \"values\"|\"range\"}, {\"param\": NAME, "
               "\"values\"|\"range\"}, {\"kwarg\": NAME, \"values\"|\"range\"}, {\"input\": NAME, "
               "\"values\"}, {\"configs\": [...]} or {\"zip\": [axes]}");
  const int kinds =
      static_cast<int>(json.contains("set")) + static_cast<int>(json.contains("param")) +
      static_cast<int>(json.contains("kwarg")) + static_cast<int>(json.contains("input")) +
      static_cast<int>(json.contains("configs"));
  if (kinds != 1) {
    check.fail(pointer,
               "expected exactly one of \"set\" (a config key), \"param\" (a JSON kernel's "
               "param), \"kwarg\" or \"input\" (an NKI kernel's argument) or \"configs\" (a "
               "list of configs) in an axis");
  }
  Axis axis;
  if (json.contains("configs")) {
    check.keys(json, pointer, {"configs"});
    axis.target = AxisTarget::kConfig;
    axis.key = "config";
    const ordered_json& list = json["configs"];
    if (!list.is_array() || list.empty()) {
      check.fail(
          pointer + "/configs",
          "expected a non-empty list of config names or files, found " + describe_json(list));
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
      check.string(list[i], pointer + "/configs/" + std::to_string(i), "a config name or file");
      axis.values.push_back(list[i]);
    }
    return axis;
  }
  struct Kind {
    const char* key;
    AxisTarget target;
    const char* what;
  };
  static constexpr std::array<Kind, 4> kKinds = {{
      {"set", AxisTarget::kConfigKey, "a dotted config key"},
      {"param", AxisTarget::kParam, "a kernel param name"},
      {"kwarg", AxisTarget::kKwarg, "an NKI kernel argument name"},
      {"input", AxisTarget::kInput, "an NKI kernel input name"},
  }};
  const Kind* kind = &kKinds.front();
  for (const Kind& candidate : kKinds) {
    if (json.contains(candidate.key)) kind = &candidate;
  }
  const std::string what_key = kind->key;
  if (kind->target == AxisTarget::kInput) {
    check.keys(json, pointer, {what_key, "values"});
  } else {
    check.keys(json, pointer, {what_key, "values", "range"});
  }
  axis.target = kind->target;
  axis.key = check.string(json[what_key], pointer + "/" + what_key, kind->what);
  if (axis.target == AxisTarget::kKwarg || axis.target == AxisTarget::kInput) {
    check_argument_name(check, axis.key, pointer + "/" + what_key);
  }
  axis.values = axis_values(check, json, pointer);
  const std::string values_pointer = pointer + (json.contains("values") ? "/values/" : "/range");
  for (std::size_t i = 0; i < axis.values.size(); ++i) {
    const std::string at =
        json.contains("values") ? values_pointer + std::to_string(i) : values_pointer;
    if (axis.target == AxisTarget::kConfigKey) {
      check_config_value(check, config_field(check, axis.key, pointer + "/set"), axis.values[i],
                         at);
    } else {
      check_axis_value(check, axis.target, axis.values[i], at);
    }
  }
  return axis;
}

/// The "grid" of an NKI kernel entry: "2", "2,2" or an integer, as the --grid text.
std::string grid_text(const Checker& check, const ordered_json& value, const std::string& pointer) {
  if (value.is_number_integer() && value.get<std::int64_t>() > 0) return value.dump();
  if (value.is_string()) {
    const std::string text = value.get<std::string>();
    bool ok = !text.empty() && text.front() != ',' && text.back() != ',';
    for (std::size_t i = 0; i < text.size(); ++i) {
      const bool digit = std::isdigit(static_cast<unsigned char>(text[i])) != 0;
      ok = ok && (digit || (text[i] == ',' && text[i - 1] != ','));
    }
    if (ok) return text;
  }
  check.fail(pointer,
             "expected a launch grid: a positive integer or \"D0,D1\" (e.g. \"2,2\"), "
             "found " +
                 describe_json(value));
}

SweepKernel parse_kernel(const Checker& check, const ordered_json& json, const std::string& pointer,
                         const fs::path& base_dir) {
  SweepKernel kernel;
  if (json.is_string()) {
    kernel.file = check.string(json, pointer, "a kernel file");
  } else {
    check.object(json, pointer,
                 "a kernel file, {\"file\": ..., \"params\": {...}} or, for an NKI Python "
                 "kernel, {\"file\": \"k.py::f\", \"inputs\": {...}, \"kwargs\": {...}, "
                 "\"grid\": ...}");
    check.keys(json, pointer, {"file", "params", "inputs", "kwargs", "grid"});
    if (!json.contains("file")) fail_missing(check, pointer, "file");
    kernel.file = check.string(json["file"], pointer + "/file", "a kernel file");
  }
  kernel.nki = nki::is_nki_kernel(kernel.file);
  kernel.path =
      nki::with_kernel_file(kernel.file, resolve_path(nki::kernel_file(kernel.file), base_dir));
  const std::size_t function = kernel.file.rfind("::");
  kernel.label = kernel.nki && function != std::string::npos
                     ? kernel.file.substr(function + 2)
                     : fs::path(nki::kernel_file(kernel.file)).stem().string();
  const std::string file_pointer = pointer + (json.is_string() ? "" : "/file");
  if (kernel.nki) {
    if (json.contains("params")) {
      check.fail(pointer + "/params",
                 "'" + kernel.file +
                     "' is an NKI Python kernel: give its arguments as "
                     "\"kwargs\" and its tensors as \"inputs\", not \"params\"");
    }
    std::error_code error;
    if (fs::is_directory(nki::kernel_file(kernel.path), error)) {
      check.fail(file_pointer, "expected a kernel file, found a directory ('" +
                                   nki::kernel_file(kernel.path) + "')");
    }
    if (!std::ifstream(nki::kernel_file(kernel.path))) {
      check.fail(file_pointer,
                 "cannot open the kernel file '" + nki::kernel_file(kernel.path) + "'");
    }
  } else if (json.is_object()) {
    for (const char* key : {"inputs", "kwargs", "grid"}) {
      if (json.contains(key)) {
        check.fail(pointer + "/" + key,
                   "'" + kernel.file +
                       "' is a JSON kernel: \"inputs\", \"kwargs\" and \"grid\" are for NKI Python "
                       "kernels (FILE.py::FUNCTION); a JSON kernel takes \"params\"");
      }
    }
  }
  if (json.is_string()) {
    if (!kernel.nki) declared_params(check, kernel.path, file_pointer);
    return kernel;
  }
  if (json.contains("params")) {
    const std::string params_pointer = pointer + "/params";
    const ordered_json& params =
        check.object(json["params"], params_pointer, "an object {NAME: value or list}");
    const std::vector<std::string> declared = declared_params(check, kernel.path, file_pointer);
    for (const auto& [name, value] : params.items()) {
      const std::string at = params_pointer + "/" + pointer_token(name);
      check_param_name(check, kernel, declared, name, at);
      if (value.is_array()) {
        if (value.empty()) check.fail(at, "expected a non-empty list of values");
        Axis axis{AxisTarget::kParam, name, {value.begin(), value.end()}};
        for (std::size_t i = 0; i < axis.values.size(); ++i) {
          check_param_value(check, axis.values[i], at + "/" + std::to_string(i));
        }
        kernel.param_grid.push_back(std::move(axis));
      } else {
        check_param_value(check, value, at);
        kernel.fixed_params.emplace_back(name, value_text(value));
      }
    }
  } else if (!kernel.nki) {
    declared_params(check, kernel.path, file_pointer);
  }
  for (const auto& [key, target] :
       {std::pair{"inputs", AxisTarget::kInput}, std::pair{"kwargs", AxisTarget::kKwarg}}) {
    if (!json.contains(key)) continue;
    const std::string arguments_pointer = pointer + "/" + key;
    const ordered_json& arguments =
        check.object(json[key], arguments_pointer, "an object {NAME: value or list}");
    for (const auto& [name, value] : arguments.items()) {
      const std::string at = arguments_pointer + "/" + pointer_token(name);
      check_argument_name(check, name, at);
      if (value.is_array()) {
        if (value.empty()) check.fail(at, "expected a non-empty list of values");
        Axis axis{target, name, {value.begin(), value.end()}};
        for (std::size_t i = 0; i < axis.values.size(); ++i) {
          check_axis_value(check, target, axis.values[i], at + "/" + std::to_string(i));
        }
        kernel.param_grid.push_back(std::move(axis));
      } else if (target == AxisTarget::kInput) {
        check_input_value(check, value, at);
        kernel.fixed_inputs.emplace_back(name, resolve_input(value.get<std::string>(), base_dir));
      } else {
        kernel.fixed_kwargs.emplace_back(name, python_literal(value));
      }
    }
  }
  if (json.contains("grid")) kernel.grid = grid_text(check, json["grid"], pointer + "/grid");
  return kernel;
}

/// The run arguments that the axes and grids of one point set.
struct VariedArguments {
  Assignments params;
  Assignments inputs;
  Assignments kwargs;
  Assignments sets;
};

void append_value(SweepPoint& point, const Axis& axis, const ordered_json& value,
                  VariedArguments& varied, const fs::path& base_dir) {
  point.values[axis.key] = value;
  switch (axis.target) {
    case AxisTarget::kConfigKey:
      varied.sets.emplace_back(axis.key, value_text(value));
      break;
    case AxisTarget::kParam:
      varied.params.emplace_back(axis.key, value_text(value));
      break;
    case AxisTarget::kKwarg:
      varied.kwargs.emplace_back(axis.key, python_literal(value));
      break;
    case AxisTarget::kInput:
      varied.inputs.emplace_back(axis.key, resolve_input(value.get<std::string>(), base_dir));
      break;
    case AxisTarget::kConfig:
      point.request.config = value.get<std::string>();
      point.request.config_path = resolve_config(point.request.config, base_dir);
      break;
  }
}

std::size_t group_size(const AxisGroup& group) {
  return group.front().values.size();
}

std::size_t kernel_point_count(const SweepSpec& spec, const SweepKernel& kernel) {
  std::size_t count = 1;
  for (const Axis& axis : kernel.param_grid) count *= axis.values.size();
  for (const AxisGroup& group : spec.groups) count *= group_size(group);
  return count;
}

}  // namespace

SweepSpec load_sweep_spec(const std::string& path) {
  return parse_sweep_spec(read_json_file(path, "sweep spec"), path, fs::path(path).parent_path());
}

SweepSpec parse_sweep_spec(const ordered_json& document, const std::string& file,
                           const fs::path& base_dir) {
  const Checker check(file);
  check.object(document, "", "a sweep spec object (docs/sweeps.md)");
  check.keys(document, "",
             {"format", "name", "description", "kernel", "kernels", "config", "set", "axes",
              "combine", "metrics"});
  SweepSpec spec;
  spec.file = file;
  spec.base_dir = base_dir;
  if (document.contains("format") && document["format"] != kFormat) {
    check.fail("/format", "expected \"" + std::string(kFormat) + "\", found " +
                              describe_json(document["format"]));
  }
  spec.name = document.contains("name") ? check.string(document["name"], "/name", "a name")
                                        : fs::path(file).stem().string();
  if (document.contains("description") && !document["description"].is_string()) {
    check.fail("/description",
               "expected a string, found " + describe_json(document["description"]));
  }

  // Kernels.
  if (document.contains("kernel") == document.contains("kernels")) {
    check.fail("", "expected exactly one of \"kernel\" (one kernel) or \"kernels\" (a list)");
  }
  if (document.contains("kernel")) {
    spec.kernels.push_back(parse_kernel(check, document["kernel"], "/kernel", base_dir));
  } else {
    const ordered_json& list = document["kernels"];
    if (!list.is_array() || list.empty()) {
      check.fail("/kernels", "expected a non-empty list of kernels, found " + describe_json(list));
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
      spec.kernels.push_back(
          parse_kernel(check, list[i], "/kernels/" + std::to_string(i), base_dir));
    }
  }
  std::set<std::string> labels;
  for (const SweepKernel& kernel : spec.kernels) labels.insert(kernel.label);
  if (labels.size() != spec.kernels.size()) {
    for (SweepKernel& kernel : spec.kernels) kernel.label = kernel.file;
  }

  // Base config: a name or file, or a list (an axis over configs, outermost).
  std::vector<AxisGroup> groups;
  spec.config = "trn2";
  if (document.contains("config")) {
    const ordered_json& config = document["config"];
    if (config.is_array()) {
      if (config.empty()) check.fail("/config", "expected a non-empty list of configs");
      Axis axis{AxisTarget::kConfig, "config", {}};
      for (std::size_t i = 0; i < config.size(); ++i) {
        check.string(config[i], "/config/" + std::to_string(i), "a config name or file");
        axis.values.push_back(config[i]);
      }
      spec.config = config.front().get<std::string>();
      groups.push_back({std::move(axis)});
    } else {
      spec.config = check.string(config, "/config", "a config name or file, or a list of them");
    }
  }
  spec.config_path = resolve_config(spec.config, base_dir);

  // Fixed overrides.
  if (document.contains("set")) {
    const ordered_json& sets = check.object(document["set"], "/set", "an object {key: value}");
    for (const auto& [key, value] : sets.items()) {
      const std::string at = "/set/" + pointer_token(key);
      check_config_value(check, config_field(check, key, at), value, at);
      spec.fixed_sets.emplace_back(key, value_text(value));
    }
  }

  // Axes.
  bool zip_all = false;
  if (document.contains("combine")) {
    const std::string combine =
        check.string(document["combine"], "/combine", "\"product\" or \"zip\"");
    if (combine != "product" && combine != "zip") {
      check.fail("/combine",
                 "expected \"product\" or \"zip\", found " + describe_json(document["combine"]));
    }
    zip_all = combine == "zip";
  }
  if (document.contains("axes")) {
    const ordered_json& axes = document["axes"];
    if (!axes.is_array())
      check.fail("/axes", "expected a list of axes, found " + describe_json(axes));
    AxisGroup zipped;
    for (std::size_t i = 0; i < axes.size(); ++i) {
      const std::string at = "/axes/" + std::to_string(i);
      if (axes[i].is_object() && axes[i].contains("zip")) {
        check.keys(axes[i], at, {"zip"});
        const ordered_json& members = axes[i]["zip"];
        if (!members.is_array() || members.empty()) {
          check.fail(at + "/zip",
                     "expected a non-empty list of axes, found " + describe_json(members));
        }
        AxisGroup group;
        for (std::size_t j = 0; j < members.size(); ++j) {
          group.push_back(parse_axis(check, members[j], at + "/zip/" + std::to_string(j)));
        }
        if (zip_all) {
          check.fail(at,
                     "a {\"zip\": ...} group inside \"combine\": \"zip\"; list the axes "
                     "directly");
        }
        groups.push_back(std::move(group));
      } else if (zip_all) {
        zipped.push_back(parse_axis(check, axes[i], at));
      } else {
        groups.push_back({parse_axis(check, axes[i], at)});
      }
    }
    if (!zipped.empty()) groups.push_back(std::move(zipped));
  }
  // Zipped axes must have equal lengths; every varied key appears once.
  std::set<std::string> varied;
  for (const SweepKernel& kernel : spec.kernels) {
    for (const Axis& axis : kernel.param_grid) varied.insert(axis.key);
  }
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (const Axis& axis : groups[g]) {
      if (axis.values.size() != groups[g].front().values.size()) {
        check.fail("/axes", fmt::format("zipped axes '{}' ({} values) and '{}' ({} values) must "
                                        "have the same number of values",
                                        groups[g].front().key, groups[g].front().values.size(),
                                        axis.key, axis.values.size()));
      }
      if (axis.key == "kernel" || !varied.insert(axis.key).second) {
        check.fail("/axes", "'" + axis.key +
                                "' is varied twice (or clashes with a param grid or "
                                "the \"kernel\" column)");
      }
      for (const auto& [key, value] : spec.fixed_sets) {
        if (key == axis.key) {
          check.fail("/set/" + pointer_token(key),
                     "'" + key + "' is both fixed here and varied by an axis");
        }
      }
      const bool kernel_axis = axis.target == AxisTarget::kParam ||
                               axis.target == AxisTarget::kKwarg ||
                               axis.target == AxisTarget::kInput;
      for (std::size_t k = 0; kernel_axis && k < spec.kernels.size(); ++k) {
        const SweepKernel& kernel = spec.kernels[k];
        const std::string at = spec.kernels.size() == 1 && document.contains("kernel")
                                   ? std::string("/kernel")
                                   : "/kernels/" + std::to_string(k);
        if (axis.target == AxisTarget::kParam && kernel.nki) {
          check.fail("/axes", "'" + axis.key + "' is varied as a param, but kernel '" +
                                  kernel.file +
                                  "' is an NKI Python kernel: vary its arguments with "
                                  "{\"kwarg\": NAME} or {\"input\": NAME}");
        }
        if (axis.target != AxisTarget::kParam && !kernel.nki) {
          check.fail("/axes", "'" + axis.key +
                                  "' is varied as an NKI kernel argument, but kernel '" +
                                  kernel.file +
                                  "' is a JSON kernel: vary its params with {\"param\": NAME}");
        }
        if (axis.target == AxisTarget::kParam) {
          check_param_name(check, kernel, declared_params(check, kernel.path, at), axis.key,
                           "/axes");
        }
        const auto fixed_twice = [&](const Assignments& fixed, const char* key, const char* what) {
          for (const auto& [name, value] : fixed) {
            if (name == axis.key) {
              check.fail(
                  at + "/" + key + "/" + pointer_token(name),
                  std::string(what) + " '" + name + "' is both fixed here and varied by an axis");
            }
          }
        };
        fixed_twice(kernel.fixed_params, "params", "param");
        fixed_twice(kernel.fixed_inputs, "inputs", "input");
        fixed_twice(kernel.fixed_kwargs, "kwargs", "kwarg");
      }
    }
  }
  spec.groups = std::move(groups);

  // Metrics.
  if (document.contains("metrics")) {
    const ordered_json& metrics = document["metrics"];
    if (!metrics.is_array() || metrics.empty()) {
      check.fail("/metrics",
                 "expected a non-empty list of metric names, found " + describe_json(metrics));
    }
    for (std::size_t i = 0; i < metrics.size(); ++i) {
      const std::string at = "/metrics/" + std::to_string(i);
      const std::string name = check.string(metrics[i], at, "a metric name or JSON pointer");
      spec.metrics.push_back(resolve_metric(name, file.empty() ? at : file + ": " + at));
    }
  } else {
    for (const std::string& name : default_metric_names()) {
      spec.metrics.push_back(resolve_metric(name, file));
    }
  }

  std::size_t total = 0;
  for (const SweepKernel& kernel : spec.kernels) {
    std::size_t count = 1;
    for (const Axis& axis : kernel.param_grid) count *= axis.values.size();
    for (const AxisGroup& group : spec.groups) {
      if (count > kMaxPoints / group_size(group)) count = kMaxPoints + 1;
      count = std::min(count * group_size(group), kMaxPoints + 1);
    }
    total += count;
  }
  if (total > kMaxPoints) {
    check.fail("/axes", fmt::format("the sweep has more than {} points; split it into several "
                                    "specs",
                                    kMaxPoints));
  }
  return spec;
}

std::size_t point_count(const SweepSpec& spec) {
  std::size_t total = 0;
  for (const SweepKernel& kernel : spec.kernels) total += kernel_point_count(spec, kernel);
  return total;
}

SweepPoint make_point(const SweepSpec& spec, std::size_t index) {
  const fs::path& base_dir = spec.base_dir;
  std::size_t local = index;
  const SweepKernel* kernel = nullptr;
  for (const SweepKernel& candidate : spec.kernels) {
    const std::size_t count = kernel_point_count(spec, candidate);
    if (local < count) {
      kernel = &candidate;
      break;
    }
    local -= count;
  }
  if (kernel == nullptr) {
    throw std::out_of_range(fmt::format("sweep point {} of {}", index, point_count(spec)));
  }

  // Mixed-radix digits, last dimension fastest.
  std::vector<std::size_t> sizes;
  for (const Axis& axis : kernel->param_grid) sizes.push_back(axis.values.size());
  for (const AxisGroup& group : spec.groups) sizes.push_back(group_size(group));
  std::vector<std::size_t> digits(sizes.size());
  for (std::size_t d = sizes.size(); d-- > 0;) {
    digits[d] = local % sizes[d];
    local /= sizes[d];
  }

  SweepPoint point;
  point.index = index;
  point.values = ordered_json::object();
  point.request.kernel = kernel->file;
  point.request.kernel_path = kernel->path;
  point.request.config = spec.config;
  point.request.config_path = spec.config_path;
  if (spec.kernels.size() > 1) point.values["kernel"] = kernel->label;
  VariedArguments varied;
  std::size_t d = 0;
  for (const Axis& axis : kernel->param_grid) {
    append_value(point, axis, axis.values[digits[d++]], varied, base_dir);
  }
  for (const AxisGroup& group : spec.groups) {
    const std::size_t digit = digits[d++];
    for (const Axis& axis : group) append_value(point, axis, axis.values[digit], varied, base_dir);
  }
  const auto join = [](const Assignments& fixed, const Assignments& more) {
    Assignments all = fixed;
    all.insert(all.end(), more.begin(), more.end());
    return all;
  };
  point.request.params = join(kernel->fixed_params, varied.params);
  point.request.inputs = join(kernel->fixed_inputs, varied.inputs);
  point.request.kwargs = join(kernel->fixed_kwargs, varied.kwargs);
  point.request.grid = kernel->grid;
  point.request.sets = join(spec.fixed_sets, varied.sets);
  return point;
}

Shard parse_shard(const std::string& text, const std::string& where) {
  const auto slash = text.find('/');
  Shard shard;
  const auto parse = [&](std::string_view part, std::size_t& out) {
    const auto [ptr, error] = std::from_chars(part.data(), part.data() + part.size(), out);
    return error == std::errc() && ptr == part.data() + part.size() && !part.empty();
  };
  if (slash == std::string::npos || !parse(std::string_view(text).substr(0, slash), shard.index) ||
      !parse(std::string_view(text).substr(slash + 1), shard.count) || shard.count == 0 ||
      shard.index >= shard.count) {
    throw InputError(where,
                     "expected I/N with 0 <= I < N (e.g. 0/4 for the first of four "
                     "shards), found '" +
                         text + "'");
  }
  return shard;
}

}  // namespace trnsim::sweep
