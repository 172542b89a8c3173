// Padding by reflection, replication or wrapping (F::pad's modes): the geometry of the last 1 to 3
// dims, the checks the kernels rely on, one kernel call (kernels/common/pad.h).
#include <stdexcept>
#include <string>

#include "kernels/common/pad.h"
#include "ops/op_checks.h"
#include "ops/raw_nn_ops.h"
#include "ops/raw_ops.h"
#include "runtime/run_kernel.h"

namespace colony::raw {
namespace {

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument("pad: " + what); }

// The geometry of padding `sizes` by `pad`, checked.
kernels::PadGeometry geometry(const Shape& sizes, kernels::PadMode mode, const std::vector<int64_t>& pad) {
  const int64_t ndim = static_cast<int64_t>(sizes.size()), padded = static_cast<int64_t>(pad.size()) / 2;
  if (pad.size() % 2 != 0 || padded < 1 || padded > 3 || padded > ndim) {
    fail("expected 2, 4 or 6 padding amounts for the last 1 to 3 dims of a tensor of at least as many dims, got " +
         std::to_string(pad.size()) + " for " + shape_str(sizes));
  }
  kernels::PadGeometry g;
  g.mode = mode;
  for (int64_t d = 0; d < ndim - padded; ++d) g.planes *= sizes[d];
  kernels::PadDim* dims[3] = {&g.w, &g.h, &g.d};  // the last dim first, as pad lists them
  for (int64_t i = 0; i < padded; ++i) {
    kernels::PadDim& p = *dims[i];
    const int64_t size = sizes[ndim - 1 - i], lo = pad[2 * i], hi = pad[2 * i + 1];
    p.in = size;
    p.lo = lo;
    p.out = size + lo + hi;
    p.core_start = lo < 0 ? -lo : 0;
    p.core = size - p.core_start - (hi < 0 ? -hi : 0);
    const std::string where = " of dim " + std::to_string(ndim - 1 - i) + " of size " + std::to_string(size);
    if (p.out < 1 || p.core < 1) fail("the padding (" + std::to_string(lo) + ", " + std::to_string(hi) + ")" + where + " leaves nothing");
    if (mode == kernels::PadMode::Reflect && (lo >= size || hi >= size)) {
      fail("reflect padding must be smaller than the dim it pads, got (" + std::to_string(lo) + ", " +
           std::to_string(hi) + ")" + where);
    }
    if (mode == kernels::PadMode::Circular && (lo > p.core || hi > p.core)) {
      fail("circular padding wraps around more than once: (" + std::to_string(lo) + ", " + std::to_string(hi) + ")" +
           where + ", " + std::to_string(p.core) + " elements left after cropping");
    }
  }
  return g;
}

Shape padded_shape(Shape sizes, const kernels::PadGeometry& g, int64_t padded) {
  const kernels::PadDim* dims[3] = {&g.w, &g.h, &g.d};
  for (int64_t i = 0; i < padded; ++i) sizes[sizes.size() - 1 - i] = dims[i]->out;
  return sizes;
}

}  // namespace

Tensor pad_by_mode(const Tensor& input, kernels::PadMode mode, const std::vector<int64_t>& pad) {
  check_defined(input, "pad");
  const kernels::PadGeometry g = geometry(input.sizes(), mode, pad);
  const Tensor x = contiguous(input);
  Tensor out = empty(padded_shape(x.sizes(), g, static_cast<int64_t>(pad.size()) / 2),
                     TensorOptions(x.dtype()).device(x.device()));
  run_kernel<kernels::PadForward>(x.device(), x.dtype(), g, x.data_ptr_raw(), out.data_ptr_raw());
  return out;
}

Tensor pad_by_mode_backward(const Tensor& grad_output, kernels::PadMode mode, const std::vector<int64_t>& pad,
                            const Shape& input_sizes) {
  check_defined(grad_output, "pad backward");
  check_floating(grad_output, "pad backward");
  const kernels::PadGeometry g = geometry(input_sizes, mode, pad);
  const Shape expected = padded_shape(input_sizes, g, static_cast<int64_t>(pad.size()) / 2);
  if (grad_output.sizes() != expected) {
    fail("the output gradient is " + shape_str(grad_output.sizes()) + ", expected the padded shape " +
         shape_str(expected));
  }
  const Tensor go = contiguous(grad_output);
  Tensor grad = empty(input_sizes, TensorOptions(go.dtype()).device(go.device()));
  run_kernel<kernels::PadBackward>(go.device(), go.dtype(), g, go.data_ptr_raw(), grad.data_ptr_raw());
  return grad;
}

}  // namespace colony::raw
