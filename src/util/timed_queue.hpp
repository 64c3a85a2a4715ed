// Events in time order for the event-driven models (the packet and flow memory systems, the
// collective cores): a min-heap on (time, push order), so events of equal time come out in the
// order they were pushed whatever the heap's internals, and runs are deterministic.
#pragma once

#include <cstdint>
#include <queue>
#include <utility>
#include <vector>

namespace trnsim::util {

template <class T>
class TimedQueue {
 public:
  struct Entry {
    double time_ns = 0;
    std::uint64_t order = 0;  ///< push order: the tie-break between equal times
    T value{};
  };

  void push(double time_ns, T value) {
    heap_.push(Entry{time_ns, next_order_++, std::move(value)});
  }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  /// The earliest entry (requires !empty()).
  const Entry& top() const { return heap_.top(); }
  void pop() { heap_.pop(); }

 private:
  struct Later {
    bool operator()(const Entry& a, const Entry& b) const {
      return a.time_ns > b.time_ns || (a.time_ns == b.time_ns && a.order > b.order);
    }
  };
  std::priority_queue<Entry, std::vector<Entry>, Later> heap_;
  std::uint64_t next_order_ = 0;
};

}  // namespace trnsim::util
