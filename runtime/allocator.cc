#include "runtime/allocator.h"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

namespace colony {
namespace {

// 64-byte aligned host memory: one cache line, and the widest vector load (AVX-512).
//
// Large blocks are cached for reuse. glibc serves them with mmap (or trims them off the heap top
// when freed), so every training step would fault its activations' pages in again and zero
// them: 15 % of a LeNet step on one thread went to the kernel's page-fault path. A step allocates
// the same sizes every iteration, so a freed block of a size is simply kept for the next request
// of that size (sizes round up to 4 KiB). Small blocks stay with malloc, which keeps them in its
// own bins without touching the kernel. At most kCacheLimit bytes stay cached; beyond that a
// freed block goes back to the system, and cpu_empty_cache() returns them all.
class CpuAllocator final : public Allocator {
 public:
  static constexpr size_t kCachedFrom = 64 * 1024;
  static constexpr size_t kPage = 4096;
  static constexpr size_t kCacheLimit = size_t(256) << 20;

  void* allocate(size_t nbytes) override {
    const size_t rounded = round(nbytes);
    void* p = nullptr;
    if (rounded >= kCachedFrom) {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = free_.find(rounded);
      if (it != free_.end() && !it->second.empty()) {
        p = it->second.back();
        it->second.pop_back();
        cached_bytes_ -= rounded;
      }
    }
    if (p == nullptr) {
      p = std::aligned_alloc(64, rounded);
      if (p == nullptr) {
        // Cached blocks of other sizes may be what the system is missing.
        empty_cache();
        p = std::aligned_alloc(64, rounded);
        if (p == nullptr) throw std::bad_alloc();
      }
      raw_allocs_.fetch_add(1);
    }
    int64_t now = in_use_.fetch_add(static_cast<int64_t>(nbytes)) + static_cast<int64_t>(nbytes);
    int64_t peak = peak_.load();
    while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
    }
    allocs_.fetch_add(1);
    return p;
  }

  void deallocate(void* ptr, size_t nbytes) override {
    in_use_.fetch_sub(static_cast<int64_t>(nbytes));
    const size_t rounded = round(nbytes);
    if (rounded >= kCachedFrom) {
      std::lock_guard<std::mutex> lock(mu_);
      if (cached_bytes_ + rounded <= kCacheLimit) {
        free_[rounded].push_back(ptr);
        cached_bytes_ += rounded;
        return;
      }
    }
    std::free(ptr);
    raw_frees_.fetch_add(1);
  }

  void empty_cache() {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [size, blocks] : free_) {
      for (void* p : blocks) std::free(p);
      raw_frees_.fetch_add(static_cast<int64_t>(blocks.size()));
    }
    free_.clear();
    cached_bytes_ = 0;
  }

  AllocatorStats stats() const override {
    AllocatorStats s;
    s.bytes_in_use = in_use_.load();
    s.peak_bytes_in_use = peak_.load();
    {
      std::lock_guard<std::mutex> lock(mu_);
      s.bytes_reserved = s.bytes_in_use + static_cast<int64_t>(cached_bytes_);
    }
    s.num_allocs = allocs_.load();
    s.num_raw_allocs = raw_allocs_.load();
    s.num_raw_frees = raw_frees_.load();
    return s;
  }
  Device device() const override { return kCPU; }

 private:
  static size_t round(size_t nbytes) {
    if (nbytes == 0) return 64;
    if (nbytes >= kCachedFrom) return (nbytes + kPage - 1) / kPage * kPage;
    return (nbytes + 63) / 64 * 64;
  }

  std::atomic<int64_t> in_use_{0}, peak_{0}, allocs_{0}, raw_allocs_{0}, raw_frees_{0};
  mutable std::mutex mu_;
  std::unordered_map<size_t, std::vector<void*>> free_;  // rounded size -> cached blocks
  size_t cached_bytes_ = 0;
};

CpuAllocator* cpu() {
  static CpuAllocator* a = new CpuAllocator();  // leaked: tensors may die during static destruction
  return a;
}

}  // namespace

Allocator* cpu_allocator() { return cpu(); }

void cpu_empty_cache() { cpu()->empty_cache(); }

}  // namespace colony
