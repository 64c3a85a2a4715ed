#include "numerics/npy.hpp"

#include <cctype>
#include <fstream>
#include <limits>
#include <sstream>

#include "util/error.hpp"
#include "util/output_target.hpp"

namespace trnsim::numerics {

namespace {

constexpr std::string_view kMagic = "\x93NUMPY";

/// A quoted excerpt of `text` for messages: at most 40 characters, non-printables as '?'.
std::string excerpt(std::string_view text) {
  std::string out = "'";
  for (std::size_t i = 0; i < text.size() && i < 40; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    out += std::isprint(c) != 0 ? static_cast<char>(c) : '?';
  }
  return out + (text.size() > 40 ? "...'" : "'");
}

/// A reader of the header's dict literal as NumPy writes it (Python syntax, single or double
/// quotes, any key order, whitespace anywhere between tokens).
class HeaderReader {
 public:
  HeaderReader(std::string_view text, std::string where) : text_(text), where_(std::move(where)) {}

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_])) != 0) {
      ++pos_;
    }
  }
  bool accept(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c, std::string_view what) {
    if (!accept(c)) fail(std::string("expected ") + std::string(what));
  }
  std::string string_literal() {
    skip_space();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) {
      fail("expected a quoted string");
    }
    const char quote = text_[pos_++];
    const std::size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) fail("expected the string's closing quote");
    std::string value(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return value;
  }
  bool boolean() {
    skip_space();
    for (const auto& [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
      const std::string_view w = word;
      if (text_.substr(pos_, w.size()) == w) {
        pos_ += w.size();
        return value;
      }
    }
    fail("expected True or False");
  }
  std::uint64_t integer() {
    skip_space();
    std::uint64_t value = 0;
    const std::size_t start = pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_])) != 0) {
      const auto digit = static_cast<std::uint64_t>(text_[pos_] - '0');
      if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) {
        fail("expected a dimension below 2^64");
      }
      value = value * 10 + digit;
      ++pos_;
    }
    if (pos_ == start) fail("expected a non-negative integer dimension");
    accept('L');  // Python 2's long suffix, in files NumPy wrote long ago
    return value;
  }
  std::vector<std::uint64_t> shape() {
    expect('(', "'(' opening the shape tuple");
    std::vector<std::uint64_t> dims;
    if (accept(')')) return dims;
    while (true) {
      dims.push_back(integer());
      if (accept(')')) return dims;
      expect(',', "',' or ')' in the shape tuple");
      if (accept(')')) return dims;
    }
  }
  bool at_end() {
    skip_space();
    return pos_ >= text_.size();
  }
  [[noreturn]] void fail(const std::string& expected) const {
    throw InputError(where_, "header " + excerpt(text_) + ": " + expected + " at offset " +
                                 std::to_string(pos_) + ", found " +
                                 (pos_ < text_.size() ? excerpt(text_.substr(pos_, 12))
                                                      : std::string("the end")));
  }

 private:
  std::string_view text_;
  std::string where_;
  std::size_t pos_ = 0;
};

std::uint32_t little_endian(std::string_view bytes, std::size_t offset, std::size_t count) {
  std::uint32_t value = 0;
  for (std::size_t i = 0; i < count; ++i) {
    value |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[offset + i])) << (8 * i);
  }
  return value;
}

}  // namespace

std::uint64_t NpyArray::elements() const {
  std::uint64_t count = 1;
  for (const std::uint64_t dim : shape) count *= dim;
  return count;
}

std::string format_shape(const std::vector<std::uint64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

std::uint32_t npy_item_bytes(std::string_view descr) {
  if (descr.size() != 3 || (descr[0] != '<' && descr[0] != '|' && descr[0] != '=')) return 0;
  const std::string_view kind_size = descr.substr(1);
  for (const auto& [name, bytes] :
       {std::pair{"b1", 1u}, std::pair{"i1", 1u}, std::pair{"u1", 1u}, std::pair{"V1", 1u},
        std::pair{"i2", 2u}, std::pair{"u2", 2u}, std::pair{"f2", 2u}, std::pair{"V2", 2u},
        std::pair{"i4", 4u}, std::pair{"u4", 4u}, std::pair{"f4", 4u}, std::pair{"f8", 8u}}) {
    if (kind_size == name) return bytes;
  }
  return 0;
}

NpyArray parse_npy(std::string_view bytes, const std::string& where) {
  if (bytes.substr(0, kMagic.size()) != kMagic) {
    throw InputError(where, "expected a NumPy .npy file (starting with \\x93NUMPY), found " +
                                excerpt(bytes.substr(0, 8)));
  }
  if (bytes.size() < 10) throw InputError(where, "expected a .npy header, found the end");
  const auto major = static_cast<unsigned char>(bytes[6]);
  if (major < 1 || major > 3) {
    throw InputError(
        where, "expected .npy format version 1, 2 or 3, found version " + std::to_string(major));
  }
  const std::size_t length_bytes = major == 1 ? 2 : 4;
  const std::size_t start = 8 + length_bytes;
  if (bytes.size() < start) throw InputError(where, "expected a .npy header, found the end");
  const std::size_t header_length = little_endian(bytes, 8, length_bytes);
  if (bytes.size() < start + header_length) {
    throw InputError(where, "expected a header of " + std::to_string(header_length) +
                                " bytes, found " + std::to_string(bytes.size() - start));
  }
  HeaderReader header(bytes.substr(start, header_length), where);
  NpyArray array;
  bool have_descr = false;
  bool have_order = false;
  bool have_shape = false;
  header.expect('{', "'{' opening the header dict");
  while (!header.accept('}')) {
    const std::string key = header.string_literal();
    header.expect(':', "':' after a key");
    if (key == "descr") {
      array.descr = header.string_literal();
      have_descr = true;
    } else if (key == "fortran_order") {
      if (header.boolean()) {
        throw InputError(where,
                         "expected fortran_order False (C order; save "
                         "numpy.ascontiguousarray(x)), found True");
      }
      have_order = true;
    } else if (key == "shape") {
      array.shape = header.shape();
      have_shape = true;
    } else {
      header.fail("expected the key 'descr', 'fortran_order' or 'shape'");
    }
    if (!header.accept(',')) {
      header.expect('}', "',' or '}' after a value");
      break;
    }
  }
  if (!header.at_end()) header.fail("expected only padding after the header dict");
  if (!have_descr || !have_order || !have_shape) {
    throw InputError(where,
                     "expected the header keys 'descr', 'fortran_order' and 'shape', found " +
                         std::string(!have_descr   ? "no 'descr'"
                                     : !have_order ? "no 'fortran_order'"
                                                   : "no 'shape'"));
  }
  const std::uint32_t item = npy_item_bytes(array.descr);
  if (item == 0) {
    throw InputError(where,
                     "expected a little-endian element type (bool, int8-32, uint8-32, float16, "
                     "float32, float64, or 1-2 byte void such as bfloat16), found descr '" +
                         array.descr + "'");
  }
  const std::size_t data_start = start + header_length;
  const std::uint64_t elements = array.elements();
  const std::uint64_t available = bytes.size() - data_start;
  if (elements > available / item || elements * item != available) {
    throw InputError(
        where, "expected " + std::to_string(elements) + " elements of " + std::to_string(item) +
                   " bytes (" + std::to_string(elements * item) +
                   " bytes) after the header, found " + std::to_string(available) + " bytes");
  }
  array.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(data_start), bytes.end());
  return array;
}

std::string npy_bytes(const NpyArray& array) {
  std::string shape = "(";
  for (std::size_t i = 0; i < array.shape.size(); ++i) {
    shape += std::to_string(array.shape[i]) + (array.shape.size() == 1 ? "," : "");
    if (i + 1 < array.shape.size()) shape += ", ";
  }
  shape += ")";
  std::string header =
      "{'descr': '" + array.descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Padded with spaces so that magic + version + length + header is a multiple of 64 bytes.
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::string out(kMagic);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>(header.size() >> 8 & 0xFF);
  out += header;
  out.append(array.data.begin(), array.data.end());
  return out;
}

NpyArray read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "expected a readable .npy file, found none");
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) throw InputError(path, "expected a readable .npy file, found a read error");
  return parse_npy(content.str(), path);
}

void write_npy(const std::string& path, const NpyArray& array, const std::string& option) {
  util::write_output_file(path, npy_bytes(array), option);
}

}  // namespace trnsim::numerics
