#include "config/schema.hpp"

#include <cstdint>
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
      info.kind = FieldKind::string;
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

const Schema& schema() {
  static const Schema instance = [] {
    SchemaBuilder builder;
    Params params;
    params.visit(builder);
    Schema result{std::move(builder.fields), std::move(builder.sections), {}};
    for (const auto& f : result.fields) result.keys.push_back(f.key);
    return result;
  }();
  return instance;
}

}  // namespace

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
