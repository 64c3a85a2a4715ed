// Progress of a long command on stderr: a redrawn bar on a terminal (done/total, rate, ETA,
// failures), plain timestamp-free lines every few seconds otherwise (logs of batch jobs), or
// nothing. Used for batches of runs (points) and for one simulation (instructions).
// Leaves out the results themselves: nothing here writes to stdout.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>

namespace trnsim::util {

enum class ProgressStyle { kBar, kLines, kQuiet };

/// kBar when stderr is a terminal, else kLines.
ProgressStyle default_progress_style();

/// The style a `--progress auto|bar|lines|none` choice names ("auto": default_progress_style()).
/// `quiet` (--quiet) wins over the choice.
ProgressStyle progress_style(const std::string& choice, bool quiet = false);

/// Seconds between two lines in kLines style: 10, or the environment variable
/// TRNSIM_PROGRESS_INTERVAL (seconds, > 0) when set.
double progress_line_interval_seconds();

class Progress {
 public:
  struct Options {
    std::string unit = "points";  ///< what is counted, plural ("points", "instructions")
    /// Nothing is drawn before this much time has passed since construction, and a progress
    /// that never drew stays silent at finish(): short commands print nothing.
    std::chrono::milliseconds silent_for{0};
  };

  /// `total` 0: unknown (no bar fraction or ETA until set_total()). `already_done` items count as
  /// done but not toward the rate (e.g. resumed sweep points).
  Progress(std::string label, std::uint64_t total, std::uint64_t already_done, ProgressStyle style,
           std::ostream& out, Options options);
  Progress(std::string label, std::uint64_t total, std::uint64_t already_done, ProgressStyle style,
           std::ostream& out)
      : Progress(std::move(label), total, already_done, style, out, Options{}) {}

  /// One item finished; `failed` counts it among the failures.
  void advance(bool failed);
  /// `done` items (this run's, plus already_done) are finished; redraws when due.
  void set_done(std::uint64_t done);
  void set_total(std::uint64_t total) { total_ = total; }
  /// Redraws when due (bar: 10x/s; lines: every progress_line_interval_seconds()). Cheap to
  /// call often.
  void refresh();
  /// Erases a drawn bar (before the caller writes a line of its own to the same terminal); the
  /// next refresh draws it again.
  void clear();
  /// The final state, ending the bar's line; shown unless kQuiet or still silent.
  void finish();

  /// "1:02:03", "2:03" or "0:07".
  static std::string format_duration(double seconds);
  /// 1234 -> "1234", 1.5e6 -> "1.50 M".
  static std::string format_count(double count);

 private:
  void draw(bool final_draw);

  std::string label_;
  std::uint64_t total_;
  std::uint64_t done_;
  std::uint64_t already_done_;
  std::uint64_t failed_ = 0;
  ProgressStyle style_;
  std::ostream& out_;
  Options options_;
  std::chrono::steady_clock::duration line_interval_;
  std::chrono::steady_clock::time_point started_;
  std::chrono::steady_clock::time_point last_draw_;
  std::uint64_t last_drawn_done_ = ~std::uint64_t{0};
  bool drawn_ = false;
};

}  // namespace trnsim::util
