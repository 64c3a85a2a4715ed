#include "util/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace trnsim::util {

using Clock = std::chrono::steady_clock;

ProgressStyle default_progress_style() {
  return ::isatty(STDERR_FILENO) ? ProgressStyle::kBar : ProgressStyle::kLines;
}

ProgressStyle progress_style(const std::string& choice, bool quiet) {
  if (quiet || choice == "none") return ProgressStyle::kQuiet;
  if (choice == "bar") return ProgressStyle::kBar;
  if (choice == "lines") return ProgressStyle::kLines;
  return default_progress_style();
}

double progress_line_interval_seconds() {
  if (const char* text = std::getenv("TRNSIM_PROGRESS_INTERVAL"); text != nullptr) {
    char* end = nullptr;
    const double seconds = std::strtod(text, &end);
    if (end != text && *end == '\0' && std::isfinite(seconds) && seconds > 0) return seconds;
  }
  return 10.0;
}

Progress::Progress(std::string label, std::uint64_t total, std::uint64_t already_done,
                   ProgressStyle style, std::ostream& out, Options options)
    : label_(std::move(label)),
      total_(total),
      done_(already_done),
      already_done_(already_done),
      style_(style),
      out_(out),
      options_(std::move(options)),
      line_interval_(std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(progress_line_interval_seconds()))),
      started_(Clock::now()),
      last_draw_(started_) {
  if (style_ == ProgressStyle::kLines && options_.silent_for.count() == 0) draw(false);
}

void Progress::advance(bool failed) {
  ++done_;
  if (failed) ++failed_;
  refresh();
}

void Progress::set_done(std::uint64_t done) {
  done_ = done;
  refresh();
}

void Progress::refresh() {
  if (style_ == ProgressStyle::kQuiet) return;
  const auto now = Clock::now();
  if (!drawn_ && now - started_ < options_.silent_for) return;
  const auto since = now - last_draw_;
  if (style_ == ProgressStyle::kBar) {
    if (!drawn_ || since >= std::chrono::milliseconds(100) ||
        (last_drawn_done_ != done_ && since >= std::chrono::milliseconds(30))) {
      draw(false);
    }
  } else if (since >= line_interval_) {
    draw(false);
  }
}

void Progress::clear() {
  if (style_ != ProgressStyle::kBar || !drawn_) return;
  out_ << "\r\x1b[K";
  out_.flush();
  last_drawn_done_ = ~std::uint64_t{0};
}

void Progress::finish() {
  if (style_ == ProgressStyle::kQuiet || (!drawn_ && options_.silent_for.count() > 0)) return;
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

std::string Progress::format_count(double count) {
  if (count >= 1e9) return fmt::format("{:.2f} G", count / 1e9);
  if (count >= 1e6) return fmt::format("{:.2f} M", count / 1e6);
  if (count >= 1e4) return fmt::format("{:.1f} k", count / 1e3);
  if (count >= 10) return fmt::format("{:.0f}", count);
  return fmt::format("{:.2f}", count);
}

void Progress::draw(bool final_draw) {
  const auto now = Clock::now();
  drawn_ = true;
  last_draw_ = now;
  last_drawn_done_ = done_;
  const double elapsed = std::chrono::duration<double>(now - started_).count();
  const double rate = elapsed > 0 ? static_cast<double>(done_ - already_done_) / elapsed : 0.0;
  const bool known_total = total_ > 0 && total_ >= done_;
  std::string eta;
  if (final_draw) {
    eta = "done in " + format_duration(elapsed);
  } else if (known_total && rate > 0) {
    eta = "ETA " + format_duration(static_cast<double>(total_ - done_) / rate);
  } else if (known_total) {
    eta = "ETA --:--";
  } else {
    eta = "total not known yet";
  }
  const std::string failed = failed_ > 0 ? fmt::format(", {} failed", failed_) : std::string();
  const double fraction =
      final_draw ? 1.0
                 : (known_total ? static_cast<double>(done_) / static_cast<double>(total_) : 0.0);
  const std::string count = known_total || final_draw
                                ? fmt::format("{}/{}", done_, final_draw ? done_ : total_)
                                : fmt::format("{}", done_);
  const std::string rate_text = format_count(rate) + " " + options_.unit + "/s";
  if (style_ == ProgressStyle::kBar) {
    constexpr std::size_t kWidth = 28;
    const auto filled = static_cast<std::size_t>(fraction * kWidth);
    out_ << fmt::format("\r{} [{}{}] {} {}, {}, {}{}\x1b[K", label_, std::string(filled, '#'),
                        std::string(kWidth - filled, '.'), count, options_.unit, rate_text, eta,
                        failed);
  } else {
    const std::string percent =
        known_total || final_draw ? fmt::format(" ({:.0f}%)", 100.0 * fraction) : std::string();
    out_ << fmt::format("{}: {} {}{}, {}, {}{}\n", label_, count, options_.unit, percent, rate_text,
                        eta, failed);
  }
  out_.flush();
}

}  // namespace trnsim::util
