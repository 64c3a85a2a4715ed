// The flat list of declared parameters, built once from Params::visit: dotted key, JSON type,
// unit, description, generic source, range or choices. Used by loading, validation, explain,
// diff and the generated reference; it holds metadata only, never values.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config/params.hpp"

namespace trnsim::config {

enum class FieldKind { integer, integer64, number, boolean, string, enumeration };

struct FieldInfo {
  std::string key;      ///< dotted, e.g. "tensor.clock_ghz"; top-level fields have no dot
  std::string section;  ///< "tensor", or "" for top-level fields
  std::string name;     ///< "clock_ghz"
  std::string pointer;  ///< JSON pointer, e.g. "/tensor/clock_ghz"
  FieldKind kind = FieldKind::number;
  FieldMeta meta;  ///< string_views into static literals
  /// enumeration spellings (kind == enumeration); for a model choice (meta.models) the built-in
  /// models, then those added by add_model_name
  std::vector<std::string> choices;
};

struct SectionInfo {
  std::string key;
  std::string description;
};

/// Every declared field, in declaration order.
const std::vector<FieldInfo>& parameter_fields();
/// Every section (sub-object), in declaration order.
const std::vector<SectionInfo>& parameter_sections();
/// The field with this dotted key, or nullptr.
const FieldInfo* find_field(std::string_view dotted_key);
/// All dotted keys, in declaration order (for "did you mean").
const std::vector<std::string>& parameter_keys();
/// Makes `name` a value of the model choice `dotted_key` (e.g. "hbm.model", a string field whose
/// FieldMeta names its built-in models): a model registered at run time. Not thread-safe: call
/// before configs load. Throws std::logic_error if `dotted_key` is not a model choice.
void add_model_name(std::string_view dotted_key, std::string_view name);
/// "integer", "number", "boolean", "string" or "one of a|b|c".
std::string expected_type(const FieldInfo& field);

}  // namespace trnsim::config
