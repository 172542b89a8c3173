// Copies, conversions and fill: the one place data moves between dtypes and devices.
#include <stdexcept>
#include <string>

#include "tensor/backend.h"
#include "tensor/cuda.h"
#include "tensor/kernel_layout.h"
#include "tensor/raw_ops.h"
#include "tensor/stream.h"

namespace colony::raw {
namespace {

void check_defined(const Tensor& t, const char* op) {
  if (!t.defined()) throw std::invalid_argument(std::string(op) + ": expected a defined tensor");
}

// dst and src on one device; src broadcasts to dst's shape.
void copy_same_device(const Tensor& dst, const Tensor& src) {
  auto ls = broadcast_layout(src, dst.sizes(), "copy_");
  auto ld = kernel_layout(dst, "copy_");
  backend_for(dst.device()).copy(src.dtype(), src.data_ptr_raw(), ls, dst.dtype(), dst.data_ptr_raw(), ld);
}

// Transfers move dense bytes: the source is made dense (in its own dtype, on its own device) with
// dst's shape, and lands in dst directly when dst is dense and of that dtype, otherwise in a dense
// buffer on dst's device that a conversion kernel then copies into dst. Converting after the move
// keeps uint8 images uint8 over the bus. The bytes move on the source device's stream, except from
// the host, where they move on dst's.
void copy_across_devices(const Tensor& dst, const Tensor& src, bool non_blocking) {
  const Backend& mover = backend_for(src.is_cpu() ? dst.device() : src.device());
  Tensor stage = src;
  if (src.sizes() != dst.sizes() || !src.is_contiguous()) {
    stage = empty(dst.sizes(), TensorOptions(src.dtype()).device(src.device()));
    copy_same_device(stage, src);
  }
  const bool direct = dst.is_contiguous() && dst.dtype() == stage.dtype();
  Tensor landing = direct ? dst : empty(dst.sizes(), TensorOptions(stage.dtype()).device(dst.device()));
  const size_t nbytes = static_cast<size_t>(stage.nbytes());
  if (src.is_cpu()) {
    // Asynchronous only from the caller's own pinned memory: a pageable or temporary source must be
    // fully read before this returns.
    const bool async = non_blocking && stage.is_same(src) && src.is_pinned();
    mover.memcpy(landing.data_ptr_raw(), stage.data_ptr_raw(), nbytes, MemcpyKind::HostToDevice, async);
  } else if (dst.is_cpu()) {
    const bool async = non_blocking && direct && dst.is_pinned();
    mover.memcpy(landing.data_ptr_raw(), stage.data_ptr_raw(), nbytes, MemcpyKind::DeviceToHost, async);
  } else {
    // Between two GPUs: wait for work on dst's stream that may still read the memory we overwrite,
    // then copy on the source's stream (which produced `stage`) and wait for it.
    current_stream(dst.device()).synchronize();
    mover.memcpy(landing.data_ptr_raw(), stage.data_ptr_raw(), nbytes, MemcpyKind::DeviceToDevice, /*async=*/false);
  }
  if (!direct) copy_same_device(dst, landing);
}

void copy_into(const Tensor& dst, const Tensor& src, bool non_blocking) {
  check_defined(dst, "copy_");
  check_defined(src, "copy_");
  Shape shape = broadcast_shapes(dst.sizes(), src.sizes(), "copy_");
  if (shape != dst.sizes()) {
    throw std::invalid_argument("copy_: source shape " + shape_str(src.sizes()) +
                                " cannot be broadcast to destination shape " + shape_str(dst.sizes()));
  }
  if (dst.numel() == 0) return;
  check_no_internal_overlap(dst, "copy_");
  if (dst.device() == src.device()) {
    if (dst.storage() == src.storage()) {
      if (!partially_overlaps(dst, src)) return;  // the very same view and dtype
      copy_same_device(dst, clone(src));
      return;
    }
    copy_same_device(dst, src);
    return;
  }
  copy_across_devices(dst, src, non_blocking);
}

}  // namespace

void copy_(Tensor& dst, const Tensor& src) {
  copy_into(dst, src, /*non_blocking=*/false);
  dst.storage()->bump_version();
}

Tensor contiguous(const Tensor& t) {
  check_defined(t, "contiguous");
  return t.is_contiguous() ? t : clone(t);
}

Tensor clone(const Tensor& t) {
  check_defined(t, "clone");
  Tensor out = empty(t.sizes(), TensorOptions(t.dtype()).device(t.device()));
  copy_into(out, t, false);
  return out;
}

// Deliberate difference from PyTorch: the result is always contiguous (PyTorch's preserve_format
// keeps a dense permuted tensor's strides).
Tensor to(const Tensor& t, Device device, DType dtype, bool non_blocking) {
  check_defined(t, "to");
  if (t.device() == device && t.dtype() == dtype) return t;
  if (device.is_cuda()) cuda::check_device(device.index, "to(" + device.str() + ")");
  // Like PyTorch, a non-blocking copy to the host lands in pinned memory, the only kind a device can
  // write to asynchronously.
  const bool pin = non_blocking && t.is_cuda() && device.is_cpu();
  Tensor out = empty(t.sizes(), TensorOptions(dtype).device(device).pinned_memory(pin));
  copy_into(out, t, non_blocking);
  return out;
}

Tensor pin_memory(const Tensor& t) {
  check_defined(t, "pin_memory");
  if (!t.is_cpu()) {
    throw std::invalid_argument("pin_memory: only CPU tensors can be pinned, got a tensor on " + t.device().str());
  }
  if (t.is_pinned()) return t;
  Tensor out = empty(t.sizes(), TensorOptions(t.dtype()).pinned_memory(true));
  copy_into(out, t, false);
  return out;
}

void fill_(Tensor& t, double value) {
  check_defined(t, "fill_");
  if (t.numel() > 0) {
    // An expanded view may be filled (PyTorch allows it): each memory location is written once by
    // walking only the dims that move through memory.
    auto l = kernel_layout(t, "fill_");
    for (int d = 0; d < l.ndim; ++d)
      if (l.strides[d] == 0) l.sizes[d] = 1;
    backend_for(t.device()).fill(t.dtype(), t.data_ptr_raw(), l, value);
  }
  t.storage()->bump_version();
}

}  // namespace colony::raw
