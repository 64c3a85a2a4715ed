// A private temporary directory (mode 0700) under $TMPDIR (else /tmp), removed with everything in
// it when the object goes out of scope.
#pragma once

#include <filesystem>
#include <string>

namespace trnsim::util {

class TemporaryDirectory {
 public:
  /// Creates "<temp>/<prefix>-XXXXXX". `purpose` completes the message of the InputError thrown
  /// when it cannot be created ("for the NKI front end's output").
  TemporaryDirectory(const std::string& prefix, const std::string& purpose);
  ~TemporaryDirectory();
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace trnsim::util
