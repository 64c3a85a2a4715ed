#include "config/schema.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <type_traits>

#include "util/strings.hpp"

namespace trnsim::config {
namespace {

class SchemaBuilder {
 public:
  std::vector<FieldInfo> fields;
  std::vector<SectionInfo> sections;

  template <class T>
  void field(std::string_view key, T& /*value*/, const FieldMeta& meta) {
    FieldInfo info;
    info.name = std::string(key);
    info.section = section_;
    info.key = section_.empty() ? info.name : section_ + "." + info.name;
    info.pointer = section_.empty() ? "/" + info.name : "/" + section_ + "/" + info.name;
    info.meta = meta;
    if constexpr (std::is_same_v<T, bool>) {
      info.kind = FieldKind::boolean;
    } else if constexpr (std::is_same_v<T, int>) {
      info.kind = FieldKind::integer;
    } else if constexpr (std::is_same_v<T, std::int64_t>) {
      info.kind = FieldKind::integer64;
    } else if constexpr (std::is_same_v<T, double>) {
      info.kind = FieldKind::number;
    } else if constexpr (std::is_same_v<T, std::string>) {
      info.kind = meta.models.empty() ? FieldKind::string : FieldKind::enumeration;
      for (std::string_view rest = meta.models; !rest.empty();) {
        const std::size_t bar = std::min(rest.find('|'), rest.size());
        info.choices.emplace_back(rest.substr(0, bar));
        rest.remove_prefix(std::min(bar + 1, rest.size()));
      }
    } else {
      static_assert(ConfigEnum<T>, "unsupported parameter type");
      info.kind = FieldKind::enumeration;
      for (auto name : EnumNames<T>::names) info.choices.emplace_back(name);
    }
    fields.push_back(std::move(info));
  }

  template <class S>
  void section(std::string_view key, S& block, std::string_view description) {
    sections.push_back({std::string(key), std::string(description)});
    section_ = std::string(key);
    block.visit(*this);
    section_.clear();
  }

 private:
  std::string section_;
};

struct Schema {
  std::vector<FieldInfo> fields;
  std::vector<SectionInfo> sections;
  std::vector<std::string> keys;
};

Schema& mutable_schema() {
  static Schema instance = [] {
    SchemaBuilder builder;
    Params params;
    params.visit(builder);
    Schema result{std::move(builder.fields), std::move(builder.sections), {}};
    for (const auto& f : result.fields) result.keys.push_back(f.key);
    return result;
  }();
  return instance;
}

const Schema& schema() {
  return mutable_schema();
}

}  // namespace

void add_model_name(std::string_view dotted_key, std::string_view name) {
  for (FieldInfo& field : mutable_schema().fields) {
    if (field.key != dotted_key || field.meta.models.empty()) continue;
    if (std::find(field.choices.begin(), field.choices.end(), name) == field.choices.end()) {
      field.choices.emplace_back(name);
    }
    return;
  }
  throw std::logic_error("config::add_model_name: '" + std::string(dotted_key) +
                         "' is not a model choice");
}

const std::vector<FieldInfo>& parameter_fields() {
  return schema().fields;
}
const std::vector<SectionInfo>& parameter_sections() {
  return schema().sections;
}
const std::vector<std::string>& parameter_keys() {
  return schema().keys;
}

const FieldInfo* find_field(std::string_view dotted_key) {
  for (const auto& f : schema().fields) {
    if (f.key == dotted_key) return &f;
  }
  return nullptr;
}

std::string expected_type(const FieldInfo& field) {
  switch (field.kind) {
    case FieldKind::integer:
    case FieldKind::integer64:
      return "an integer";
    case FieldKind::number:
      return "a number";
    case FieldKind::boolean:
      return "true or false";
    case FieldKind::string:
      return "a string";
    case FieldKind::enumeration:
      return "one of " + util::join(field.choices, "|");
  }
  return "";
}

}  // namespace trnsim::config
