#include "util/temporary_directory.hpp"

#include <fmt/format.h>
#include <stdlib.h>

#include <cerrno>
#include <cstring>

#include "util/error.hpp"

namespace trnsim::util {

namespace fs = std::filesystem;

TemporaryDirectory::TemporaryDirectory(const std::string& prefix, const std::string& purpose) {
  std::error_code error;
  const fs::path base = fs::temp_directory_path(error);
  std::string pattern = ((error ? fs::path("/tmp") : base) / (prefix + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw InputError("", fmt::format("cannot create a temporary directory {} ({}: {}); set TMPDIR "
                                     "to a writable directory",
                                     purpose, pattern, std::strerror(errno)));
  }
  path_ = pattern;
}

TemporaryDirectory::~TemporaryDirectory() {
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

}  // namespace trnsim::util
