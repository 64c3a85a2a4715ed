// Where a result file goes, and the one rule for writing it (docs/outputs.md, "Where results are
// written"). A path that names a regular file, or nothing yet, is written to a temporary file in
// the same directory and renamed over it by commit(), so readers never see a half-written file;
// missing parent directories are created. Anything else that exists (a device such as /dev/null
// or /dev/stdout, a FIFO, a socket) is opened and written in place, never replaced. A symlink is
// followed: its target is treated by the same rule, and the link itself is kept. A directory is
// an error. Every write error is an InputError naming the option and the path; an uncommitted
// target removes its temporary file on destruction, on every path.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace trnsim::util {

class OutputTarget {
 public:
  /// Opens `path` for writing. `option` names it in messages ("--trace", "-o"); empty for none.
  /// Throws InputError when it cannot be opened (a directory, no permission, ...).
  OutputTarget(std::string path, std::string option);
  ~OutputTarget();
  OutputTarget(const OutputTarget&) = delete;
  OutputTarget& operator=(const OutputTarget&) = delete;

  /// Appends `data`. Throws InputError on a write error.
  void write(std::string_view data);
  /// Completes the file: flushes (with `durable`, fsyncs the file and, after the rename, its
  /// directory), closes, and renames the temporary file over the path. Throws InputError.
  void commit(bool durable = false);

  const std::string& path() const { return path_; }
  /// "--trace PATH" (or PATH): the location in messages.
  std::string where() const;
  /// True when written in place (not a regular file): there is no temporary file.
  bool in_place() const { return temporary_.empty(); }

 private:
  [[noreturn]] void fail(const std::string& what, int error) const;

  std::string path_;       ///< as given
  std::string option_;     ///< "--trace", or empty
  std::string final_;      ///< the file renamed over (the symlink's target for a link)
  std::string temporary_;  ///< the temporary file, empty when writing in place
  int fd_ = -1;
  bool committed_ = false;
};

/// Writes `text` to `path` by the rule above (durably: fsync before and after the rename).
void write_output_file(const std::string& path, std::string_view text, const std::string& option);

}  // namespace trnsim::util
