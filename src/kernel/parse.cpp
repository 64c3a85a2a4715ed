#include "kernel/parse.hpp"

#include <cctype>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

#include "kernel/opcodes.hpp"
#include "util/error.hpp"
#include "util/json_input.hpp"
#include "util/strings.hpp"

namespace trnsim::kernel {
namespace {

using Json = nlohmann::ordered_json;
using util::describe_json;

std::string escape_pointer_token(std::string_view token) {
  std::string out;
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

bool is_identifier(std::string_view name) {
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) {
    return false;
  }
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

bool is_reserved_word(std::string_view name) {
  return name == "and" || name == "or" || name == "not" || name == "min" || name == "max" ||
         name == "True" || name == "False";
}

std::string trim(std::string_view text) {
  std::size_t begin = 0;
  std::size_t end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  return std::string(text.substr(begin, end - begin));
}

// Splits at `separator` outside parentheses and brackets.
std::vector<std::string> split_top_level(std::string_view text, char separator) {
  std::vector<std::string> parts;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (c == separator && depth == 0) {
      parts.emplace_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  parts.emplace_back(text.substr(start));
  return parts;
}

// True when parentheses and brackets pair up: the depth never drops below 0 and ends at 0.
bool balanced(std::string_view text) {
  int depth = 0;
  for (char c : text) {
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (depth < 0) return false;
  }
  return depth == 0;
}

std::vector<std::string> all_opcode_names() {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < kOpcodeCount; ++i) {
    names.emplace_back(opcode_name(static_cast<Opcode>(i)));
  }
  return names;
}

/// Operand keys by opcode and slot, from the opcode table.
const std::vector<std::array<std::string_view, kSlotCount>>& operand_keys() {
  static const std::vector<std::array<std::string_view, kSlotCount>> keys = [] {
    std::vector<std::array<std::string_view, kSlotCount>> out(kOpcodeCount);
    for (std::size_t op = 0; op < kOpcodeCount; ++op) {
      for (const AttrSpec& attr : opcode_info(static_cast<Opcode>(op)).attrs()) {
        if (attr.kind == AttrKind::kOperand || attr.kind == AttrKind::kOperandOrNumber) {
          out[op][static_cast<std::size_t>(attr.slot)] = attr.key;
        }
      }
    }
    return out;
  }();
  return keys;
}

/// Bit-exact text of a double, for interning keys.
std::string number_key(double value) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return std::to_string(bits);
}

// ---- the parser ------------------------------------------------------------------------------

class ProgramParser {
 public:
  ProgramParser(const std::string& file, const ParseOptions& options)
      : options_(options), global_scope_(nullptr) {
    program_.file = file;
  }

  Program parse(const Json& doc) {
    begin(doc);
    if (!doc.contains("program")) fail("", "missing required key 'program'");
    const Json& body = doc["program"];
    if (!body.is_array()) fail("/program", "expected a list of statements");
    program_.program = parse_body(body, "/program", 0, 0, global_scope_);
    return finish();
  }

  /// Everything before the statements: top-level keys, header, params, cores, tensors.
  void begin(const Json& doc) {
    if (!doc.is_object()) {
      fail("", "expected a JSON object (a trnsim kernel), found " + describe_json(doc));
    }
    check_keys(doc, "", {"format", "name", "description", "params", "cores", "tensors", "program"},
               "top-level");
    parse_header(doc);
    add_attributes(InstructionAttributes{}, false);  // entry 0: every default
    for (std::size_t i = 0; i < builtin_names().size(); ++i) {
      global_scope_.add(builtin_names()[i], static_cast<std::uint32_t>(i));
    }
    parse_params(doc.contains("params") ? &doc["params"] : nullptr);
    if (doc.contains("cores")) {
      program_.cores = compile_int(doc["cores"], global_scope_, "/cores");
    }
    if (!doc.contains("tensors")) fail("", "missing required key 'tensors'");
    parse_tensors(doc["tensors"]);
  }
  /// Top-level statement `index` of the program (after begin()).
  void top_level_statement(const Json& json, std::size_t index) {
    program_.program.push_back(
        parse_statement(json, "/program/" + std::to_string(index), 0, 0, global_scope_));
  }
  Program finish() { return std::move(program_); }

 private:
  [[noreturn]] void fail(const std::string& pointer, const std::string& message) const {
    throw InputError(where(pointer), message);
  }
  /// "FILE: POINTER"; inside a statement with a `source`, "SOURCE: POINTER".
  std::string where(const std::string& pointer) const {
    const std::string& cited = current_source_line_ == kNoSourceLine
                                   ? program_.file
                                   : program_.source_lines[current_source_line_];
    return cited + ": " + (pointer.empty() ? "/" : pointer);
  }

  void check_keys(const Json& object, const std::string& pointer,
                  const std::vector<std::string>& allowed, const std::string& what) const {
    for (const auto& [key, value] : object.items()) {
      if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
      fail(pointer + "/" + escape_pointer_token(key),
           "unknown key '" + key + "' in " + what + util::did_you_mean(key, allowed) +
               " (valid keys: " + util::join(allowed, ", ") + ")");
    }
  }

  void parse_header(const Json& doc) {
    if (!doc.contains("format")) {
      fail("", "missing required key 'format' (expected \"" + std::string(kFormatVersion) + "\")");
    }
    const Json& format = doc["format"];
    if (!format.is_string() || format.get<std::string>() != kFormatVersion) {
      fail("/format", "unsupported kernel format " + format.dump() +
                          "; this trnsim reads: " + std::string(kFormatVersion));
    }
    if (!doc.contains("name")) fail("", "missing required key 'name'");
    if (!doc["name"].is_string() || doc["name"].get<std::string>().empty()) {
      fail("/name", "expected a non-empty string, found " + describe_json(doc["name"]));
    }
    program_.name = doc["name"].get<std::string>();
    if (doc.contains("description")) {
      if (!doc["description"].is_string()) {
        fail("/description", "expected a string, found " + describe_json(doc["description"]));
      }
      program_.description = doc["description"].get<std::string>();
    }
  }

  // Checks a name that a kernel introduces (param, tensor, loop variable).
  void check_new_name(const std::string& name, const std::string& pointer,
                      const std::string& what) const {
    if (!is_identifier(name)) {
      fail(pointer, what + " name '" + name +
                        "' is not an identifier (letters, digits and '_', not starting with a "
                        "digit)");
    }
    if (is_reserved_word(name)) fail(pointer, what + " name '" + name + "' is a reserved word");
    const auto& builtins = builtin_names();
    if (std::find(builtins.begin(), builtins.end(), name) != builtins.end()) {
      fail(pointer, what + " '" + name + "' shadows the built-in name '" + name + "'");
    }
  }

  void parse_params(const Json* params) {
    std::map<std::string, std::string> overrides;
    for (const auto& o : options_.param_overrides) overrides[o.name] = o.value;
    std::vector<std::string> names;
    if (params != nullptr) {
      if (!params->is_object()) {
        fail("/params", "expected an object of NAME: value, found " + describe_json(*params));
      }
      for (const auto& [name, value] : params->items()) {
        check_new_name(name, "/params/" + escape_pointer_token(name), "param");
        names.push_back(name);
      }
    }
    for (const auto& [name, value] : overrides) {
      if (std::find(names.begin(), names.end(), name) == names.end()) {
        throw InputError("--param " + name,
                         "the kernel has no param '" + name + "'" +
                             util::did_you_mean(name, names) +
                             (names.empty() ? " (it declares none)"
                                            : " (params: " + util::join(names, ", ") + ")"));
      }
    }
    for (std::size_t i = 0; i < names.size(); ++i) {
      Param param;
      param.name = names[i];
      const auto override_it = overrides.find(param.name);
      // Kernel values see earlier params; an override may use any other param.
      Scope scope(&global_scope_);
      for (std::size_t j = 0; j < names.size(); ++j) {
        if (j == i || (j > i && override_it == overrides.end())) continue;
        scope.add(names[j], program_.param_slot(j));
      }
      if (override_it != overrides.end()) {
        param.pointer = "--param " + param.name;
        param.value = Expr::compile(override_it->second, scope, param.pointer);
      } else {
        param.pointer = "/params/" + escape_pointer_token(param.name);
        param.value = compile_int((*params)[param.name], scope, param.pointer);
      }
      program_.params.push_back(std::move(param));
    }
    order_params();
    for (std::size_t i = 0; i < names.size(); ++i) {
      global_scope_.add(names[i], program_.param_slot(i));
    }
  }

  // Dependency order of params (overrides may refer forwards) and their transitive properties.
  void order_params() {
    const std::size_t n = program_.params.size();
    std::vector<int> state(n, 0);  // 0 new, 1 visiting, 2 done
    std::vector<std::uint32_t> path;
    std::function<void(std::uint32_t)> visit = [&](std::uint32_t i) {
      if (state[i] == 2) return;
      if (state[i] == 1) {
        std::string cycle;
        auto start = std::find(path.begin(), path.end(), i);
        for (auto it = start; it != path.end(); ++it) cycle += program_.params[*it].name + " -> ";
        cycle += program_.params[i].name;
        throw InputError(program_.params[i].pointer, "params depend on each other: " + cycle);
      }
      state[i] = 1;
      path.push_back(i);
      Param& param = program_.params[i];
      for (std::uint32_t slot : param.value.slots()) {
        if (slot >= kBuiltinSlotCount) {
          const std::uint32_t dep = slot - kBuiltinSlotCount;
          visit(dep);
          param.per_core = param.per_core || program_.params[dep].per_core;
          param.uses_ncores = param.uses_ncores || program_.params[dep].uses_ncores;
        } else {
          param.per_core = param.per_core || is_per_core_builtin(slot);
          param.uses_ncores = param.uses_ncores || slot == kSlotNcores;
        }
      }
      path.pop_back();
      state[i] = 2;
      program_.param_order.push_back(i);
    };
    for (std::uint32_t i = 0; i < n; ++i) visit(i);
  }

  Expr compile_int(const Json& value, const Scope& scope, const std::string& pointer) const {
    return compile_int_at(value, scope, pointer, where(pointer));
  }
  Expr compile_int_at(const Json& value, const Scope& scope, const std::string& pointer,
                      const std::string& location) const {
    if (value.is_number_integer()) {
      if (value.is_number_unsigned() &&
          value.get<std::uint64_t>() >
              static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        throw InputError(location, "integer " + value.dump() + " is too large");
      }
      return Expr::constant(value.get<std::int64_t>());
    }
    if (value.is_string()) return Expr::compile(value.get<std::string>(), scope, location);
    (void)pointer;
    throw InputError(location, "expected an integer or an integer expression string, found " +
                                   describe_json(value));
  }
  Expr compile_bool_at(const Json& value, const Scope& scope, const std::string& location) const {
    if (value.is_boolean()) return Expr::constant(value.get<bool>() ? 1 : 0);
    if (value.is_number_integer() || value.is_string()) {
      return compile_int_at(value, scope, "", location);
    }
    throw InputError(location,
                     "expected true, false or an integer expression (non-zero is true), found " +
                         describe_json(value));
  }

  bool uses_per_core(const Expr& expr) const { return program_.uses_per_core(expr); }
  bool uses_loops(const Expr& expr) const { return program_.uses_loops(expr); }

  void parse_tensors(const Json& tensors) {
    if (!tensors.is_object()) {
      fail("/tensors", "expected an object of NAME: declaration, found " + describe_json(tensors));
    }
    for (const auto& [name, decl_json] : tensors.items()) {
      const std::string pointer = "/tensors/" + escape_pointer_token(name);
      check_new_name(name, pointer, "tensor");
      if (global_scope_.find(name)) {
        fail(pointer, "tensor '" + name + "' has the name of a param; rename one of them");
      }
      if (!decl_json.is_object()) {
        fail(pointer,
             "expected an object with memory, dtype and shape, found " + describe_json(decl_json));
      }
      check_keys(
          decl_json, pointer,
          {"memory", "dtype", "shape", "partition_dim", "partition_start", "offset", "per_core"},
          "tensor '" + name + "'");
      TensorDecl decl;
      decl.name = name;
      decl.pointer = pointer;
      for (const char* key : {"memory", "dtype", "shape"}) {
        if (!decl_json.contains(key)) {
          fail(pointer, "tensor '" + name + "' is missing required key '" + key + "'");
        }
      }
      const Json& memory = decl_json["memory"];
      const std::vector<std::string> memories{"hbm", "sbuf", "psum"};
      const std::string memory_name = memory.is_string() ? memory.get<std::string>() : "";
      if (memory_name == "hbm") {
        decl.memory = MemoryKind::kHbm;
      } else if (memory_name == "sbuf") {
        decl.memory = MemoryKind::kSbuf;
      } else if (memory_name == "psum") {
        decl.memory = MemoryKind::kPsum;
      } else {
        fail(pointer + "/memory", "unknown memory " + memory.dump() +
                                      util::did_you_mean(memory_name, memories) +
                                      " (expected hbm, sbuf or psum)");
      }
      const Json& dtype = decl_json["dtype"];
      const std::string dtype_text = dtype.is_string() ? dtype.get<std::string>() : "";
      const auto parsed_dtype = dtype_from_name(dtype_text);
      if (!parsed_dtype) {
        std::vector<std::string> names;
        for (std::size_t i = 0; i < kDTypeCount; ++i) {
          names.emplace_back(dtype_name(static_cast<DType>(i)));
        }
        fail(pointer + "/dtype",
             "unknown dtype " + dtype.dump() + util::did_you_mean(dtype_text, names) + " (valid: " +
                 util::join(names, ", ") + "; aliases fp32, bf16, fp16, fp8_e4m3, fp8_e5m2)");
      }
      decl.dtype = *parsed_dtype;
      const Json& shape = decl_json["shape"];
      if (!shape.is_array() || shape.empty()) {
        fail(pointer + "/shape",
             "expected a non-empty list of sizes, found " + describe_json(shape));
      }
      for (std::size_t d = 0; d < shape.size(); ++d) {
        const std::string dim_pointer = pointer + "/shape/" + std::to_string(d);
        Expr size = compile_int(shape[d], global_scope_, dim_pointer);
        if (uses_per_core(size)) {
          fail(dim_pointer,
               "a tensor shape may not depend on pid, chip or local_core "
               "(every core declares the same tensors); found '" +
                   size.text() + "'");
        }
        decl.shape.push_back(std::move(size));
      }
      const bool on_chip = decl.memory != MemoryKind::kHbm;
      if (decl_json.contains("partition_dim")) {
        const Json& pd = decl_json["partition_dim"];
        if (!on_chip)
          fail(pointer + "/partition_dim", "only sbuf and psum tensors have a partition dimension");
        if (!pd.is_number_integer() || pd.get<std::int64_t>() < 0 ||
            pd.get<std::int64_t>() >= static_cast<std::int64_t>(decl.shape.size())) {
          fail(pointer + "/partition_dim",
               "expected an integer 0.." + std::to_string(decl.shape.size() - 1) +
                   " (an index into shape), found " + describe_json(pd));
        }
        decl.partition_dim = static_cast<std::uint32_t>(pd.get<std::int64_t>());
      }
      if (decl_json.contains("per_core")) {
        const Json& pc = decl_json["per_core"];
        if (on_chip)
          fail(pointer + "/per_core",
               "per_core applies to hbm tensors only (sbuf and psum are per core already)");
        if (!pc.is_boolean())
          fail(pointer + "/per_core", "expected true or false, found " + describe_json(pc));
        decl.per_core = pc.get<bool>();
      }
      for (const char* key : {"partition_start", "offset"}) {
        if (!decl_json.contains(key)) continue;
        const std::string key_pointer = pointer + "/" + key;
        if (!on_chip)
          fail(key_pointer,
               std::string(key) +
                   " applies to sbuf and psum tensors only (hbm addresses are assigned)");
        Expr value = compile_int(decl_json[key], global_scope_, key_pointer);
        if (uses_per_core(value)) {
          fail(key_pointer, std::string(key) + " may not depend on pid, chip or local_core");
        }
        (std::string_view(key) == "offset" ? decl.offset : decl.partition_start) = std::move(value);
      }
      program_.tensors.push_back(std::move(decl));
    }
  }

  std::vector<std::string> tensor_names() const {
    std::vector<std::string> names;
    for (const auto& t : program_.tensors) names.push_back(t.name);
    return names;
  }

  // ---- statements ----------------------------------------------------------------------------

  std::vector<std::uint32_t> parse_body(const Json& body, const std::string& pointer,
                                        std::uint8_t depth, std::uint32_t enclosing,
                                        const Scope& scope) {
    std::vector<std::uint32_t> indices;
    for (std::size_t i = 0; i < body.size(); ++i) {
      indices.push_back(
          parse_statement(body[i], pointer + "/" + std::to_string(i), depth, enclosing, scope));
    }
    return indices;
  }

  /// Before the body of a loop or condition: statements nest at most kMaxStatementNesting deep.
  void enter_body(const std::string& pointer) {
    if (body_nesting_ >= kMaxStatementNesting) {
      fail(pointer, "statements nest deeper than " + std::to_string(kMaxStatementNesting) +
                        " levels (bodies of 'for' and 'if' inside one another)");
    }
    ++body_nesting_;
  }

  /// A new statement, cited by the `source` of the statement being parsed.
  std::uint32_t new_statement(Statement::Kind kind, const std::string& pointer, std::uint8_t depth,
                              std::uint32_t enclosing) {
    Statement statement;
    statement.kind = kind;
    statement.pointer = pointer;
    statement.depth = depth;
    statement.enclosing = enclosing;
    statement.source_line = current_source_line_;
    if (kind != Statement::Kind::kInstruction) {
      statement.control = static_cast<std::uint32_t>(program_.controls.size());
      program_.controls.emplace_back();
    }
    program_.statements.push_back(std::move(statement));
    return static_cast<std::uint32_t>(program_.statements.size() - 1);
  }

  std::uint32_t parse_statement(const Json& json, const std::string& pointer, std::uint8_t depth,
                                std::uint32_t enclosing, const Scope& scope) {
    if (!json.is_object()) {
      fail(pointer,
           "expected a statement object ({\"op\": ...}, {\"for\": ...} or {\"if\": "
           "...}), found " +
               describe_json(json));
    }
    // Messages about this statement (not its body's statements) cite its source.
    const std::uint32_t enclosing_source_line = current_source_line_;
    current_source_line_ = parse_source_line(json, pointer);
    const std::uint32_t index = parse_statement_kind(json, pointer, depth, enclosing, scope);
    current_source_line_ = enclosing_source_line;
    return index;
  }

  /// The statement's optional "source": "FILE:LINE" (LINE a positive integer), interned in
  /// Program::source_lines; kNoSourceLine when absent.
  std::uint32_t parse_source_line(const Json& json, const std::string& pointer) {
    if (!json.contains("source")) return kNoSourceLine;
    const Json& value = json["source"];
    const std::string text = value.is_string() ? value.get<std::string>() : "";
    const std::size_t colon = text.rfind(':');
    std::uint64_t line = 0;
    bool valid = colon != std::string::npos && colon > 0 && colon + 1 < text.size();
    for (std::size_t i = colon + 1; valid && i < text.size(); ++i) {
      const char c = text[i];
      valid = std::isdigit(static_cast<unsigned char>(c)) && line < (1ull << 40);
      line = line * 10 + static_cast<std::uint64_t>(c - '0');
    }
    if (!valid || line == 0) {
      throw InputError(program_.file + ": " + pointer + "/source",
                       "expected \"FILE:LINE\" with a positive line number after the last ':' "
                       "(e.g. \"kernel.py:42\"), found " +
                           describe_json(value));
    }
    const auto [it, inserted] =
        source_line_ids_.emplace(text, static_cast<std::uint32_t>(program_.source_lines.size()));
    if (inserted) program_.source_lines.push_back(text);
    return it->second;
  }

  std::uint32_t parse_statement_kind(const Json& json, const std::string& pointer,
                                     std::uint8_t depth, std::uint32_t enclosing,
                                     const Scope& scope) {
    if (json.contains("op")) return parse_instruction(json, pointer, depth, enclosing, scope);
    if (json.contains("for")) return parse_loop(json, pointer, depth, enclosing, scope);
    if (json.contains("if")) return parse_if(json, pointer, depth, enclosing, scope);
    std::vector<std::string> keys;
    for (const auto& [key, value] : json.items()) keys.push_back("'" + key + "'");
    fail(pointer,
         "a statement needs \"op\" (an instruction), \"for\" (a loop) or \"if\" (a "
         "condition); found keys " +
             (keys.empty() ? "none" : util::join(keys, ", ")));
  }

  std::uint32_t parse_loop(const Json& json, const std::string& pointer, std::uint8_t depth,
                           std::uint32_t enclosing, const Scope& scope) {
    check_keys(json, pointer, {"for", "range", "body", "source"}, "a loop");
    const std::uint32_t index = new_statement(Statement::Kind::kLoop, pointer, depth, enclosing);
    const Json& var = json["for"];
    if (!var.is_string())
      fail(pointer + "/for", "expected the loop variable's name, found " + describe_json(var));
    const std::string name = var.get<std::string>();
    check_new_name(name, pointer + "/for", "loop variable");
    if (scope.find(name)) {
      fail(pointer + "/for", "loop variable '" + name +
                                 "' shadows a param or an enclosing loop variable of that name");
    }
    if (program_.find_tensor(name)) {
      fail(pointer + "/for", "loop variable '" + name + "' has the name of a tensor");
    }
    if (depth >= kMaxLoopDepth) {
      fail(pointer, "loops nest deeper than " + std::to_string(kMaxLoopDepth) + " levels");
    }
    program_.controls[program_.statements[index].control].loop_var = name;
    if (!json.contains("range")) fail(pointer, "loop '" + name + "' is missing 'range'");
    if (!json.contains("body")) fail(pointer, "loop '" + name + "' is missing 'body'");
    const Json& range = json["range"];
    const std::string range_pointer = pointer + "/range";
    const std::string range_where = program_.location(index, "/range");
    Expr start = Expr::constant(0);
    Expr stop;
    Expr step = Expr::constant(1);
    if (range.is_array()) {
      if (range.size() < 1 || range.size() > 3) {
        throw InputError(range_where,
                         "expected stop, [start, stop] or [start, stop, step], found a list of " +
                             std::to_string(range.size()));
      }
      if (range.size() == 1) {
        stop = compile_int_at(range[0], scope, range_pointer, range_where);
      } else {
        start = compile_int_at(range[0], scope, range_pointer, range_where);
        stop = compile_int_at(range[1], scope, range_pointer, range_where);
        if (range.size() == 3) step = compile_int_at(range[2], scope, range_pointer, range_where);
      }
    } else {
      stop = compile_int_at(range, scope, range_pointer, range_where);
    }
    if (step.is_constant() && step.constant_value() == 0) {
      throw InputError(range_where, "range step must not be zero");
    }
    {
      ControlSpec& loop = program_.controls[program_.statements[index].control];
      loop.start = std::move(start);
      loop.stop = std::move(stop);
      loop.step = std::move(step);
    }
    program_.max_depth = std::max<std::uint32_t>(program_.max_depth, depth + 1u);
    Scope inner(&scope);
    inner.add(name, program_.loop_slot(depth));
    const Json& body = json["body"];
    if (!body.is_array())
      fail(pointer + "/body", "expected a list of statements, found " + describe_json(body));
    enter_body(pointer + "/body");
    auto indices =
        parse_body(body, pointer + "/body", static_cast<std::uint8_t>(depth + 1), index, inner);
    --body_nesting_;
    program_.controls[program_.statements[index].control].body = std::move(indices);
    return index;
  }

  std::uint32_t parse_if(const Json& json, const std::string& pointer, std::uint8_t depth,
                         std::uint32_t enclosing, const Scope& scope) {
    check_keys(json, pointer, {"if", "then", "else", "source"}, "a condition");
    const std::uint32_t index = new_statement(Statement::Kind::kIf, pointer, depth, enclosing);
    program_.controls[program_.statements[index].control].condition =
        compile_bool_at(json["if"], scope, program_.location(index, "/if"));
    if (!json.contains("then")) fail(pointer, "condition is missing 'then'");
    for (const char* key : {"then", "else"}) {
      if (!json.contains(key)) continue;
      const Json& body = json[key];
      const std::string body_pointer = pointer + "/" + key;
      if (!body.is_array())
        fail(body_pointer, "expected a list of statements, found " + describe_json(body));
      enter_body(body_pointer);
      auto indices = parse_body(body, body_pointer, depth, enclosing, scope);
      --body_nesting_;
      ControlSpec& control = program_.controls[program_.statements[index].control];
      (std::string_view(key) == "then" ? control.body : control.else_body) = std::move(indices);
    }
    return index;
  }

  std::uint32_t parse_instruction(const Json& json, const std::string& pointer, std::uint8_t depth,
                                  std::uint32_t enclosing, const Scope& scope) {
    const Json& op_json = json["op"];
    const std::string op_text = op_json.is_string() ? op_json.get<std::string>() : "";
    const auto opcode = opcode_from_name(op_text);
    if (!opcode) {
      fail(pointer + "/op",
           "unknown op " + op_json.dump() + util::did_you_mean(op_text, all_opcode_names()));
    }
    const std::uint32_t index =
        new_statement(Statement::Kind::kInstruction, pointer, depth, enclosing);
    program_.statements[index].instruction =
        static_cast<std::uint32_t>(program_.instructions.size());
    InstructionSpec spec;
    spec.opcode = *opcode;
    program_.instructions.emplace_back().opcode = *opcode;  // for locations while parsing
    if (json.contains("name")) {
      if (!json["name"].is_string()) {
        fail(pointer + "/name", "expected a string, found " + describe_json(json["name"]));
      }
      program_.statements[index].name = json["name"].get<std::string>();
    }
    const OpcodeInfo& op_spec = opcode_info(*opcode);
    std::vector<std::string> allowed{"op", "engine", "name", "source"};
    for (const auto& attr : op_spec.attrs()) allowed.emplace_back(attr.key);
    check_keys(json, pointer, allowed, "op '" + op_text + "'");

    // Engine.
    spec.engine = op_spec.engines().front();
    if (json.contains("engine")) {
      const Json& engine = json["engine"];
      const std::string engine_text = engine.is_string() ? engine.get<std::string>() : "";
      const auto parsed = engine_from_name(engine_text);
      std::vector<std::string> names;
      for (Engine e : op_spec.engines()) names.emplace_back(engine_name(e));
      if (!parsed || std::find(op_spec.engines().begin(), op_spec.engines().end(), *parsed) ==
                         op_spec.engines().end()) {
        throw InputError(program_.location(index, "/engine"),
                         "op '" + op_text + "' cannot run on engine " + engine.dump() +
                             util::did_you_mean(engine_text, names) +
                             "; it runs on: " + util::join(names, ", "));
      }
      spec.engine = *parsed;
    }

    InstructionAttributes attributes;
    for (const auto& attr : op_spec.attrs()) {
      if (!json.contains(attr.key)) {
        if (attr.required) {
          throw InputError(
              program_.location(index),
              "op '" + op_text + "' is missing required attribute '" + std::string(attr.key) + "'");
        }
        continue;
      }
      parse_attribute(spec, attributes, attr, json[attr.key], index, scope);
    }
    if (spec.opcode == Opcode::kTensorScalar &&
        ((spec.op1 == AluOp::kNone) != (attributes.operand1.kind == ScalarKind::kNone))) {
      throw InputError(program_.location(index),
                       "tensor_scalar needs op1 and operand1 together (found only " +
                           std::string(spec.op1 == AluOp::kNone ? "operand1" : "op1") + ")");
    }
    if (spec.opcode == Opcode::kTensorScalar) check_tensor_scalar_reduce(spec, index);
    if (spec.opcode == Opcode::kAllReduce || spec.opcode == Opcode::kAllGather ||
        spec.opcode == Opcode::kReduceScatter || spec.opcode == Opcode::kAllToAll) {
      if (spec.alu == AluOp::kNone) spec.alu = AluOp::kAdd;
      if (spec.alu != AluOp::kAdd && spec.alu != AluOp::kMax && spec.alu != AluOp::kMin) {
        throw InputError(program_.location(index, "/alu"),
                         "a collective reduces with add, max or min, found '" +
                             std::string(alu_op_name(spec.alu)) + "'");
      }
    }
    for (const std::uint32_t id : spec.operands) {
      if (id == kNoOperand) continue;
      spec.uses_loops = spec.uses_loops || program_.operands[id].uses_loops;
      spec.uses_per_core = spec.uses_per_core || program_.operands[id].uses_per_core;
    }
    bool attributes_use_loops = false;
    for_each_attribute_expr(attributes, [&](const Expr& expr) {
      attributes_use_loops = attributes_use_loops || uses_loops(expr);
      spec.uses_per_core = spec.uses_per_core || uses_per_core(expr);
    });
    spec.uses_loops = spec.uses_loops || attributes_use_loops;
    spec.attributes = add_attributes(std::move(attributes), attributes_use_loops);
    program_.instructions[program_.statements[index].instruction] = spec;
    return index;
  }

  /// Calls visit(expr) for every expression of `attributes` (not the iota/affine_select
  /// pattern, which is only checked).
  template <typename Visit>
  static void for_each_attribute_expr(const InstructionAttributes& attributes, Visit visit) {
    for (const Expr* expr : {&attributes.accumulate, &attributes.is_transpose, &attributes.reverse0,
                             &attributes.reverse1, &attributes.negate, &attributes.keepdims,
                             &attributes.queue, &attributes.peer}) {
      visit(*expr);
    }
    for (const Expr& expr : attributes.axes) visit(expr);
    for (const Expr& expr : attributes.cores) visit(expr);
    for (const ScalarSpec* scalar : {&attributes.scale, &attributes.bias, &attributes.operand0,
                                     &attributes.operand1, &attributes.fill}) {
      if (scalar->has_expr) visit(scalar->expr);
    }
  }

  /// Index of `attributes` in Program::attributes. Loop-free attributes written alike (the same
  /// texts and numbers) share an entry: their expressions mean the same in every scope, since
  /// loop variables may not shadow params.
  std::uint32_t add_attributes(InstructionAttributes&& attributes, bool use_loops) {
    std::string key;
    if (!use_loops) {
      const auto add = [&key](const std::string& text) {  // length-prefixed: unambiguous
        key += std::to_string(text.size());
        key += ':';
        key += text;
      };
      for_each_attribute_expr(attributes, [&](const Expr& expr) { add(expr.text()); });
      for (const ScalarSpec* scalar : {&attributes.scale, &attributes.bias, &attributes.operand0,
                                       &attributes.operand1, &attributes.fill}) {
        add(std::to_string(static_cast<int>(scalar->kind)) + ":" +
            std::to_string(scalar->has_expr) + ":" + number_key(scalar->number));
      }
      add(std::to_string(attributes.axes.size()) + ":" + std::to_string(attributes.cores.size()) +
          ":" + std::to_string(attributes.all_cores));
      add(attributes.pattern ? "p:" + attributes.pattern->text() : "-");
      const auto found = attribute_ids_.find(key);
      if (found != attribute_ids_.end()) return found->second;
    }
    const auto id = static_cast<std::uint32_t>(program_.attributes.size());
    program_.attributes.push_back(std::move(attributes));
    if (!use_loops) attribute_ids_.emplace(std::move(key), id);
    return id;
  }

  /// tensor_scalar's `reduce_dst` / `reduce_op` (NKI tensor_scalar_reduce): vector engine only,
  /// reduce_op one of add, multiply, max, min (default add), and only with reduce_dst.
  void check_tensor_scalar_reduce(InstructionSpec& spec, std::uint32_t statement) const {
    if (!spec.has(Slot::kReduceDst)) {
      if (spec.reduce_op != AluOp::kNone) {
        throw InputError(program_.location(statement, "/reduce_op"),
                         "tensor_scalar: reduce_op needs reduce_dst (the [P, 1] result of the "
                         "free-axis reduction)");
      }
      return;
    }
    if (spec.engine != Engine::kVector) {
      throw InputError(program_.location(statement, "/reduce_dst"),
                       "tensor-scalar-reduce: a tensor_scalar with reduce_dst runs on the vector "
                       "engine only (NKI tensor_scalar_reduce), found engine '" +
                           std::string(engine_name(spec.engine)) + "'");
    }
    if (spec.reduce_op == AluOp::kNone) spec.reduce_op = AluOp::kAdd;
    if (spec.reduce_op != AluOp::kAdd && spec.reduce_op != AluOp::kMultiply &&
        spec.reduce_op != AluOp::kMax && spec.reduce_op != AluOp::kMin) {
      throw InputError(program_.location(statement, "/reduce_op"),
                       "tensor_scalar reduces with add, multiply, max or min, found '" +
                           std::string(alu_op_name(spec.reduce_op)) + "'");
    }
  }

  template <typename Enum>
  Enum parse_enum(const Json& value, const std::string& location, const std::string& what,
                  std::optional<Enum> (*from_name)(std::string_view),
                  std::string_view (*to_name)(Enum), std::size_t count) const {
    const std::string text = value.is_string() ? value.get<std::string>() : "";
    if (const auto parsed = from_name(text)) return *parsed;
    std::vector<std::string> names;
    for (std::size_t i = 0; i < count; ++i) {
      const auto name = to_name(static_cast<Enum>(i));
      if (name != "none") names.emplace_back(name);
    }
    throw InputError(location, "unknown " + what + " " + value.dump() +
                                   util::did_you_mean(text, names) +
                                   " (valid: " + util::join(names, ", ") + ")");
  }

  void parse_attribute(InstructionSpec& spec, InstructionAttributes& attributes,
                       const AttrSpec& attr, const Json& value, std::uint32_t statement,
                       const Scope& scope) {
    const std::string key(attr.key);
    const std::string suffix = "/" + key;
    const std::string location = program_.location(statement, suffix);
    switch (attr.kind) {
      case AttrKind::kOperand: {
        if (!value.is_string()) {
          throw InputError(location,
                           "expected an access pattern string such as \"t[0:128, :]\", found " +
                               describe_json(value));
        }
        spec.operands[static_cast<std::size_t>(attr.slot)] =
            add_operand(value.get<std::string>(), key, statement, scope);
        return;
      }
      case AttrKind::kOperandOrNumber: {
        ScalarSpec& scalar = scalar_field(attributes, key);
        if (value.is_string() && looks_like_operand(value.get<std::string>())) {
          scalar.kind = ScalarKind::kTensor;
          spec.operands[static_cast<std::size_t>(attr.slot)] =
              add_operand(value.get<std::string>(), key, statement, scope);
          return;
        }
        parse_number(scalar, value, location, scope, true);
        return;
      }
      case AttrKind::kNumber:
        parse_number(scalar_field(attributes, key), value, location, scope, false);
        return;
      case AttrKind::kInt:
        (key == "queue" ? attributes.queue : attributes.peer) =
            compile_int_at(value, scope, "", location);
        return;
      case AttrKind::kBool: {
        Expr expr = compile_bool_at(value, scope, location);
        if (key == "accumulate") attributes.accumulate = std::move(expr);
        if (key == "is_transpose") attributes.is_transpose = std::move(expr);
        if (key == "reverse0") attributes.reverse0 = std::move(expr);
        if (key == "reverse1") attributes.reverse1 = std::move(expr);
        if (key == "negate") attributes.negate = std::move(expr);
        if (key == "keepdims") attributes.keepdims = std::move(expr);
        return;
      }
      case AttrKind::kAlu: {
        const AluOp op =
            parse_enum<AluOp>(value, location, "alu operation", alu_op_from_name, alu_op_name,
                              static_cast<std::size_t>(AluOp::kLessEqual) + 1);
        if (key == "alu") spec.alu = op;
        if (key == "op0") spec.op0 = op;
        if (key == "op1") spec.op1 = op;
        if (key == "reduce_op") spec.reduce_op = op;
        return;
      }
      case AttrKind::kFunc:
        spec.func = parse_enum<ActivationFunc>(value, location, "activation function",
                                               activation_func_from_name, activation_func_name,
                                               static_cast<std::size_t>(ActivationFunc::kTanh) + 1);
        return;
      case AttrKind::kCmp:
        spec.cmp = parse_enum<CompareOp>(value, location, "comparison", compare_op_from_name,
                                         compare_op_name, 6);
        return;
      case AttrKind::kDge:
        spec.dge =
            parse_enum<DgeMode>(value, location, "dge mode", dge_mode_from_name, dge_mode_name, 3);
        return;
      case AttrKind::kAlgorithm:
        spec.algorithm = parse_enum<CollectiveAlgorithm>(
            value, location, "collective algorithm", collective_algorithm_from_name,
            collective_algorithm_name, collective_algorithm_count());
        return;
      case AttrKind::kTrigger: {
        const std::string text = value.is_string() ? value.get<std::string>() : "";
        const std::vector<std::string> names{"sync", "scalar", "gpsimd", "vector", "tensor"};
        const auto parsed = engine_from_name(text);
        if (!parsed || std::find(names.begin(), names.end(), text) == names.end()) {
          throw InputError(location, "unknown trigger engine " + value.dump() +
                                         util::did_you_mean(text, names) +
                                         " (valid: " + util::join(names, ", ") + ")");
        }
        spec.dma_trigger = *parsed;
        return;
      }
      case AttrKind::kPerfMode: {
        const std::string text = value.is_string() ? value.get<std::string>() : "";
        if (text == "double_row") {
          spec.double_row = true;
        } else if (text != "none") {
          throw InputError(location, "unknown perf_mode " + value.dump() +
                                         util::did_you_mean(text, {"double_row", "none"}) +
                                         " (valid: double_row, none)");
        }
        return;
      }
      case AttrKind::kCoreList: {
        if (value.is_string() && value.get<std::string>() == "all") {
          attributes.all_cores = true;
          return;
        }
        if (!value.is_array() || value.empty()) {
          throw InputError(location,
                           "expected \"all\" or a non-empty list of core indices, found " +
                               describe_json(value));
        }
        attributes.all_cores = false;
        for (std::size_t i = 0; i < value.size(); ++i) {
          attributes.cores.push_back(compile_int_at(
              value[i], scope, "", program_.location(statement, suffix + "/" + std::to_string(i))));
        }
        return;
      }
      case AttrKind::kAxes: {
        if (value.is_array()) {
          if (value.empty()) throw InputError(location, "expected at least one axis");
          for (std::size_t i = 0; i < value.size(); ++i) {
            attributes.axes.push_back(compile_int_at(value[i], scope, "", location));
          }
        } else {
          attributes.axes.push_back(compile_int_at(value, scope, "", location));
        }
        return;
      }
      case AttrKind::kPattern: {
        if (!value.is_string() && !value.is_number_integer()) {
          throw InputError(location, "expected an affine expression string over p and f, found " +
                                         describe_json(value));
        }
        // p, f, f0..f3 live past the environment: they are never evaluated by the stream.
        Scope pattern_scope(&scope);
        const std::uint32_t base = kPatternSlotP;
        pattern_scope.add("p", base);
        pattern_scope.add("f", base + 1);
        for (std::uint32_t d = 0; d < kMaxFreeDims; ++d) {
          pattern_scope.add("f" + std::to_string(d), base + 2 + d);
        }
        attributes.pattern = compile_int_at(value, pattern_scope, "", location);
        return;
      }
    }
  }

  static ScalarSpec& scalar_field(InstructionAttributes& attributes, const std::string& key) {
    if (key == "scale") return attributes.scale;
    if (key == "bias") return attributes.bias;
    if (key == "operand1" || key == "on_false") return attributes.operand1;
    if (key == "value" || key == "fill") return attributes.fill;
    return attributes.operand0;  // operand0, initial, max, on_true
  }

  // A string is an operand when it starts with a declared tensor's name followed by '[', '.'
  // (an explicit pattern NAME.ap(...)) or the end of the string.
  bool looks_like_operand(const std::string& text) const {
    const std::string t = trim(text);
    std::size_t end = 0;
    while (end < t.size() && (std::isalnum(static_cast<unsigned char>(t[end])) || t[end] == '_')) {
      ++end;
    }
    if (end == 0) return false;
    if (!program_.find_tensor(t.substr(0, end))) return false;
    const std::string rest = trim(t.substr(end));
    return rest.empty() || rest[0] == '[' || rest[0] == '.';
  }

  void parse_number(ScalarSpec& scalar, const Json& value, const std::string& location,
                    const Scope& scope, bool operand_allowed) const {
    scalar.kind = ScalarKind::kImmediate;
    if (value.is_number()) {
      scalar.number = value.get<double>();
      return;
    }
    if (value.is_string()) {
      const std::string text = trim(value.get<std::string>());
      if (text == "inf" || text == "+inf") {
        scalar.number = std::numeric_limits<double>::infinity();
        return;
      }
      if (text == "-inf") {
        scalar.number = -std::numeric_limits<double>::infinity();
        return;
      }
      if (text == "nan") {
        scalar.number = std::numeric_limits<double>::quiet_NaN();
        return;
      }
      Expr expr = Expr::compile(text, scope, location);
      if (expr.is_constant()) {
        scalar.number = static_cast<double>(expr.constant_value());
      } else {
        scalar.has_expr = true;
        scalar.expr = std::move(expr);
      }
      return;
    }
    throw InputError(location, std::string("expected a number") +
                                   (operand_allowed ? ", an integer expression or a tensor operand"
                                                    : " or an integer expression") +
                                   ", found " + describe_json(value));
  }

  /// Index of the operand `raw_text` (attribute `key` of `statement`) in Program::operands. A
  /// loop-free text compiles alike in every scope (loop variables may not shadow params), so its
  /// statements share one entry.
  std::uint32_t add_operand(const std::string& raw_text, const std::string& key,
                            std::uint32_t statement, const Scope& scope) {
    const auto found = operand_ids_.find(raw_text);
    if (found != operand_ids_.end()) return found->second;
    OperandExpr operand = parse_operand(raw_text, key, statement, scope);
    const auto id = static_cast<std::uint32_t>(program_.operands.size());
    if (!operand.uses_loops) operand_ids_.emplace(raw_text, id);
    program_.operands.push_back(std::move(operand));
    return id;
  }

  OperandExpr parse_operand(const std::string& raw_text, const std::string& key,
                            std::uint32_t statement, const Scope& scope) {
    const std::string location = program_.location(statement, "/" + key);
    OperandExpr operand;
    operand.text = raw_text;
    const std::string text = trim(raw_text);
    std::size_t end = 0;
    while (end < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_')) {
      ++end;
    }
    const std::string name = text.substr(0, end);
    if (name.empty()) {
      throw InputError(location, "operand '" + raw_text + "' must start with a tensor name");
    }
    const auto tensor_index = program_.find_tensor(name);
    if (!tensor_index) {
      throw InputError(location, "operand '" + raw_text + "' names unknown tensor '" + name + "'" +
                                     util::did_you_mean(name, tensor_names()));
    }
    operand.tensor = *tensor_index;
    const TensorDecl& tensor = program_.tensors[*tensor_index];
    const std::size_t rank = tensor.shape.size();
    std::vector<std::string> parts;
    const std::string rest = trim(text.substr(end));
    if (!rest.empty() && rest.front() == '.') {
      parse_explicit_pattern(operand, tensor, rest, location, scope);
      return operand;
    }
    if (!rest.empty()) {
      if (rest.front() != '[' || rest.back() != ']') {
        throw InputError(
            location,
            "operand '" + raw_text + "': expected NAME or NAME[index, ...] in NumPy slice syntax");
      }
      const std::string inside = rest.substr(1, rest.size() - 2);
      if (inside.find('[') != std::string::npos || inside.find(']') != std::string::npos) {
        throw InputError(location,
                         "operand '" + raw_text + "': one bracket pair only (no a[i][j])");
      }
      if (!trim(inside).empty()) parts = split_top_level(inside, ',');
    }
    // Expand '...' and trailing omitted dimensions to ':'.
    std::size_t ellipses = 0;
    for (auto& part : parts) {
      part = trim(part);
      if (part == "...") ++ellipses;
    }
    if (ellipses > 1) throw InputError(location, "operand '" + raw_text + "': at most one '...'");
    const std::size_t explicit_count = parts.size() - ellipses;
    if (explicit_count > rank) {
      throw InputError(location, "operand '" + raw_text + "': tensor '" + name + "' has " +
                                     std::to_string(rank) + " dimension" + (rank == 1 ? "" : "s") +
                                     " but " + std::to_string(explicit_count) +
                                     " indices are given");
    }
    std::vector<std::string> expanded;
    for (const auto& part : parts) {
      if (part == "...") {
        for (std::size_t i = 0; i < rank - explicit_count; ++i) expanded.emplace_back(":");
      } else {
        expanded.push_back(part);
      }
    }
    while (expanded.size() < rank) expanded.emplace_back(":");

    const bool on_chip = tensor.memory != MemoryKind::kHbm;
    for (std::size_t d = 0; d < rank; ++d) {
      const std::string& part = expanded[d];
      if (part.empty()) {
        throw InputError(location, "operand '" + raw_text + "': index " + std::to_string(d) +
                                       " is empty (use ':' for the whole dimension)");
      }
      IndexExpr index;
      const std::vector<std::string> pieces = split_top_level(part, ':');
      if (pieces.size() > 3) {
        throw InputError(location,
                         "operand '" + raw_text + "': index '" + part + "' has more than two ':'");
      }
      if (pieces.size() == 1) {
        index.is_slice = false;
        index.has_start = true;
        index.start = Expr::compile(pieces[0], scope, location);
        if (on_chip && d == tensor.partition_dim) {
          throw InputError(location, "operand '" + raw_text + "': the partition dimension (" +
                                         std::to_string(d) + ") of '" + name +
                                         "' must be indexed with a slice, e.g. '" +
                                         trim(pieces[0]) + ":" + trim(pieces[0]) + "+1'");
        }
      } else {
        const std::string start = trim(pieces[0]);
        const std::string stop = trim(pieces[1]);
        const std::string step = pieces.size() == 3 ? trim(pieces[2]) : "";
        if (!start.empty()) {
          index.has_start = true;
          index.start = Expr::compile(start, scope, location);
        }
        if (!stop.empty()) {
          index.has_stop = true;
          index.stop = Expr::compile(stop, scope, location);
        }
        if (!step.empty()) {
          index.has_step = true;
          index.step = Expr::compile(step, scope, location);
          if (index.step.is_constant() && index.step.constant_value() <= 0) {
            throw InputError(
                location, "operand '" + raw_text + "': slice step must be positive, found " + step);
          }
          if (on_chip && d == tensor.partition_dim &&
              !(index.step.is_constant() && index.step.constant_value() == 1)) {
            throw InputError(location, "operand '" + raw_text +
                                           "': the partition dimension's slice must have step 1 "
                                           "(a tensor occupies contiguous partitions)");
          }
        }
      }
      for (const Expr* e : {&index.start, &index.stop, &index.step}) {
        operand.uses_loops = operand.uses_loops || uses_loops(*e);
        operand.uses_per_core = operand.uses_per_core || uses_per_core(*e);
        operand.all_constant = operand.all_constant && e->is_constant();
      }
      operand.indices.push_back(std::move(index));
    }
    return operand;
  }

  // `rest` is what follows the tensor name: ".ap(ARGS)" with ARGS
  // "[PSTART:PSTOP,] OFFSET, [STRIDE, COUNT], ..." (the partition range for sbuf/psum only).
  void parse_explicit_pattern(OperandExpr& operand, const TensorDecl& tensor,
                              const std::string& rest, const std::string& location,
                              const Scope& scope) {
    const bool on_chip = tensor.memory != MemoryKind::kHbm;
    const std::string memory(memory_kind_name(tensor.memory));
    const std::string form =
        tensor.name + (on_chip ? ".ap(PSTART:PSTOP, OFFSET, [STRIDE, COUNT], ...)"
                               : ".ap(OFFSET, [STRIDE, COUNT], ...)");
    const auto fail_operand = [&](const std::string& why) {
      throw InputError(location, "operand '" + operand.text + "': " + why);
    };
    std::string call = trim(std::string_view(rest).substr(1));
    if (!call.starts_with("ap")) fail_operand("expected " + form);
    call = trim(std::string_view(call).substr(2));
    if (call.size() < 2 || call.front() != '(' || call.back() != ')' || !balanced(call)) {
      fail_operand("expected " + form);
    }
    std::vector<std::string> args = split_top_level(call.substr(1, call.size() - 2), ',');
    for (std::string& arg : args) arg = trim(arg);
    const auto compile = [&](const std::string& text) {
      Expr expr = Expr::compile(text, scope, location);
      operand.uses_loops = operand.uses_loops || uses_loops(expr);
      operand.uses_per_core = operand.uses_per_core || uses_per_core(expr);
      operand.all_constant = operand.all_constant && expr.is_constant();
      return expr;
    };
    ExplicitPatternExpr pattern;
    std::size_t next = 0;
    const std::vector<std::string> range = split_top_level(args[0], ':');
    if (on_chip) {
      if (range.size() == 1) {
        fail_operand(memory + " tensor '" + tensor.name + "' needs its partition range first: " +
                     form + ", e.g. '" + tensor.name + ".ap(0:128, 0, [1, 512])'");
      }
      if (range.size() != 2 || trim(range[0]).empty() || trim(range[1]).empty()) {
        fail_operand("the partition range '" + args[0] + "' must be PSTART:PSTOP (step 1)");
      }
      pattern.partition_start = compile(trim(range[0]));
      pattern.partition_stop = compile(trim(range[1]));
      next = 1;
    } else if (range.size() > 1) {
      fail_operand("hbm tensor '" + tensor.name + "' has no partition range: " + form);
    }
    if (next >= args.size() || args[next].empty() || args[next].front() == '[') {
      fail_operand("OFFSET is missing: " + form);
    }
    pattern.offset = compile(args[next++]);
    for (; next < args.size(); ++next) {
      const std::string& arg = args[next];
      const std::vector<std::string> pair =
          arg.size() >= 2 && arg.front() == '[' && arg.back() == ']'
              ? split_top_level(std::string_view(arg).substr(1, arg.size() - 2), ',')
              : std::vector<std::string>{};
      if (pair.size() != 2 || trim(pair[0]).empty() || trim(pair[1]).empty()) {
        fail_operand("expected [STRIDE, COUNT], found '" + arg + "'");
      }
      PatternPairExpr& added = pattern.pairs.emplace_back(
          PatternPairExpr{compile(trim(pair[0])), compile(trim(pair[1]))});
      if (added.stride.is_constant() && added.stride.constant_value() < 0) {
        fail_operand("stride '" + trim(pair[0]) + "' is negative; strides are at least 0");
      }
      if (added.count.is_constant() && added.count.constant_value() < 1) {
        fail_operand("count '" + trim(pair[1]) + "' is below 1");
      }
    }
    const std::size_t pairs = pattern.pairs.size();
    if (on_chip && pairs > kMaxFreeDims) {
      fail_operand(memory + " patterns have at most " + std::to_string(kMaxFreeDims) +
                   " [STRIDE, COUNT] pairs (free dimensions), found " + std::to_string(pairs));
    }
    if (!on_chip && (pairs < 1 || pairs > kMaxPatternDims)) {
      fail_operand("hbm patterns have 1 to " + std::to_string(kMaxPatternDims) +
                   " [STRIDE, COUNT] pairs, found " + std::to_string(pairs));
    }
    operand.explicit_pattern = static_cast<std::uint32_t>(program_.explicit_patterns.size());
    program_.explicit_patterns.push_back(std::move(pattern));
  }

  const ParseOptions& options_;
  Program program_;
  Scope global_scope_;
  std::map<std::string, std::uint32_t> source_line_ids_;  ///< Program::source_lines by text
  /// Program::operands of loop-free operand texts, by text.
  std::unordered_map<std::string, std::uint32_t> operand_ids_;
  /// Program::attributes of loop-free attribute sets, by their texts and numbers.
  std::unordered_map<std::string, std::uint32_t> attribute_ids_;
  /// `source` of the statement being parsed (kNoSourceLine outside statements or without one).
  std::uint32_t current_source_line_ = kNoSourceLine;
  /// Loop and condition bodies open around the statement being parsed.
  std::size_t body_nesting_ = 0;
};

}  // namespace

std::string_view operand_key(Opcode opcode, Slot slot) {
  return operand_keys()[static_cast<std::size_t>(opcode)][static_cast<std::size_t>(slot)];
}

ParamOverride parse_param_override(std::string_view assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    throw InputError("--param " + std::string(assignment),
                     "expected NAME=VALUE (VALUE an integer expression), e.g. --param N=4096");
  }
  return {trim(assignment.substr(0, eq)), std::string(assignment.substr(eq + 1))};
}

Program parse_program(const nlohmann::ordered_json& document, const std::string& file,
                      const ParseOptions& options) {
  return ProgramParser(file, options).parse(document);
}

namespace {

/// SAX handler that builds the document as nlohmann's own DOM parser does (a repeated key keeps
/// its first position and takes the last value), except that the statements of the top-level
/// "program" list are parsed one by one as soon as each is complete, and then dropped, so an
/// unrolled kernel never has its whole document in memory. This needs everything the statements
/// refer to before "program" and nothing after it; when that does not hold, or anything fails,
/// the handler stops and parse_program_text() parses the text again the plain way, so messages
/// and their order are exactly those of the document parser.
class StreamingHandler {
 public:
  explicit StreamingHandler(ProgramParser& parser) : parser_(parser) {}

  /// True when the program was parsed while streaming; false when the document needs the plain
  /// path (parse_program_text() decides).
  bool streamed() const { return state_ == State::kStreaming && finished_; }

  bool null() { return value(nullptr); }
  bool boolean(bool v) { return value(v); }
  bool number_integer(std::int64_t v) { return value(v); }
  bool number_unsigned(std::uint64_t v) { return value(v); }
  bool number_float(double v, const std::string& /*text*/) { return value(v); }
  bool string(std::string& v) { return value(std::move(v)); }
  bool binary(Json::binary_t& v) { return value(std::move(v)); }
  bool start_object(std::size_t /*size*/) {
    stack_.push_back(place(Json(Json::value_t::object)));
    return true;
  }
  bool key(std::string& name) {
    if (stack_.size() == 1) {
      // A top-level key after "program" (or a second "program"): not streamable.
      if (program_seen_) return abandon();
      program_seen_ = name == "program";
    }
    element_ = &(*stack_.back())[name];
    return true;
  }
  bool end_object() {
    stack_.pop_back();
    if (stack_.empty()) finished_ = true;
    return after_value();
  }
  bool start_array(std::size_t /*size*/) {
    const bool program = stack_.size() == 1 && program_seen_;
    stack_.push_back(place(Json(Json::value_t::array)));
    if (!program) return true;
    program_list_ = stack_.back();
    try {
      parser_.begin(root_);
    } catch (const InputError&) {
      return abandon();
    }
    state_ = State::kStreaming;
    return true;
  }
  bool end_array() {
    stack_.pop_back();
    return after_value();
  }
  bool parse_error(std::size_t /*position*/, const std::string& /*token*/,
                   const nlohmann::detail::exception& /*error*/) {
    return abandon();
  }

 private:
  enum class State : std::uint8_t { kPending, kStreaming, kAbandoned };

  template <typename Value>
  bool value(Value&& v) {
    place(Json(std::forward<Value>(v)));
    return after_value();
  }
  /// Stores `v` where the document's next value goes and returns where it is.
  Json* place(Json&& v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    if (stack_.back()->is_array()) {
      stack_.back()->push_back(std::move(v));
      return &stack_.back()->back();
    }
    *element_ = std::move(v);
    return element_;
  }
  /// After a complete value: a complete statement of the program list is parsed and dropped.
  bool after_value() {
    if (state_ != State::kStreaming || stack_.empty() || stack_.back() != program_list_) {
      return true;
    }
    try {
      parser_.top_level_statement(program_list_->back(), statements_++);
    } catch (const InputError&) {
      return abandon();
    }
    program_list_->erase(program_list_->size() - 1);
    return true;
  }
  bool abandon() {
    state_ = State::kAbandoned;
    return false;  // stops the SAX parser
  }

  ProgramParser& parser_;
  Json root_;
  std::vector<Json*> stack_;  ///< open containers, outermost first
  Json* element_ = nullptr;   ///< the object member whose value comes next
  Json* program_list_ = nullptr;
  std::size_t statements_ = 0;
  bool program_seen_ = false;  ///< the latest top-level key was "program"
  bool finished_ = false;
  State state_ = State::kPending;
};

}  // namespace

Program parse_program_text(std::string_view text, const std::string& file,
                           const ParseOptions& options) {
  util::check_json_text(text, file);  // before anything walks the document
  {
    ProgramParser parser(file, options);
    StreamingHandler handler(parser);
    if (nlohmann::ordered_json::sax_parse(text, &handler) && handler.streamed()) {
      return parser.finish();
    }
  }
  nlohmann::ordered_json document;
  try {
    document = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // not expected after check_json_text()
    throw InputError(file, "invalid JSON: " + util::json_exception_text(e.what()));
  }
  return parse_program(document, file, options);
}

Program parse_program_file(const std::string& path, const ParseOptions& options) {
  return parse_program_text(util::read_input_file(path, "kernel file"), path, options);
}

// ---- Program methods ---------------------------------------------------------------------------

bool Program::uses_per_core(const Expr& expr) const {
  for (std::uint32_t slot : expr.slots()) {
    if (slot < kBuiltinSlotCount) {
      if (is_per_core_builtin(slot)) return true;
    } else if (slot < loop_slot(0)) {
      if (params[slot - kBuiltinSlotCount].per_core) return true;
    }
  }
  return false;
}

std::optional<std::uint32_t> Program::find_tensor(std::string_view tensor_name) const {
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].name == tensor_name) return static_cast<std::uint32_t>(i);
  }
  return std::nullopt;
}

namespace {
std::string statement_head(const Program& program, std::uint32_t index) {
  const Statement& s = program.statements[index];
  switch (s.kind) {
    case Statement::Kind::kLoop:
      return "for " + program.controls[s.control].loop_var;
    case Statement::Kind::kIf:
      return "if";
    case Statement::Kind::kInstruction:
      break;
  }
  if (!s.name.empty()) return s.name;
  return std::string(opcode_name(program.instructions[s.instruction].opcode));
}
}  // namespace

std::string Program::label(std::uint32_t statement) const {
  const Statement& s = statements[statement];
  if (s.kind == Statement::Kind::kInstruction && !s.name.empty()) return s.name;
  return statement_head(*this, statement) + " " + s.pointer;
}

std::vector<std::string> Program::loop_names(std::uint32_t statement) const {
  std::vector<std::string> names(statements[statement].depth);
  std::uint32_t current = statement;
  for (std::size_t d = names.size(); d > 0; --d) {
    current = statements[current].enclosing;
    names[d - 1] = controls[statements[current].control].loop_var;
  }
  return names;
}

std::string Program::location(std::uint32_t statement, const std::string& suffix) const {
  const std::string_view cited = source_line(statement);
  return (cited.empty() ? file : std::string(cited)) + ": " + statement_head(*this, statement) +
         " " + statements[statement].pointer + suffix;
}

std::string Program::location(const SourceRef& source) const {
  return location(source, "");
}

std::string Program::location(const SourceRef& source, const std::string& pointer_suffix) const {
  std::string out = location(source.statement, pointer_suffix);
  const std::vector<std::string> names = loop_names(source.statement);
  if (!names.empty()) {
    out += " (";
    for (std::size_t d = 0; d < names.size() && d < source.depth; ++d) {
      if (d > 0) out += ", ";
      out += names[d] + "=" + std::to_string(source.loop_values[d]);
    }
    out += ")";
  }
  return out;
}

}  // namespace trnsim::kernel
