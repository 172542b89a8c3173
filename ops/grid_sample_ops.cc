// torch's grid_sampler (F::grid_sample) and its backward: torch's checks in torch's order and
// words (check_grid_sampler_common, _2d, _3d; every mode on 4-D and 5-D, 5-D bicubic being tricubic
// as torch 2.15's), then one kernel call each (kernels/common/grid_sample.h).
// float16 and bfloat16 are computed in float32 and rounded back once, on both devices.
#include <stdexcept>
#include <string>
#include <tuple>

#include "kernels/common/grid_sample.h"
#include "ops/op_checks.h"
#include "ops/raw_nn_ops.h"
#include "ops/raw_ops.h"
#include "runtime/run_kernel.h"

namespace colony::raw {
namespace {

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument("grid_sampler(): " + what); }

kernels::GridSampleGeometry check(const Tensor& input, const Tensor& grid, kernels::GridSampleMode mode,
                                  kernels::GridSamplePadding padding, bool align_corners) {
  if (!input.defined()) fail("expected input to not be undefined");
  if (!grid.defined()) fail("expected grid to not be undefined");
  if (input.device() != grid.device()) {
    fail("expected input and grid to be on same device, but input is on " + input.device().str() +
         " and grid is on " + grid.device().str());
  }
  const int64_t nd = input.dim();
  if (nd >= 1 && grid.dim() >= 1) {
    if (input.size(0) != grid.size(0)) {
      fail("expected grid and input to have same batch size, but got input with sizes " + shape_str(input.sizes()) +
           " and grid with sizes " + shape_str(grid.sizes()));
    }
    if (grid.size(-1) != nd - 2) {
      fail("expected grid to have size " + std::to_string(nd - 2) + " in last dimension, but got grid with sizes " +
           shape_str(grid.sizes()));
    }
    for (int64_t d = 2; d < nd; ++d) {
      if (input.size(d) == 0) {
        fail("expected input to have non-empty spatial dimensions, but input has sizes " + shape_str(input.sizes()) +
             " with dimension " + std::to_string(d) + " being empty");
      }
    }
  }
  if ((nd != 4 && nd != 5) || grid.dim() != nd) {
    const int expected = nd == 5 ? 5 : 4;
    fail("expected " + std::to_string(expected) + "D input and grid with same number of dimensions, but got input "
         "with sizes " + shape_str(input.sizes()) + " and grid with sizes " + shape_str(grid.sizes()));
  }
  if (!is_floating(input.dtype())) {
    fail(std::string("expected a floating point input and grid, got ") + dtype_name(input.dtype()));
  }
  if (input.dtype() != grid.dtype()) {
    fail(std::string("expected input and grid to have the same dtype, but input is ") + dtype_name(input.dtype()) +
         " and grid is " + dtype_name(grid.dtype()));
  }
  kernels::GridSampleGeometry g;
  g.batch = input.size(0);
  g.channels = input.size(1);
  g.dims = static_cast<int>(nd - 2);
  g.in_d = nd == 5 ? input.size(2) : 1;
  g.in_h = input.size(nd - 2);
  g.in_w = input.size(nd - 1);
  g.out_d = nd == 5 ? grid.size(1) : 1;
  g.out_h = grid.size(nd - 3);
  g.out_w = grid.size(nd - 2);
  g.mode = mode;
  g.padding = padding;
  g.align_corners = align_corners;
  return g;
}

// The dtype the kernels compute in: float16/bfloat16 widen to float32.
DType compute_dtype(DType dtype) { return dtype == kFloat64 ? kFloat64 : kFloat32; }

Shape output_shape(const Tensor& input, const Tensor& grid) {
  Shape shape{input.size(0), input.size(1)};
  for (int64_t d = 1; d + 1 < grid.dim(); ++d) shape.push_back(grid.size(d));
  return shape;
}

}  // namespace

Tensor grid_sampler(const Tensor& input_arg, const Tensor& grid_arg, kernels::GridSampleMode mode,
                    kernels::GridSamplePadding padding, bool align_corners) {
  const kernels::GridSampleGeometry g = check(input_arg, grid_arg, mode, padding, align_corners);
  const DType dtype = compute_dtype(input_arg.dtype());
  const Tensor input = contiguous(to(input_arg, input_arg.device(), dtype));
  const Tensor grid = contiguous(to(grid_arg, grid_arg.device(), dtype));
  Tensor out = empty(output_shape(input, grid), TensorOptions(dtype).device(input.device()));
  if (out.numel() == 0) return to(out, out.device(), input_arg.dtype());
  run_kernel<kernels::GridSampleForward>(input.device(), dtype, g, input.data_ptr_raw(), grid.data_ptr_raw(),
                                         out.data_ptr_raw());
  return to(out, out.device(), input_arg.dtype());
}

std::tuple<Tensor, Tensor> grid_sampler_backward(const Tensor& grad_output_arg, const Tensor& input_arg,
                                                 const Tensor& grid_arg, kernels::GridSampleMode mode,
                                                 kernels::GridSamplePadding padding, bool align_corners,
                                                 bool input_grad, bool grid_grad) {
  const kernels::GridSampleGeometry g = check(input_arg, grid_arg, mode, padding, align_corners);
  check_defined(grad_output_arg, "grid_sampler()", "grad_output");
  const Shape expected = output_shape(input_arg, grid_arg);
  if (grad_output_arg.sizes() != expected) {
    fail("expected grad_output to have sizes " + shape_str(expected) + " but got grad_output with sizes " +
         shape_str(grad_output_arg.sizes()));
  }
  if (grad_output_arg.device() != input_arg.device()) {
    fail("expected grad_output on " + input_arg.device().str() + ", got " + grad_output_arg.device().str());
  }
  const DType dtype = compute_dtype(input_arg.dtype());
  const Device device = input_arg.device();
  const Tensor grad_output = contiguous(to(grad_output_arg, device, dtype));
  const Tensor input = contiguous(to(input_arg, device, dtype));
  const Tensor grid = contiguous(to(grid_arg, device, dtype));
  Tensor grad_input = input_grad ? zeros(input.sizes(), TensorOptions(dtype).device(device)) : Tensor();
  Tensor grad_grid = grid_grad ? empty(grid.sizes(), TensorOptions(dtype).device(device)) : Tensor();
  if (input_grad || grid_grad) {
    run_kernel<kernels::GridSampleBackward>(device, dtype, g, grad_output.data_ptr_raw(), input.data_ptr_raw(),
                                            grid.data_ptr_raw(), input_grad ? grad_input.data_ptr_raw() : nullptr,
                                            grid_grad ? grad_grid.data_ptr_raw() : nullptr);
  }
  if (input_grad) grad_input = to(grad_input, device, input_arg.dtype());
  if (grid_grad) grad_grid = to(grad_grid, device, grid_arg.dtype());
  return {grad_input, grad_grid};
}

}  // namespace colony::raw
