#include "sweep/results.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <map>
#include <system_error>

#include "util/error.hpp"
#include "util/json_input.hpp"
#include "util/output_target.hpp"
#include "util/strings.hpp"

namespace trnsim::sweep {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void throw_io(const std::string& path, const std::string& what) {
  throw InputError(path, what + ": " + std::strerror(errno));
}

void write_all(int fd, const std::string& data, const std::string& path) {
  std::size_t written = 0;
  while (written < data.size()) {
    const ssize_t n = ::write(fd, data.data() + written, data.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_io(path, "cannot write the results file");
    }
    written += static_cast<std::size_t>(n);
  }
}

std::size_t record_index(const Record& record) {
  return record["index"].get<std::size_t>();
}

std::string csv_value(const Record& value) {
  if (value.is_null()) return "";
  if (value.is_string()) return util::csv_field(value.get<std::string>());
  return util::csv_field(value.dump());
}

void add_column(std::vector<std::string>& columns, const std::string& name) {
  if (std::find(columns.begin(), columns.end(), name) == columns.end()) columns.push_back(name);
}

}  // namespace

ResultsFile read_results(const std::string& path) {
  const std::string text = util::read_input_file(path, "results file");
  ResultsFile results;
  std::size_t start = 0;
  std::size_t line_number = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    if (end == std::string::npos) {
      results.partial_bytes = text.size() - start;
      break;
    }
    ++line_number;
    const std::string_view line(text.data() + start, end - start);
    start = end + 1;
    results.complete_bytes = start;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    util::check_json_text(line, fmt::format("{}:{}", path, line_number));
    Record record = Record::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!record.is_object() || !record.contains("index") || !record["index"].is_number_unsigned()) {
      throw InputError(fmt::format("{}:{}", path, line_number),
                       "expected a sweep result: a JSON object with a non-negative integer "
                       "\"index\" on each line");
    }
    results.records.push_back(std::move(record));
  }
  return results;
}

ResultsAppender::ResultsAppender(const std::string& path, std::size_t keep_bytes) : path_(path) {
  const fs::path parent = fs::path(path).parent_path();
  std::error_code error;
  if (!parent.empty()) fs::create_directories(parent, error);
  if (error) {
    throw InputError(path,
                     "cannot create the directory '" + parent.string() + "': " + error.message());
  }
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw_io(path, "cannot open the results file for writing");
  struct stat info {};
  regular_ = ::fstat(fd_, &info) == 0 && S_ISREG(info.st_mode);
  if (!regular_) return;  // a device or FIFO is written in place, as it is
  if (::ftruncate(fd_, static_cast<off_t>(keep_bytes)) != 0 || ::lseek(fd_, 0, SEEK_END) < 0) {
    const int saved = errno;
    ::close(fd_);
    errno = saved;
    throw_io(path, "cannot prepare the results file for appending");
  }
}

ResultsAppender::~ResultsAppender() {
  if (fd_ >= 0) ::close(fd_);
}

void ResultsAppender::append(const Record& record) {
  write_all(fd_, record.dump() + "\n", path_);
  if (regular_ && ::fsync(fd_) != 0) throw_io(path_, "cannot flush the results file");
}

void write_results(const std::string& path, const std::vector<Record>& records) {
  std::string data;
  for (const Record& record : records) data += record.dump() + "\n";
  write_file_atomically(path, data);
}

void write_file_atomically(const std::string& path, const std::string& data) {
  util::write_output_file(path, data, "");
}

void sort_by_index(std::vector<Record>& records) {
  std::stable_sort(records.begin(), records.end(), [](const Record& a, const Record& b) {
    return record_index(a) < record_index(b);
  });
}

std::string results_csv(const std::vector<Record>& records) {
  std::vector<std::string> values;
  std::vector<std::string> metrics;
  for (const Record& record : records) {
    if (record.contains("values") && record["values"].is_object()) {
      for (const auto& [key, value] : record["values"].items()) {
        if (key != "kernel" && key != "config") add_column(values, key);
      }
    }
    if (record.contains("metrics") && record["metrics"].is_object()) {
      for (const auto& [key, value] : record["metrics"].items()) add_column(metrics, key);
    }
  }
  std::vector<std::string> header = {"index", "kernel", "config"};
  header.insert(header.end(), values.begin(), values.end());
  header.insert(header.end(), metrics.begin(), metrics.end());
  for (const char* tail : {"status", "error", "kernel_hash", "config_hash"}) header.push_back(tail);
  std::string out;
  for (std::size_t i = 0; i < header.size(); ++i) {
    out += (i ? "," : "") + util::csv_field(header[i]);
  }
  out += "\r\n";
  const Record null_value;
  const auto field = [&](const Record& object, const std::string& key) -> const Record& {
    return object.is_object() && object.contains(key) ? object[key] : null_value;
  };
  for (const Record& record : records) {
    std::vector<std::string> row = {csv_value(record["index"])};
    const Record& varied = field(record, "values");
    row.push_back(csv_value(field(varied, "kernel").is_null() ? field(record, "kernel")
                                                              : field(varied, "kernel")));
    row.push_back(csv_value(field(record, "config")));
    for (const auto& key : values) row.push_back(csv_value(field(varied, key)));
    const Record& metric_values = field(record, "metrics");
    for (const auto& key : metrics) row.push_back(csv_value(field(metric_values, key)));
    for (const char* tail : {"status", "error", "kernel_hash", "config_hash"}) {
      row.push_back(csv_value(field(record, tail)));
    }
    for (std::size_t i = 0; i < row.size(); ++i) out += (i ? "," : "") + row[i];
    out += "\r\n";
  }
  return out;
}

MergedResults merge_results(const std::vector<std::string>& paths) {
  std::map<std::size_t, std::pair<Record, std::string>> by_index;
  MergedResults merged;
  for (const std::string& path : paths) {
    ResultsFile file = read_results(path);
    for (Record& record : file.records) {
      const std::size_t index = record_index(record);
      const auto [it, inserted] = by_index.try_emplace(index, std::move(record), path);
      if (inserted) continue;
      if (it->second.first != record) {
        throw InputError(path, fmt::format("point {} differs from the same point in {}: the "
                                           "files come from different sweeps or builds",
                                           index, it->second.second));
      }
      ++merged.duplicates;
    }
  }
  std::size_t expected = 0;
  for (auto& [index, entry] : by_index) {
    for (; expected < index; ++expected) merged.missing.push_back(expected);
    expected = index + 1;
    merged.records.push_back(std::move(entry.first));
  }
  return merged;
}

}  // namespace trnsim::sweep
