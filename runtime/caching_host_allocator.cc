// The caching logic for pinned host memory (see caching_host_allocator.h for the policy).
#include "runtime/caching_host_allocator.h"

#include <algorithm>
#include <new>
#include <stdexcept>
#include <string>

#include "runtime/cuda/capture_state.h"

namespace colony {
namespace {

size_t size_class(size_t nbytes) {
  size_t s = CachingHostAllocator::kMinBlock;
  while (s < nbytes) s <<= 1;
  return s;
}

}  // namespace

CachingHostAllocator::CachingHostAllocator(std::unique_ptr<RawHostAllocator> raw) : raw_(std::move(raw)) {}

CachingHostAllocator::~CachingHostAllocator() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [event, block] : pending_events_) raw_->destroy_event(event);
  for (auto& [ptr, block] : blocks_) raw_->raw_free(ptr);
}

void* CachingHostAllocator::allocate(size_t nbytes) {
  // Beyond this, rounding up to a power of two would overflow.
  if (nbytes > (size_t(1) << 62)) throw std::bad_alloc();
  const size_t size = size_class(nbytes);
  std::lock_guard<std::mutex> lock(mu_);
  stats_.num_allocs += 1;
  process_events();
  void* ptr = nullptr;
  auto it = free_.find(size);
  if (it != free_.end() && !it->second.empty()) {
    ptr = it->second.back();
    it->second.pop_back();
  } else {
    try {
      ptr = raw_->raw_alloc(size);
    } catch (const std::exception&) {
      // Free blocks of other size classes may be what stands in the way of locking more pages;
      // releasing them waits for the device, which a capture on any thread forbids.
      if (kernels::cuda::any_thread_capturing()) throw;
      release_free_blocks();
      ptr = raw_->raw_alloc(size);
    }
    blocks_[ptr].size = size;
    stats_.num_raw_allocs += 1;
    stats_.bytes_reserved += static_cast<int64_t>(size);
  }
  Block& b = blocks_.at(ptr);
  b.allocated = true;
  stats_.bytes_in_use += static_cast<int64_t>(size);
  stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  return ptr;
}

void CachingHostAllocator::deallocate(void* ptr, size_t /*nbytes*/) {
  if (ptr == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = blocks_.find(ptr);
  if (it == blocks_.end() || !it->second.allocated)
    throw std::invalid_argument("CachingHostAllocator::deallocate: pointer was not allocated by the pinned "
                                "allocator, or was freed already");
  Block& b = it->second;
  b.allocated = false;
  if (b.uses.empty()) {
    stats_.bytes_in_use -= static_cast<int64_t>(b.size);
    free_[b.size].push_back(ptr);
    return;
  }
  // A graph that captured a copy of it reads or writes it at every replay, as long as it lives:
  // the block stays in use for good, in no free list (and an event recorded on the capturing
  // stream could never be queried).
  for (const Stream& s : b.uses) {
    if (raw_->capturing(s)) {
      b.uses.clear();
      return;
    }
  }
  // Copies queued on those streams may still read or write the block; until they finish it counts
  // as in use.
  for (const Stream& s : b.uses) {
    pending_events_.emplace_back(raw_->record_event(s), ptr);
    b.pending_events += 1;
  }
  b.uses.clear();
}

void CachingHostAllocator::record_use(void* ptr, const Stream& stream) {
  if (stream.device().is_cpu()) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = blocks_.find(ptr);
  if (it == blocks_.end() || !it->second.allocated)
    throw std::invalid_argument("CachingHostAllocator::record_use: pointer is not the start of a live pinned block");
  auto& uses = it->second.uses;
  if (std::find(uses.begin(), uses.end(), stream) == uses.end()) uses.push_back(stream);
}

bool CachingHostAllocator::owns(void* ptr) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = blocks_.find(ptr);
  return it != blocks_.end() && it->second.allocated;
}

void CachingHostAllocator::process_events() {
  // Checked when memory is wanted: a block nobody asks for gains nothing from returning early.
  auto done = [this](std::pair<void*, void*>& e) {
    if (!raw_->event_done(e.first)) return false;
    raw_->destroy_event(e.first);
    Block& b = blocks_.at(e.second);
    if (--b.pending_events == 0) {
      stats_.bytes_in_use -= static_cast<int64_t>(b.size);
      free_[b.size].push_back(e.second);
    }
    return true;
  };
  pending_events_.erase(std::remove_if(pending_events_.begin(), pending_events_.end(), done),
                        pending_events_.end());
}

void CachingHostAllocator::release_free_blocks() {
  for (auto& [size, list] : free_) {
    for (void* p : list) {
      raw_->raw_free(p);
      blocks_.erase(p);
      stats_.num_raw_frees += 1;
      stats_.bytes_reserved -= static_cast<int64_t>(size);
    }
    list.clear();
  }
}

void CachingHostAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mu_);
  if (kernels::cuda::any_thread_capturing()) return;  // cudaFreeHost would invalidate the capture
  process_events();
  release_free_blocks();
}

AllocatorStats CachingHostAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace colony
