#include "dma/dma_engine.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <stdexcept>
#include <string>

#include "util/sim_time.hpp"

namespace trnsim::dma {

namespace {
using sim_time::kNeverNs;
/// Timing-only payloads: targets never read or write data, but TLM wants a pointer.
unsigned char g_no_data[1];
}  // namespace

std::uint32_t ItemRing::push(const EngineItem& item) {
  if (end_ - begin_ == items_.size()) {
    const std::size_t capacity = std::max<std::size_t>(8, items_.size() * 2);
    std::vector<EngineItem> grown(capacity);
    const auto new_mask = static_cast<std::uint32_t>(capacity - 1);
    for (std::uint32_t s = begin_; s != end_; ++s) grown[s & new_mask] = items_[s & mask_];
    items_.swap(grown);
    mask_ = new_mask;
  }
  items_[end_ & mask_] = item;
  return end_++;
}

DmaEngine::DmaEngine(sc_core::sc_module_name name, std::uint32_t core_index,
                     std::uint32_t engine_index, const config::DmaParams& params)
    : sc_core::sc_module(name),
      socket("socket"),
      core(core_index),
      index(engine_index),
      queues(static_cast<std::size_t>(std::max(1, params.queues_per_engine))),
      strict_priority_(params.arbitration == config::DmaArbitration::strict_priority),
      use_mask_(queues.size() <= 64),
      descriptor_overhead_ns_(params.descriptor_overhead_ns),
      timing_(new TransactionTiming),
      descriptor_starts_(static_cast<std::size_t>(std::max(1, params.descriptor_prefetch)), 0.0) {
  sim_time::scale();  // before any conversion (util/sim_time.hpp)
  payload_.set_data_ptr(g_no_data);
  payload_.set_byte_enable_ptr(nullptr);
  payload_.set_dmi_allowed(false);
  payload_.set_extension(timing_);
  // Queues split evenly into priority classes, queue 0 in the highest (class 0).
  const std::size_t classes = static_cast<std::size_t>(std::max(1, params.priority_classes));
  for (std::size_t q = 0; q < queues.size(); ++q) {
    queues[q].priority_class = static_cast<std::uint32_t>(q * classes / queues.size());
  }
}

DmaEngine::Transport DmaEngine::transport(bool write, std::uint64_t address, std::uint32_t bytes,
                                          double issue_ns) {
  const double now = sim_time::now_ns();
  payload_.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
  payload_.set_address(address);
  payload_.set_data_length(bytes);
  payload_.set_streaming_width(bytes);
  payload_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  timing_->accept_delay = sim_time::from_ns(issue_ns - now);
  sc_core::sc_time delay = sim_time::from_ns(issue_ns - now);
  socket->b_transport(payload_, delay);
  if (payload_.get_response_status() != tlm::TLM_OK_RESPONSE) {
    throw std::logic_error("internal error: DMA engine " + std::string(name()) +
                           ": transaction at address " + std::to_string(address) +
                           " failed: " + payload_.get_response_string());
  }
  return {now + sim_time::to_ns(timing_->accept_delay), now + sim_time::to_ns(delay)};
}

double DmaEngine::eligible_ns(const EngineItem& item) const {
  if (!item.cursor.at_descriptor_start()) return item.ready_ns;
  double unit = std::max(descriptor_free_ns_, item.fetchable_ns);
  if (descriptors_started_ >= descriptor_starts_.size()) {
    unit = std::max(unit, descriptor_starts_[descriptors_started_ % descriptor_starts_.size()]);
  }
  return std::max(item.ready_ns, unit + descriptor_overhead_ns_);
}

void DmaEngine::start_descriptor(const EngineItem& item, double time_ns) {
  ++version_;
  double unit = std::max(descriptor_free_ns_, item.fetchable_ns);
  if (descriptors_started_ >= descriptor_starts_.size()) {
    unit = std::max(unit, descriptor_starts_[descriptors_started_ % descriptor_starts_.size()]);
  }
  descriptor_free_ns_ = unit + descriptor_overhead_ns_;
  descriptor_starts_[descriptors_started_ % descriptor_starts_.size()] = time_ns;
  ++descriptors_started_;
}

template <class Visit>
void DmaEngine::for_each_issuable(Visit&& visit) const {
  const auto count = static_cast<std::uint32_t>(queues.size());
  if (use_mask_) {
    // Round-robin order: queues from round_robin_next_ up, then the ones below it.
    const std::uint64_t above =
        round_robin_next_ >= 64 ? 0 : issuable_mask_ >> round_robin_next_ << round_robin_next_;
    for (std::uint64_t bits : {above, issuable_mask_ & ~above}) {
      while (bits != 0) {
        const auto q = static_cast<std::uint32_t>(std::countr_zero(bits));
        bits &= bits - 1;
        if (!visit(q)) return;
      }
    }
    return;
  }
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::uint32_t q = (round_robin_next_ + i) % count;
    const DmaQueue& queue = queues[q];
    if (queue.issue != queue.items.end() && !visit(q)) return;
  }
}

int DmaEngine::select_queue(double time_ns, double& next_eligible_ns) const {
  // Queues skipped at choice_.time_ns were not eligible before choice_.next_eligible_ns, and the
  // chosen one stays eligible: the same answer until then.
  if (choice_.version == version_ && time_ns >= choice_.time_ns &&
      time_ns < choice_.next_eligible_ns) {
    next_eligible_ns = choice_.next_eligible_ns;
    return choice_.queue;
  }
  const int queue = choose_queue(time_ns, next_eligible_ns);
  choice_ = Choice{version_, time_ns, next_eligible_ns, queue};
  return queue;
}

void DmaEngine::packet_issued(std::uint32_t queue) {
  round_robin_next_ = (queue + 1) % static_cast<std::uint32_t>(queues.size());
  ++version_;
}

int DmaEngine::choose_queue(double time_ns, double& next_eligible_ns) const {
  next_eligible_ns = sim_time::kNeverNs;
  int chosen = -1;
  std::uint32_t chosen_class = 0;
  for_each_issuable([&](std::uint32_t q) {
    const DmaQueue& queue = queues[q];
    const double eligible = eligible_ns(queue.items.at(queue.issue));
    if (eligible > time_ns) {
      next_eligible_ns = std::min(next_eligible_ns, eligible);
      return true;
    }
    if (!strict_priority_) {
      chosen = static_cast<int>(q);
      return false;
    }
    if (chosen < 0 || queue.priority_class < chosen_class) {
      chosen = static_cast<int>(q);
      chosen_class = queue.priority_class;
    }
    return true;
  });
  return chosen;
}

double DmaEngine::next_eligible_ns() const {
  double earliest = sim_time::kNeverNs;
  for_each_issuable([&](std::uint32_t q) {
    const DmaQueue& queue = queues[q];
    earliest = std::min(earliest, eligible_ns(queue.items.at(queue.issue)));
    return true;
  });
  return earliest;
}

void DmaEngine::set_issuable(std::uint32_t queue, bool issuable) {
  if (issuable) {
    ++issuable_count_;
  } else {
    --issuable_count_;
  }
  if (use_mask_) issuable_mask_ ^= std::uint64_t{1} << queue;
}

void DmaEngine::advance_issue(DmaQueue& queue) {
  while (queue.issue != queue.items.end() && queue.items.at(queue.issue).cursor.done()) {
    ++queue.issue;
  }
}

std::uint32_t DmaEngine::enqueue(std::uint32_t queue_index, const EngineItem& item) {
  ++version_;
  DmaQueue& queue = queues[queue_index];
  const bool had_work = queue.issue != queue.items.end();
  const std::uint32_t sequence = queue.items.push(item);
  advance_issue(queue);
  if (!had_work && queue.issue != queue.items.end()) set_issuable(queue_index, true);
  return sequence;
}

void DmaEngine::skip_issued(std::uint32_t queue_index) {
  ++version_;
  DmaQueue& queue = queues[queue_index];
  const bool had_work = queue.issue != queue.items.end();
  advance_issue(queue);
  if (had_work && queue.issue == queue.items.end()) set_issuable(queue_index, false);
}

}  // namespace trnsim::dma
