#include "core/core_stats.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>
#include <utility>

namespace trnsim::core {

namespace {
constexpr ConcurrentUnitTime::Ticks kEndOfTime = std::numeric_limits<std::uint64_t>::max();
}  // namespace

ConcurrentUnitTime::ConcurrentUnitTime(EngineStats& stats, double fs_per_tick)
    : stats_(stats), fs_per_tick_(fs_per_tick) {}

void ConcurrentUnitTime::issued(std::size_t lane, std::uint64_t id, Ticks at) {
  open_by_lane_[lane].push_back({id, at, false});
  ++open_items_;
}

void ConcurrentUnitTime::waited(Ticks begin, Ticks end, kernel::Engine producer, Ticks now) {
  begin = std::max(begin, settled_);  // never earlier: its item was open at the last settle
  if (end <= begin) return;
  waits_.push_back({begin, end, static_cast<std::uint8_t>(producer)});
  settle_if_due(now);
}

void ConcurrentUnitTime::completed(std::uint64_t id, Ticks begin, Ticks end, Ticks now) {
  for (std::deque<Open>& lane : open_by_lane_) {
    // A lane's ids increase from front to back.
    const auto found =
        std::lower_bound(lane.begin(), lane.end(), id,
                         [](const Open& open, std::uint64_t key) { return open.id < key; });
    if (found == lane.end() || found->id != id) continue;
    found->completed = true;
    --open_items_;
    while (!lane.empty() && lane.front().completed) lane.pop_front();
    break;
  }
  begin = std::max(begin, settled_);
  if (end > begin) {
    // Merge with the intervals it touches: busy_ stays a set of disjoint intervals.
    auto next = busy_.upper_bound(begin);
    if (next != busy_.begin()) {
      const auto previous = std::prev(next);
      if (previous->second >= begin) {
        begin = previous->first;
        end = std::max(end, previous->second);
        busy_.erase(previous);
      }
    }
    while (next != busy_.end() && next->first <= end) {
      end = std::max(end, next->second);
      next = busy_.erase(next);
    }
    busy_.emplace_hint(next, begin, end);
  }
  if (all_issued_ && open_items_ == 0) {
    settle(kEndOfTime);
  } else {
    settle_if_due(now);
  }
}

void ConcurrentUnitTime::all_issued() {
  all_issued_ = true;
  if (open_items_ == 0) settle(kEndOfTime);
}

ConcurrentUnitTime::Ticks ConcurrentUnitTime::horizon(Ticks now) const {
  Ticks horizon = all_issued_ ? kEndOfTime : now;
  for (const std::deque<Open>& lane : open_by_lane_) {
    // Completed items leave the front at once, so the front is open and issued first.
    if (!lane.empty()) horizon = std::min(horizon, lane.front().at);
  }
  return horizon;
}

void ConcurrentUnitTime::settle_if_due(Ticks now) {
  if (retained_intervals() < settle_at_) return;
  settle(horizon(now));
  // Settling again only after the kept intervals doubled keeps the cost per interval constant.
  settle_at_ = std::max(kMinimumBatch, 2 * retained_intervals());
}

void ConcurrentUnitTime::settle(Ticks horizon) {
  if (horizon <= settled_) return;
  std::sort(waits_.begin(), waits_.end(),
            [](const Wait& a, const Wait& b) { return a.begin < b.begin; });
  // Waiting items at the current instant, by (end, producer): the first to end is the top.
  using Waiting = std::pair<Ticks, std::uint8_t>;
  std::priority_queue<Waiting, std::vector<Waiting>, std::greater<>> waiting;
  std::size_t next_wait = 0;
  auto busy = busy_.begin();
  Ticks now = settled_;
  // Sweep [settled_, horizon) from one change (a wait or busy interval beginning or ending) to
  // the next; between two changes the state is constant.
  while (now < horizon) {
    for (; next_wait < waits_.size() && waits_[next_wait].begin <= now; ++next_wait) {
      if (waits_[next_wait].end > now) {
        waiting.push({waits_[next_wait].end, waits_[next_wait].producer});
      }
    }
    while (!waiting.empty() && waiting.top().first <= now) waiting.pop();
    while (busy != busy_.end() && busy->second <= now) ++busy;
    const bool is_busy = busy != busy_.end() && busy->first <= now;
    Ticks next_change = horizon;
    if (next_wait < waits_.size()) next_change = std::min(next_change, waits_[next_wait].begin);
    if (!waiting.empty()) next_change = std::min(next_change, waiting.top().first);
    if (busy != busy_.end())
      next_change = std::min(next_change, is_busy ? busy->second : busy->first);
    if (is_busy) {
      active_ticks_ += next_change - now;
    } else if (!waiting.empty()) {
      wait_ticks_[waiting.top().second] += next_change - now;
    }
    now = next_change;
  }
  std::erase_if(waits_, [horizon](const Wait& wait) { return wait.end <= horizon; });
  while (!busy_.empty() && busy_.begin()->second <= horizon) busy_.erase(busy_.begin());
  settled_ = horizon;
  publish();
}

void ConcurrentUnitTime::publish() {
  // fs -> ns as the timing model converts times, so equal tick counts give equal ns.
  const auto to_ns = [this](Ticks ticks) {
    return static_cast<double>(ticks) * fs_per_tick_ * 1e-15 * 1e9;
  };
  stats_.active_ns = to_ns(active_ticks_);
  for (std::size_t producer = 0; producer < wait_ticks_.size(); ++producer) {
    stats_.wait_ns_by_producer[producer] = to_ns(wait_ticks_[producer]);
  }
}

}  // namespace trnsim::core
