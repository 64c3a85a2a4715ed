// The progress options every long-running command takes: --progress auto|bar|lines|none and
// --quiet. Progress goes to stderr only (util/progress.hpp).
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <string>

#include "util/progress.hpp"

namespace trnsim::cli {

struct ProgressChoice {
  std::string style = "auto";
  bool quiet = false;

  util::ProgressStyle resolve() const { return util::progress_style(style, quiet); }
  /// Options for a command whose progress should stay silent when it is short: the bar appears
  /// after a second, the first line after one line interval.
  util::Progress::Options delayed(std::string unit) const {
    util::Progress::Options options;
    options.unit = std::move(unit);
    options.silent_for = resolve() == util::ProgressStyle::kLines
                             ? std::chrono::milliseconds(static_cast<long long>(
                                   util::progress_line_interval_seconds() * 1000))
                             : std::chrono::milliseconds(1000);
    return options;
  }
};

inline void add_progress_options(CLI::App* command, ProgressChoice& choice) {
  command
      ->add_option("--progress", choice.style,
                   "Progress on stderr: auto (a bar on a terminal, else a line every 10 s), "
                   "bar, lines or none")
      ->check(CLI::IsMember({"auto", "bar", "lines", "none"}))
      ->capture_default_str();
  command->add_flag("-q,--quiet", choice.quiet, "No progress output (same as --progress none)");
}

}  // namespace trnsim::cli
