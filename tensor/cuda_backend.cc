// The CUDA backend, one instance per device: the runtime's byte transfers (memcpy), and the
// convolutions, the last kernels still on this seam (cuDNN, kernels/cuda/cudnn_conv.h), queued on
// the device's current stream with the device made current. Compiled only when CUDA is
// (tensor/BUILD, if_cuda). It depends on the runtime below the ops only: cuDNN's workspaces come
// from the caching allocator itself (caching_allocator.h), not from tensors of the op layer.
#include <memory>
#include <utility>
#include <vector>

#include "kernels/cuda/cudnn_conv.h"
#include "kernels/cuda/runtime.h"
#include "kernels/cuda/workspaces.h"
#include "tensor/cuda.h"
#include "tensor/device_backend.h"
#include "tensor/stream.h"

namespace colony {
namespace {

namespace k = kernels::cuda;

// cuDNN asks for scratch memory once it has chosen an algorithm; it comes from the caching
// allocator of the device (on its current stream, as a tensor's would) and goes back to it
// (stream-ordered) when the call returns.
// (The device is current: the backend's DeviceGuard.)
struct Workspaces {
  std::vector<std::unique_ptr<k::KernelScratch>> held;
  k::WorkspaceAllocator allocator() {
    return [this](size_t bytes) -> void* {
      if (bytes == 0) return nullptr;
      held.push_back(std::make_unique<k::KernelScratch>(bytes));
      return held.back()->get();
    };
  }
};

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

  // cuDNN takes a workspace allocator after the stream; the workspaces live until the call returns.
  void conv2d_forward(DType dtype, const kernels::Conv2dGeometry& g, const void* x, const void* w, const void* bias,
                      void* y) const override {
    cuda::DeviceGuard guard(device_.index);
    Workspaces ws;
    k::conv2d_forward(dtype, g, x, w, bias, y, current_stream(device_).handle(), ws.allocator());
  }
  void conv2d_backward(DType dtype, const kernels::Conv2dGeometry& g, const void* grad_y, const void* x,
                       const void* w, void* grad_x, void* grad_w, void* grad_b) const override {
    cuda::DeviceGuard guard(device_.index);
    Workspaces ws;
    k::conv2d_backward(dtype, g, grad_y, x, w, grad_x, grad_w, grad_b, current_stream(device_).handle(),
                       ws.allocator());
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
