#include "dma/interconnect.hpp"

#include "address/address_map.hpp"

namespace trnsim::dma {

Interconnect::Interconnect(sc_core::sc_module_name name)
    : sc_core::sc_module(name), engine_socket("engine_socket"), memory_socket("memory_socket") {
  engine_socket.register_b_transport(this, &Interconnect::b_transport);
}

void Interconnect::add_route(kernel::MemoryKind memory, std::uint32_t space, int port) {
  std::vector<int>& table = routes_[static_cast<std::size_t>(memory)];
  if (table.size() <= space) table.resize(space + 1, -1);
  table[space] = port;
}

void Interconnect::b_transport(int /*from*/, tlm::tlm_generic_payload& payload,
                               sc_core::sc_time& delay) {
  const std::uint64_t address = payload.get_address();
  const address::FabricAddress target = address::decode(address);
  const auto kind = static_cast<std::size_t>(target.memory);
  if (kind >= routes_.size() || target.space >= routes_[kind].size() ||
      routes_[kind][target.space] < 0) {
    payload.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  payload.set_address(target.local);
  memory_socket[routes_[kind][target.space]]->b_transport(payload, delay);
  payload.set_address(address);
}

}  // namespace trnsim::dma
