// The caching logic (see caching_allocator.h for why it exists and the policy it follows).
//
// A segment is one raw allocation; it is cut into Blocks that form a doubly linked list in address
// order, so that a freed block can find and absorb its free neighbours. Free blocks live in the
// pool of their size class, ordered by (stream, size, address): a lower_bound finds the smallest
// block on the right stream that fits.
#include "tensor/caching_allocator.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <tuple>

namespace colony {

struct CachingAllocator::Block {
  void* ptr = nullptr;
  size_t size = 0;
  void* stream = nullptr;  // the stream the segment was allocated for
  bool small = false;      // pool: small (<= kSmallLimit, 2 MiB segments) or large
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
  for (Block* b : small_pool_) add_head(b);
  for (Block* b : large_pool_) add_head(b);
  for (auto& [ptr, b] : active_) add_head(b);
  for (auto& [event, b] : pending_events_) add_head(b);
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
  process_events();

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

  Block* b = find_free_block(size, stream, small);
  if (b == nullptr) {
    const size_t seg = segment_size(size);
    void* ptr = raw_->raw_alloc(seg);
    if (ptr == nullptr) {
      // Cached but unused segments may be what stands in the way (often of another size class).
      release_cached_segments();
      ptr = raw_->raw_alloc(seg);
    }
    if (ptr == nullptr) throw out_of_memory();
    stats_.num_raw_allocs += 1;  // successful calls only, so raw allocs - raw frees = segments
    stats_.bytes_reserved += static_cast<int64_t>(seg);
    b = new Block;
    b->ptr = ptr;
    b->size = seg;
    b->stream = stream;
    b->small = small;
  }

  if (should_split(b->size, size, small)) {
    Block* rest = new Block;
    rest->ptr = static_cast<char*>(b->ptr) + size;
    rest->size = b->size - size;
    rest->stream = b->stream;
    rest->small = b->small;
    rest->prev = b;
    rest->next = b->next;
    if (b->next) b->next->prev = rest;
    b->next = rest;
    b->size = size;
    (small ? small_pool_ : large_pool_).insert(rest);
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
  // PyTorch): the memory is not available.
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

CachingAllocator::Block* CachingAllocator::find_free_block(size_t size, void* stream, bool small) {
  auto& pool = small ? small_pool_ : large_pool_;
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
  auto& pool = b->small ? small_pool_ : large_pool_;
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

void CachingAllocator::release_cached_segments() {
  for (auto* pool : {&small_pool_, &large_pool_}) {
    for (auto it = pool->begin(); it != pool->end();) {
      Block* b = *it;
      if (b->prev == nullptr && b->next == nullptr) {  // the whole segment is free
        raw_->raw_free(b->ptr);
        stats_.num_raw_frees += 1;
        stats_.bytes_reserved -= static_cast<int64_t>(b->size);
        delete b;
        it = pool->erase(it);
      } else {
        ++it;
      }
    }
  }
}

void CachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mu_);
  process_events();
  release_cached_segments();
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
