// A memory port two engines share (NC-v2: VectorE and GpSimdE on SBUF, VectorE and ScalarE on
// PSUM, hardware-facts.md §7): an instruction that touches the memory starts no earlier than the
// port is free and holds it until it ends. Owned by the core, used by the engines that share it.
// Leaves out partial use of the port's bandwidth: it is held whole.
#pragma once

#include <systemc>

namespace trnsim::core {

struct SharedPort {
  sc_core::sc_time free_at;  ///< end of the last instruction that used the port
};

}  // namespace trnsim::core
