// The caching allocator used for CUDA memory, written over a pluggable raw allocator so that its
// logic runs (and is tested) on machines without a GPU.
//
// Why: cudaMalloc/cudaFree synchronize the device and cost tens of microseconds; a training step
// allocates the same sizes every iteration. Like PyTorch's allocator, freed blocks are kept in
// pools and reused:
//  - sizes round up to 512 bytes; requests up to 1 MiB come from 2 MiB segments ("small" pool),
//    larger ones from segments rounded up to 2 MiB ("large" pool), so fragments stay reusable;
//  - a cached block larger than the request is split, and neighbouring free pieces of one segment
//    are merged again on free;
//  - blocks belong to the stream they were allocated on; a block also used on other streams
//    (record_stream) returns to the pool only after events recorded on those streams complete;
//  - when the raw allocator fails, all cached blocks are released and the request retried once;
//  - empty_cache() returns every unused segment to the raw allocator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <unordered_map>
#include <vector>

#include "tensor/allocator.h"

namespace colony {

// What the caching logic needs from the system. The CUDA implementation wraps cudaMalloc/cudaFree
// and cudaEvent*; tests use a host-memory fake that counts calls and controls event completion.
class RawDeviceAllocator {
 public:
  virtual ~RawDeviceAllocator() = default;
  virtual void* raw_alloc(size_t nbytes) = 0;  // nullptr on out-of-memory
  virtual void raw_free(void* ptr) = 0;
  // Events mark the point in `stream` after which a block is no longer used there.
  virtual void* record_event(void* stream) = 0;
  virtual bool event_done(void* event) = 0;
  virtual void destroy_event(void* event) = 0;
  virtual void* current_stream() = 0;
  virtual Device device() const = 0;
};

class CachingAllocator final : public Allocator {
 public:
  static constexpr size_t kRound = 512;
  static constexpr size_t kSmallLimit = 1 << 20;
  static constexpr size_t kSegment = 2 << 20;

  explicit CachingAllocator(std::unique_ptr<RawDeviceAllocator> raw);
  ~CachingAllocator() override;

  void* allocate(size_t nbytes) override;
  void deallocate(void* ptr, size_t nbytes) override;
  AllocatorStats stats() const override;
  Device device() const override;

  // The block holding ptr is in use on `stream` too: its reuse waits for that stream's work.
  void record_stream(void* ptr, void* stream);
  void empty_cache();
  void reset_peak_stats();

 private:
  struct Block;
  struct BlockLess {
    bool operator()(const Block* a, const Block* b) const;
  };
  Block* find_free_block(size_t size, void* stream, bool small);
  void free_block(Block* b);
  void process_events();
  void release_cached_segments();

  std::unique_ptr<RawDeviceAllocator> raw_;
  mutable std::mutex mu_;
  std::set<Block*, BlockLess> small_pool_, large_pool_;
  std::unordered_map<void*, Block*> active_;
  std::vector<std::pair<void*, Block*>> pending_events_;  // (event, block) awaiting completion
  AllocatorStats stats_;
};

// The caching allocator of CUDA device `index` (throws when that device is unusable).
Allocator* cuda_allocator(int index);
CachingAllocator* cuda_caching_allocator(int index);
// Releases unused cached memory on every device (torch.cuda.empty_cache()).
void cuda_empty_cache();

}  // namespace colony
