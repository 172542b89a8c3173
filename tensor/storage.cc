#include "tensor/storage.h"

#include <stdexcept>
#include <utility>

namespace colony {

StorageImpl::StorageImpl(size_t nbytes, Allocator* allocator)
    : data_(allocator->allocate(nbytes)), nbytes_(nbytes), device_(allocator->device()), allocator_(allocator) {}

StorageImpl::StorageImpl(void* data, size_t nbytes, Device device, std::function<void(void*)> deleter)
    : data_(data), nbytes_(nbytes), device_(device), deleter_(std::move(deleter)) {}

void StorageImpl::exchange_memory(StorageImpl& other) {
  if (allocator_ == nullptr || allocator_ != other.allocator_) {
    throw std::logic_error("exchange_memory: both storages must come from the same allocator");
  }
  std::swap(data_, other.data_);
  std::swap(nbytes_, other.nbytes_);
}

StorageImpl::~StorageImpl() {
  if (allocator_ != nullptr) {
    allocator_->deallocate(data_, nbytes_);
  } else if (deleter_) {
    deleter_(data_);
  }
}

}  // namespace colony
