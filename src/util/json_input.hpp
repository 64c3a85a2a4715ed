// Reading the JSON documents a user gives trnsim (kernels, configs, sweep specs, baselines), so
// that no input can crash it: every failure is an InputError naming the file (and the line and
// column where the text is at fault), never an nlohmann exception. Arrays and objects may nest at
// most kMaxJsonNesting levels, checked while scanning, before any recursive code (nlohmann's
// copy, dump and destruction, our own walks) sees the document.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "util/error.hpp"

namespace trnsim::util {

/// Deepest nesting of arrays and objects in an input document (docs/kernel-format.md, "Limits").
inline constexpr std::size_t kMaxJsonNesting = 512;

/// The whole text of an input file. InputError naming the file (and `what`, e.g. "kernel file")
/// when it does not exist, is a directory or another non-file, or cannot be read.
std::string read_input_file(const std::string& path, const std::string& what);

/// Checks that `text` is one valid JSON value nested at most kMaxJsonNesting levels, with every
/// number finite; else throws InputError("FILE:LINE:COLUMN", "invalid JSON: ...") or
/// InputError("FILE:LINE:COLUMN", "... nest deeper than ..."). Iterative: any text is safe.
void check_json_text(std::string_view text, const std::string& file);

/// check_json_text(), then the document. `Json` is nlohmann::json or nlohmann::ordered_json.
template <class Json>
Json parse_json_input(std::string_view text, const std::string& file) {
  check_json_text(text, file);
  try {
    return Json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // not expected after the check
    throw InputError(file, std::string("invalid JSON: ") + e.what());
  }
}

/// What `value` is, for the "found ..." part of an error message: "the integer 3", "the number
/// 4.5", "the string \"abc\"", "true", "false", "null", "an array" or "an object". `Json` is
/// nlohmann::json or nlohmann::ordered_json.
template <class Json>
std::string describe_json(const Json& value) {
  if (value.is_number_integer()) return "the integer " + value.dump();
  if (value.is_number()) return "the number " + value.dump();
  if (value.is_string()) return "the string " + value.dump();
  if (value.is_boolean()) return value.dump();
  if (value.is_null()) return "null";
  if (value.is_array()) return "an array";
  return "an object";
}

/// nlohmann's message without its "[json.exception.parse_error.101] " prefix.
std::string json_exception_text(const std::string& what);

}  // namespace trnsim::util
