// HBM timing at transaction granularity, without SystemC: the address mapping of one stack
// (interleave granules spread over channels, optionally CRC-hashed channel and bank) and, per
// channel, the banks' row-buffer state, the data bus and the controller queue. Each request is
// scheduled when it arrives, first-ready first-come-first-served: its bank commands (precharge,
// activate, CAS) as soon as the bank allows, its burst in the earliest free bus slot after its
// data is ready, so a row hit arriving later overtakes a row miss still waiting for its activate.
// Refresh: every tREFI a channel owes an all-bank refresh (tRFC on the bus, closes every row;
// schedules staggered over the channels). The controller pulls owed refreshes into idle bus
// time and postpones them while busy, up to hbm.refresh_postpone_max; then it forces one after
// the requests already granted. Times are double ns; requests arrive in nondecreasing time.
// Leaves out: pseudo-channels, tRAS/tRC/tFAW/tCCD/tWR, per-bank refresh, the command bus, and
// rescheduling of already granted requests (real FR-FCFS may still delay a granted miss).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "config/params.hpp"

namespace trnsim::memory {

enum class RowOutcome : std::uint8_t {
  kHit,       ///< the bank had the row open: CAS only
  kClosed,    ///< no row open (or closed by refresh): activate + CAS
  kConflict,  ///< another row open: precharge + activate + CAS
};

struct ChannelRequest {
  double arrival_ns = 0;  ///< at the channel controller
  std::uint32_t bank = 0;
  std::uint64_t row = 0;
  std::uint32_t bytes = 0;
  bool write = false;
};

struct ChannelGrant {
  double accept_ns = 0;  ///< entered the controller queue (> arrival when the queue was full)
  double start_ns = 0;   ///< first byte on the channel's data bus
  double end_ns = 0;     ///< last byte on the bus: the request is complete
  RowOutcome outcome = RowOutcome::kHit;
};

struct ChannelStats {
  std::uint64_t read_bytes = 0;
  std::uint64_t write_bytes = 0;
  std::uint64_t requests = 0;
  std::uint64_t row_hits = 0;
  std::uint64_t row_closed = 0;
  std::uint64_t row_conflicts = 0;
  double bus_busy_ns = 0;              ///< sum of burst times
  std::uint64_t refreshes = 0;         ///< all refreshes done (pulled into idle time or forced)
  std::uint64_t forced_refreshes = 0;  ///< refreshes that blocked a busy channel
  /// Sum over requests of (bus start - arrival - the unloaded time from arrival to bus start
  /// for its row outcome): waiting for the queue, the bank and the bus.
  double queueing_ns = 0;
  double first_arrival_ns = -1;
  double last_end_ns = 0;
};

/// One HBM channel: banks, data bus, controller queue.
class HbmChannel {
 public:
  /// `bytes_per_ns`: the channel's share of the stack bandwidth; `refresh_offset_ns`: when this
  /// channel's refresh schedule starts (its first refresh is at offset + tREFI).
  HbmChannel(const config::HbmParams& params, double bytes_per_ns, double refresh_offset_ns);

  /// Schedules one request (at most one interleave granule; it stays in one row).
  ChannelGrant access(const ChannelRequest& request);

  const ChannelStats& stats() const { return stats_; }
  /// Refreshes owed by `time_ns`: one per tREFI boundary after the channel's offset.
  std::int64_t refreshes_due(double time_ns) const;

 private:
  struct Bank {
    std::int64_t open_row = -1;
    std::int64_t refresh_count = -1;  ///< refreshes done when the row was opened
    double column_ready_ns = 0;
    double precharge_ready_ns = 0;
  };
  struct BusSlot {
    double start_ns;
    double end_ns;
    bool write;
    bool refresh;  ///< a forced refresh: no turnaround, never merged
    /// Kept by make_slot/extend: end_ns + turnaround(*this, w) for a read (w = 0) and a write
    /// (w = 1) after it, and turnaround_into(w, *this) for one before it.
    double free_after_ns[2];
    double turnaround_before_ns[2];
  };

  double turnaround(const BusSlot& from, bool to_write) const;
  double turnaround_into(bool from_write, const BusSlot& to) const;
  BusSlot make_slot(double start_ns, double end_ns, bool write, bool refresh) const;
  /// Sets `slot`'s end to `end_ns` (and what depends on it).
  void extend(BusSlot& slot, double end_ns) const;
  /// Pays owed refreshes at a request arriving at `time_ns`: into idle time, or forced.
  void settle_refresh(double time_ns);
  /// False when settle_refresh(time_ns) would do nothing: no new refresh due, and none owed or
  /// the owed ones still postponed with no idle time to pull one into.
  bool refresh_may_change(double time_ns) const {
    if (time_ns >= next_refresh_due_ns_) return true;
    const std::int64_t owed = refreshes_due_ - refreshes_done_;
    return owed > 0 && (time_ns - last_bus_end_ns_ >= t_rfc_ || owed > refresh_postpone_max_);
  }
  /// `time_ns`, or the end of the forced refresh it falls in (no bank command during it).
  double after_refresh(double time_ns) const;
  /// Earliest start >= ready_ns of a `length_ns` burst with no overlap with granted slots
  /// (read/write turnaround to its neighbours). Returns the insert position.
  double find_slot(double ready_ns, double length_ns, bool write, std::size_t& position) const;
  void insert_slot(std::size_t position, const BusSlot& slot);

  // Parameters (copied once).
  const double t_rcd_;
  const double t_rp_;
  const double t_cl_;
  const double t_refi_;
  const double t_rfc_;
  const double t_wtr_;
  const double t_rtw_;
  const double bytes_per_ns_;
  const std::uint32_t burst_bytes_;
  const std::size_t queue_depth_;
  const double refresh_offset_ns_;
  const std::int64_t refresh_postpone_max_;

  std::vector<Bank> banks_;
  std::vector<BusSlot> slots_;  ///< granted bus slots, sorted, from slots_head_ on
  std::size_t slots_head_ = 0;
  /// Bus start times of granted requests not yet on the bus (the controller queue), sorted
  /// ascending from pending_head_ on.
  std::vector<double> pending_starts_;
  std::size_t pending_head_ = 0;
  double last_bus_end_ns_ = 0;  ///< end of the latest granted burst or refresh
  std::int64_t refreshes_done_ = 0;
  std::int64_t refreshes_due_ = 0;  ///< refreshes_due() as of next_refresh_due_ns_
  double next_refresh_due_ns_ = 0;  ///< when the next refresh becomes due
  double refresh_begin_ns_ = 0;     ///< the last forced refresh window
  double refresh_end_ns_ = 0;
  ChannelStats stats_;
};

/// Where a byte address of a stack lives.
struct HbmLocation {
  std::uint32_t channel = 0;
  std::uint32_t bank = 0;
  std::uint64_t row = 0;
};

/// Result of one transaction on a stack, as seen by the initiator.
struct StackAccess {
  double accept_ns = 0;  ///< the initiator may issue its next transaction from here
  double done_ns = 0;    ///< the last byte is transferred
};

/// One HBM stack: address mapping and its channels. The channels' bandwidths add up to the
/// stack bandwidth, which is therefore the ceiling.
class HbmStackTiming {
 public:
  explicit HbmStackTiming(const config::HbmParams& params);

  HbmLocation locate(std::uint64_t address) const;
  /// A transaction of `bytes` at `address` issued at `issue_ns` (nondecreasing across calls):
  /// split into interleave granules, each scheduled on its channel after the controller latency.
  StackAccess access(double issue_ns, std::uint64_t address, std::uint32_t bytes, bool write);

  std::size_t channel_count() const { return channels_.size(); }
  const HbmChannel& channel(std::size_t index) const { return channels_[index]; }
  ChannelStats totals() const;
  double peak_bytes_per_ns() const { return peak_bytes_per_ns_; }

 private:
  /// Address split of one interleave granule; hashes cached across calls (a transaction's
  /// granules mostly share their channel group and row).
  struct HashCache {
    std::uint64_t group = ~std::uint64_t{0};
    std::uint64_t group_hash = 0;
    std::uint64_t row = ~std::uint64_t{0};
    std::uint64_t row_hash = 0;
  };
  HbmLocation locate(std::uint64_t address, HashCache& cache) const;
  std::uint64_t divide(std::uint64_t value, std::uint64_t divisor, unsigned shift) const {
    return powers_of_two_ ? value >> shift : value / divisor;
  }

  const config::HbmParams params_;
  const double peak_bytes_per_ns_;
  const std::uint64_t interleave_;
  const std::uint64_t channel_count_;
  const std::uint64_t row_bytes_;
  const std::uint64_t bank_count_;
  const bool hashed_;
  bool powers_of_two_ = false;  ///< all four sizes above: divisions become shifts
  unsigned interleave_shift_ = 0;
  unsigned channel_shift_ = 0;
  unsigned row_shift_ = 0;
  unsigned bank_shift_ = 0;
  std::vector<HbmChannel> channels_;
};

/// CRC-32C (Castagnoli) of `bytes`, by Boost.CRC.
std::uint32_t crc32c(std::span<const std::uint8_t> bytes);
/// CRC-32C of the 8 little-endian bytes of `value` (the address hash of hbm.address_hash crc).
std::uint32_t crc32c(std::uint64_t value);

}  // namespace trnsim::memory
