// Shares of a whole, as the statistics report them.
#pragma once

namespace trnsim::util {

/// part / whole in percent; 0 when whole is 0 (nothing to share).
inline double percent(double part, double whole) {
  return whole > 0 ? 100.0 * part / whole : 0.0;
}

}  // namespace trnsim::util
