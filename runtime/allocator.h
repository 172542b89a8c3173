// Allocators behind Storage: CPU (64-byte aligned), pinned host memory, and the CUDA caching
// allocator. Each keeps statistics a user (or a test) can read.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/device.h"

namespace colony {

struct AllocatorStats {
  int64_t bytes_in_use = 0;       // held by live tensors
  int64_t peak_bytes_in_use = 0;
  int64_t bytes_reserved = 0;     // obtained from the system (includes cached, unused blocks)
  int64_t num_allocs = 0;         // allocate() calls
  int64_t num_raw_allocs = 0;     // calls into the system allocator (malloc / cudaMalloc ...)
  int64_t num_raw_frees = 0;
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  // Returns memory for nbytes (nbytes may be 0: a non-null unique pointer comes back).
  virtual void* allocate(size_t nbytes) = 0;
  virtual void deallocate(void* ptr, size_t nbytes) = 0;
  virtual AllocatorStats stats() const = 0;
  virtual Device device() const = 0;
};

// 64-byte aligned host memory (cache-line and AVX-512 friendly). Freed blocks of 64 KiB and more
// are kept for the next request of the same size, so a training loop does not fault its
// activations' pages in again every step; stats().bytes_reserved counts them. The blocks in use
// and kept stay within 1.25x the program's peak in use (at least 256 MiB): what a step needs at
// once, it finds again the next step.
Allocator* cpu_allocator();
// Returns the CPU allocator's cached blocks to the system (like torch.cuda.empty_cache, for host
// memory).
void cpu_empty_cache();
// Page-locked host memory through cudaHostAlloc when CUDA is usable, plain aligned memory otherwise,
// so that data loaders can ask for it unconditionally. Cached (runtime/caching_host_allocator.h): a
// freed block is reused only after the copies that use it have finished.
Allocator* pinned_allocator();
// True when pinned_allocator() really returns page-locked memory.
bool pinned_memory_is_page_locked();
// Returns the pinned allocator's free blocks to the system.
void pinned_empty_cache();

}  // namespace colony
