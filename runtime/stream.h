// Streams and events. CUDA devices have a current stream per device (the default stream unless
// set with StreamGuard); on the CPU everything is synchronous and these are no-ops.
#pragma once

#include <cstdint>
#include <memory>

#include "runtime/device.h"

namespace colony {

class Stream {
 public:
  Stream() = default;  // the CPU "stream"
  Stream(Device device, void* handle) : device_(device), handle_(handle) {}
  Device device() const { return device_; }
  // The cudaStream_t (nullptr: the legacy default stream, or the CPU).
  void* handle() const { return handle_; }
  void synchronize() const;
  bool query() const;  // true when all work queued so far has finished
  bool operator==(const Stream& o) const { return device_ == o.device_ && handle_ == o.handle_; }
  bool operator!=(const Stream& o) const { return !(*this == o); }

 private:
  Device device_ = kCPU;
  void* handle_ = nullptr;
};

// The stream ops on `device` are queued on.
Stream current_stream(Device device);
// A new non-blocking stream on a CUDA device (the NCCL and copy streams); owned by the runtime
// for the life of the process.
Stream new_stream(Device device, int priority = 0);

// Makes `s` the current stream of its device for a scope.
class StreamGuard {
 public:
  explicit StreamGuard(Stream s);
  ~StreamGuard();
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

 private:
  Stream prev_;
};

// A marker in a stream. On the CPU, record/wait/synchronize do nothing and query() is true.
class Event {
 public:
  // `enable_timing`: elapsed_ms() may read it. An event that only orders streams is cheaper
  // without (cudaEventDisableTiming); PyTorch's default is false, Colony's true for older callers.
  explicit Event(bool enable_timing = true);
  ~Event();
  Event(Event&&) noexcept;
  Event& operator=(Event&&) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  void record(const Stream& s);
  // Makes future work on `s` wait until this event has completed (no host block).
  void wait(const Stream& s) const;
  void synchronize() const;
  bool query() const;
  // Milliseconds between two recorded events (CUDA only; both made with timing enabled).
  float elapsed_ms(const Event& end) const;

 private:
  Device device_ = kCPU;
  void* handle_ = nullptr;  // cudaEvent_t, created lazily on first CUDA record
  bool timing_ = true;
};

}  // namespace colony
