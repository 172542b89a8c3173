// Page-locked host memory for fast, asynchronous host-to-device copies (DataLoader pin_memory).
// Without a usable GPU the same allocator hands out ordinary aligned memory, so callers need not
// ask first. Each request is one cudaHostAlloc: loaders allocate a batch at a time, not per op.
#include <cstdlib>
#include <mutex>
#include <new>

#include "tensor/allocator.h"
#include "tensor/cuda.h"

#ifdef COLONY_WITH_CUDA
#include "kernels/cuda/runtime.h"
#endif

namespace colony {
namespace {

class PinnedAllocator final : public Allocator {
 public:
  explicit PinnedAllocator(bool page_locked) : page_locked_(page_locked) {}

  void* allocate(size_t nbytes) override {
    // 64-byte multiples, at least one: zero-byte requests still get a unique pointer.
    size_t rounded = nbytes == 0 ? 64 : (nbytes + 63) / 64 * 64;
    void* p = nullptr;
#ifdef COLONY_WITH_CUDA
    if (page_locked_) p = kernels::cuda::host_alloc_pinned(rounded);  // page-aligned; throws on failure
#endif
    if (!page_locked_) {
      p = std::aligned_alloc(64, rounded);
      if (p == nullptr) throw std::bad_alloc();
    }
    std::lock_guard<std::mutex> lock(mu_);
    stats_.num_allocs += 1;
    stats_.num_raw_allocs += 1;
    stats_.bytes_in_use += static_cast<int64_t>(nbytes);
    stats_.bytes_reserved += static_cast<int64_t>(nbytes);
    if (stats_.bytes_in_use > stats_.peak_bytes_in_use) stats_.peak_bytes_in_use = stats_.bytes_in_use;
    return p;
  }

  void deallocate(void* ptr, size_t nbytes) override {
    if (ptr == nullptr) return;
#ifdef COLONY_WITH_CUDA
    if (page_locked_) kernels::cuda::host_free_pinned(ptr);
#endif
    if (!page_locked_) std::free(ptr);
    std::lock_guard<std::mutex> lock(mu_);
    stats_.num_raw_frees += 1;
    stats_.bytes_in_use -= static_cast<int64_t>(nbytes);
    stats_.bytes_reserved -= static_cast<int64_t>(nbytes);
  }

  AllocatorStats stats() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return stats_;
  }

  Device device() const override { return kCPU; }  // host memory, though the GPU can DMA it

  bool page_locked() const { return page_locked_; }

 private:
  const bool page_locked_;
  mutable std::mutex mu_;
  AllocatorStats stats_;
};

PinnedAllocator* pinned() {
  // Leaked: tensors may die during static destruction.
  static PinnedAllocator* a = new PinnedAllocator(cuda::device_count() > 0);
  return a;
}

}  // namespace

Allocator* pinned_allocator() { return pinned(); }

bool pinned_memory_is_page_locked() { return pinned()->page_locked(); }

}  // namespace colony
