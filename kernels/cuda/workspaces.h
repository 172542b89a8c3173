// Workspaces a CUDA library keeps for good (cuBLAS's, one per stream a handle runs on: blas.cc),
// in plain C++ so that their out-of-memory path is tested on any host, and the hook through which
// they get memory back from the caching allocator, a layer above (tensor/caching_allocator.h).
#pragma once

#include <cstddef>
#include <functional>
#include <map>

namespace colony::kernels::cuda {

// The caching allocator registers how to give its unused cached blocks on a device back to the
// driver (tensor/cuda_allocator.cc); release_cached_memory() does nothing until then.
void set_release_cached_memory(void (*release)(int device));
void release_cached_memory(int device);

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
