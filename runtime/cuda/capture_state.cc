#include "runtime/cuda/capture_state.h"

#include <atomic>
#include <stdexcept>
#include <string>

namespace colony::kernels::cuda {
namespace {

thread_local int captures_on_this_thread = 0;
std::atomic<int> captures_in_process{0};
std::atomic<CaptureQuery> test_query{nullptr};

}  // namespace

void note_capture_begin() {
  ++captures_on_this_thread;
  captures_in_process.fetch_add(1, std::memory_order_acq_rel);
}
void note_capture_end() {
  if (captures_on_this_thread == 0) return;
  --captures_on_this_thread;
  captures_in_process.fetch_sub(1, std::memory_order_acq_rel);
}

bool thread_is_capturing() {
  if (CaptureQuery q = test_query.load(std::memory_order_acquire)) return q();
  return captures_on_this_thread > 0;
}

bool any_thread_capturing() {
  return thread_is_capturing() || captures_in_process.load(std::memory_order_acquire) > 0;
}

void check_no_capture_anywhere(const char* op) {
  check_not_capturing(op);
  if (captures_in_process.load(std::memory_order_acquire) == 0) return;
  throw std::runtime_error(std::string(op) +
                           ": would wait for the whole device while another thread captures a CUDA graph, which "
                           "CUDA refuses and which would invalidate that capture; wait for the capture to end, or "
                           "synchronize a stream (Stream::synchronize) instead of the device");
}

CaptureQuery set_capture_query_for_testing(CaptureQuery query) {
  return test_query.exchange(query, std::memory_order_acq_rel);
}

void check_not_capturing(const char* op) {
  if (!thread_is_capturing()) return;
  throw std::runtime_error(std::string(op) +
                           ": would make the host wait for the device while this thread captures a CUDA graph "
                           "(a captured step runs later, at replay, so a host read or synchronization cannot happen "
                           "inside it); read results such as the loss after replay(), outside the capture");
}

}  // namespace colony::kernels::cuda
