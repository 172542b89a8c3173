// The device error record and its check: host code of the runtime layer (kernels/cuda:runtime),
// which both the kernels' launchers and the synchronizing wrappers of runtime.cc use.
#include "runtime/cuda/device_errors.h"

#include <cuda_runtime.h>

#include <atomic>
#include <stdexcept>
#include <string>

namespace colony::kernels::cuda {
namespace {
// Published once allocated, so a synchronization before any index kernel ran reads nothing.
std::atomic<DeviceErrorRecord*> g_record{nullptr};
}  // namespace

DeviceErrorRecord* device_error_record() {
  static DeviceErrorRecord* record = [] {
    void* p = nullptr;
    cudaError_t err = cudaHostAlloc(&p, sizeof(DeviceErrorRecord), cudaHostAllocMapped | cudaHostAllocPortable);
    if (err != cudaSuccess) {
      cudaGetLastError();
      throw std::runtime_error(std::string("device error record: cudaHostAlloc(mapped) failed: ") +
                               cudaGetErrorString(err));
    }
    auto* r = static_cast<DeviceErrorRecord*>(p);
    *r = DeviceErrorRecord{0, 0, 0};
    g_record.store(r, std::memory_order_release);
    return r;
  }();
  return record;
}

void check_device_errors() {
  DeviceErrorRecord* r = g_record.load(std::memory_order_acquire);
  if (r == nullptr) return;
  std::string message = take_device_error(r);
  if (!message.empty()) throw std::runtime_error(message);
}

}  // namespace colony::kernels::cuda
