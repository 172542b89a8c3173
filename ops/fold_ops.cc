// im2col and col2im (F::unfold and F::fold): torch's shape checks and messages
// (im2col_shape_check / col2im_shape_check), then one kernel call (kernels/common/fold.h).
#include <stdexcept>
#include <string>

#include "kernels/common/fold.h"
#include "ops/op_checks.h"
#include "ops/raw_nn_ops.h"
#include "ops/raw_ops.h"
#include "runtime/run_kernel.h"

namespace colony::raw {
namespace {

std::string pair(const Int2& v) { return "(" + std::to_string(v.h) + ", " + std::to_string(v.w) + ")"; }

[[noreturn]] void fail(const char* op, const std::string& what) { throw std::invalid_argument(std::string(op) + ": " + what); }

// The checks both directions share, in torch's order and words.
void check_window(const char* op, Int2 kernel_size, Int2 dilation, Int2 padding, Int2 stride) {
  if (kernel_size.h <= 0 || kernel_size.w <= 0) {
    fail(op, "kernel size should be greater than zero, but got kernel_height: " + std::to_string(kernel_size.h) +
                 " kernel_width: " + std::to_string(kernel_size.w));
  }
  if (stride.h <= 0 || stride.w <= 0) {
    fail(op, "stride should be greater than zero, but got stride_height: " + std::to_string(stride.h) +
                 " stride_width: " + std::to_string(stride.w));
  }
  if (dilation.h <= 0 || dilation.w <= 0) {
    fail(op, "dilation should be greater than zero, but got dilation_height: " + std::to_string(dilation.h) +
                 " dilation_width: " + std::to_string(dilation.w));
  }
  if (padding.h < 0 || padding.w < 0) {
    fail(op, "padding should be non-negative, but got pad_height: " + std::to_string(padding.h) +
                 " pad_width: " + std::to_string(padding.w));
  }
}

// Sliding blocks along one dim: (size + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1, with
// C++'s division as torch's (truncated, so a too-small size can give 0 or a negative count).
int64_t blocks_along(int64_t size, int64_t kernel, int64_t dilation, int64_t pad, int64_t stride) {
  return (size + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1;
}

kernels::FoldGeometry geometry(int64_t planes, int64_t height, int64_t width, Int2 kernel_size, Int2 dilation,
                               Int2 padding, Int2 stride, int64_t blocks_h, int64_t blocks_w) {
  kernels::FoldGeometry g;
  g.planes = planes;
  g.height = height;
  g.width = width;
  g.kernel_h = kernel_size.h;
  g.kernel_w = kernel_size.w;
  g.dilation_h = dilation.h;
  g.dilation_w = dilation.w;
  g.pad_h = padding.h;
  g.pad_w = padding.w;
  g.stride_h = stride.h;
  g.stride_w = stride.w;
  g.blocks_h = blocks_h;
  g.blocks_w = blocks_w;
  return g;
}

}  // namespace

Tensor im2col(const Tensor& input, Int2 kernel_size, Int2 dilation, Int2 padding, Int2 stride) {
  const char* op = "unfold";
  check_defined(input, op);
  check_floating(input, op);
  check_window(op, kernel_size, dilation, padding, stride);
  const int64_t nd = input.dim();
  bool ok = nd == 3 || nd == 4;
  for (int64_t d = nd == 4 ? 1 : 0; ok && d < nd; ++d) ok = input.size(d) > 0;
  if (!ok) {
    fail(op, "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for "
             "input, but got: " + shape_str(input.sizes()));
  }
  const bool batched = nd == 4;
  const int64_t n = batched ? input.size(0) : 1, c = input.size(nd - 3), h = input.size(nd - 2), w = input.size(nd - 1);
  const int64_t bh = blocks_along(h, kernel_size.h, dilation.h, padding.h, stride.h);
  const int64_t bw = blocks_along(w, kernel_size.w, dilation.w, padding.w, stride.w);
  if (bh < 1 || bw < 1) {
    fail(op, "Given input with spatial size " + pair({h, w}) + ", kernel_size=" + pair(kernel_size) +
                 ", dilation=" + pair(dilation) + ", padding=" + pair(padding) +
                 ", calculated shape of the array of sliding blocks as " + pair({bh, bw}) +
                 ", but its components must be at least one.");
  }
  const Tensor x = contiguous(input);
  const int64_t rows = c * kernel_size.h * kernel_size.w;
  Shape shape = batched ? Shape{n, rows, bh * bw} : Shape{rows, bh * bw};
  Tensor columns = empty(shape, TensorOptions(x.dtype()).device(x.device()));
  if (columns.numel() == 0) return columns;
  const kernels::FoldGeometry g = geometry(n * c, h, w, kernel_size, dilation, padding, stride, bh, bw);
  run_kernel<kernels::UnfoldForward>(x.device(), x.dtype(), g, x.data_ptr_raw(), columns.data_ptr_raw());
  return columns;
}

Tensor col2im(const Tensor& input, Int2 output_size, Int2 kernel_size, Int2 dilation, Int2 padding, Int2 stride) {
  const char* op = "fold";
  check_defined(input, op);
  check_floating(input, op);
  check_window(op, kernel_size, dilation, padding, stride);
  const int64_t nd = input.dim();
  bool ok = nd == 2 || nd == 3;
  for (int64_t d = nd == 3 ? 1 : 0; ok && d < nd; ++d) ok = input.size(d) > 0;
  if (!ok) {
    fail(op, "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero dimensions "
             "for input, but got: " + shape_str(input.sizes()));
  }
  const bool batched = nd == 3;
  const int64_t rows = input.size(nd - 2), length = input.size(nd - 1);
  const int64_t kernel = kernel_size.h * kernel_size.w;
  if (rows % kernel != 0) {
    fail(op, "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got "
             "input.size(1)=" + std::to_string(rows) + " and kernel_size=" + pair(kernel_size) + ".");
  }
  const int64_t bh = blocks_along(output_size.h, kernel_size.h, dilation.h, padding.h, stride.h);
  const int64_t bw = blocks_along(output_size.w, kernel_size.w, dilation.w, padding.w, stride.w);
  if (bh * bw != length || bh < 1 || bw < 1) {
    fail(op, "Given output_size=" + pair(output_size) + ", kernel_size=" + pair(kernel_size) + ", dilation=" +
                 pair(dilation) + ", padding=" + pair(padding) + ", stride=" + pair(stride) +
                 ", expected size of input's dimension 2 to match the calculated number of sliding blocks " +
                 std::to_string(bh) + " * " + std::to_string(bw) + " = " + std::to_string(bh * bw) +
                 ", but got input.size(2)=" + std::to_string(length) + ".");
  }
  const Tensor cols = contiguous(input);
  const int64_t n = batched ? input.size(0) : 1, c = rows / kernel;
  Shape shape = batched ? Shape{n, c, output_size.h, output_size.w} : Shape{c, output_size.h, output_size.w};
  Tensor image = empty(shape, TensorOptions(cols.dtype()).device(cols.device()));
  if (image.numel() == 0) return image;
  const kernels::FoldGeometry g =
      geometry(n * c, output_size.h, output_size.w, kernel_size, dilation, padding, stride, bh, bw);
  run_kernel<kernels::FoldForward>(cols.device(), cols.dtype(), g, cols.data_ptr_raw(), image.data_ptr_raw());
  return image;
}

}  // namespace colony::raw
