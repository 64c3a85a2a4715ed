// A min-priority queue for keys that mostly arrive in non-decreasing order: the in-flight
// instructions of a core by retirement time (each engine's results become visible in its own
// order, so arrivals are nearly sorted). Keys not below the newest key of the sorted run go to a
// FIFO in O(1); the others to a binary heap. top()/pop() take the smaller of the two fronts, so
// the pop order is exactly that of a std::priority_queue with std::greater (keys must be totally
// ordered; equal keys may pop in either order, so give them a tie-breaker such as an id).
// Leaves out: anything but push, top and pop.
#pragma once

#include <deque>
#include <functional>
#include <queue>
#include <vector>

namespace trnsim::core {

template <typename Key>
class RetireQueue {
 public:
  bool empty() const { return sorted_.empty() && heap_.empty(); }
  std::size_t size() const { return sorted_.size() + heap_.size(); }

  void push(const Key& key) {
    if (sorted_.empty() || !(key < sorted_.back())) {
      sorted_.push_back(key);
    } else {
      heap_.push(key);
    }
  }
  /// The smallest key. Requires !empty().
  const Key& top() const { return from_heap() ? heap_.top() : sorted_.front(); }
  /// Removes the smallest key. Requires !empty().
  void pop() {
    if (from_heap()) {
      heap_.pop();
    } else {
      sorted_.pop_front();
    }
  }

 private:
  bool from_heap() const {
    return sorted_.empty() || (!heap_.empty() && heap_.top() < sorted_.front());
  }

  std::deque<Key> sorted_;  ///< non-decreasing
  std::priority_queue<Key, std::vector<Key>, std::greater<>> heap_;
};

}  // namespace trnsim::core
