#include "runtime/allocator.h"

#include <algorithm>
#include <atomic>
#include <iterator>
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
// own bins without touching the kernel.
//
// The bound: the large blocks in use plus the cached ones (the footprint) stay within 1.25x the
// program's own peak of large blocks in use, or kCacheFloor where that is more. With a fixed
// 256 MiB bound, the width-384 GPT (benchmarks/gpt_cpu --layers 6 --heads 6 --embd 384 --block
// 256 --threads 2, Intel Xeon, 2026-12-06; perf stat -e page-faults over 1-2 warm-up steps and
// S steps) gave the blocks past the bound back to the system and faulted their pages in and
// zeroed them again every step: at --batch 64 (2.7 GiB in use at the peak) 1,873,237 faults at
// S = 2 and 2,610,543 at S = 5, 246,000 (960 MiB) a step, against 701,152 and 700,961 with this
// bound, and 12-15 % less CPU time (task-clock, 4 steps, 2 alternating rounds, 44.5 / 45.6 s
// against 37.8 / 41.0 s); at --batch 16 (~800 MiB) 367,755 at S = 3 and 400,936 at S = 8 against
// 210,507 and 210,210. The slack: each size is cached separately, and sizes peak at different
// moments of a step (activations in the forward, gradients in the backward), so a bound of the
// peak itself still refaulted pages every step (batch 16: 292,408 / 323,351); 1.25x, 1.5x, 2x and
// no bound all gave 209,000-210,500, only the first step's pages. Maximum resident set: batch 16
// 849 MiB against 852 MiB, batch 64 2.81 GiB against 2.75 GiB.
// A freed block past the bound goes back to the system; a request no cached block serves, when
// its fresh block takes the footprint past the bound, first returns cached blocks of other sizes
// (a program whose sizes changed, as from training to evaluation at another batch size, does not
// keep the old sizes for good). cpu_empty_cache() returns them all.
class CpuAllocator final : public Allocator {
 public:
  static constexpr size_t kCachedFrom = 64 * 1024;
  static constexpr size_t kPage = 4096;
  static constexpr size_t kCacheFloor = size_t(256) << 20;

  void* allocate(size_t nbytes) override {
    const size_t rounded = round(nbytes);
    void* p = nullptr;
    if (rounded >= kCachedFrom) {
      std::lock_guard<std::mutex> lock(mu_);
      large_in_use_ += rounded;
      large_peak_ = std::max(large_peak_, large_in_use_);
      auto it = free_.find(rounded);
      if (it != free_.end() && !it->second.empty()) {
        p = it->second.back();
        it->second.pop_back();
        cached_bytes_ -= rounded;
      } else {
        evict_to_bound();
      }
    }
    if (p == nullptr) {
      p = std::aligned_alloc(64, rounded);
      if (p == nullptr) {
        // Cached blocks of other sizes may be what the system is missing.
        empty_cache();
        p = std::aligned_alloc(64, rounded);
        if (p == nullptr) {
          if (rounded >= kCachedFrom) {
            std::lock_guard<std::mutex> lock(mu_);
            large_in_use_ -= rounded;
          }
          throw std::bad_alloc();
        }
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
      large_in_use_ -= rounded;
      // Kept, the block stays in the footprint.
      if (large_in_use_ + cached_bytes_ + rounded <= bound()) {
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

  // The footprint's bound (mu_ held).
  size_t bound() const { return std::max(kCacheFloor, large_peak_ + large_peak_ / 4); }

  // After a request no cached block served (mu_ held; its block already counted in use): cached
  // blocks go back to the system until the footprint is within the bound, or none is left.
  void evict_to_bound() {
    for (auto it = free_.begin(); it != free_.end() && large_in_use_ + cached_bytes_ > bound();) {
      std::vector<void*>& blocks = it->second;
      while (!blocks.empty() && large_in_use_ + cached_bytes_ > bound()) {
        std::free(blocks.back());
        blocks.pop_back();
        cached_bytes_ -= it->first;
        raw_frees_.fetch_add(1);
      }
      it = blocks.empty() ? free_.erase(it) : std::next(it);
    }
  }

  std::atomic<int64_t> in_use_{0}, peak_{0}, allocs_{0}, raw_allocs_{0}, raw_frees_{0};
  mutable std::mutex mu_;
  std::unordered_map<size_t, std::vector<void*>> free_;  // rounded size -> cached blocks
  size_t cached_bytes_ = 0;
  // Blocks of kCachedFrom bytes and more in use, in rounded bytes (mu_ held), and their peak: the
  // footprint is large_in_use_ + cached_bytes_.
  size_t large_in_use_ = 0, large_peak_ = 0;
};

CpuAllocator* cpu() {
  static CpuAllocator* a = new CpuAllocator();  // leaked: tensors may die during static destruction
  return a;
}

}  // namespace

Allocator* cpu_allocator() { return cpu(); }

void cpu_empty_cache() { cpu()->empty_cache(); }

}  // namespace colony
