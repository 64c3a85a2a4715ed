// Statistics one NeuronCore collects while it runs a kernel. Plain counters and sums, filled by
// the timing model (neuron_core.cpp); derived metrics (utilisation, MFU, bandwidth) are computed
// at report time from these and the config (report/report.cpp).
//
// Busy and dependency-wait times are engine time: per unit, parts of the kernel's time line that
// never overlap, so for every unit active_ns + wait_ns() <= the kernel time.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <vector>

#include "config/params.hpp"
#include "kernel/instruction.hpp"
#include "trnsim/stats.hpp"

namespace trnsim::core {

struct EngineStats {
  std::uint64_t instructions = 0;
  /// ns in which the unit executes: the union of its instructions' busy intervals (TensorE: over
  /// its concurrent PE tiles). kDma: the union of the intervals in which a DMA of the core moves
  /// data (at any rate); kCollective: of the intervals from when the collective model reports a
  /// collective of the core done to its completion (the tail of its last step, not the whole
  /// collective).
  double active_ns = 0;
  /// Dependency wait, ns, by the engine that produced the awaited result: time in which the unit
  /// executes nothing while work it would do next waits for a dependency (a semaphore). A union
  /// of intervals, never a sum over instructions that wait at the same time, and disjoint from
  /// active_ns.
  /// - Sequencer engines (in order): from when the engine could start its next instruction (free,
  ///   instruction queued) until the instruction's dependencies are visible, minus any time the
  ///   engine executes meanwhile (TensorE: other PE tiles, the instruction's LoadStationary);
  ///   attributed to the producer whose result arrived last.
  /// - kDma, kCollective: time in which none of the core's DMAs (collectives) is busy while at
  ///   least one issued by its trigger waits for its dependencies; see ConcurrentUnitTime for
  ///   the attribution.
  std::array<double, kernel::kEngineCount> wait_ns_by_producer{};
  /// Time the engine could not start because a shared port was busy (NC-v2 SBUF/PSUM sharing), ns.
  double port_wait_ns = 0;
  std::array<std::uint64_t, kernel::kOpcodeCount> op_counts{};

  double wait_ns() const {
    double total = 0;
    for (double w : wait_ns_by_producer) total += w;
    return total;
  }
};

/// The idle part of a sequencer instruction's dependency wait [wait_begin, wait_end): what lies
/// after `busy_until` (the end of the engine's earlier work) and before `own_start` (when the
/// engine began working on this instruction). The whole wait on an engine that runs one
/// instruction at a time. All in simulator ticks (sc_time::value()).
inline std::uint64_t idle_wait_ticks(std::uint64_t wait_begin, std::uint64_t wait_end,
                                     std::uint64_t busy_until, std::uint64_t own_start) {
  const std::uint64_t from = std::max(wait_begin, busy_until);
  const std::uint64_t to = std::min(wait_end, own_start);
  return to > from ? to - from : 0;
}

/// Engine time of a unit that works on several items at once: the core's DMAs (busy = moving
/// data) or its collectives. A sequencer issues each item; the item may wait for dependencies,
/// is then busy for an interval and completes. Reports arrive out of time order (a wait is known
/// once its producers have times, a busy interval at completion).
///
/// - Busy time: the union of the items' busy intervals.
/// - Dependency wait: the time in which the unit is not busy while at least one issued item
///   waits for its dependencies. At each instant it is attributed to the producer of the waiting
///   item whose wait ends first (the result that lets the unit go on soonest; ties: the lower
///   kernel::Engine), so the attributed parts add up to the wait exactly.
///
/// Both are exact sums of simulator ticks, independent of the order of the reports. A sweep
/// over time folds the intervals into the totals up to a horizon before which no later report
/// can reach (the earliest issue of an item not completed yet, and the caller's current time
/// while items are still being issued) and keeps its state between reports: each interval is
/// handled a constant number of times, and memory is proportional to the items in flight, not
/// to the kernel's length.
/// A queue kept in order by its own inserts: removals at the front, insertions mostly at the
/// back (a backward scan finds the place). A ring buffer (power-of-two size, grown by doubling):
/// the front is one index, an insertion near the back moves few elements, and nothing is
/// allocated once it has grown to the peak size.
template <typename T>
class SortedQueue {
 public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  const T& front() const { return items_[head_]; }
  void pop_front() {
    head_ = (head_ + 1) & mask_;
    --size_;
  }
  /// Inserts `item` after every element e with !before(item, e), i.e. after equal ones.
  template <typename Before>
  void insert(const T& item, Before before) {
    if (size_ == items_.size()) grow();
    std::size_t at = size_;  // from the front
    while (at > 0 && before(item, items_[(head_ + at - 1) & mask_])) {
      items_[(head_ + at) & mask_] = items_[(head_ + at - 1) & mask_];
      --at;
    }
    items_[(head_ + at) & mask_] = item;
    ++size_;
  }

 private:
  void grow() {
    const std::size_t capacity = items_.empty() ? 64 : items_.size() * 2;
    std::vector<T> grown(capacity);
    for (std::size_t i = 0; i < size_; ++i) grown[i] = items_[(head_ + i) & mask_];
    items_ = std::move(grown);
    head_ = 0;
    mask_ = capacity - 1;
  }

  std::vector<T> items_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
  std::size_t mask_ = 0;
};

class ConcurrentUnitTime {
 public:
  using Ticks = std::uint64_t;  ///< simulator time: sc_time::value()

  /// Writes the totals into `stats.active_ns` and `stats.wait_ns_by_producer` once they are
  /// final: after all_issued(), when every item has completed (`stats` must outlive this
  /// object). `ticks_per_ns`: the simulator's time resolution (util/sim_time.hpp).
  ConcurrentUnitTime(EngineStats& stats, double ticks_per_ns);

  /// Item `id` was issued at `at` by sequencer `lane` (a kernel::Engine index). Each lane issues
  /// its items in increasing id at non-decreasing times; an item's intervals reported later
  /// begin no earlier than `at`.
  void issued(std::size_t lane, std::uint64_t id, Ticks at);
  /// An issued, not yet completed item waited for its dependencies from `begin` to `end`
  /// (nothing when end <= begin); `producer` made the result it waited for. `now`: no item is
  /// issued before it from now on.
  void waited(Ticks begin, Ticks end, kernel::Engine producer, Ticks now);
  /// Item `id` was busy from `begin` to `end` (>= its issue) and is complete. `now` as above.
  void completed(std::uint64_t id, Ticks begin, Ticks end, Ticks now);
  /// No item is issued any more: once every issued item has completed, the totals are final.
  void all_issued();

  /// Intervals kept for folding (for tests of the memory bound).
  std::size_t retained_intervals() const {
    return pending_waits_.size() + waiting_.size() + (busy_.size() - busy_head_);
  }

 private:
  struct Open {
    std::uint64_t id = 0;
    Ticks at = 0;
    bool completed = false;
  };
  struct Wait {
    Ticks begin = 0;
    Ticks end = 0;
    std::uint8_t producer = 0;
  };
  struct Busy {
    Ticks begin = 0;
    Ticks end = 0;
  };
  /// Before this no interval reported later can begin: the earliest issue of an open item, and
  /// `now` while items are still being issued.
  Ticks horizon(Ticks now) const;
  /// Marks item `id` completed; the lanes drop completed items from their fronts.
  void close(std::uint64_t id);
  /// Adds [begin, end) to busy_, merging it with the intervals it touches.
  void add_busy(Ticks begin, Ticks end);
  /// After a report: sweeps on when enough reports came since the last sweep, or when the
  /// totals are final.
  void settle_after_report(Ticks now);
  /// Sweeps from settled_ to `horizon`, adding each stretch to the totals.
  void settle(Ticks horizon);
  void publish();

  EngineStats& stats_;
  double ticks_per_ns_;
  bool all_issued_ = false;
  std::array<std::deque<Open>, kernel::kEngineCount> open_by_lane_;
  std::size_t open_items_ = 0;
  Ticks settled_ = 0;  ///< the sweep's position: everything before it is in the totals
  /// Waits the sweep has not reached, by begin (reported nearly in that order: an insertion is
  /// nearly always at the back).
  SortedQueue<Wait> pending_waits_;
  /// (end, producer) of the waits the sweep is inside, in that order (waits that begin later
  /// mostly end later: an insertion is nearly always at the back); entries that ended are
  /// dropped from the front.
  SortedQueue<std::pair<Ticks, std::uint8_t>> waiting_;
  /// Disjoint busy intervals [begin, end), merged, by begin; those before busy_head_ ended
  /// before settled_. Completions come nearly in time order: an interval is nearly always
  /// appended or merged into the last.
  std::vector<Busy> busy_;
  std::size_t busy_head_ = 0;
  /// Reports since the last sweep: sweeping every few reports shares its fixed cost.
  std::uint32_t reports_since_settle_ = 0;
  static constexpr std::uint32_t kReportsPerSettle = 16;
  Ticks active_ticks_ = 0;
  std::array<Ticks, kernel::kEngineCount> wait_ticks_{};
};

struct CoreStats {
  std::uint32_t pid = 0;
  std::array<EngineStats, kernel::kEngineCount> engines{};
  double end_ns = 0;  ///< when the last result of this core became visible
  std::uint64_t instructions = 0;
  std::uint64_t matmul_flops = 0;  ///< 2*K*M*N summed over nc_matmul(_mx)
  double tensor_ideal_ns = 0;      ///< the matmuls' FLOPs at the peak rate of their dtype
  std::uint64_t hbm_read_bytes = 0;
  std::uint64_t hbm_write_bytes = 0;
  std::uint64_t dma_transfers = 0;
  std::uint64_t dma_bytes = 0;
  double throttled_ns = 0;  ///< extra TensorE time caused by throttling
};

/// The units whose time a core's statistics report, in report order: the engines, the DMA and
/// the collectives.
inline constexpr std::array<kernel::Engine, 7> kReportedUnits{
    kernel::Engine::kTensor,    kernel::Engine::kVector, kernel::Engine::kScalar,
    kernel::Engine::kGpSimd,    kernel::Engine::kSync,   kernel::Engine::kDma,
    kernel::Engine::kCollective};

/// Adds a core's statistics to `core`, an element of the statistics' `cores`
/// (docs/outputs.md): pid, instructions, end_ns, per unit (`engines`), `tensor`, `hbm`, `dma`.
/// Shares and rates are over `kernel_ns`; peaks come from `params`.
void add_statistics(stats::Group& core, const CoreStats& counters, const config::Params& params,
                    double kernel_ns);

}  // namespace trnsim::core
