// A result file written while the simulation runs: buffered appends to a util::OutputTarget (a
// regular file is written to PATH.tmp and renamed to PATH only by commit(), so a failed run never
// leaves a complete-looking file, and the destructor of an uncommitted file removes PATH.tmp; a
// device or FIFO is written in place, a symlink's target by the same rule). Also the small text
// helpers the writers share: fixed-precision numbers and JSON/CSV escaping, all
// locale-independent and deterministic.
// Leaves out compression and fsync (a crash of the machine may lose a committed file).
#pragma once

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>

#include "util/output_target.hpp"

namespace trnsim::report {

/// Append-only text for result files. Numbers print locale-independently. A plain growable
/// char array with memcpy appends, so writing stays cheap even in unoptimised builds (it runs
/// once per instruction).
class TextBuffer {
 public:
  TextBuffer() = default;
  ~TextBuffer() { delete[] data_; }
  TextBuffer(const TextBuffer&) = delete;
  TextBuffer& operator=(const TextBuffer&) = delete;

  TextBuffer& operator<<(std::string_view text) {
    append(text.data(), text.size());
    return *this;
  }
  TextBuffer& operator<<(const char* text) { return *this << std::string_view(text); }
  TextBuffer& operator<<(const std::string& text) { return *this << std::string_view(text); }
  TextBuffer& operator<<(char c) {
    if (size_ == capacity_) grow(1);
    data_[size_++] = c;
    return *this;
  }
  template <class T>
  requires std::is_integral_v<T> &&(!std::is_same_v<T, char>)&&(!std::is_same_v<T, bool>)TextBuffer&
  operator<<(T value) {
    if (capacity_ - size_ < 24) grow(24);
    const auto result = std::to_chars(data_ + size_, data_ + capacity_, value);
    size_ = static_cast<std::size_t>(result.ptr - data_);
    return *this;
  }
  /// `value` with exactly 3 decimals ("12.000"); -0 and NaN print as 0.000.
  TextBuffer& fixed3(double value);
  /// Whole ns as microseconds with exactly 3 decimals (1235 -> "1.235"): trace timestamps.
  TextBuffer& us_from_ns(std::int64_t whole_ns);
  /// `text` as a JSON string literal, quotes included.
  TextBuffer& json_string(std::string_view text);
  /// `text` as one CSV field (RFC 4180): quoted when it contains a comma, quote or line break.
  TextBuffer& csv_field(std::string_view text);

  std::size_t size() const { return size_; }
  void clear() { size_ = 0; }
  std::string_view view() const { return {data_, size_}; }

 private:
  void append(const char* text, std::size_t length) {
    if (length == 0) return;  // `text` may be null (an empty buffer's view)
    if (capacity_ - size_ < length) grow(length);
    std::memcpy(data_ + size_, text, length);
    size_ += length;
  }
  void grow(std::size_t extra);

  char* data_ = nullptr;  // owned; a raw array keeps unoptimised builds fast
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

class OutputFile {
 public:
  /// Opens PATH (util::OutputTarget). `option` names the command-line option for messages
  /// ("--trace"). Throws InputError when the file cannot be created.
  OutputFile(std::string path, std::string option);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  /// The buffer to append to; written to disk by maybe_flush() once it is large.
  TextBuffer& buffer() { return buffer_; }
  /// Writes the buffer out when it holds more than a few MiB (call after each record).
  void maybe_flush() {
    if (buffer_.size() >= kFlushBytes) flush();
  }
  /// Flushes, closes and renames PATH.tmp to PATH. Throws InputError on a write error.
  void commit();
  const std::string& path() const { return target_.path(); }

 private:
  static constexpr std::size_t kFlushBytes = std::size_t{4} << 20;
  void flush();

  util::OutputTarget target_;
  TextBuffer buffer_;
};

/// Rounds a time in ns to whole ns (half away from zero).
std::int64_t round_ns(double ns);
/// `text` as a JSON string literal, quotes included.
std::string json_string(std::string_view text);
/// `text` as one CSV field (see TextBuffer::csv_field).
std::string csv_field(std::string_view text);

}  // namespace trnsim::report
