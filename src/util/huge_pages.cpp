#include "util/huge_pages.hpp"

#include <unistd.h>

#include <cstdlib>
#include <string_view>

namespace trnsim::util {

std::optional<std::string> huge_page_tunables(const char* glibc_tunables,
                                              const char* huge_pages_setting,
                                              const char* ld_preload) {
#ifdef __GLIBC__
  if (glibc_tunables != nullptr) return std::nullopt;
  if (huge_pages_setting != nullptr && std::string_view(huge_pages_setting) == "0") {
    return std::nullopt;
  }
  if (ld_preload != nullptr &&
      std::string_view(ld_preload).find("vgpreload") != std::string_view::npos) {
    return std::nullopt;
  }
  // The heap in huge pages, growing in 64 MiB steps, and every allocation below 32 MiB in it
  // (not in a mapping of its own, which would rarely hold an aligned huge page).
  return std::string(
      "glibc.malloc.hugetlb=1:glibc.malloc.top_pad=67108864:glibc.malloc.mmap_threshold=33554432");
#else
  (void)glibc_tunables;
  (void)huge_pages_setting;
  (void)ld_preload;
  return std::nullopt;
#endif
}

void prefer_huge_pages(char** argv) {
  const std::optional<std::string> tunables = huge_page_tunables(
      std::getenv("GLIBC_TUNABLES"), std::getenv("TRNSIM_HUGE_PAGES"), std::getenv("LD_PRELOAD"));
  if (!tunables || argv == nullptr || argv[0] == nullptr) return;
  if (::setenv("GLIBC_TUNABLES", tunables->c_str(), 1) != 0) return;
  ::execv("/proc/self/exe", argv);
  // Not executed again: go on as we are, without leaving the variable to child processes.
  ::unsetenv("GLIBC_TUNABLES");
}

}  // namespace trnsim::util
