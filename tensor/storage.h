// Storage: the memory shared by a tensor and all of its views.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "runtime/allocator.h"
#include "runtime/device.h"

namespace colony {

class StorageImpl {
 public:
  // Owns nbytes from `allocator`.
  StorageImpl(size_t nbytes, Allocator* allocator);
  // Wraps external memory; `deleter` (may be empty) runs when the last tensor lets go.
  StorageImpl(void* data, size_t nbytes, Device device, std::function<void(void*)> deleter);
  ~StorageImpl();
  StorageImpl(const StorageImpl&) = delete;
  StorageImpl& operator=(const StorageImpl&) = delete;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  // The allocator the memory came from; null for external memory (from_blob).
  Allocator* allocator() const { return allocator_; }

  // Whether resize_ may give this storage more memory: memory from an allocator (from_blob's
  // belongs to its caller, so it is not, as torch's "not resizable" storages).
  bool resizable() const { return allocator_ != nullptr; }
  // Exchanges the memory (pointer and size) of two storages from the same allocator, leaving each
  // one's identity, version and sharers in place: resize_ grows a storage by copying it into a
  // bigger one and exchanging, so every tensor sharing it sees the grown memory, as in torch; the
  // old memory goes back to the allocator with the other storage.
  void exchange_memory(StorageImpl& other);

  // Bumped by every in-place write; autograd compares it with the value seen when a tensor was
  // saved for backward, and refuses a gradient computed from overwritten data.
  uint32_t version() const { return version_.load(std::memory_order_relaxed); }
  void bump_version() { version_.fetch_add(1, std::memory_order_relaxed); }

 private:
  void* data_;
  size_t nbytes_;
  Device device_;
  Allocator* allocator_ = nullptr;
  std::function<void(void*)> deleter_;
  std::atomic<uint32_t> version_{0};
};

using Storage = std::shared_ptr<StorageImpl>;

}  // namespace colony
