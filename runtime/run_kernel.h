// The dispatch seam of the kernels declared with COLONY_KERNEL (kernels/common/kernel.h): an op's
// front function checks its arguments, allocates its outputs and calls
//
//   run_kernel<SoftmaxForward>(out.device(), dtype, x, y, outer, dim, inner, log);
//
// On the CPU that is SoftmaxForward::cpu(args...). On a CUDA device it makes the device current
// (so that what acts on "the current device" reaches it) and queues SoftmaxForward::cuda on
// the stream ops on that device are ordered on (current_stream: per thread, a StreamGuard
// redirects it). In a build without CUDA a CUDA device is an error naming it, as backend_for's is.
#pragma once

#include <stdexcept>
#include <utility>

#include "kernels/common/kernel.h"
#include "runtime/cuda.h"
#include "runtime/device.h"
#include "runtime/stream.h"

namespace colony {

template <typename Tag, typename... Args>
void run_kernel(Device device, Args&&... args) {
  if (device.is_cpu()) {
    Tag::cpu(std::forward<Args>(args)...);
    return;
  }
#ifdef COLONY_WITH_CUDA
  cuda::check_device(device.index, device.str());  // "cuda:1: ...", as backend_for says it
  cuda::DeviceGuard guard(device.index);
  Tag::cuda(std::forward<Args>(args)..., current_stream(device).handle());
#else
  cuda::check_device(device.index, device.str());  // throws: no CUDA device in this build
  throw std::logic_error(std::string(Tag::name) + ": no kernel for " + device.str());  // not reached
#endif
}

}  // namespace colony
