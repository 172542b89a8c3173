// tril and triu: the lower or upper triangle of the last two dims, batched over the others.
#include <stdexcept>
#include <string>

#include "kernels/common/triangle.h"
#include "ops/op_checks.h"
#include "ops/raw_ops.h"
#include "runtime/run_kernel.h"

namespace colony::raw {
namespace {

Tensor triangle(const Tensor& t, int64_t diagonal, bool lower) {
  const char* op = lower ? "tril" : "triu";
  check_defined(t, op);
  if (t.dim() < 2) {
    throw std::invalid_argument(std::string(op) + ": input tensor must have at least 2 dimensions, got shape " +
                                shape_str(t.sizes()));
  }
  Tensor x = contiguous(t);
  Tensor y = empty(t.sizes(), TensorOptions(t.dtype()).device(t.device()));
  if (y.numel() == 0) return y;
  const int64_t rows = t.size(-2), cols = t.size(-1);
  run_kernel<kernels::TriangleMask>(y.device(), t.element_size(), x.data_ptr_raw(), y.data_ptr_raw(),
                                    y.numel() / (rows * cols), rows, cols, diagonal, lower);
  return y;
}

}  // namespace

Tensor tril(const Tensor& t, int64_t diagonal) { return triangle(t, diagonal, true); }
Tensor triu(const Tensor& t, int64_t diagonal) { return triangle(t, diagonal, false); }

}  // namespace colony::raw
