#include "kernels/cuda/workspaces.h"

#include <atomic>

namespace colony::kernels::cuda {
namespace {

std::atomic<void (*)(int)> release_hook{nullptr};

}  // namespace

void set_release_cached_memory(void (*release)(int device)) { release_hook.store(release); }

void release_cached_memory(int device) {
  if (auto release = release_hook.load()) release(device);
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
