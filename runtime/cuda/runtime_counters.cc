#include "runtime/cuda/runtime_counters.h"

#include "runtime/cuda/capture_state.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace colony::kernels::cuda {
namespace {

// Relaxed atomics: the counts are read between steps, never used to order memory.
std::atomic<int64_t> host_syncs{0};
std::atomic<int64_t> launches{0};

std::atomic<bool>& sync_switch() {
  static std::atomic<bool> on{parse_sync_env(std::getenv("COLONY_CUDA_SYNC"))};
  return on;
}

}  // namespace

void count_host_sync(const char* op) {
  check_not_capturing(op);
  host_syncs.fetch_add(1, std::memory_order_relaxed);
}
int64_t host_sync_count() { return host_syncs.load(std::memory_order_relaxed); }
void count_launch() { launches.fetch_add(1, std::memory_order_relaxed); }
int64_t launch_count() { return launches.load(std::memory_order_relaxed); }

bool sync_after_launch() { return sync_switch().load(std::memory_order_relaxed); }
void set_sync_after_launch(bool on) { sync_switch().store(on, std::memory_order_relaxed); }

bool parse_sync_env(const char* value) {
  if (value == nullptr) return false;
  std::string v(value);
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  if (v.empty() || v == "0" || v == "false" || v == "no" || v == "off") return false;
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  throw std::invalid_argument("COLONY_CUDA_SYNC=" + std::string(value) +
                              ": expected 1/true/yes/on (wait after every kernel launch) or 0/false/no/off");
}

}  // namespace colony::kernels::cuda
