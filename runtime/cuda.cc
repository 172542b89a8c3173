// CUDA availability: asked of the runtime once per process, so that a machine without a driver
// pays for the failed cudaGetDeviceCount only once and every later question is a load.
#include "runtime/cuda.h"

#include <stdexcept>
#include <string>

#include "runtime/cuda/runtime_counters.h"
#ifdef COLONY_WITH_CUDA
#include "runtime/cuda/runtime.h"
#endif

namespace colony::cuda {
namespace {

struct Availability {
  int count = 0;
  std::string reason;
};

const Availability& availability() {
  // A function-local static is initialised exactly once, even when threads race to the first call.
  static const Availability a = [] {
    Availability r;
#ifdef COLONY_WITH_CUDA
    r.count = kernels::cuda::device_count(&r.reason);
    if (r.count > 0) r.reason.clear();
#else
    r.reason = "Colony was built without CUDA (no toolkit found or --config=cpu)";
#endif
    return r;
  }();
  return a;
}

}  // namespace

int device_count() { return availability().count; }

bool is_available() { return device_count() > 0; }

bool is_compiled() {
#ifdef COLONY_WITH_CUDA
  return true;
#else
  return false;
#endif
}

std::string unavailable_reason() { return availability().reason; }

void check_device(int index, const std::string& what) {
  const Availability& a = availability();
  if (a.count == 0)
    throw std::runtime_error(what + ": no CUDA device available (" + a.reason + ")");
  if (index < 0 || index >= a.count)
    throw std::runtime_error(what + ": device index " + std::to_string(index) + " out of range (" +
                             std::to_string(a.count) + (a.count == 1 ? " device)" : " devices)"));
}

// The counters exist in every build (runtime/cuda/runtime_counters.h); without CUDA nothing counts.
int64_t host_sync_count() { return kernels::cuda::host_sync_count(); }
int64_t kernel_launch_count() { return kernels::cuda::launch_count(); }
bool sync_after_launch() { return kernels::cuda::sync_after_launch(); }
void set_sync_after_launch(bool on) { kernels::cuda::set_sync_after_launch(on); }

#ifdef COLONY_WITH_CUDA

int current_device() {
  check_device(0, "cuda::current_device");
  return kernels::cuda::current_device();
}

void set_device(int index) {
  check_device(index, "cuda::set_device(" + std::to_string(index) + ")");
  kernels::cuda::set_device(index);
}

std::string device_uuid(int index) {
  check_device(index, "cuda::device_uuid(" + std::to_string(index) + ")");
  return kernels::cuda::device_uuid(index);
}

void synchronize(int index) {
  if (index < 0) index = current_device();
  check_device(index, "cuda::synchronize(cuda:" + std::to_string(index) + ")");
  DeviceGuard guard(index);
  kernels::cuda::device_synchronize();
}

DeviceGuard::DeviceGuard(int index) {
  check_device(index, "DeviceGuard(cuda:" + std::to_string(index) + ")");
  int cur = kernels::cuda::current_device();
  if (cur != index) {
    kernels::cuda::set_device(index);
    prev_ = cur;
  }
}

DeviceGuard::~DeviceGuard() {
  if (prev_ < 0) return;
  try {
    kernels::cuda::set_device(prev_);
  } catch (...) {
    // Destructors must not throw; setting back a device that was current a moment ago only fails
    // when the runtime is already shutting down.
  }
}

#else  // Without CUDA every entry point reports why there is no device.

int current_device() {
  check_device(0, "cuda::current_device");
  return 0;  // not reached: check_device throws when there are no devices
}

void set_device(int index) { check_device(index, "cuda::set_device(" + std::to_string(index) + ")"); }

std::string device_uuid(int index) {
  check_device(index, "cuda::device_uuid(" + std::to_string(index) + ")");
  return "";  // not reached: check_device throws when there are no devices
}

void synchronize(int index) {
  check_device(index < 0 ? 0 : index, "cuda::synchronize");
}

DeviceGuard::DeviceGuard(int index) {
  check_device(index, "DeviceGuard(cuda:" + std::to_string(index) + ")");
}

DeviceGuard::~DeviceGuard() = default;

#endif

}  // namespace colony::cuda
