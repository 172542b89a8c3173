// One CachingAllocator per CUDA device, over cudaMalloc/cudaFree and CUDA events.
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/caching_allocator.h"
#include "runtime/cuda.h"
#include "runtime/stream.h"

#ifdef COLONY_WITH_CUDA
#include "runtime/cuda/runtime.h"
#include "runtime/cuda/workspaces.h"
#endif

namespace colony {
namespace {

#ifdef COLONY_WITH_CUDA
class CudaRawAllocator final : public RawDeviceAllocator {
 public:
  explicit CudaRawAllocator(int index) : index_(index) {}

  void* raw_alloc(size_t nbytes) override {
    cuda::DeviceGuard guard(index_);
    return kernels::cuda::device_malloc(nbytes);
  }
  void raw_free(void* ptr) override {
    cuda::DeviceGuard guard(index_);
    kernels::cuda::device_free(ptr);
  }
  void* record_event(void* stream) override {
    cuda::DeviceGuard guard(index_);
    void* e = kernels::cuda::event_create(/*enable_timing=*/false);  // only ever queried
    kernels::cuda::event_record(e, stream);
    return e;
  }
  bool event_done(void* event) override { return kernels::cuda::event_query(event); }
  void destroy_event(void* event) override {
    cuda::DeviceGuard guard(index_);
    kernels::cuda::event_destroy(event);
  }
  void* current_stream() override { return colony::current_stream(device()).handle(); }
  Device device() const override { return Device::cuda(index_); }
  // The legacy default stream is never captured (cuda::CUDAGraph refuses it), so it is not asked.
  uint64_t capture_id(void* stream) override {
    return stream == nullptr ? 0 : kernels::cuda::stream_capture_id(stream);
  }

 private:
  int index_;
};
#endif

// Created on first use, never destroyed: tensors may die during static destruction, after the
// CUDA runtime itself may be gone.
struct PerDevice {
  std::mutex mu;  // serialises creation only; lookups read the atomics
  std::vector<std::atomic<CachingAllocator*>> allocators;
  explicit PerDevice(int n) : allocators(n) {
    for (auto& a : allocators) a.store(nullptr);
  }
};

PerDevice& per_device() {
  static PerDevice* p = new PerDevice(cuda::device_count());
  return *p;
}

#ifdef COLONY_WITH_CUDA
// Gives cuda:`index`'s unused cached blocks back to the driver when a CUDA library found no memory
// for a workspace of its own (runtime/cuda/workspaces.h).
void release_cached_memory_of(int index) {
  PerDevice& p = per_device();
  if (index < 0 || static_cast<size_t>(index) >= p.allocators.size()) return;
  if (CachingAllocator* a = p.allocators[index].load(std::memory_order_acquire)) a->empty_cache();
}

// A kernel's scratch for one call (runtime/cuda/workspaces.h, KernelScratch), on the device's
// current stream like any tensor: the memory a temporary byte tensor would have had.
void* kernel_scratch_alloc(size_t bytes, int* device) {
  *device = kernels::cuda::current_device();
  return cuda_caching_allocator(*device)->allocate(bytes);
}
void kernel_scratch_free(int index, void* ptr, size_t bytes) { cuda_caching_allocator(index)->deallocate(ptr, bytes); }
#endif

}  // namespace

CachingAllocator* cuda_caching_allocator(int index) {
  cuda::check_device(index, "cuda_allocator(cuda:" + std::to_string(index) + ")");
  PerDevice& p = per_device();
  if (CachingAllocator* a = p.allocators[index].load(std::memory_order_acquire)) return a;
  std::lock_guard<std::mutex> lock(p.mu);
  CachingAllocator* a = p.allocators[index].load(std::memory_order_relaxed);
#ifdef COLONY_WITH_CUDA
  if (a == nullptr) {
    a = new CachingAllocator(std::make_unique<CudaRawAllocator>(index));
    p.allocators[index].store(a, std::memory_order_release);
    kernels::cuda::set_release_cached_memory(&release_cached_memory_of);
    kernels::cuda::set_kernel_scratch_allocator(&kernel_scratch_alloc, &kernel_scratch_free);
  }
#endif
  return a;  // without CUDA, check_device above has thrown already
}

Allocator* cuda_allocator(int index) { return cuda_caching_allocator(index); }

void cuda_empty_cache() {
  // Devices whose allocator was never created hold no cache; without CUDA there are none.
  for (auto& slot : per_device().allocators)
    if (CachingAllocator* a = slot.load(std::memory_order_acquire)) a->empty_cache();
}

}  // namespace colony
