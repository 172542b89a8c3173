// CUDA availability and device control. Safe to call on any machine: without a driver, a GPU, or a
// CUDA build, device_count() is 0 and nothing crashes.
#pragma once

#include <cstdint>
#include <string>

namespace colony::cuda {

// Number of usable CUDA devices (0 when Colony was built without CUDA or no driver/GPU is present).
int device_count();
bool is_available();
// True when this binary was compiled with CUDA support (a toolkit was found at build time).
bool is_compiled();
// Why device_count() is 0, in words ("built without CUDA", "cudaGetDeviceCount: no CUDA-capable
// device is detected"), or "" when devices exist.
std::string unavailable_reason();

// Throws std::runtime_error naming `what` and the reason when `index` is not a usable device:
// "to(cuda:0): no CUDA device available (built without CUDA)".
void check_device(int index, const std::string& what);

int current_device();
void set_device(int index);
// The device's UUID as nvidia-smi prints it ("GPU-6f1c2a3b-..."), the same in every process that
// sees that GPU (CUDA_VISIBLE_DEVICES renumbers devices, not UUIDs). Throws like check_device.
std::string device_uuid(int index);
// Waits for all work on the device (every stream); -1: the current device.
void synchronize(int index = -1);

// Host synchronizations made so far by this process (every wait of the host for a device:
// synchronize(), Stream/Event::synchronize, blocking copies such as item() or to(kCPU), cudaFree
// and cudaFreeHost, cuDNN benchmark-mode trials). A training step that never talks to the host
// leaves it unchanged; benchmarks print the difference per step. 0 without CUDA.
int64_t host_sync_count();
// Kernel launches so far: one per kernel Colony launches and one per cuBLAS / cuDNN call. 0
// without CUDA.
int64_t kernel_launch_count();
// COLONY_CUDA_SYNC=1 in the environment (read once) or set_sync_after_launch(true): wait for the
// device after every launch, so that a fault inside a kernel is reported by the op that launched
// it (like CUDA_LAUNCH_BLOCKING=1). Slow; for debugging.
bool sync_after_launch();
void set_sync_after_launch(bool on);

// Makes `index` the current device of this thread for a scope (checked with check_device), so that
// calls that act on "the current device" (the legacy default stream, cudaMalloc) reach the right
// one. Restores the previous device on exit.
class DeviceGuard {
 public:
  explicit DeviceGuard(int index);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int prev_ = -1;  // -1: the device was already current, nothing to restore
};

}  // namespace colony::cuda
