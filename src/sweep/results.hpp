// Result files: JSON Lines, one object per sweep point (layout in docs/sweeps.md). An append is
// one whole line written with a single write(2) and fsync'd, so a killed run leaves at most a
// partial last line; readers ignore it and the next appender cuts it off. Final files are sorted
// by point index and replaced atomically. Also CSV export and merging of shard files.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace trnsim::sweep {

using Record = nlohmann::ordered_json;

struct ResultsFile {
  std::vector<Record> records;     ///< complete lines, in file order
  std::size_t complete_bytes = 0;  ///< bytes up to and including the last '\n'
  std::size_t partial_bytes = 0;   ///< an unterminated last line (a killed write), ignored
};

/// Reads a results file. A complete line that is not a JSON object with an integer "index" is
/// an InputError naming the file and line.
ResultsFile read_results(const std::string& path);

/// Appends records to a results file, durably, one line each.
class ResultsAppender {
 public:
  /// Creates the file or opens it for appending after cutting it to `keep_bytes`
  /// (ResultsFile::complete_bytes, dropping a partial last line; 0 starts afresh). Creates
  /// missing parent directories.
  ResultsAppender(const std::string& path, std::size_t keep_bytes);
  ~ResultsAppender();
  ResultsAppender(const ResultsAppender&) = delete;
  ResultsAppender& operator=(const ResultsAppender&) = delete;

  /// One write(2) of the record's line, then fsync.
  void append(const Record& record);

 private:
  std::string path_;
  int fd_ = -1;
  bool regular_ = true;  ///< false for a device or FIFO: no truncation, no fsync
};

/// Replaces `path` with `records`, one per line (write_file_atomically).
void write_results(const std::string& path, const std::vector<Record>& records);

/// Replaces `path` with `text` by the output rule of util::OutputTarget: a regular file (or a new
/// one) through a temporary file beside it, fsync'd and renamed over it; a device, FIFO or
/// symlink target in place.
void write_file_atomically(const std::string& path, const std::string& text);

/// Stable sort by "index".
void sort_by_index(std::vector<Record>& records);

/// CSV (RFC 4180) with a header: index, kernel, config, the varied values, the metrics, status,
/// error, kernel_hash, config_hash. Columns are the union over records, in first-seen order.
std::string results_csv(const std::vector<Record>& records);

struct MergedResults {
  std::vector<Record> records;       ///< one per index, sorted
  std::size_t duplicates = 0;        ///< identical records seen in more than one place
  std::vector<std::size_t> missing;  ///< indices absent below the largest present
};

/// Joins result files (e.g. the shards of a sweep). The same index twice with different content
/// is an InputError naming both files.
MergedResults merge_results(const std::vector<std::string>& paths);

}  // namespace trnsim::sweep
