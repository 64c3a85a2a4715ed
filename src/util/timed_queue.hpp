// Events in time order for the event-driven models (the packet and flow memory systems, the
// collective cores): entries come out by (time, push order), so events of equal time come out in
// the order they were pushed, and runs are deterministic.
//
// Models often push runs of events at one time (engines blocked on a shared port all retry when
// it frees). Consecutive pushes at the same time share a bucket, a FIFO, and only buckets enter
// the min-heap, keyed by (time, push order of their first entry). A push appends to a bucket only
// when that bucket took the previous push too, so every entry of a bucket precedes, in push order,
// every entry of any bucket made after it: the buckets' order is the entries' order. Cost: a heap
// operation per bucket, O(1) per further entry of a run.
#pragma once

#include <algorithm>
#include <cstdint>
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
    const std::uint64_t order = next_order_++;
    ++size_;
    if (last_ != kNone && buckets_[last_].time_ns == time_ns) {
      buckets_[last_].entries.push_back(Entry{time_ns, order, std::move(value)});
      return;
    }
    std::uint32_t index;
    if (free_.empty()) {
      index = static_cast<std::uint32_t>(buckets_.size());
      buckets_.emplace_back();
    } else {
      index = free_.back();
      free_.pop_back();
    }
    Bucket& bucket = buckets_[index];
    bucket.time_ns = time_ns;
    bucket.head = 0;
    bucket.entries.clear();
    bucket.entries.push_back(Entry{time_ns, order, std::move(value)});
    heap_.push_back(Key{time_ns, order, index});
    std::push_heap(heap_.begin(), heap_.end(), Later{});
    last_ = index;
  }
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  /// The earliest entry (requires !empty()); valid until the next push or pop.
  const Entry& top() const {
    const Bucket& bucket = buckets_[heap_.front().bucket];
    return bucket.entries[bucket.head];
  }
  void pop() {
    const std::uint32_t index = heap_.front().bucket;
    Bucket& bucket = buckets_[index];
    --size_;
    if (++bucket.head < bucket.entries.size()) return;
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    heap_.pop_back();
    if (last_ == index) last_ = kNone;
    free_.push_back(index);
  }

 private:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  struct Bucket {
    double time_ns = 0;
    std::size_t head = 0;  ///< first entry not popped
    std::vector<Entry> entries;
  };
  struct Key {
    double time_ns;
    std::uint64_t order;  ///< of the bucket's first entry
    std::uint32_t bucket;
  };
  struct Later {
    bool operator()(const Key& a, const Key& b) const {
      return a.time_ns > b.time_ns || (a.time_ns == b.time_ns && a.order > b.order);
    }
  };
  std::vector<Bucket> buckets_;
  std::vector<std::uint32_t> free_;  ///< buckets not in the heap
  std::vector<Key> heap_;
  std::uint32_t last_ = kNone;  ///< the bucket that took the latest push, while in the heap
  std::size_t size_ = 0;
  std::uint64_t next_order_ = 0;
};

}  // namespace trnsim::util
