// Current streams and events. The current stream is per thread and per device (as in PyTorch): a
// StreamGuard in a data-loader or communication thread never redirects the training thread's work.
#include "runtime/stream.h"

#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>

#include "runtime/cuda.h"

#ifdef COLONY_WITH_CUDA
#include "runtime/cuda/runtime.h"
#endif

namespace colony {
namespace {

// device index -> cudaStream_t; absent means the legacy default stream (nullptr).
std::unordered_map<int, void*>& current_streams() {
  thread_local std::unordered_map<int, void*> streams;
  return streams;
}

std::string where(const char* fn, Device d) { return std::string(fn) + "(" + d.str() + ")"; }

}  // namespace

void Stream::synchronize() const {
  if (device_.is_cpu()) return;
  cuda::DeviceGuard guard(device_.index);
#ifdef COLONY_WITH_CUDA
  kernels::cuda::stream_synchronize(handle_);
#endif
}

bool Stream::query() const {
  if (device_.is_cpu()) return true;
  cuda::DeviceGuard guard(device_.index);
#ifdef COLONY_WITH_CUDA
  return kernels::cuda::stream_query(handle_);
#else
  return true;  // not reached: the guard throws without CUDA
#endif
}

Stream current_stream(Device device) {
  if (device.is_cpu()) return Stream();
  cuda::check_device(device.index, where("current_stream", device));
  auto& m = current_streams();
  auto it = m.find(device.index);
  return Stream(device, it == m.end() ? nullptr : it->second);
}

Stream new_stream(Device device, int priority) {
  // The CPU is synchronous: a "new stream" there is the CPU stream, so callers that overlap work
  // on a GPU (DDP's communication stream) need no special case on the CPU.
  if (device.is_cpu()) return Stream();
  cuda::DeviceGuard guard(device.index);
#ifdef COLONY_WITH_CUDA
  // Never destroyed: streams are few and live as long as the work that captured their handles.
  return Stream(device, kernels::cuda::stream_create(priority));
#else
  (void)priority;
  return Stream();  // not reached: the guard throws without CUDA
#endif
}

StreamGuard::StreamGuard(Stream s) : prev_(current_stream(s.device())) {
  if (s.device().is_cuda()) current_streams()[s.device().index] = s.handle();
}

StreamGuard::~StreamGuard() {
  if (prev_.device().is_cuda()) current_streams()[prev_.device().index] = prev_.handle();
}

// ---- Event -------------------------------------------------------------------------------------

Event::Event(bool enable_timing) : timing_(enable_timing) {}

Event::~Event() {
#ifdef COLONY_WITH_CUDA
  if (handle_ == nullptr) return;
  try {
    cuda::DeviceGuard guard(device_.index);
    kernels::cuda::event_destroy(handle_);
  } catch (...) {
    // At process exit the runtime may already be unloaded; the event dies with it.
  }
#endif
}

Event::Event(Event&& o) noexcept : device_(o.device_), handle_(o.handle_), timing_(o.timing_) {
  o.device_ = kCPU;
  o.handle_ = nullptr;
}

Event& Event::operator=(Event&& o) noexcept {
  if (this != &o) {
    Event old(std::move(*this));  // destroys our handle, if any, on scope exit
    device_ = o.device_;
    handle_ = o.handle_;
    timing_ = o.timing_;
    o.device_ = kCPU;
    o.handle_ = nullptr;
  }
  return *this;
}

void Event::record(const Stream& s) {
  // An event belongs to the device of its first CUDA record, as in PyTorch.
  if (handle_ != nullptr && s.device() != device_)
    throw std::runtime_error("Event::record: the event belongs to " + device_.str() +
                             ", the stream is on " + s.device().str());
  if (s.device().is_cpu()) return;
  cuda::DeviceGuard guard(s.device().index);
#ifdef COLONY_WITH_CUDA
  if (handle_ == nullptr) {
    handle_ = kernels::cuda::event_create(timing_);
    device_ = s.device();
  }
  kernels::cuda::event_record(handle_, s.handle());
#endif
}

void Event::wait(const Stream& s) const {
  if (handle_ == nullptr) return;  // never recorded on a GPU: nothing to wait for
#ifdef COLONY_WITH_CUDA
  if (s.device().is_cpu()) {
    // CPU work runs on the host as soon as it is issued, so "after the event" means block here.
    synchronize();
    return;
  }
  cuda::DeviceGuard guard(s.device().index);
  kernels::cuda::stream_wait_event(s.handle(), handle_);
#else
  (void)s;
#endif
}

void Event::synchronize() const {
  if (handle_ == nullptr) return;
#ifdef COLONY_WITH_CUDA
  kernels::cuda::event_synchronize(handle_);
#endif
}

bool Event::query() const {
  if (handle_ == nullptr) return true;
#ifdef COLONY_WITH_CUDA
  return kernels::cuda::event_query(handle_);
#else
  return true;
#endif
}

float Event::elapsed_ms(const Event& end) const {
  if (!timing_ || !end.timing_)
    throw std::runtime_error(std::string("Event::elapsed_ms: the ") + (!timing_ ? "start" : "end") +
                             " event was made with Event(/*enable_timing=*/false); make both with timing enabled");
  if (handle_ == nullptr || end.handle_ == nullptr)
    throw std::runtime_error(
        std::string("Event::elapsed_ms: both events must have been recorded on a CUDA stream (") +
        "start: " + (handle_ ? device_.str() : "not recorded on CUDA") +
        ", end: " + (end.handle_ ? end.device_.str() : "not recorded on CUDA") +
        "); CPU work is synchronous, time it with a host clock");
  if (device_ != end.device_)
    throw std::runtime_error("Event::elapsed_ms: events are on different devices (" +
                             device_.str() + " and " + end.device_.str() + ")");
#ifdef COLONY_WITH_CUDA
  return kernels::cuda::event_elapsed_ms(handle_, end.handle_);
#else
  return 0.f;  // not reached: without CUDA no event has a handle
#endif
}

}  // namespace colony
