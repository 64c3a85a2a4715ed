// The interface between the NeuronCores and the model of the collective-communication cores.
// A core's Sync sequencer issues a collective (all_reduce, all_gather, reduce_scatter,
// all_to_all, send, recv) in program order; once the collective's own inputs are visible the core
// submits it here, and the backend reports when this core's part of it completed.
// Leaves out everything about how: algorithms, links and DMA traffic are the backend's business.
#pragma once

#include <cstdint>
#include <span>
#include <systemc>

#include "kernel/instruction.hpp"

namespace trnsim::core {

class CollectiveClient {
 public:
  virtual ~CollectiveClient() = default;
  /// This core's part of collective `id` completes at `complete` (>= now). Called exactly once
  /// per submitted collective, from a SystemC process context or from inside submit().
  virtual void collective_complete(std::uint64_t id, const sc_core::sc_time& complete) = 0;
};

class CollectiveBackend {
 public:
  virtual ~CollectiveBackend() = default;
  /// Core `pid` joins collective `id` now. `group` lists the global core indices taking part
  /// (for send/recv: empty, the peer is instruction.peer); empty for collectives means every
  /// core of the kernel. Copies what it needs: the references are not valid after the call.
  virtual void submit(std::uint32_t pid, std::uint64_t id, const kernel::Instruction& instruction,
                      std::span<const std::uint32_t> group, CollectiveClient& client) = 0;
};

}  // namespace trnsim::core
