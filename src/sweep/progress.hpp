// Progress of a batch of runs on stderr: a redrawn bar on a terminal (done/total, rate, ETA,
// failures), plain timestamp-free lines otherwise (logs of batch jobs), or nothing.
// Leaves out the results themselves.
#pragma once

#include <chrono>
#include <cstddef>
#include <ostream>
#include <string>

namespace trnsim::sweep {

enum class ProgressStyle { kBar, kLines, kQuiet };

/// kBar when stderr is a terminal, else kLines.
ProgressStyle default_progress_style();

class Progress {
 public:
  /// `already_done` points count as done but not toward the rate (e.g. resumed ones).
  Progress(std::string label, std::size_t total, std::size_t already_done, ProgressStyle style,
           std::ostream& out);

  /// One point finished; `failed` counts it among the failures.
  void advance(bool failed);
  /// Redraws when due (bar: 10x/s; lines: every 10 s). Cheap to call often.
  void refresh();
  /// The final state, always shown (except kQuiet), ending the bar's line.
  void finish();

  /// "1:02:03", "2:03" or "0:07".
  static std::string format_duration(double seconds);

 private:
  void draw(bool final_draw);

  std::string label_;
  std::size_t total_;
  std::size_t done_;
  std::size_t done_here_ = 0;
  std::size_t failed_ = 0;
  ProgressStyle style_;
  std::ostream& out_;
  std::chrono::steady_clock::time_point started_;
  std::chrono::steady_clock::time_point last_draw_;
  std::size_t last_drawn_done_ = static_cast<std::size_t>(-1);
};

}  // namespace trnsim::sweep
