#include "runtime/cuda/workspaces.h"

#include <atomic>
#include <stdexcept>

namespace colony::kernels::cuda {
namespace {

std::atomic<void (*)(int)> release_hook{nullptr};
std::atomic<ScratchAlloc> scratch_alloc{nullptr};
std::atomic<ScratchFree> scratch_free{nullptr};

}  // namespace

void set_release_cached_memory(void (*release)(int device)) { release_hook.store(release); }

void release_cached_memory(int device) {
  if (auto release = release_hook.load()) release(device);
}

void set_kernel_scratch_allocator(ScratchAlloc alloc, ScratchFree free) {
  scratch_free.store(free);
  scratch_alloc.store(alloc);
}

KernelScratch::KernelScratch(size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  ScratchAlloc alloc = scratch_alloc.load();
  if (alloc == nullptr) {
    throw std::logic_error("kernel scratch: no device allocator registered (runtime/cuda_allocator.cc registers it)");
  }
  ptr_ = alloc(bytes, &device_);
}

KernelScratch::~KernelScratch() {
  if (ptr_ != nullptr) scratch_free.load()(device_, ptr_, bytes_);
}

void* StreamWorkspaces::get(void* stream, size_t bytes, const Alloc& alloc, const Release& release) {
  auto it = by_stream_.find(stream);
  if (it != by_stream_.end()) return it->second;
  if (bytes == 0) return nullptr;  // CUBLAS_WORKSPACE_CONFIG=:0:0 asks for none
  void* p = alloc(bytes);
  if (p == nullptr) {
    release();
    p = alloc(bytes);
  }
  if (p != nullptr) by_stream_.emplace(stream, p);
  return p;
}

}  // namespace colony::kernels::cuda
