#include "util/json_input.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace trnsim::util {
namespace {

/// "at line L, column C" of byte offset `position` (1-based, as nlohmann says it).
std::string line_and_column(std::string_view text, std::size_t position) {
  position = std::min(position, text.size());
  std::size_t line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < position; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return "at line " + std::to_string(line) + ", column " +
         std::to_string(position - line_start + 1);
}

/// Byte offset of the first '[' or '{' (outside strings) that opens level kMaxJsonNesting + 1,
/// or npos. A plain scan: it needs no valid JSON and no recursion.
std::size_t too_deep_at(std::string_view text) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonNesting) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::string_view::npos;
}

/// SAX handler that keeps nothing: it only catches the first error and where it is.
struct ErrorCatcher {
  bool null() { return true; }
  bool boolean(bool) { return true; }
  bool number_integer(std::int64_t) { return true; }
  bool number_unsigned(std::uint64_t) { return true; }
  bool number_float(double, const std::string&) { return true; }
  bool string(std::string&) { return true; }
  bool binary(nlohmann::json::binary_t&) { return true; }
  bool start_object(std::size_t) { return true; }
  bool key(std::string&) { return true; }
  bool end_object() { return true; }
  bool start_array(std::size_t) { return true; }
  bool end_array() { return true; }
  bool parse_error(std::size_t position, const std::string& token,
                   const nlohmann::detail::exception& error) {
    failed = true;
    id = error.id;
    message = json_exception_text(error.what());
    end = position;
    last_token = token;
    return false;
  }

  bool failed = false;
  int id = 0;  ///< nlohmann's exception id: 1xx parse errors (which say where), 406 overflow
  std::string message;
  std::size_t end = 0;
  std::string last_token;
};

}  // namespace

std::string json_exception_text(const std::string& what) {
  // "[json.exception.parse_error.101] parse error at line 1, column 2: ..." -> "parse error ..."
  const auto close = what.find("] ");
  return what.rfind("[json.exception.", 0) == 0 && close != std::string::npos
             ? what.substr(close + 2)
             : what;
}

std::string read_input_file(const std::string& path, const std::string& what) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    throw InputError(path, "cannot open the " + what + ": " + std::strerror(errno));
  }
  if (S_ISDIR(info.st_mode)) {
    throw InputError(path, "expected a " + what + ", found a directory");
  }
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                             &std::fclose);
  if (!file) throw InputError(path, "cannot open the " + what + ": " + std::strerror(errno));
  std::string text;
  char chunk[65536];
  for (std::size_t n; (n = std::fread(chunk, 1, sizeof chunk, file.get())) > 0;) {
    text.append(chunk, n);
  }
  if (std::ferror(file.get())) {
    throw InputError(path, "cannot read the " + what + ": " + std::strerror(errno));
  }
  return text;
}

void check_json_text(std::string_view text, const std::string& file) {
  if (const std::size_t at = too_deep_at(text); at != std::string_view::npos) {
    throw InputError(file, "invalid input: arrays and objects nest deeper than " +
                               std::to_string(kMaxJsonNesting) + " levels " +
                               line_and_column(text, at));
  }
  ErrorCatcher catcher;
  nlohmann::json::sax_parse(text, &catcher);
  if (!catcher.failed) return;
  if (catcher.id >= 100 && catcher.id < 200) {
    throw InputError(file, "invalid JSON: " + catcher.message);
  }
  // E.g. "number overflow parsing '1e999'": nlohmann gives no position, the handler does.
  const std::size_t start =
      catcher.end >= catcher.last_token.size() ? catcher.end - catcher.last_token.size() : 0;
  throw InputError(file, "invalid JSON: " + catcher.message + " " + line_and_column(text, start) +
                             (catcher.id == 406 ? " (expected a number of magnitude at most "
                                                  "about 1.8e308, the largest double)"
                                                : ""));
}

}  // namespace trnsim::util
