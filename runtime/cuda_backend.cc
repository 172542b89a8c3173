// The CUDA backend, one instance per device: the runtime's byte transfers (memcpy), queued on the
// stream the caller gives with the device made current. Compiled only when CUDA is (runtime/BUILD,
// if_cuda).
#include <vector>

#include "runtime/cuda/runtime.h"
#include "runtime/cuda.h"
#include "runtime/device_backend.h"
#include "runtime/stream.h"

namespace colony {
namespace {

namespace k = kernels::cuda;

k::CopyKind copy_kind(MemcpyKind kind) {
  switch (kind) {
    case MemcpyKind::HostToDevice: return k::CopyKind::HostToDevice;
    case MemcpyKind::DeviceToHost: return k::CopyKind::DeviceToHost;
    case MemcpyKind::DeviceToDevice: return k::CopyKind::DeviceToDevice;
  }
  return k::CopyKind::DeviceToDevice;
}

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int index) : device_(Device::cuda(index)) {}

  void memcpy(void* dst, const void* src, size_t nbytes, MemcpyKind kind, const Stream& stream,
              bool async) const override {
    cuda::DeviceGuard guard(device_.index);
    k::memcpy(dst, src, nbytes, copy_kind(kind), stream.handle(), async);
  }

 private:
  Device device_;
};

}  // namespace

namespace detail {

const Backend& cuda_backend(int index) {
  // Built once, on first use, for every device the process sees (a function-local static is
  // initialised exactly once even when threads race to it).
  static const std::vector<CudaBackend> backends = [] {
    std::vector<CudaBackend> all;
    for (int i = 0; i < cuda::device_count(); ++i) all.emplace_back(i);
    return all;
  }();
  if (index < 0 || index >= static_cast<int>(backends.size())) cuda::check_device(index, Device::cuda(index).str());
  return backends[static_cast<size_t>(index)];
}

}  // namespace detail
}  // namespace colony
