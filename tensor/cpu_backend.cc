// The CPU backend: no device memory to transfer (memcpy), and the convolutions, the last kernels
// still on this seam (kernels/cpu/conv.h). CPU kernels run synchronously on the calling thread (and
// its worker pool), so there is no stream or device state.
#include <stdexcept>

#include "kernels/cpu/conv.h"
#include "tensor/device_backend.h"

namespace colony {
namespace {

namespace k = kernels::cpu;

class CpuBackend final : public Backend {
 public:
  void memcpy(void*, const void*, size_t, MemcpyKind, const Stream&, bool) const override {
    // copy.cc asks the backend of the CUDA side of a transfer; two CPU tensors are on one device.
    throw std::logic_error("memcpy: the CPU backend has no device memory to transfer to or from");
  }

  void conv2d_forward(DType dtype, const kernels::Conv2dGeometry& g, const void* x, const void* w, const void* bias,
                      void* y) const override {
    k::conv2d_forward(dtype, g, x, w, bias, y);
  }
  void conv2d_backward(DType dtype, const kernels::Conv2dGeometry& g, const void* grad_y, const void* x,
                       const void* w, void* grad_x, void* grad_w, void* grad_b) const override {
    k::conv2d_backward(dtype, g, grad_y, x, w, grad_x, grad_w, grad_b);
  }
};

}  // namespace

namespace detail {

const Backend& cpu_backend() {
  static const CpuBackend backend;
  return backend;
}

}  // namespace detail
}  // namespace colony
