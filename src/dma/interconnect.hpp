// The DMA fabric between the engines and the memories: a TLM-2.0 router. Engines bind to its
// target socket, memories (HBM stacks, SBUF/PSUM endpoints) to its initiator socket; it routes
// on the memory kind and space of the fabric address (memory/address_map.hpp) and passes the
// local address on. Adds no time.
// Leaves out: fabric bandwidth and latency (the per-core DMA cap is applied by PacketMemorySystem).
#pragma once

#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include <array>
#include <cstdint>
#include <systemc>
#include <tlm>
#include <vector>

#include "kernel/region.hpp"

namespace trnsim::dma {

class Interconnect : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<Interconnect> engine_socket;
  tlm_utils::multi_passthrough_initiator_socket<Interconnect> memory_socket;

  explicit Interconnect(sc_core::sc_module_name name);

  /// Transactions for (memory, space) go to memory_socket port `port` (its binding order).
  void add_route(kernel::MemoryKind memory, std::uint32_t space, int port);

 private:
  void b_transport(int from, tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);

  std::array<std::vector<int>, 3> routes_;  ///< by MemoryKind, then space; -1 = none
};

}  // namespace trnsim::dma
