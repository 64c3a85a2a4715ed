#include "memory/hbm_timing.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <boost/crc.hpp>
#include <cmath>

namespace trnsim::memory {

namespace {

/// CRC-32C (Castagnoli): polynomial 0x1EDC6F41, reflected, initial and final XOR all ones.
using Crc32c = boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true>;

/// Two times closer than this are the same instant (merging adjacent bus slots).
constexpr double kTimeEpsilonNs = 1e-9;

/// CRC-32C of the 8 little-endian bytes of `value` (inlined into the address mapping).
inline std::uint32_t crc32c_of_word(std::uint64_t value) {
  std::array<std::uint8_t, 8> bytes{};
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<std::uint8_t>(value >> (8 * i));
  }
  Crc32c crc;
  crc.process_bytes(bytes.data(), bytes.size());
  return crc.checksum();
}

/// CRC-32C with its bytes folded onto the low byte, so that the low bits depend on all 32 CRC
/// bits (the low CRC bits alone spread small power-of-two strides poorly).
std::uint64_t address_hash(std::uint64_t value) {
  const std::uint32_t crc = crc32c_of_word(value);
  return crc ^ (crc >> 8) ^ (crc >> 16) ^ (crc >> 24);
}

/// Frees the entries before `head` of a vector consumed from the front: all of them once
/// everything is consumed, else in one move once they are the larger part (amortised O(1)).
template <class T>
void drop_consumed(std::vector<T>& entries, std::size_t& head) {
  if (head == entries.size()) {
    entries.clear();
    head = 0;
  } else if (head > 64 && head * 2 > entries.size()) {
    entries.erase(entries.begin(), entries.begin() + static_cast<std::ptrdiff_t>(head));
    head = 0;
  }
}

}  // namespace

std::uint32_t crc32c(std::span<const std::uint8_t> bytes) {
  Crc32c crc;
  crc.process_bytes(bytes.data(), bytes.size());
  return crc.checksum();
}

std::uint32_t crc32c(std::uint64_t value) {
  return crc32c_of_word(value);
}

// ---- HbmChannel --------------------------------------------------------------------------------

HbmChannel::HbmChannel(const config::HbmParams& params, double bytes_per_ns,
                       double refresh_offset_ns)
    : t_rcd_(params.t_rcd_ns),
      t_rp_(params.t_rp_ns),
      t_cl_(params.t_cl_ns),
      t_refi_(params.t_refi_ns),
      t_rfc_(params.t_rfc_ns),
      t_wtr_(params.t_wtr_ns),
      t_rtw_(params.t_rtw_ns),
      bytes_per_ns_(bytes_per_ns),
      burst_bytes_(static_cast<std::uint32_t>(std::max(1, params.burst_bytes))),
      queue_depth_(static_cast<std::size_t>(std::max(1, params.queue_depth))),
      refresh_offset_ns_(refresh_offset_ns),
      refresh_postpone_max_(std::max(0, params.refresh_postpone_max)),
      banks_(static_cast<std::size_t>(std::max(1, params.banks_per_channel))) {}

std::int64_t HbmChannel::refreshes_due(double time_ns) const {
  const double since = time_ns - refresh_offset_ns_;
  if (t_rfc_ <= 0 || since < t_refi_) return 0;
  return static_cast<std::int64_t>(std::floor(since / t_refi_));
}

double HbmChannel::after_refresh(double time_ns) const {
  return time_ns >= refresh_begin_ns_ && time_ns < refresh_end_ns_ ? refresh_end_ns_ : time_ns;
}

void HbmChannel::settle_refresh(double time_ns) {
  if (time_ns < next_refresh_due_ns_ && refreshes_due_ == refreshes_done_) return;
  if (time_ns >= next_refresh_due_ns_) {
    refreshes_due_ = refreshes_due(time_ns);
    next_refresh_due_ns_ = refresh_offset_ns_ + static_cast<double>(refreshes_due_ + 1) * t_refi_;
  }
  std::int64_t owed = refreshes_due_ - refreshes_done_;
  if (owed <= 0) return;
  // Pulled in: refreshes fit into the idle bus time since the last granted burst.
  const double idle = time_ns - last_bus_end_ns_;
  if (idle >= t_rfc_) {
    const std::int64_t fit = static_cast<std::int64_t>(std::floor(idle / t_rfc_));
    const std::int64_t done = std::min(owed, fit);
    refreshes_done_ += done;
    stats_.refreshes += static_cast<std::uint64_t>(done);
    owed -= done;
  }
  if (owed <= refresh_postpone_max_) return;
  // Forced: after everything granted, the bus and all banks are blocked.
  const std::int64_t forced = owed - refresh_postpone_max_;
  const double begin = std::max(time_ns, last_bus_end_ns_);
  const double end = begin + static_cast<double>(forced) * t_rfc_;
  slots_.push_back(make_slot(begin, end, false, true));
  refresh_begin_ns_ = begin;
  refresh_end_ns_ = end;
  last_bus_end_ns_ = end;
  refreshes_done_ += forced;
  stats_.refreshes += static_cast<std::uint64_t>(forced);
  stats_.forced_refreshes += static_cast<std::uint64_t>(forced);
}

double HbmChannel::turnaround(const BusSlot& from, bool to_write) const {
  if (from.refresh || from.write == to_write) return 0;
  return from.write ? t_wtr_ : t_rtw_;
}

double HbmChannel::turnaround_into(bool from_write, const BusSlot& to) const {
  if (to.refresh || from_write == to.write) return 0;
  return from_write ? t_wtr_ : t_rtw_;
}

HbmChannel::BusSlot HbmChannel::make_slot(double start_ns, double end_ns, bool write,
                                          bool refresh) const {
  BusSlot slot{start_ns, end_ns, write, refresh, {0, 0}, {0, 0}};
  slot.turnaround_before_ns[0] = turnaround_into(false, slot);
  slot.turnaround_before_ns[1] = turnaround_into(true, slot);
  extend(slot, end_ns);
  return slot;
}

void HbmChannel::extend(BusSlot& slot, double end_ns) const {
  slot.end_ns = end_ns;
  slot.free_after_ns[0] = end_ns + turnaround(slot, false);
  slot.free_after_ns[1] = end_ns + turnaround(slot, true);
}

double HbmChannel::find_slot(double ready_ns, double length_ns, bool write,
                             std::size_t& position) const {
  double start = ready_ns;
  const std::size_t to = write ? 1 : 0;
  std::size_t i = slots_head_;
  while (i < slots_.size() && slots_[i].free_after_ns[to] <= start) ++i;
  for (; i < slots_.size(); ++i) {
    const BusSlot& slot = slots_[i];
    if (start + length_ns + slot.turnaround_before_ns[to] <= slot.start_ns) break;
    start = std::max(start, slot.free_after_ns[to]);
  }
  position = i;
  return start;
}

void HbmChannel::insert_slot(std::size_t position, const BusSlot& slot) {
  if (position > slots_head_) {
    BusSlot& previous = slots_[position - 1];
    if (!previous.refresh && previous.write == slot.write &&
        previous.end_ns >= slot.start_ns - kTimeEpsilonNs) {
      extend(previous, std::max(previous.end_ns, slot.end_ns));
      if (position < slots_.size() && !slots_[position].refresh &&
          slots_[position].write == slot.write &&
          slots_[position].start_ns <= previous.end_ns + kTimeEpsilonNs) {
        extend(previous, std::max(previous.end_ns, slots_[position].end_ns));
        slots_.erase(slots_.begin() + static_cast<std::ptrdiff_t>(position));
      }
      return;
    }
  }
  if (position < slots_.size() && !slots_[position].refresh &&
      slots_[position].write == slot.write &&
      slots_[position].start_ns <= slot.end_ns + kTimeEpsilonNs) {
    slots_[position].start_ns = std::min(slots_[position].start_ns, slot.start_ns);
    return;
  }
  slots_.insert(slots_.begin() + static_cast<std::ptrdiff_t>(position), slot);
}

ChannelGrant HbmChannel::access(const ChannelRequest& request) {
  const double arrival = request.arrival_ns;
  if (stats_.first_arrival_ns < 0) stats_.first_arrival_ns = arrival;

  // Forget bus slots that can no longer constrain a request arriving now.
  const double max_turnaround = std::max(t_wtr_, t_rtw_);
  while (slots_head_ < slots_.size() && slots_[slots_head_].end_ns + max_turnaround <= arrival) {
    ++slots_head_;
  }
  drop_consumed(slots_, slots_head_);

  // Controller queue: requests granted but not yet on the bus. A full queue accepts the new
  // request when the earliest of them starts.
  const auto pop_until = [this](double time_ns) {
    while (pending_head_ < pending_starts_.size() && pending_starts_[pending_head_] <= time_ns) {
      ++pending_head_;
    }
  };
  pop_until(arrival);
  double accept = arrival;
  if (pending_starts_.size() - pending_head_ >= queue_depth_) {
    accept = pending_starts_[pending_head_];
    pop_until(accept);
  }
  drop_consumed(pending_starts_, pending_head_);

  if (t_rfc_ > 0 && refresh_may_change(accept)) settle_refresh(accept);
  const double command = after_refresh(accept);
  Bank& bank = banks_[request.bank % banks_.size()];
  const bool open = bank.open_row >= 0 && bank.refresh_count == refreshes_done_;
  const auto row = static_cast<std::int64_t>(request.row);
  ChannelGrant grant;
  grant.accept_ns = accept;
  double column;    // CAS command
  double unloaded;  // arrival to data ready with an idle bank
  if (open && bank.open_row == row) {
    grant.outcome = RowOutcome::kHit;
    column = std::max(command, bank.column_ready_ns);
    unloaded = t_cl_;
    ++stats_.row_hits;
  } else if (open) {
    grant.outcome = RowOutcome::kConflict;
    const double precharge = std::max(command, bank.precharge_ready_ns);
    column = after_refresh(precharge + t_rp_) + t_rcd_;
    unloaded = t_rp_ + t_rcd_ + t_cl_;
    ++stats_.row_conflicts;
  } else {
    grant.outcome = RowOutcome::kClosed;
    column = after_refresh(std::max(command, bank.precharge_ready_ns)) + t_rcd_;
    unloaded = t_rcd_ + t_cl_;
    ++stats_.row_closed;
  }

  const std::uint32_t bursts = (request.bytes + burst_bytes_ - 1) / burst_bytes_;
  const double length = static_cast<double>(bursts) * burst_bytes_ / bytes_per_ns_;
  std::size_t position = 0;
  grant.start_ns = find_slot(column + t_cl_, length, request.write, position);
  grant.end_ns = grant.start_ns + length;
  insert_slot(position, make_slot(grant.start_ns, grant.end_ns, request.write, false));
  last_bus_end_ns_ = std::max(last_bus_end_ns_, grant.end_ns);
  // Mostly in start order already: insertion from the back.
  std::size_t at = pending_starts_.size();
  while (at > pending_head_ && pending_starts_[at - 1] > grant.start_ns) --at;
  pending_starts_.insert(pending_starts_.begin() + static_cast<std::ptrdiff_t>(at), grant.start_ns);

  // The CAS really issues t_cl before the burst; the row stays open for later hits.
  bank.open_row = row;
  bank.refresh_count = refreshes_done_;
  bank.column_ready_ns = grant.start_ns - t_cl_ + length;
  bank.precharge_ready_ns = std::max(bank.precharge_ready_ns, grant.end_ns);

  ++stats_.requests;
  (request.write ? stats_.write_bytes : stats_.read_bytes) += request.bytes;
  stats_.bus_busy_ns += length;
  stats_.queueing_ns += std::max(0.0, grant.start_ns - arrival - unloaded);
  stats_.last_end_ns = std::max(stats_.last_end_ns, grant.end_ns);
  return grant;
}

// ---- HbmStackTiming ----------------------------------------------------------------------------

namespace {

std::vector<HbmChannel> make_channels(const config::HbmParams& params) {
  const int count = std::max(1, params.channels_per_stack);
  const double bytes_per_ns = params.stack_bandwidth_gbps / count;  // GB/s == bytes/ns
  std::vector<HbmChannel> channels;
  channels.reserve(static_cast<std::size_t>(count));
  for (int c = 0; c < count; ++c) {
    // Refreshes staggered evenly over the channels of the stack.
    channels.emplace_back(params, bytes_per_ns, params.t_refi_ns * c / count);
  }
  return channels;
}

}  // namespace

HbmStackTiming::HbmStackTiming(const config::HbmParams& params)
    : params_(params),
      peak_bytes_per_ns_(params.stack_bandwidth_gbps),
      interleave_(static_cast<std::uint64_t>(std::max(1, params.interleave_bytes))),
      channel_count_(static_cast<std::uint64_t>(std::max(1, params.channels_per_stack))),
      row_bytes_(static_cast<std::uint64_t>(std::max(1, params.row_bytes))),
      bank_count_(static_cast<std::uint64_t>(std::max(1, params.banks_per_channel))),
      hashed_(params.address_hash == config::AddressHash::crc),
      channels_(make_channels(params)) {
  auto log2_exact = [](std::uint64_t value, unsigned& shift) {
    if ((value & (value - 1)) != 0) return false;
    shift = static_cast<unsigned>(std::countr_zero(value));
    return true;
  };
  powers_of_two_ = log2_exact(interleave_, interleave_shift_) &&
                   log2_exact(channel_count_, channel_shift_) &&
                   log2_exact(row_bytes_, row_shift_) && log2_exact(bank_count_, bank_shift_);
}

// Inlined into access(), once per interleave granule (GCC may not inline it on its own once the
// translation unit grows).
[[gnu::always_inline]] inline HbmLocation HbmStackTiming::locate(std::uint64_t address,
                                                                 HashCache& cache) const {
  const std::uint64_t granule = divide(address, interleave_, interleave_shift_);
  const std::uint64_t group = divide(granule, channel_count_, channel_shift_);
  // Rotating the lane by a hash of the group keeps each group spread over all channels.
  if (hashed_ && group != cache.group) {
    cache.group = group;
    cache.group_hash = address_hash(group);
  }
  const std::uint64_t within = address - granule * interleave_;
  const std::uint64_t local = group * interleave_ + within;
  const std::uint64_t row_index = divide(local, row_bytes_, row_shift_);
  const std::uint64_t row = divide(row_index, bank_count_, bank_shift_);
  if (hashed_ && row != cache.row) {
    cache.row = row;
    cache.row_hash = address_hash(~row);
  }
  const std::uint64_t lane = granule - group * channel_count_;
  const std::uint64_t bank = row_index - row * bank_count_;
  HbmLocation location;
  location.channel =
      static_cast<std::uint32_t>(hashed_ ? (lane + cache.group_hash) % channel_count_ : lane);
  location.bank =
      static_cast<std::uint32_t>(hashed_ ? (bank + cache.row_hash) % bank_count_ : bank);
  location.row = row;
  return location;
}

HbmLocation HbmStackTiming::locate(std::uint64_t address) const {
  HashCache cache;
  return locate(address, cache);
}

StackAccess HbmStackTiming::access(double issue_ns, std::uint64_t address, std::uint32_t bytes,
                                   bool write) {
  const double latency = params_.controller_latency_ns;
  ChannelRequest request;
  request.arrival_ns = issue_ns + latency;
  request.write = write;
  StackAccess result{issue_ns, issue_ns};
  HashCache cache;
  while (bytes > 0) {
    const std::uint64_t room =
        interleave_ - (powers_of_two_ ? address & (interleave_ - 1) : address % interleave_);
    const auto piece = static_cast<std::uint32_t>(std::min<std::uint64_t>(bytes, room));
    const HbmLocation location = locate(address, cache);
    request.bank = location.bank;
    request.row = location.row;
    request.bytes = piece;
    const ChannelGrant grant = channels_[location.channel].access(request);
    result.accept_ns = std::max(result.accept_ns, grant.accept_ns - latency);
    result.done_ns = std::max(result.done_ns, grant.end_ns);
    address += piece;
    bytes -= piece;
  }
  return result;
}

ChannelStats HbmStackTiming::totals() const {
  ChannelStats total;
  for (const HbmChannel& channel : channels_) {
    const ChannelStats& s = channel.stats();
    total.read_bytes += s.read_bytes;
    total.write_bytes += s.write_bytes;
    total.requests += s.requests;
    total.row_hits += s.row_hits;
    total.row_closed += s.row_closed;
    total.row_conflicts += s.row_conflicts;
    total.bus_busy_ns += s.bus_busy_ns;
    total.refreshes += s.refreshes;
    total.forced_refreshes += s.forced_refreshes;
    total.queueing_ns += s.queueing_ns;
    if (s.first_arrival_ns >= 0 &&
        (total.first_arrival_ns < 0 || s.first_arrival_ns < total.first_arrival_ns)) {
      total.first_arrival_ns = s.first_arrival_ns;
    }
    total.last_end_ns = std::max(total.last_end_ns, s.last_end_ns);
  }
  return total;
}

}  // namespace trnsim::memory
