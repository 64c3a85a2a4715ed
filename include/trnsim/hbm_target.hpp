// The seam between the memory system and a memory technology: one HBM stack as a loosely-timed
// TLM-2.0 target. The packet-level memory system (dma.model = packet) builds one target per HBM
// stack of each chip through the factory registered under the config's `hbm.model`, binds its
// socket to the DMA fabric and reads its statistics when the run ends. The built-in model is
// `banked` (channels, banks, rows, refresh); register your own with trnsim::register_hbm_model
// (trnsim/simulate.hpp) and select it with `--set hbm.model=NAME`.
//
// The contract of b_transport(payload, delay), which the fabric calls on the target's socket:
//  - Call time: sc_time_stamp() is the memory system's current time; `delay` on entry is when
//    the transaction is issued, relative to it (loosely timed, so possibly ahead of the kernel).
//  - Order: transactions reach one target in nondecreasing issue time (sc_time_stamp() + delay),
//    so a target can schedule each on arrival and never revisit it.
//  - Payload: the address is the byte address inside this stack (0 .. capacity - 1); the length
//    is the bytes of one DMA packet, contiguous in the stack (at most dma.packet_bytes); the
//    command is TLM_READ_COMMAND or TLM_WRITE_COMMAND. The data pointer is null: targets model
//    time only.
//  - Return: `delay` = the time the last byte completes, relative to sc_time_stamp() (never
//    before the issue time); the response status TLM_OK_RESPONSE. A target whose controller is
//    full may say when it accepted the transaction (>= issue) in the TransactionTiming
//    extension the initiator attaches: the initiator issues nothing more to any memory before
//    then (back-pressure without a handshake phase). Leaving it untouched means "accepted at
//    issue".
//  - b_transport must not wait(): it is called from an SC_METHOD.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <systemc>
#include <tlm>

#include "trnsim/stats.hpp"

namespace trnsim {

/// Attached by the initiator to every payload it sends to a memory target: when the target
/// accepted the transaction, as a delay relative to sc_time_stamp() like the b_transport
/// annotation. Initialised to the issue time; a target that accepts late raises it.
class TransactionTiming : public tlm::tlm_extension<TransactionTiming> {
 public:
  sc_core::sc_time accept_delay;

  tlm::tlm_extension_base* clone() const override { return new TransactionTiming(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    accept_delay = static_cast<const TransactionTiming&>(other).accept_delay;
  }
};

/// Where a target sits and what the config says of its stack.
struct HbmTargetSpec {
  std::uint32_t stack = 0;                  ///< global stack index (chip * stacks per chip + local)
  std::uint32_t chip = 0;                   ///< the chip the stack belongs to
  double peak_bandwidth_gbps = 0;           ///< hbm.stack_bandwidth_gbps (GB/s = bytes per ns)
  std::uint64_t capacity_bytes = 0;         ///< hbm.stack_capacity_gib in bytes
  std::uint32_t max_transaction_bytes = 0;  ///< dma.packet_bytes: the longest transaction
};

/// One HBM stack as a TLM-2.0 target (the contract above).
class HbmTarget : public sc_core::sc_module {
 public:
  /// `name`: the one the factory was given.
  explicit HbmTarget(const sc_core::sc_module_name& name) : sc_core::sc_module(name) {}

  /// The socket the fabric binds (e.g. a tlm_utils::simple_target_socket member).
  virtual tlm::tlm_target_socket<>& target_socket() = 0;

  /// Adds what the target did to `stack`, its element of `memory_system.hbm.stacks` in the
  /// statistics (docs/outputs.md; trnsim/stats.hpp); nothing if it served no transaction (the
  /// stack is then left out). The memory system adds `stack` and `cores`; `elapsed_ns` is the
  /// run's duration, for rates.
  virtual void add_statistics(stats::Group& stack, double elapsed_ns) const = 0;
};

/// Builds the target of one stack; `name` is its SystemC name ("hbm0"), to pass to HbmTarget's
/// constructor.
using HbmTargetFactory =
    std::function<std::unique_ptr<HbmTarget>(sc_core::sc_module_name name, const HbmTargetSpec&)>;

}  // namespace trnsim
