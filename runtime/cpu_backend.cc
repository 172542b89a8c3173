// The CPU backend: no device memory to transfer (memcpy). CPU kernels run synchronously on the
// calling thread (and its worker pool), so there is no stream or device state.
#include <stdexcept>

#include "runtime/device_backend.h"

namespace colony {
namespace {

class CpuBackend final : public Backend {
 public:
  void memcpy(void*, const void*, size_t, MemcpyKind, const Stream&, bool) const override {
    // copy.cc asks the backend of the CUDA side of a transfer; two CPU tensors are on one device.
    throw std::logic_error("memcpy: the CPU backend has no device memory to transfer to or from");
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
