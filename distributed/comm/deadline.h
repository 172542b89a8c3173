// Deadlines inside a backend: a collective's timeout runs from when it starts, and each
// wait inside it gets what is left. Internal to the backends.
#pragma once

#include <algorithm>
#include <chrono>

namespace colony::dist::comm_detail {

using DeadlineClock = std::chrono::steady_clock;

// What is left of `deadline`, at least 1 ms: gloo reads 0 as "no timeout" / "its default".
inline std::chrono::milliseconds remaining(DeadlineClock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - DeadlineClock::now());
  return std::max(left, std::chrono::milliseconds(1));
}

}  // namespace colony::dist::comm_detail
