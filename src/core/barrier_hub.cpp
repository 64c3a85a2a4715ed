#include "core/barrier_hub.hpp"

#include <algorithm>

namespace trnsim::core {

bool BarrierHub::arrive(std::span<const std::uint32_t> group, Ticket& ticket,
                        sc_core::sc_event& wake) {
  std::vector<std::uint32_t> key(group.begin(), group.end());
  std::sort(key.begin(), key.end());
  key.erase(std::unique(key.begin(), key.end()), key.end());
  const auto participants = key.empty() ? cores_ : static_cast<std::uint32_t>(key.size());
  Barrier& barrier = barriers_[key];
  ticket.barrier = &barrier;
  ticket.generation = barrier.generation;
  if (++barrier.arrived == participants) {
    barrier.arrived = 0;
    ++barrier.generation;
    // Only a system of several cores has waiters, and its cores do not run ahead: a program
    // with a barrier never runs alone (NeuronCore).
    for (sc_core::sc_event* waiter : barrier.waiters) waiter->notify();
    barrier.waiters.clear();
    return true;
  }
  barrier.waiters.push_back(&wake);
  return false;
}

bool BarrierHub::released(const Ticket& ticket) {
  return ticket.barrier->generation != ticket.generation;
}

}  // namespace trnsim::core
