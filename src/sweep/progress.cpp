#include "sweep/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>

namespace trnsim::sweep {

using Clock = std::chrono::steady_clock;

ProgressStyle default_progress_style() {
  return ::isatty(STDERR_FILENO) ? ProgressStyle::kBar : ProgressStyle::kLines;
}

Progress::Progress(std::string label, std::size_t total, std::size_t already_done,
                   ProgressStyle style, std::ostream& out)
    : label_(std::move(label)),
      total_(total),
      done_(already_done),
      style_(style),
      out_(out),
      started_(Clock::now()),
      last_draw_(started_) {
  if (style_ == ProgressStyle::kLines) draw(false);
}

void Progress::advance(bool failed) {
  ++done_;
  ++done_here_;
  if (failed) ++failed_;
  refresh();
}

void Progress::refresh() {
  if (style_ == ProgressStyle::kQuiet) return;
  const auto since = Clock::now() - last_draw_;
  const auto period = style_ == ProgressStyle::kBar ? std::chrono::milliseconds(100)
                                                    : std::chrono::milliseconds(10'000);
  if (since >= period || (style_ == ProgressStyle::kBar && last_drawn_done_ != done_ &&
                          since >= std::chrono::milliseconds(30))) {
    draw(false);
  }
}

void Progress::finish() {
  if (style_ == ProgressStyle::kQuiet) return;
  draw(true);
  if (style_ == ProgressStyle::kBar) out_ << "\n";
  out_.flush();
}

std::string Progress::format_duration(double seconds) {
  const auto total = static_cast<long long>(std::llround(std::max(0.0, seconds)));
  const long long hours = total / 3600;
  const long long minutes = (total / 60) % 60;
  const long long secs = total % 60;
  return hours > 0 ? fmt::format("{}:{:02}:{:02}", hours, minutes, secs)
                   : fmt::format("{}:{:02}", minutes, secs);
}

void Progress::draw(bool final_draw) {
  const auto now = Clock::now();
  last_draw_ = now;
  last_drawn_done_ = done_;
  const double elapsed = std::chrono::duration<double>(now - started_).count();
  const double rate = elapsed > 0 ? static_cast<double>(done_here_) / elapsed : 0.0;
  const std::size_t remaining = total_ > done_ ? total_ - done_ : 0;
  std::string eta = "--:--";
  if (final_draw) {
    eta = "done in " + format_duration(elapsed);
  } else if (rate > 0) {
    eta = "ETA " + format_duration(static_cast<double>(remaining) / rate);
  } else {
    eta = "ETA --:--";
  }
  const std::string failed = failed_ > 0 ? fmt::format(", {} failed", failed_) : std::string();
  const double fraction = total_ > 0 ? static_cast<double>(done_) / total_ : 1.0;
  if (style_ == ProgressStyle::kBar) {
    constexpr std::size_t kWidth = 28;
    const auto filled = static_cast<std::size_t>(fraction * kWidth);
    out_ << fmt::format("\r{} [{}{}] {}/{} {:5.1f}/s {}{}\x1b[K", label_, std::string(filled, '#'),
                        std::string(kWidth - filled, '.'), done_, total_, rate, eta, failed);
  } else {
    out_ << fmt::format("{}: {}/{} points ({:.0f}%), {:.2f} points/s, {}{}\n", label_, done_,
                        total_, 100.0 * fraction, rate, eta, failed);
  }
  out_.flush();
}

}  // namespace trnsim::sweep
