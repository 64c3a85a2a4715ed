// Rendezvous for core_barrier across the cores of one simulation. A core arriving at a barrier
// of a group waits until every core of that group has arrived at it.
// Leaves out the barrier's own latency (the arriving engine's issue cost stands for it).
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <systemc>
#include <vector>

namespace trnsim::core {

class BarrierHub {
  struct Barrier;

 public:
  explicit BarrierHub(std::uint32_t cores) : cores_(cores) {}
  /// A core's arrival at one barrier, until it is released.
  struct Ticket {
    const Barrier* barrier = nullptr;
    std::uint64_t generation = 0;
  };
  /// The calling core arrives at the barrier of `group` (empty: all cores). Returns true when
  /// it is the last to arrive: the barrier is released now. Otherwise `wake` is notified at the
  /// release, when released() starts to hold.
  bool arrive(std::span<const std::uint32_t> group, Ticket& ticket, sc_core::sc_event& wake);
  static bool released(const Ticket& ticket);
  std::uint32_t cores() const { return cores_; }

 private:
  struct Barrier {
    std::uint32_t arrived = 0;
    std::uint64_t generation = 0;
    std::vector<sc_core::sc_event*> waiters;  ///< to notify at the release
  };
  std::uint32_t cores_;
  std::map<std::vector<std::uint32_t>, Barrier> barriers_;  ///< by sorted group
};

}  // namespace trnsim::core
