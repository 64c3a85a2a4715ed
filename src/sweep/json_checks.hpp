// Validation helpers for the JSON files of this module (sweep specs, baselines): every error is
// an InputError naming the file and the JSON pointer, what was expected and what was found.
// Documents are read as ordered_json so that rewritten files (baselines) keep the user's order.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "util/json_input.hpp"

namespace trnsim::sweep {

using util::describe_json;

/// RFC 6901 escaping of one reference token ('~' -> ~0, '/' -> ~1).
std::string pointer_token(const std::string& key);

class JsonChecker {
 public:
  explicit JsonChecker(std::string file) : file_(std::move(file)) {}

  /// Throws InputError("FILE: POINTER", message); an empty pointer is the document ("/").
  [[noreturn]] void fail(const std::string& pointer, const std::string& message) const;

  /// Rejects keys of `object` not in `allowed`, suggesting the closest.
  void keys(const nlohmann::ordered_json& object, const std::string& pointer,
            const std::vector<std::string>& allowed) const;

  /// `value` if it is an object, else fails with "expected <what>".
  const nlohmann::ordered_json& object(const nlohmann::ordered_json& value,
                                       const std::string& pointer, const std::string& what) const;

  /// A non-empty string, else fails with "expected <what>".
  std::string string(const nlohmann::ordered_json& value, const std::string& pointer,
                     const std::string& what) const;

  /// "FILE: POINTER" as used in messages.
  std::string where(const std::string& pointer) const;

 private:
  std::string file_;
};

/// Reads a JSON file into an ordered document; InputError for a missing file or bad JSON.
nlohmann::ordered_json read_json_file(const std::string& path, const std::string& what);

}  // namespace trnsim::sweep
