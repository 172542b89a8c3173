// The device runtime seam.
//
// Kernels are reached through run_kernel<Tag>(device, ...) (runtime/run_kernel.h): each entry point
// is declared once with COLONY_KERNEL in a kernels/common header and defined once per device
// folder (docs/ARCHITECTURE.md, "Adding an op"). What remains here is what is not a kernel of an
// op but the device runtime itself, which the copies of ops/copy.cc drive:
//  - memcpy: dense bytes across a device boundary (host <-> device, device -> another device),
//    queued on a stream the caller chooses (the current one, or copy.cc's upload stream), with a
//    MemcpyKind and an async flag that no kernel has; the CPU has no device memory to move to.
// Allocation (runtime/allocator.h, caching_allocator.h), streams and events (stream.h), device
// selection (cuda.h) are the rest of the runtime, each behind its own header rather than this
// class; CUDA graphs (ops/cuda_graph.h) are built on them.
//
// backend_for(device) gives the backend of a device: the CPU backend (cpu_backend.cc), or the CUDA
// backend of that device (cuda_backend.cc, built only with CUDA), which makes its device current
// around each call.
#pragma once

#include <cstddef>

#include "runtime/device.h"
#include "runtime/stream.h"

namespace colony {

// Which way a dense byte copy crosses a device boundary (copy.cc's transfers).
enum class MemcpyKind { HostToDevice, DeviceToHost, DeviceToDevice };

class Backend {
 public:
  virtual ~Backend() = default;

  // nbytes dense bytes between the host and this device, or from this device to another, queued on
  // `stream` (a stream of this device: the current one, or copy.cc's upload stream); returns once
  // they have landed unless `async`. The CPU backend throws std::logic_error: two CPU tensors are
  // on one device, and copy.cc asks the backend of the CUDA side of a transfer.
  virtual void memcpy(void* dst, const void* src, size_t nbytes, MemcpyKind kind, const Stream& stream,
                      bool async) const = 0;
};

// The backend of `device`. Throws std::runtime_error, as cuda::check_device does, when `device` is
// a CUDA device this process cannot use ("cuda:0: no CUDA device available (Colony was built
// without CUDA ...)", or an index out of range).
const Backend& backend_for(Device device);

namespace detail {
// The backends behind backend_for: cpu_backend.cc, and cuda_backend.cc (defined only in CUDA builds).
const Backend& cpu_backend();
const Backend& cuda_backend(int index);
}  // namespace detail

}  // namespace colony
