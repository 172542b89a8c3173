// Page-locked host memory for fast, asynchronous host-to-device copies (DataLoader pin_memory,
// non_blocking copies), cached by CachingHostAllocator. Without a usable GPU the same allocator
// hands out ordinary aligned memory, so callers need not ask first.
#include <cstdlib>
#include <memory>
#include <new>

#include "runtime/allocator.h"
#include "runtime/caching_host_allocator.h"
#include "runtime/cuda.h"

#ifdef COLONY_WITH_CUDA
#include "runtime/cuda/runtime.h"
#endif

namespace colony {
namespace {

// Plain 64-byte aligned memory where no device exists: nothing is asynchronous, no events.
class AlignedHostRaw final : public RawHostAllocator {
 public:
  void* raw_alloc(size_t nbytes) override {
    void* p = std::aligned_alloc(64, nbytes);  // nbytes is a power of two >= 4096
    if (p == nullptr) throw std::bad_alloc();
    return p;
  }
  void raw_free(void* ptr) override { std::free(ptr); }
  void* record_event(const Stream&) override { return nullptr; }
  bool capturing(const Stream&) override { return false; }
  bool event_done(void*) override { return true; }
  void destroy_event(void*) override {}
};

#ifdef COLONY_WITH_CUDA
class CudaHostRaw final : public RawHostAllocator {
 public:
  void* raw_alloc(size_t nbytes) override { return kernels::cuda::host_alloc_pinned(nbytes); }
  void raw_free(void* ptr) override { kernels::cuda::host_free_pinned(ptr); }
  void* record_event(const Stream& stream) override {
    cuda::DeviceGuard guard(stream.device().index);
    void* e = kernels::cuda::event_create(/*enable_timing=*/false);  // only ever queried
    kernels::cuda::event_record(e, stream.handle());
    return e;
  }
  bool capturing(const Stream& stream) override {
    cuda::DeviceGuard guard(stream.device().index);
    return kernels::cuda::stream_capture_id(stream.handle()) != 0;
  }
  bool event_done(void* event) override { return kernels::cuda::event_query(event); }
  void destroy_event(void* event) override { kernels::cuda::event_destroy(event); }
};
#endif

std::unique_ptr<RawHostAllocator> make_raw(bool page_locked) {
#ifdef COLONY_WITH_CUDA
  if (page_locked) return std::make_unique<CudaHostRaw>();
#endif
  (void)page_locked;
  return std::make_unique<AlignedHostRaw>();
}

bool page_locked() {
  static const bool locked = cuda::device_count() > 0;
  return locked;
}

}  // namespace

CachingHostAllocator* pinned_caching_allocator() {
  // Leaked: tensors may die during static destruction, after the CUDA runtime itself.
  static CachingHostAllocator* a = new CachingHostAllocator(make_raw(page_locked()));
  return a;
}

Allocator* pinned_allocator() { return pinned_caching_allocator(); }

bool pinned_memory_is_page_locked() { return page_locked(); }

void pinned_empty_cache() { pinned_caching_allocator()->empty_cache(); }

}  // namespace colony
