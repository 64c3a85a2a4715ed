// Trainium2 instruction times the whole-core tests expect, worked out by hand from
// configs/trn2.json and the cost rules in docs/cost-models.md (not from the cost code).
#pragma once

namespace trnsim::testing {

/// sequencer.semaphore_latency_ns.
inline constexpr double kSemaphoreNs = 50.0;
/// sequencer.issue_ns: a DMA trigger's time on its engine.
inline constexpr double kIssueNs = 2.0;
/// VectorE tensor_tensor fp32 [128, 2048], both inputs in SBUF: max(MIN_II, 2N) = 4096 cycles
/// at 0.96 GHz.
inline constexpr double kVectorAddNs = 4096 / 0.96;
/// ScalarE activation copy fp32 [128, 2048]: max(MIN_II, N) = 2048 cycles at 1.2 GHz.
inline constexpr double kScalarCopyNs = 2048 / 1.2;

}  // namespace trnsim::testing
