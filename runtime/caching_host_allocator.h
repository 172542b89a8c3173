// The caching allocator for pinned (page-locked) host memory, written over a pluggable raw
// allocator so that its logic runs (and is tested) on machines without a GPU.
//
// Why: cudaHostAlloc costs milliseconds (it maps and locks pages) and cudaFreeHost synchronizes the
// whole device, while a DataLoader or a non_blocking copy wants a fresh pinned buffer every batch.
// Like PyTorch's CachingHostAllocator:
//  - sizes round up to a power of two (at least 4 KiB), and a freed block waits in the free list of
//    its size for the next request of that size class;
//  - a block used by asynchronous device work (a non_blocking copy reads or writes it; record_use
//    says so) returns to the free list only after events recorded on those streams when it was
//    freed have completed, so the host never overwrites a buffer a copy is still reading;
//  - when the raw allocator fails, every free block is released and the request retried once;
//  - empty_cache() releases the free blocks.
// And for CUDA graphs: a block used by a stream being captured is read or written by the graph at
// every replay, and an event recorded on that stream could never be queried, so such a block is
// kept for good once freed (never reused, never released); while any thread captures, nothing is
// released at all (cudaFreeHost waits for the whole device, which would invalidate the capture).
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/allocator.h"
#include "runtime/stream.h"

namespace colony {

// What the caching logic needs from the system: cudaHostAlloc/cudaFreeHost and CUDA events in
// Colony; a counting fake in tests.
class RawHostAllocator {
 public:
  virtual ~RawHostAllocator() = default;
  virtual void* raw_alloc(size_t nbytes) = 0;  // throws on failure
  virtual void raw_free(void* ptr) = 0;
  // An event after the work queued on `stream` so far.
  virtual void* record_event(const Stream& stream) = 0;
  // Whether work queued on `stream` now goes into a CUDA graph being captured.
  virtual bool capturing(const Stream& stream) = 0;
  virtual bool event_done(void* event) = 0;
  virtual void destroy_event(void* event) = 0;
};

class CachingHostAllocator final : public Allocator {
 public:
  static constexpr size_t kMinBlock = 4096;

  explicit CachingHostAllocator(std::unique_ptr<RawHostAllocator> raw);
  ~CachingHostAllocator() override;

  void* allocate(size_t nbytes) override;
  void deallocate(void* ptr, size_t nbytes) override;
  AllocatorStats stats() const override;
  Device device() const override { return kCPU; }  // host memory, though devices can DMA it

  // The block starting at `ptr` is read or written by work queued on `stream` (a CUDA stream; CPU
  // streams are synchronous and ignored): after it is freed, it is reused only once that work is
  // done. Throws std::invalid_argument when ptr is not a live block of this allocator.
  void record_use(void* ptr, const Stream& stream);
  // True when ptr is a live block of this allocator (what record_use accepts).
  bool owns(void* ptr) const;
  void empty_cache();

 private:
  struct Block {
    size_t size = 0;
    bool allocated = false;
    int pending_events = 0;
    std::vector<Stream> uses;
  };
  void process_events();
  void release_free_blocks();

  std::unique_ptr<RawHostAllocator> raw_;
  mutable std::mutex mu_;
  std::unordered_map<void*, Block> blocks_;               // every block this allocator holds
  std::map<size_t, std::vector<void*>> free_;             // size class -> free blocks
  std::vector<std::pair<void*, void*>> pending_events_;   // (event, block) awaiting completion
  AllocatorStats stats_;
};

// The process's pinned-memory allocator (pinned_allocator() as a CachingHostAllocator).
CachingHostAllocator* pinned_caching_allocator();

}  // namespace colony
