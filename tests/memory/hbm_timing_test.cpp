// Timing-contract tests of the HBM channel and stack model (memory/hbm_timing.hpp), without a
// SystemC kernel. Parameters are set here, not loaded, so the arithmetic in the comments holds:
// 16 channels sharing 1024 GB/s = 64 B/ns per channel, so a 256 B request is 4 bursts of 64 B =
// 4 ns on the bus; tRCD = tRP = tCL = 14 ns; first refresh of channel c at c*tREFI/16 + tREFI.
#include "memory/hbm_timing.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <set>
#include <string_view>

namespace trnsim::memory {
namespace {

config::HbmParams contract_params() {
  config::HbmParams p;
  p.stack_bandwidth_gbps = 1024;
  p.channels_per_stack = 16;
  p.banks_per_channel = 32;
  p.row_bytes = 1024;
  p.interleave_bytes = 256;
  p.burst_bytes = 64;
  p.address_hash = config::AddressHash::bitslice;
  p.t_rcd_ns = 14;
  p.t_rp_ns = 14;
  p.t_cl_ns = 14;
  p.t_refi_ns = 3900;
  p.t_rfc_ns = 350;
  p.t_wtr_ns = 8;
  p.t_rtw_ns = 4;
  p.controller_latency_ns = 50;
  p.queue_depth = 64;
  return p;
}

HbmChannel channel(const config::HbmParams& p = contract_params()) {
  return HbmChannel(p, 64.0, 0.0);
}

ChannelRequest request(double arrival, std::uint32_t bank, std::uint64_t row, bool write = false,
                       std::uint32_t bytes = 256) {
  return ChannelRequest{arrival, bank, row, bytes, write};
}

TEST(Crc32c, MatchesThePublishedCheckValues) {
  // The CRC-32C catalogue's check value ("123456789") and the iSCSI test vectors of RFC 3720,
  // B.4 (32 bytes of 0x00, of 0xFF).
  constexpr std::string_view kCheck = "123456789";
  std::array<std::uint8_t, 9> check{};
  for (std::size_t i = 0; i < check.size(); ++i) check[i] = static_cast<std::uint8_t>(kCheck[i]);
  EXPECT_EQ(crc32c(check), 0xE3069283u);
  std::array<std::uint8_t, 32> zeros{};
  EXPECT_EQ(crc32c(zeros), 0x8A9136AAu);
  std::array<std::uint8_t, 32> ones{};
  ones.fill(0xFF);
  EXPECT_EQ(crc32c(ones), 0x62A8AB43u);
  // A 64-bit value hashes as its 8 little-endian bytes.
  const std::array<std::uint8_t, 8> bytes = {0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF};
  EXPECT_EQ(crc32c(std::uint64_t{0xEFCDAB8967452301}), crc32c(bytes));
}

TEST(HbmChannel, RowHitClosedAndConflictLatencies) {
  HbmChannel ch = channel();
  // Closed bank: activate at 0, CAS at tRCD = 14, data at 14 + tCL = 28, burst [28, 32).
  const ChannelGrant closed = ch.access(request(0, 0, 7));
  EXPECT_EQ(closed.outcome, RowOutcome::kClosed);
  EXPECT_DOUBLE_EQ(closed.start_ns, 28);
  EXPECT_DOUBLE_EQ(closed.end_ns, 32);
  // Same row later: CAS at arrival 100, data at 114, burst [114, 118): tCL + 4.
  const ChannelGrant hit = ch.access(request(100, 0, 7));
  EXPECT_EQ(hit.outcome, RowOutcome::kHit);
  EXPECT_DOUBLE_EQ(hit.start_ns, 114);
  EXPECT_DOUBLE_EQ(hit.end_ns, 118);
  // Other row: precharge at 200, activate at 214, CAS at 228, data at 242: tRP+tRCD+tCL + 4.
  const ChannelGrant conflict = ch.access(request(200, 0, 8));
  EXPECT_EQ(conflict.outcome, RowOutcome::kConflict);
  EXPECT_DOUBLE_EQ(conflict.start_ns, 242);
  EXPECT_DOUBLE_EQ(conflict.end_ns, 246);
  EXPECT_EQ(ch.stats().row_hits, 1u);
  EXPECT_EQ(ch.stats().row_closed, 1u);
  EXPECT_EQ(ch.stats().row_conflicts, 1u);
  EXPECT_EQ(ch.stats().read_bytes, 768u);
}

TEST(HbmChannel, BankConflictSerialisesWhereAnotherBankOverlaps) {
  // Same bank, two rows, both at 0: the second precharges after the first burst ends (32),
  // activates at 46, CAS at 60, data at 74: burst [74, 78).
  HbmChannel same = channel();
  same.access(request(0, 0, 1));
  const ChannelGrant second = same.access(request(0, 0, 2));
  EXPECT_EQ(second.outcome, RowOutcome::kConflict);
  EXPECT_DOUBLE_EQ(second.start_ns, 74);
  // Another bank: its activate overlaps the first (data ready at 28 too); it only waits for the
  // bus: [32, 36).
  HbmChannel other = channel();
  other.access(request(0, 0, 1));
  const ChannelGrant parallel = other.access(request(0, 1, 2));
  EXPECT_EQ(parallel.outcome, RowOutcome::kClosed);
  EXPECT_DOUBLE_EQ(parallel.start_ns, 32);
  EXPECT_DOUBLE_EQ(parallel.end_ns, 36);
}

TEST(HbmChannel, RowHitArrivingLaterOvertakesAMissFirstReadyFirst) {
  HbmChannel ch = channel();
  ch.access(request(0, 0, 1));  // opens bank 0 row 1
  // Bank 1 closed at 100: data ready at 128, burst [128, 132).
  const ChannelGrant miss = ch.access(request(100, 1, 5));
  // Bank 0 row 1 hit at 101: data ready at 115 -> burst [115, 119), before the miss.
  const ChannelGrant hit = ch.access(request(101, 0, 1));
  EXPECT_DOUBLE_EQ(miss.start_ns, 128);
  EXPECT_DOUBLE_EQ(hit.start_ns, 115);
  EXPECT_LT(hit.end_ns, miss.start_ns);
  // A hit on the row the miss opened waits for that row: CAS not before the miss's CAS + its
  // burst, 128 - 14 + 4 = 118; data at 132, right after the miss's burst: [132, 136).
  const ChannelGrant follower = ch.access(request(102, 1, 5));
  EXPECT_EQ(follower.outcome, RowOutcome::kHit);
  EXPECT_DOUBLE_EQ(follower.start_ns, 132);
}

TEST(HbmChannel, ReadWriteTurnaround) {
  HbmChannel ch = channel();
  // Read on bank 0: [28, 32). Write on bank 1, data ready at 28: not before 32 + tRTW = 36.
  const ChannelGrant read = ch.access(request(0, 0, 1));
  const ChannelGrant write = ch.access(request(0, 1, 1, true));
  EXPECT_DOUBLE_EQ(read.start_ns, 28);
  EXPECT_DOUBLE_EQ(write.start_ns, 36);
  // Another read ready at 28: the gap [32, 36) is too small (32 + 4 + tRTW = 40 > 36), so after
  // the write: 40 + tWTR = 48.
  const ChannelGrant read2 = ch.access(request(0, 2, 1));
  EXPECT_DOUBLE_EQ(read2.start_ns, 48);
  EXPECT_EQ(ch.stats().write_bytes, 256u);
}

TEST(HbmChannel, RefreshIsPulledIntoIdleTimeAndClosesRows) {
  HbmChannel ch = channel();       // refresh k due at 3900 k (k >= 1), 350 ns each
  ch.access(request(3000, 0, 1));  // opens bank 0 row 1; the bus is idle from 3032
  EXPECT_EQ(ch.refreshes_due(3899), 0);
  EXPECT_EQ(ch.refreshes_due(3900), 1);
  // At 5000 one refresh is owed and 5000 - 3032 >= 350 ns were idle: it ran then, unseen, but
  // it closed the row: activate again (data at 5028), no delay.
  const ChannelGrant after = ch.access(request(5000, 0, 1));
  EXPECT_EQ(after.outcome, RowOutcome::kClosed);
  EXPECT_DOUBLE_EQ(after.start_ns, 5028);
  EXPECT_EQ(ch.stats().refreshes, 1u);
  EXPECT_EQ(ch.stats().forced_refreshes, 0u);
}

TEST(HbmChannel, ABusyChannelPostponesRefreshThenForcesIt) {
  // Row hits back to back at the bus rate (one 4 ns burst every 4 ns) never leave 350 ns idle.
  // The controller postpones up to 8 refreshes; the 9th becomes due at 9 x 3900 = 35,100 ns and
  // is forced: the bus stops for 350 ns after the bursts already granted.
  HbmChannel ch = channel();
  double previous_end = 0;
  double largest_gap = 0;
  double gap_at = 0;
  for (double t = 0; t < 40000; t += 4) {
    const ChannelGrant grant = ch.access(request(t, 0, 1));
    if (t > 0 && grant.start_ns - previous_end > largest_gap) {
      largest_gap = grant.start_ns - previous_end;
      gap_at = previous_end;
    }
    previous_end = grant.end_ns;
  }
  EXPECT_EQ(ch.stats().forced_refreshes, 2u);  // due 35,100 and 39,000
  // The refresh, then the closed row's activate and CAS: 350 + 14 + 14.
  EXPECT_DOUBLE_EQ(largest_gap, 378.0);
  EXPECT_GE(gap_at, 35100.0);
  EXPECT_LT(gap_at, 35100.0 + 40.0);  // at most the queued bursts before it
}

TEST(HbmChannel, FullControllerQueueAcceptsWhenTheEarliestRequestStarts) {
  config::HbmParams p = contract_params();
  p.queue_depth = 2;
  HbmChannel ch = channel(p);
  // Same row: [28, 32), then hit with CAS at 18 -> [32, 36); queue full (2 waiting).
  EXPECT_DOUBLE_EQ(ch.access(request(0, 0, 1)).accept_ns, 0);
  EXPECT_DOUBLE_EQ(ch.access(request(0, 0, 1)).start_ns, 32);
  // Third waits until the first starts (28): CAS at 28, data at 42.
  const ChannelGrant third = ch.access(request(0, 0, 1));
  EXPECT_DOUBLE_EQ(third.accept_ns, 28);
  EXPECT_DOUBLE_EQ(third.start_ns, 42);
}

TEST(HbmStackTiming, BitsliceInterleavesGranulesOverChannelsThenRowsOverBanks) {
  const HbmStackTiming stack(contract_params());
  for (std::uint32_t g = 0; g < 16; ++g) {
    EXPECT_EQ(stack.locate(g * 256ull).channel, g);
  }
  // Granule 16 is channel 0's second granule: local address 256, still row 0 of bank 0.
  EXPECT_EQ(stack.locate(16 * 256).channel, 0u);
  EXPECT_EQ(stack.locate(16 * 256).bank, 0u);
  // Channel 0's 1 KiB row holds 4 granules: granule 64 (local 1024) starts bank 1.
  EXPECT_EQ(stack.locate(64 * 256).bank, 1u);
  EXPECT_EQ(stack.locate(64 * 256).row, 0u);
  // After 32 banks the row advances: local 32 KiB = granule 16 * 128.
  EXPECT_EQ(stack.locate(16ull * 128 * 256).bank, 0u);
  EXPECT_EQ(stack.locate(16ull * 128 * 256).row, 1u);
}

TEST(HbmStackTiming, CrcHashSpreadsAChannelStrideOverChannels) {
  config::HbmParams p = contract_params();
  p.address_hash = config::AddressHash::crc;
  const HbmStackTiming hashed(p);
  // Every aligned 4 KiB (16 granules) still covers each channel once.
  std::set<std::uint32_t> block;
  for (std::uint32_t g = 0; g < 16; ++g) block.insert(hashed.locate(8192 + g * 256ull).channel);
  EXPECT_EQ(block.size(), 16u);
  // A 4 KiB stride hits channel 0 only with bit slicing; hashed, it spreads.
  const HbmStackTiming sliced(contract_params());
  std::set<std::uint32_t> stride_sliced;
  std::set<std::uint32_t> stride_hashed;
  for (std::uint64_t i = 0; i < 64; ++i) {
    stride_sliced.insert(sliced.locate(i * 4096).channel);
    stride_hashed.insert(hashed.locate(i * 4096).channel);
  }
  EXPECT_EQ(stride_sliced.size(), 1u);
  EXPECT_GE(stride_hashed.size(), 12u);
}

TEST(HbmStackTiming, StackBandwidthIsTheCeiling) {
  config::HbmParams p = contract_params();
  p.t_rfc_ns = 0;  // no refresh: the ceiling is exactly the stack bandwidth
  HbmStackTiming stack(p);
  // Offer 4 KiB every 2 ns (2048 B/ns) for 4 MiB: the stack moves 1024 B/ns, so the last byte
  // cannot leave before 4 MiB / 1024 = 4096 ns; with back-pressure the issuer follows accept.
  double issue = 0;
  double done = 0;
  for (std::uint64_t i = 0; i < 1024; ++i) {
    const StackAccess access = stack.access(issue, i * 4096, 4096, false);
    done = std::max(done, access.done_ns);
    issue = std::max(issue + 2, access.accept_ns);
  }
  const double achieved = 4.0 * 1024 * 1024 / done;
  EXPECT_LE(achieved, 1024.0);
  EXPECT_GE(achieved, 0.9 * 1024);
  // Sequential 4 KiB requests: each channel row (1 KiB) takes 4 granules: 1 miss, 3 hits.
  const ChannelStats total = stack.totals();
  EXPECT_EQ(total.requests, 16u * 1024);
  EXPECT_NEAR(static_cast<double>(total.row_hits) / total.requests, 0.75, 0.01);
}

}  // namespace
}  // namespace trnsim::memory

// libsystemc.so refers to sc_main (its own main() calls it); gtest_main provides main(), so this
// is never called.
extern "C" int sc_main(int /*argc*/, char* /*argv*/[]) {
  return 1;
}
