// resample and its adjoint: the input read in place as [outer, size(dim), inner] (contiguous), the
// tables uploaded to the input's device, one kernel call.
#include "ops/resample_ops.h"

#include <stdexcept>
#include <string>

#include "kernels/common/resample.h"
#include "ops/op_checks.h"
#include "ops/raw_ops.h"
#include "runtime/run_kernel.h"

namespace colony::raw {
namespace {

struct Geometry {
  int64_t outer = 1, inner = 1;
};

Geometry check(const Tensor& t, int64_t dim, int64_t expected, const ResampleTaps& taps, const char* op) {
  check_defined(t, op);
  if (t.dtype() != kFloat32 && t.dtype() != kFloat64) {
    throw std::invalid_argument(std::string(op) + ": expects a float32 or float64 tensor, got " +
                                dtype_name(t.dtype()));
  }
  if (dim < 0 || dim >= t.dim() || t.size(dim) != expected) {
    throw std::invalid_argument(std::string(op) + ": dim " + std::to_string(dim) + " of a " +
                                std::to_string(t.dim()) + "-D tensor must have size " + std::to_string(expected));
  }
  if (taps.taps < 1 || taps.taps > taps.in || taps.weight.size() != taps.start.size() * taps.taps) {
    throw std::invalid_argument(std::string(op) + ": inconsistent taps (" + std::to_string(taps.taps) + " taps over " +
                                std::to_string(taps.in) + " positions)");
  }
  int64_t previous = 0;
  for (int64_t s : taps.start) {
    if (s < previous || s + taps.taps > taps.in) {
      throw std::invalid_argument(std::string(op) + ": start positions must be non-decreasing and within the input");
    }
    previous = s;
  }
  Geometry g;
  for (int64_t d = 0; d < dim; ++d) g.outer *= t.size(d);
  for (int64_t d = dim + 1; d < t.dim(); ++d) g.inner *= t.size(d);
  return g;
}

Tensor on_device(const std::vector<int64_t>& v, Device device) {
  return to(from_vector<int64_t>(v, {static_cast<int64_t>(v.size())}), device, kInt64);
}

Tensor weights_on(const ResampleTaps& taps, const Tensor& like) {
  return to(from_vector<double>(taps.weight, {static_cast<int64_t>(taps.weight.size())}), like.device(), like.dtype());
}

}  // namespace

Tensor resample(const Tensor& x_arg, int64_t dim, const ResampleTaps& taps) {
  const Geometry g = check(x_arg, dim, taps.in, taps, "resample");
  const Tensor x = contiguous(x_arg);
  Shape shape = x.sizes();
  shape[dim] = taps.out();
  Tensor y = empty(shape, TensorOptions(x.dtype()).device(x.device()));
  if (y.numel() == 0) return y;
  const Tensor start = on_device(taps.start, x.device());
  const Tensor weight = weights_on(taps, x);
  run_kernel<kernels::ResampleForward>(y.device(), x.dtype(), x.data_ptr_raw(), y.data_ptr_raw(),
                                       static_cast<const int64_t*>(start.data_ptr_raw()), weight.data_ptr_raw(),
                                       g.outer, taps.in, taps.out(), g.inner, taps.taps);
  return y;
}

Tensor resample_adjoint(const Tensor& gy_arg, int64_t dim, const ResampleTaps& taps) {
  const Geometry g = check(gy_arg, dim, taps.out(), taps, "resample_adjoint");
  const Tensor gy = contiguous(gy_arg);
  Shape shape = gy.sizes();
  shape[dim] = taps.in;
  Tensor gx = empty(shape, TensorOptions(gy.dtype()).device(gy.device()));
  if (gx.numel() == 0) return gx;
  std::vector<int64_t> readers(static_cast<size_t>(2 * taps.in));
  kernels::resample_readers(taps.start.data(), taps.in, taps.out(), taps.taps, readers.data());
  const Tensor start = on_device(taps.start, gy.device());
  const Tensor reader_table = on_device(readers, gy.device());
  const Tensor weight = weights_on(taps, gy);
  run_kernel<kernels::ResampleAdjoint>(gx.device(), gy.dtype(), gy.data_ptr_raw(), gx.data_ptr_raw(),
                                       static_cast<const int64_t*>(start.data_ptr_raw()),
                                       static_cast<const int64_t*>(reader_table.data_ptr_raw()),
                                       weight.data_ptr_raw(), g.outer, taps.in, taps.out(), g.inner, taps.taps);
  return gx;
}

}  // namespace colony::raw
