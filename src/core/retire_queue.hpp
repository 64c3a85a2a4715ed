// A min-priority queue for keys that mostly arrive in non-decreasing order: the in-flight
// instructions of a core by retirement time (each engine's results become visible in its own
// order, so arrivals are nearly sorted). Keys not below the newest key of the sorted run go to a
// FIFO in O(1) (a ring buffer: no allocation once it has grown to the peak size); the others to a
// binary heap. top()/pop() take the smaller of the two fronts, so the pop order is exactly that of
// a std::priority_queue with std::greater (keys must be totally ordered; equal keys may pop in
// either order, so give them a tie-breaker such as an id).
// Leaves out: anything but push, top and pop.
#pragma once

#include <cstddef>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

namespace trnsim::core {

template <typename Key>
class RetireQueue {
 public:
  bool empty() const { return sorted_size_ == 0 && heap_.empty(); }
  std::size_t size() const { return sorted_size_ + heap_.size(); }

  void push(const Key& key) {
    if (sorted_size_ == 0 || !(key < sorted_back())) {
      if (sorted_size_ == sorted_.size()) grow();
      sorted_[(sorted_head_ + sorted_size_) & sorted_mask_] = key;
      ++sorted_size_;
    } else {
      heap_.push(key);
    }
  }
  /// The smallest key. Requires !empty().
  const Key& top() const { return from_heap() ? heap_.top() : sorted_[sorted_head_]; }
  /// If the smallest key is not above `limit` (compared by `first`), removes it into `out`.
  template <typename Limit>
  bool pop_first_not_after(const Limit& limit, Key& out) {
    if (sorted_size_ == 0 && heap_.empty()) return false;
    if (from_heap()) {
      if (limit < heap_.top().first) return false;
      out = heap_.top();
      heap_.pop();
    } else {
      const Key& front = sorted_[sorted_head_];
      if (limit < front.first) return false;
      out = front;
      sorted_head_ = (sorted_head_ + 1) & sorted_mask_;
      --sorted_size_;
    }
    return true;
  }
  /// Removes the smallest key. Requires !empty().
  void pop() {
    if (from_heap()) {
      heap_.pop();
    } else {
      sorted_head_ = (sorted_head_ + 1) & sorted_mask_;
      --sorted_size_;
    }
  }

 private:
  bool from_heap() const {
    return sorted_size_ == 0 || (!heap_.empty() && heap_.top() < sorted_[sorted_head_]);
  }
  const Key& sorted_back() const {
    return sorted_[(sorted_head_ + sorted_size_ - 1) & sorted_mask_];
  }
  void grow() {
    const std::size_t capacity = sorted_.empty() ? 64 : sorted_.size() * 2;
    std::vector<Key> grown(capacity);
    for (std::size_t i = 0; i < sorted_size_; ++i) {
      grown[i] = std::move(sorted_[(sorted_head_ + i) & sorted_mask_]);
    }
    sorted_ = std::move(grown);
    sorted_head_ = 0;
    sorted_mask_ = capacity - 1;
  }

  /// Non-decreasing: a ring of sorted_size_ keys from sorted_head_ (power-of-two size).
  std::vector<Key> sorted_;
  std::size_t sorted_head_ = 0;
  std::size_t sorted_size_ = 0;
  std::size_t sorted_mask_ = 0;
  std::priority_queue<Key, std::vector<Key>, std::greater<>> heap_;
};

}  // namespace trnsim::core
