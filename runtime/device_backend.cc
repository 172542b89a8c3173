// backend_for: the one place that maps a device to the backend running its kernels.
#include "runtime/device_backend.h"

#include <stdexcept>
#include <string>

#include "runtime/cuda.h"

namespace colony {

const Backend& backend_for(Device device) {
  if (device.is_cpu()) return detail::cpu_backend();
#ifdef COLONY_WITH_CUDA
  return detail::cuda_backend(device.index);
#else
  cuda::check_device(device.index, device.str());  // throws: no CUDA device in this build
  throw std::logic_error(device.str() + ": no backend for this device");  // not reached
#endif
}

}  // namespace colony
