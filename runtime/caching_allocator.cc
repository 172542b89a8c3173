// The caching logic (see caching_allocator.h for why it exists and the policy it follows).
//
// A segment is one raw allocation; it is cut into Blocks that form a doubly linked list in address
// order, so that a freed block can find and absorb its free neighbours. Free blocks live in the
// pool of their size class, ordered by (stream, size, address): a lower_bound finds the smallest
// block on the right stream that fits. Every segment belongs to one BlockPool: the default one, or
// the private pool of a CUDA graph capture.
#include "runtime/caching_allocator.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <tuple>

namespace colony {

struct CachingAllocator::Block {
  void* ptr = nullptr;
  size_t size = 0;
  void* stream = nullptr;  // the stream the segment was allocated for
  bool small = false;      // size class: small (<= kSmallLimit, 2 MiB segments) or large
  BlockPool* pool = nullptr;  // the pool the segment belongs to
  bool allocated = false;  // handed out, or freed but waiting on events of other streams
  int pending_events = 0;
  std::set<void*> stream_uses;  // other streams that used it (record_stream)
  Block* prev = nullptr;   // neighbours in the same segment
  Block* next = nullptr;
};

bool CachingAllocator::BlockLess::operator()(const Block* a, const Block* b) const {
  auto key = [](const Block* x) {
    return std::make_tuple(reinterpret_cast<uintptr_t>(x->stream), x->size,
                           reinterpret_cast<uintptr_t>(x->ptr));
  };
  return key(a) < key(b);
}

namespace {

size_t round_up(size_t n, size_t m) { return (n + m - 1) / m * m; }

// A zero-byte request still gets a unique, non-null pointer (Allocator's contract).
size_t round_size(size_t nbytes) {
  return nbytes == 0 ? CachingAllocator::kRound : round_up(nbytes, CachingAllocator::kRound);
}

size_t segment_size(size_t size) {
  return size <= CachingAllocator::kSmallLimit ? CachingAllocator::kSegment
                                               : round_up(size, CachingAllocator::kSegment);
}

// Splitting a large block leaves a remainder worth keeping only when it is itself "large";
// smaller tails would be stranded fragments no large request can use (PyTorch's rule too).
bool should_split(size_t block_size, size_t size, bool small) {
  size_t rest = block_size - size;
  return small ? rest >= CachingAllocator::kRound : rest > CachingAllocator::kSmallLimit;
}

}  // namespace

CachingAllocator::CachingAllocator(std::unique_ptr<RawDeviceAllocator> raw) : raw_(std::move(raw)) {}

CachingAllocator::~CachingAllocator() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [event, block] : pending_events_) raw_->destroy_event(event);
  // Every segment's first block has prev == nullptr; walking from it reaches the whole segment.
  std::set<Block*> heads;
  auto add_head = [&heads](Block* b) {
    while (b->prev) b = b->prev;
    heads.insert(b);
  };
  auto add_pool = [&add_head](const BlockPool& pool) {
    for (Block* b : pool.small) add_head(b);
    for (Block* b : pool.large) add_head(b);
  };
  add_pool(default_pool_);
  for (auto& [id, pool] : private_pools_) add_pool(*pool);
  for (auto& [ptr, b] : active_) add_head(b);
  for (auto& [event, b] : pending_events_) add_head(b);
  for (Block* b : events_deferred_) add_head(b);
  for (Block* head : heads) {
    raw_->raw_free(head->ptr);
    for (Block* b = head; b;) {
      Block* next = b->next;
      delete b;
      b = next;
    }
  }
}

Device CachingAllocator::device() const { return raw_->device(); }

void* CachingAllocator::allocate(size_t nbytes) {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.num_allocs += 1;
  if (captures_underway_.empty()) process_events();

  auto out_of_memory = [&] {
    return std::runtime_error("CUDA out of memory: tried to allocate " + std::to_string(nbytes) +
                              " bytes on " + raw_->device().str() +
                              " (in use: " + std::to_string(stats_.bytes_in_use) +
                              ", reserved: " + std::to_string(stats_.bytes_reserved) + ")");
  };
  // Beyond this, rounding up would wrap around; no device has 2^62 bytes anyway.
  if (nbytes > (size_t(1) << 62)) throw out_of_memory();

  const size_t size = round_size(nbytes);
  const bool small = size <= kSmallLimit;
  void* stream = raw_->current_stream();
  BlockPool& pool = pool_for(stream);

  Block* b = find_free_block(pool, size, stream, small);
  if (b == nullptr) {
    const size_t seg = segment_size(size);
    void* ptr = raw_->raw_alloc(seg);
    // Cached but unused segments may be what stands in the way (often of another size class);
    // freeing them synchronizes the device, which a capture forbids.
    if (ptr == nullptr && captures_underway_.empty()) {
      release_cached_segments();
      ptr = raw_->raw_alloc(seg);
    }
    if (ptr == nullptr) throw out_of_memory();
    stats_.num_raw_allocs += 1;  // successful calls only, so raw allocs - raw frees = segments
    stats_.bytes_reserved += static_cast<int64_t>(seg);
    pool.segments += 1;
    b = new Block;
    b->ptr = ptr;
    b->size = seg;
    b->stream = stream;
    b->small = small;
    b->pool = &pool;
  }

  if (should_split(b->size, size, small)) {
    Block* rest = new Block;
    rest->ptr = static_cast<char*>(b->ptr) + size;
    rest->size = b->size - size;
    rest->stream = b->stream;
    rest->small = b->small;
    rest->pool = b->pool;
    rest->prev = b;
    rest->next = b->next;
    if (b->next) b->next->prev = rest;
    b->next = rest;
    b->size = size;
    (small ? pool.small : pool.large).insert(rest);
  }

  b->allocated = true;
  active_[b->ptr] = b;
  stats_.bytes_in_use += static_cast<int64_t>(b->size);
  stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  return b->ptr;
}

void CachingAllocator::deallocate(void* ptr, size_t /*nbytes*/) {
  if (ptr == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = active_.find(ptr);
  if (it == active_.end())
    throw std::invalid_argument("CachingAllocator::deallocate: pointer was not allocated by the " +
                                raw_->device().str() + " allocator, or was freed already");
  Block* b = it->second;
  active_.erase(it);
  if (b->stream_uses.empty()) {
    free_block(b);
    return;
  }
  // Other streams may still be reading or writing the block: it returns to the pool only when
  // work queued on each of them so far has finished. Until then it still counts as in use (as in
  // PyTorch): the memory is not available. An event recorded during a capture would become part
  // of the graph, so the events wait until no capture is underway.
  if (captures_underway_.empty()) {
    insert_events(b);
  } else {
    events_deferred_.push_back(b);
  }
}

void CachingAllocator::insert_events(Block* b) {
  for (void* s : b->stream_uses) {
    pending_events_.emplace_back(raw_->record_event(s), b);
    b->pending_events += 1;
  }
  b->stream_uses.clear();
}

void CachingAllocator::record_stream(void* ptr, void* stream) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = active_.find(ptr);
  if (it == active_.end())
    throw std::invalid_argument("CachingAllocator::record_stream: pointer is not a live block of the " +
                                raw_->device().str() + " allocator");
  Block* b = it->second;
  if (stream != b->stream) b->stream_uses.insert(stream);
}

CachingAllocator::BlockPool& CachingAllocator::pool_for(void* stream) {
  if (captures_underway_.empty()) return default_pool_;
  const uint64_t id = raw_->capture_id(stream);
  if (id == 0) return default_pool_;
  auto it = private_pools_.find(id);
  // A stream captured by someone else (not through begin_capture): its allocations must not be
  // reused by eager work either, but nobody would release a pool for it, so refuse.
  if (it == private_pools_.end() || it->second->released) {
    throw std::logic_error("CachingAllocator: allocation on a stream captured into CUDA graph capture " +
                           std::to_string(id) + " on " + raw_->device().str() +
                           ", which did not begin through begin_capture (use cuda::CUDAGraph)");
  }
  return *it->second;
}

CachingAllocator::Block* CachingAllocator::find_free_block(BlockPool& blocks, size_t size, void* stream, bool small) {
  auto& pool = small ? blocks.small : blocks.large;
  Block key;
  key.stream = stream;
  key.size = size;
  key.ptr = nullptr;
  auto it = pool.lower_bound(&key);
  if (it == pool.end() || (*it)->stream != stream) return nullptr;
  Block* b = *it;
  pool.erase(it);
  return b;
}

void CachingAllocator::free_block(Block* b) {
  auto& pool = b->small ? b->pool->small : b->pool->large;
  stats_.bytes_in_use -= static_cast<int64_t>(b->size);
  b->allocated = false;
  // Neighbours always share b's stream and pool: they were cut from the same segment.
  if (Block* p = b->prev; p && !p->allocated) {
    pool.erase(p);
    p->size += b->size;
    p->next = b->next;
    if (b->next) b->next->prev = p;
    delete b;
    b = p;
  }
  if (Block* n = b->next; n && !n->allocated) {
    pool.erase(n);
    b->size += n->size;
    b->next = n->next;
    if (n->next) n->next->prev = b;
    delete n;
  }
  pool.insert(b);
}

void CachingAllocator::process_events() {
  // Events are checked only when memory is wanted: a query is cheap, and a block that is not
  // asked for gains nothing from being returned early.
  auto done = [this](std::pair<void*, Block*>& e) {
    if (!raw_->event_done(e.first)) return false;
    raw_->destroy_event(e.first);
    if (--e.second->pending_events == 0) free_block(e.second);
    return true;
  };
  pending_events_.erase(std::remove_if(pending_events_.begin(), pending_events_.end(), done),
                        pending_events_.end());
}

void CachingAllocator::release_free_segments(BlockPool& blocks) {
  for (auto* pool : {&blocks.small, &blocks.large}) {
    for (auto it = pool->begin(); it != pool->end();) {
      Block* b = *it;
      if (b->prev == nullptr && b->next == nullptr) {  // the whole segment is free
        raw_->raw_free(b->ptr);
        stats_.num_raw_frees += 1;
        stats_.bytes_reserved -= static_cast<int64_t>(b->size);
        blocks.segments -= 1;
        delete b;
        it = pool->erase(it);
      } else {
        ++it;
      }
    }
  }
}

// The default pool and the pools of destroyed graphs; a live graph's pool keeps its free blocks.
void CachingAllocator::release_cached_segments() {
  release_free_segments(default_pool_);
  for (auto it = private_pools_.begin(); it != private_pools_.end();) {
    BlockPool& pool = *it->second;
    if (pool.released) release_free_segments(pool);
    it = pool.released && pool.segments == 0 ? private_pools_.erase(it) : std::next(it);
  }
}

void CachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!captures_underway_.empty()) return;  // freeing synchronizes the device; nothing is lost by waiting
  process_events();
  release_cached_segments();
}

void CachingAllocator::begin_capture(uint64_t capture_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (capture_id == 0) throw std::invalid_argument("CachingAllocator::begin_capture: capture id 0 means \"none\"");
  if (private_pools_.count(capture_id)) {
    throw std::logic_error("CachingAllocator::begin_capture: capture " + std::to_string(capture_id) +
                           " already has a pool on " + raw_->device().str());
  }
  private_pools_.emplace(capture_id, std::make_unique<BlockPool>());
  captures_underway_.push_back(capture_id);
}

void CachingAllocator::end_capture(uint64_t capture_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = std::find(captures_underway_.begin(), captures_underway_.end(), capture_id);
  if (it == captures_underway_.end()) {
    throw std::logic_error("CachingAllocator::end_capture: capture " + std::to_string(capture_id) +
                           " is not underway on " + raw_->device().str());
  }
  captures_underway_.erase(it);
  if (!captures_underway_.empty()) return;
  for (Block* b : events_deferred_) insert_events(b);
  events_deferred_.clear();
}

void CachingAllocator::release_pool(uint64_t capture_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = private_pools_.find(capture_id);
  if (it == private_pools_.end() || it->second->released) {
    throw std::logic_error("CachingAllocator::release_pool: capture " + std::to_string(capture_id) +
                           " has no live pool on " + raw_->device().str());
  }
  if (std::count(captures_underway_.begin(), captures_underway_.end(), capture_id)) {
    throw std::logic_error("CachingAllocator::release_pool: capture " + std::to_string(capture_id) +
                           " is still underway (end it first)");
  }
  it->second->released = true;
  if (captures_underway_.empty()) {
    release_free_segments(*it->second);
    if (it->second->segments == 0) private_pools_.erase(it);
  }
}

size_t CachingAllocator::pool_segments(uint64_t capture_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = private_pools_.find(capture_id);
  return it == private_pools_.end() ? 0 : it->second->segments;
}

AllocatorStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void CachingAllocator::reset_peak_stats() {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.peak_bytes_in_use = stats_.bytes_in_use;
}

}  // namespace colony
