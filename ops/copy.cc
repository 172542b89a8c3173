// Copies, conversions and fill: the one place data moves between dtypes and devices; and
// Tensor::item, a one-element copy to the host.
#include <cmath>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

#include "kernels/common/copy.h"
#include "kernels/common/dispatch.h"
#include "runtime/device_backend.h"
#include "runtime/cuda.h"
#include "ops/kernel_layout.h"
#include "ops/raw_ops.h"
#include "runtime/stream.h"
#include "runtime/run_kernel.h"

namespace colony::raw {
namespace {

void check_defined(const Tensor& t, const char* op) {
  if (!t.defined()) throw std::invalid_argument(std::string(op) + ": expected a defined tensor");
}

// dst and src on one device; src broadcasts to dst's shape.
void copy_same_device(const Tensor& dst, const Tensor& src) {
  auto ls = broadcast_layout(src, dst.sizes(), "copy_");
  auto ld = kernel_layout(dst, "copy_");
  run_kernel<kernels::Copy>(dst.device(), src.dtype(), src.data_ptr_raw(), ls, dst.dtype(), dst.data_ptr_raw(), ld);
}

// The stream non_blocking host-to-device copies run on, one per device, so that the next batch's
// upload overlaps the kernels still queued on the current stream. Created on first use, kept for the
// life of the process (as every Colony stream).
Stream copy_stream(Device device) {
  static std::mutex mu;
  static auto* streams = new std::map<int, Stream>();  // leaked: used until exit
  std::lock_guard<std::mutex> lock(mu);
  auto it = streams->find(device.index);
  if (it == streams->end()) it = streams->emplace(device.index, new_stream(device)).first;
  return it->second;
}

// An asynchronous upload of pinned `src` into dense `dst` (same dtype and size) on the copy stream,
// ordered by events: the copy first waits for the current stream's earlier work unless dst was
// allocated on the copy stream itself (then nothing on the current stream can still use its
// memory), and the current stream's later work waits for the copy. Both blocks are marked used by
// the other stream, so neither returns to a cache while a copy or a kernel may still touch it. No
// host synchronization.
void upload_async(const Tensor& dst, const Tensor& src, bool dst_on_copy_stream) {
  const Stream compute = current_stream(dst.device());
  const Stream copy = copy_stream(dst.device());
  if (!dst_on_copy_stream) {
    Event ready(/*enable_timing=*/false);
    ready.record(compute);
    ready.wait(copy);
  }
  backend_for(dst.device())
      .memcpy(dst.data_ptr_raw(), src.data_ptr_raw(), static_cast<size_t>(src.nbytes()), MemcpyKind::HostToDevice, copy,
              /*async=*/true);
  Event done(/*enable_timing=*/false);
  done.record(copy);
  done.wait(compute);
  src.record_stream(copy);
  dst.record_stream(dst_on_copy_stream ? compute : copy);
}

// Transfers move dense bytes: the source is made dense (in its own dtype, on its own device) with
// dst's shape, and lands in dst directly when dst is dense and of that dtype, otherwise in a dense
// buffer on dst's device that a conversion kernel then copies into dst. Converting after the move
// keeps uint8 images uint8 over the bus. The bytes move on the source device's stream, except from
// the host, where they move on dst's.
void copy_across_devices(const Tensor& dst, const Tensor& src, bool non_blocking) {
  if (non_blocking && src.is_cpu() && src.is_contiguous() && dst.is_contiguous() && src.dtype() == dst.dtype() &&
      src.sizes() == dst.sizes() && src.is_pinned()) {
    upload_async(dst, src, /*dst_on_copy_stream=*/false);
    return;
  }
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
    // Asynchronous uploads took the branch above; a pageable, strided or converted source (or a
    // temporary stage) must be fully read before this returns.
    mover.memcpy(landing.data_ptr_raw(), stage.data_ptr_raw(), nbytes, MemcpyKind::HostToDevice,
                 current_stream(dst.device()), /*async=*/false);
  } else if (dst.is_cpu()) {
    const bool async = non_blocking && direct && dst.is_pinned();
    const Stream stream = current_stream(src.device());
    mover.memcpy(landing.data_ptr_raw(), stage.data_ptr_raw(), nbytes, MemcpyKind::DeviceToHost, stream, async);
    // The pinned block must not serve another tensor before the copy has written it.
    if (async) dst.record_stream(stream);
  } else {
    // Between two GPUs: wait for work on dst's stream that may still read the memory we overwrite,
    // then copy on the source's stream (which produced `stage`) and wait for it.
    current_stream(dst.device()).synchronize();
    mover.memcpy(landing.data_ptr_raw(), stage.data_ptr_raw(), nbytes, MemcpyKind::DeviceToDevice,
                 current_stream(src.device()), /*async=*/false);
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
  // A non_blocking upload of pinned memory lands in a block of the copy stream's pool, so it need
  // not wait for the current stream at all (see upload_async).
  if (non_blocking && t.is_cpu() && device.is_cuda() && t.dtype() == dtype && t.is_contiguous() && t.is_pinned()) {
    Tensor out;
    {
      StreamGuard on_copy(copy_stream(device));
      out = empty(t.sizes(), TensorOptions(dtype).device(device));
    }
    upload_async(out, t, /*dst_on_copy_stream=*/true);
    return out;
  }
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
    run_kernel<kernels::Fill>(t.device(), t.dtype(), t.data_ptr_raw(), l, value);
  }
  t.storage()->bump_version();
}

}  // namespace colony::raw

namespace colony {

// Here rather than in tensor.cc: it reads a CUDA tensor through raw::to, an op.
template <typename T>
T Tensor::item() const {
  if (numel() != 1) {
    throw std::invalid_argument("item: a Tensor with " + std::to_string(numel()) +
                                " elements cannot be converted to a scalar (shape " + shape_str(sizes()) + ")");
  }
  Tensor host = is_cpu() ? *this : raw::to(*this, kCPU, dtype());
  return COLONY_DISPATCH_ALL(host.dtype(), "item", [&]() -> T {
    scalar_t v = *static_cast<const scalar_t*>(host.data_ptr_raw());
    return static_cast<T>(static_cast<compute_t<scalar_t>>(v));
  });
}

template float Tensor::item<float>() const;
template double Tensor::item<double>() const;
template int64_t Tensor::item<int64_t>() const;
template int32_t Tensor::item<int32_t>() const;
template uint8_t Tensor::item<uint8_t>() const;
template bool Tensor::item<bool>() const;

bool Tensor::is_nonzero() const {
  if (numel() == 0) throw std::invalid_argument("is_nonzero: Boolean value of Tensor with no values is ambiguous");
  if (numel() > 1) {
    throw std::invalid_argument("is_nonzero: Boolean value of Tensor with more than one value is ambiguous");
  }
  const double v = item<double>();
  return v != 0.0 || std::isnan(v);
}

}  // namespace colony
