// Parser of kernel JSON documents (trnsim-kernel/1) into a Program. Every error is an
// InputError located by file, JSON pointer and statement, with the closest valid name for
// unknown keys, tensors, ops and attribute values. Checks here need no target; limits that
// depend on the generation or on evaluated values are in validate.hpp and the stream.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernel/program.hpp"

namespace trnsim::kernel {

/// `--param NAME=VALUE`: VALUE is an integer expression over params and built-ins.
struct ParamOverride {
  std::string name;
  std::string value;
};

struct ParseOptions {
  std::vector<ParamOverride> param_overrides;
};

/// Splits "NAME=VALUE" (throws InputError naming `--param` when there is no '=').
ParamOverride parse_param_override(std::string_view assignment);

Program parse_program(const nlohmann::ordered_json& document, const std::string& file,
                      const ParseOptions& options = {});
/// Parses JSON text; `file` names it in messages. The statements of the top-level `program` list
/// are parsed while the text is read and not kept as JSON (an unrolled kernel's document never
/// is in memory as a whole); a document with keys after `program`, or with any error, is parsed
/// again as a whole, so results and messages are those of parse_program().
Program parse_program_text(std::string_view text, const std::string& file = "<string>",
                           const ParseOptions& options = {});
/// Reads and parses a kernel file.
Program parse_program_file(const std::string& path, const ParseOptions& options = {});

}  // namespace trnsim::kernel
