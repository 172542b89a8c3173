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
//  - empty_cache() returns every unused segment to the raw allocator;
//  - a CUDA graph capture gets a private pool (see begin_capture below).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <unordered_map>
#include <vector>

#include "runtime/allocator.h"

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
  // The id of the graph capture `stream` belongs to, 0 when it is not being captured. Asked only
  // while a capture is underway (begin_capture), for each allocation.
  virtual uint64_t capture_id(void* stream) = 0;
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

  // CUDA graphs (ops/cuda_graph.h), as PyTorch's private pools. A replay writes exactly the
  // addresses the capture saw, so memory a capture allocated must never be handed to anything
  // else while the graph lives:
  //  - from begin_capture(id) to end_capture(id), every allocation on a stream that belongs to
  //    capture `id` (RawDeviceAllocator::capture_id) comes from the capture's private pool, which
  //    only that capture draws from; blocks freed during the capture return to it and may be
  //    reused later in the same capture (replays run in capture order, so that is safe);
  //  - after end_capture the pool keeps every block, free or not: eager allocations never get them;
  //  - release_pool(id) (the graph is destroyed) returns the pool's wholly free segments to the raw
  //    allocator now, or at the next empty_cache() when a capture is underway (freeing would
  //    synchronize); segments still holding a live tensor (a static output kept by the user) go
  //    back when it is freed, at the next empty_cache().
  // While any capture is underway, events are neither queried nor recorded (illegal in a capture):
  // blocks freed with record_stream uses wait until the last capture ends, and an out-of-memory is
  // not retried by freeing cached segments.
  void begin_capture(uint64_t capture_id);
  void end_capture(uint64_t capture_id);
  void release_pool(uint64_t capture_id);
  // Segments reserved by a capture's pool (0 when the pool does not exist): for tests and reports.
  size_t pool_segments(uint64_t capture_id) const;

 private:
  struct Block;
  struct BlockLess {
    bool operator()(const Block* a, const Block* b) const;
  };
  struct BlockPool {
    std::set<Block*, BlockLess> small, large;
    size_t segments = 0;
    bool released = false;  // private pools: the graph is gone
  };
  BlockPool& pool_for(void* stream);
  Block* find_free_block(BlockPool& pool, size_t size, void* stream, bool small);
  void free_block(Block* b);
  void insert_events(Block* b);
  void process_events();
  void release_cached_segments();
  void release_free_segments(BlockPool& pool);

  std::unique_ptr<RawDeviceAllocator> raw_;
  mutable std::mutex mu_;
  BlockPool default_pool_;
  std::map<uint64_t, std::unique_ptr<BlockPool>> private_pools_;  // by capture id
  std::vector<uint64_t> captures_underway_;
  std::vector<Block*> events_deferred_;  // freed during a capture, waiting on other streams' work
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
