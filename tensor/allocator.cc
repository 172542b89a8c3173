#include <atomic>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <string>

#include "tensor/allocator.h"

namespace colony {
namespace {

// 64-byte aligned host memory: one cache line, and the widest vector load (AVX-512).
class CpuAllocator final : public Allocator {
 public:
  void* allocate(size_t nbytes) override {
    size_t rounded = (nbytes + 63) / 64 * 64;
    if (rounded == 0) rounded = 64;
    void* p = std::aligned_alloc(64, rounded);
    if (p == nullptr) {
      throw std::bad_alloc();
    }
    int64_t now = in_use_.fetch_add(static_cast<int64_t>(nbytes)) + static_cast<int64_t>(nbytes);
    int64_t peak = peak_.load();
    while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
    }
    allocs_.fetch_add(1);
    return p;
  }
  void deallocate(void* ptr, size_t nbytes) override {
    std::free(ptr);
    in_use_.fetch_sub(static_cast<int64_t>(nbytes));
    frees_.fetch_add(1);
  }
  AllocatorStats stats() const override {
    AllocatorStats s;
    s.bytes_in_use = in_use_.load();
    s.peak_bytes_in_use = peak_.load();
    s.bytes_reserved = s.bytes_in_use;
    s.num_allocs = allocs_.load();
    s.num_raw_allocs = s.num_allocs;  // no caching on the host: every request is a malloc
    s.num_raw_frees = frees_.load();
    return s;
  }
  Device device() const override { return kCPU; }

 private:
  std::atomic<int64_t> in_use_{0}, peak_{0}, allocs_{0}, frees_{0};
};

}  // namespace

Allocator* cpu_allocator() {
  static CpuAllocator* a = new CpuAllocator();  // leaked: tensors may die during static destruction
  return a;
}

}  // namespace colony
