#include "util/output_target.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "util/error.hpp"

namespace trnsim::util {

namespace fs = std::filesystem;

OutputTarget::OutputTarget(std::string path, std::string option)
    : path_(std::move(path)), option_(std::move(option)), final_(path_) {
  if (path_.empty()) throw InputError(where(), "expected a file name, found an empty path");
  struct stat link_info {};
  const bool is_link = ::lstat(path_.c_str(), &link_info) == 0 && S_ISLNK(link_info.st_mode);
  struct stat info {};
  const bool exists = ::stat(path_.c_str(), &info) == 0;
  if (exists && S_ISDIR(info.st_mode)) {
    throw InputError(where(), "expected a file to write, found a directory");
  }
  if (exists && !S_ISREG(info.st_mode)) {
    // A device, FIFO or socket: written in place, never replaced.
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ < 0) fail("cannot open it for writing", errno);
    return;
  }
  if (is_link) {
    if (!exists) {
      // A dangling link: create its target through it, in place, keeping the link.
      fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
      if (fd_ < 0) fail("cannot create the target of the symbolic link", errno);
      return;
    }
    char resolved[PATH_MAX];
    if (::realpath(path_.c_str(), resolved) == nullptr) fail("cannot resolve the link", errno);
    final_ = resolved;  // the link's target is replaced, the link is kept
  }
  const fs::path parent = fs::path(final_).parent_path();
  if (!parent.empty()) {
    std::error_code error;
    fs::create_directories(parent, error);
    if (error) {
      throw InputError(where(),
                       "cannot create the directory '" + parent.string() + "': " + error.message());
    }
  }
  temporary_ = final_ + ".tmp";
  fd_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd_ < 0) {
    const int error = errno;
    temporary_.clear();
    fail("cannot create '" + final_ + ".tmp'", error);
  }
  if (exists) ::fchmod(fd_, info.st_mode & 07777);  // a replaced file keeps its permissions
}

OutputTarget::~OutputTarget() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !temporary_.empty()) ::unlink(temporary_.c_str());
}

std::string OutputTarget::where() const {
  return option_.empty() ? path_ : option_ + " " + path_;
}

void OutputTarget::fail(const std::string& what, int error) const {
  throw InputError(where(), what + ": " + std::strerror(error));
}

void OutputTarget::write(std::string_view data) {
  std::size_t written = 0;
  while (written < data.size()) {
    const ssize_t n = ::write(fd_, data.data() + written, data.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("writing failed", errno);
    }
    written += static_cast<std::size_t>(n);
  }
}

void OutputTarget::commit(bool durable) {
  if (durable && !temporary_.empty() && ::fsync(fd_) != 0) fail("writing failed", errno);
  const int closed = ::close(fd_);
  fd_ = -1;
  if (closed != 0) fail("writing failed", errno);
  if (temporary_.empty()) {
    committed_ = true;
    return;
  }
  if (::rename(temporary_.c_str(), final_.c_str()) != 0) {
    fail("cannot rename '" + temporary_ + "' to '" + final_ + "'", errno);
  }
  committed_ = true;
  if (!durable) return;
  // The rename is durable once the directory is.
  const fs::path parent = fs::path(final_).parent_path();
  const int dir = ::open(parent.empty() ? "." : parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

void write_output_file(const std::string& path, std::string_view text, const std::string& option) {
  OutputTarget target(path, option);
  target.write(text);
  target.commit(/*durable=*/true);
}

}  // namespace trnsim::util
