// Workspaces a CUDA library keeps for good (cuBLAS's, one per stream a handle runs on: blas.cc),
// in plain C++ so that their out-of-memory path is tested on any host, and the hook through which
// they get memory back from the caching allocator, a layer above (runtime/caching_allocator.h); and
// the scratch of one kernel call, taken from that allocator through a hook it registers.
#pragma once

#include <cstddef>
#include <functional>
#include <map>

namespace colony::kernels::cuda {

// The caching allocator registers how to give its unused cached blocks on a device back to the
// driver (runtime/cuda_allocator.cc); release_cached_memory() does nothing until then.
void set_release_cached_memory(void (*release)(int device));
void release_cached_memory(int device);

// Device memory for one kernel call (a two-pass reduction's partials, cross-entropy's block sums,
// a cuDNN workspace) on the current device, from the caching allocator, which registers how to
// allocate and free (runtime/cuda_allocator.cc) as it registers release_cached_memory: kernels stay
// below it. Freed when the object dies, right after the work is queued: the caching allocator hands a
// freed block only to later work on the stream it was allocated on (the device's current one, the
// kernel's), in stream order, as with a tensor freed after the op that used it. Allocation throws
// std::runtime_error when out of memory, as a tensor's does.
using ScratchAlloc = void* (*)(size_t bytes, int* device);  // on the current device, which it reports
using ScratchFree = void (*)(int device, void* ptr, size_t bytes);
void set_kernel_scratch_allocator(ScratchAlloc alloc, ScratchFree free);

class KernelScratch {
 public:
  explicit KernelScratch(size_t bytes);  // none (get() null, no device query) when bytes == 0
  ~KernelScratch();
  KernelScratch(const KernelScratch&) = delete;
  KernelScratch& operator=(const KernelScratch&) = delete;
  void* get() const { return ptr_; }

 private:
  int device_ = -1;
  size_t bytes_;
  void* ptr_ = nullptr;
};

class StreamWorkspaces {
 public:
  using Alloc = std::function<void*(size_t bytes)>;  // nullptr when out of memory
  using Release = std::function<void()>;             // frees memory held elsewhere for reuse

  // `stream`'s workspace of `bytes`, allocated at its first use. Out of memory, `release` runs and
  // the allocation is tried once more; still nothing: null for this call (cuBLAS then runs
  // algorithms that need no workspace) and a new try at the next, since a null is never kept.
  void* get(void* stream, size_t bytes, const Alloc& alloc, const Release& release);

 private:
  std::map<void*, void*> by_stream_;  // never freed: streams live as long as the process
};

}  // namespace colony::kernels::cuda
