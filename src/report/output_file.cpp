#include "report/output_file.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace trnsim::report {

OutputFile::OutputFile(std::string path, std::string option)
    : target_(std::move(path), std::move(option)) {}

OutputFile::~OutputFile() = default;

void OutputFile::flush() {
  target_.write(buffer_.view());
  buffer_.clear();
}

void OutputFile::commit() {
  flush();
  target_.commit();
}

std::int64_t round_ns(double ns) {
  return static_cast<std::int64_t>(std::llround(ns));
}

void TextBuffer::grow(std::size_t extra) {
  const std::size_t capacity = std::max(size_ + extra, std::max<std::size_t>(256, 2 * capacity_));
  char* data = new char[capacity];
  if (size_ > 0) std::memcpy(data, data_, size_);
  delete[] data_;
  data_ = data;
  capacity_ = capacity;
}

TextBuffer& TextBuffer::us_from_ns(std::int64_t whole_ns) {
  if (whole_ns < 0) {
    *this << '-';
    whole_ns = -whole_ns;
  }
  *this << whole_ns / 1000;
  const std::int64_t fraction = whole_ns % 1000;
  const char digits[4] = {'.', static_cast<char>('0' + fraction / 100),
                          static_cast<char>('0' + fraction / 10 % 10),
                          static_cast<char>('0' + fraction % 10)};
  append(digits, 4);
  return *this;
}

TextBuffer& TextBuffer::fixed3(double value) {
  if (value == 0.0 || std::isnan(value)) value = 0.0;  // no "-0.000", no "nan" in JSON
  char digits[64];
  const auto result =
      std::to_chars(digits, digits + sizeof(digits), value, std::chars_format::fixed, 3);
  append(digits, static_cast<std::size_t>(result.ptr - digits));
  return *this;
}

TextBuffer& TextBuffer::json_string(std::string_view text) {
  *this << ('"');
  std::size_t plain = 0;  // start of the run of characters that need no escape
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool needs_escape = c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20;
    if (!needs_escape) continue;
    append(text.data() + plain, i - plain);
    plain = i + 1;
    switch (c) {
      case '"':
        *this << ("\\\"");
        break;
      case '\\':
        *this << ("\\\\");
        break;
      case '\n':
        *this << ("\\n");
        break;
      case '\r':
        *this << ("\\r");
        break;
      case '\t':
        *this << ("\\t");
        break;
      default: {
        static constexpr char kHex[] = "0123456789abcdef";
        const auto byte = static_cast<unsigned char>(c);
        *this << ("\\u00");
        *this << (kHex[byte >> 4]);
        *this << (kHex[byte & 0xF]);
      }
    }
  }
  append(text.data() + plain, text.size() - plain);
  *this << ('"');
  return *this;
}

TextBuffer& TextBuffer::csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) {
    *this << text;
    return *this;
  }
  *this << ('"');
  for (const char c : text) {
    if (c == '"') *this << ('"');
    *this << (c);
  }
  *this << ('"');
  return *this;
}

std::string json_string(std::string_view text) {
  TextBuffer out;
  out.json_string(text);
  return std::string(out.view());
}

std::string csv_field(std::string_view text) {
  TextBuffer out;
  out.csv_field(text);
  return std::string(out.view());
}

}  // namespace trnsim::report
