// torch's add-and-multiply family, beta * input + alpha * product: addmm (mat1 @ mat2) and the
// ones written with it (addmv, addr, addbmm as one product over joined dims), and baddbmm (one
// product per batch). Each product accumulates onto input's values in the GEMM (raw::addmm_: float32
// accumulation, one rounding), as torch's BLAS call does, so a 16-bit result is rounded once.
//   d input = beta g (summed to input's shape; nothing when beta = 0)
//   d mat1 = alpha g mat2^T,  d mat2 = alpha mat1^T g
#include <stdexcept>
#include <string>

#include "autograd/autocast.h"
#include "autograd/op_util.h"
#include "autograd/ops.h"

namespace colony {
namespace {

using autograd::detail::check_rank;

using autograd::record;
using autograd::requires_grad_safe;
using autograd::SavedTensor;
using autograd::detail::Grads;
using autograd::detail::Needs;
using autograd::detail::save_if;

// input broadcast to `shape` (never the other way), beta = 0 ignoring its values (NaN too), in a
// new contiguous tensor the GEMM accumulates onto.
Tensor start_from(const Tensor& input, const Shape& shape, double beta, const Tensor& like, const char* op) {
  if (broadcast_shapes(input.sizes(), shape, op) != shape) {
    throw std::invalid_argument(std::string(op) + ": the input " + shape_str(input.sizes()) +
                                " does not broadcast to the product's shape " + shape_str(shape));
  }
  if (input.dtype() != like.dtype()) {
    throw std::invalid_argument(std::string(op) + ": expected input and the matrices to have one dtype, got " +
                                dtype_name(input.dtype()) + " and " + dtype_name(like.dtype()));
  }
  if (beta == 0) return raw::zeros(shape, TensorOptions(like.dtype()).device(like.device()));
  return raw::contiguous(raw::clone(raw::expand(input, shape)));
}

#define COLONY_CAST(op, t) autocast::cast(autocast::Op::op, t)

// addmm's node on autocast-cast operands.
Tensor addmm_node(const Tensor& input, const Tensor& a, const Tensor& b, double beta, double alpha, const char* op) {
  check_rank(a, 2, op, "mat1");
  check_rank(b, 2, op, "mat2");
  if (a.size(1) != b.size(0)) {
    throw std::invalid_argument(std::string(op) + ": mat1 and mat2 shapes cannot be multiplied (" +
                                std::to_string(a.size(0)) + "x" + std::to_string(a.size(1)) + " and " +
                                std::to_string(b.size(0)) + "x" + std::to_string(b.size(1)) + ")");
  }
  Tensor out = start_from(input, {a.size(0), b.size(1)}, beta, a, op);
  raw::addmm_(out, a, b, beta, alpha);
  if (autograd::needs_grad(input, a, b)) {
    SavedTensor sa = save_if(requires_grad_safe(b), a), sb = save_if(requires_grad_safe(a), b);
    const Shape input_shape = input.sizes();
    autograd::detail::record_differentiable("AddmmBackward", {input, a, b}, out, {sa, sb},
           [sa, sb, input_shape, beta, alpha](const Grads& g, const Needs& needs) -> Grads {
             Tensor gi, ga, gb;
             if (needs[0]) {
               gi = beta == 1 ? g[0] : mul(g[0], beta);
               if (gi.sizes() != input_shape) gi = sum_to(gi, input_shape);
             }
             if (needs[1]) ga = mul(mm(g[0], transpose(sb.unpack(), 0, 1)), alpha);
             if (needs[2]) gb = mul(mm(transpose(sa.unpack(), 0, 1), g[0]), alpha);
             return {gi, ga, gb};
           });
  }
  return out;
}

}  // namespace

Tensor addmm(const Tensor& input, const Tensor& mat1, const Tensor& mat2, double beta, double alpha) {
  return addmm_node(COLONY_CAST(addmm, input), COLONY_CAST(addmm, mat1), COLONY_CAST(addmm, mat2), beta, alpha, "addmm");
}

Tensor addmv(const Tensor& input, const Tensor& mat, const Tensor& vec, double beta, double alpha) {
  check_rank(mat, 2, "addmv", "mat");
  check_rank(vec, 1, "addmv", "vec");
  // [n] = [n, 1] of the product mat @ vec[:, None].
  const Tensor in = COLONY_CAST(addmv, input);
  if (in.dim() > 1) throw std::invalid_argument("addmv: expected a 0-D or 1-D input, got " + shape_str(in.sizes()));
  Tensor column = unsqueeze(expand(in, {mat.size(0)}), 1);
  return squeeze(addmm_node(column, COLONY_CAST(addmv, mat), unsqueeze(COLONY_CAST(addmv, vec), 1), beta, alpha, "addmv"), 1);
}

Tensor addr(const Tensor& input, const Tensor& vec1, const Tensor& vec2, double beta, double alpha) {
  check_rank(vec1, 1, "addr", "vec1");
  check_rank(vec2, 1, "addr", "vec2");
  // The outer product as [n, 1] @ [1, m].
  return addmm_node(COLONY_CAST(addr, input), unsqueeze(COLONY_CAST(addr, vec1), 1), unsqueeze(COLONY_CAST(addr, vec2), 0),
                    beta, alpha, "addr");
}

Tensor addbmm(const Tensor& input, const Tensor& batch1, const Tensor& batch2, double beta, double alpha) {
  check_rank(batch1, 3, "addbmm", "batch1");
  check_rank(batch2, 3, "addbmm", "batch2");
  if (batch1.size(0) != batch2.size(0) || batch1.size(2) != batch2.size(1)) {
    throw std::invalid_argument("addbmm: batch1 " + shape_str(batch1.sizes()) + " and batch2 " + shape_str(batch2.sizes()) +
                                " do not multiply: expected [b, n, m] and [b, m, p]");
  }
  // The sum over the batch of batch1[i] @ batch2[i] is one product over the joined inner dim.
  const int64_t b = batch1.size(0), n = batch1.size(1), m = batch1.size(2);
  Tensor left = reshape(permute(COLONY_CAST(addbmm, batch1), {1, 0, 2}), {n, b * m});
  Tensor right = reshape(COLONY_CAST(addbmm, batch2), {b * m, batch2.size(2)});
  return addmm_node(COLONY_CAST(addbmm, input), left, right, beta, alpha, "addbmm");
}

Tensor baddbmm(const Tensor& input_arg, const Tensor& batch1_arg, const Tensor& batch2_arg, double beta, double alpha) {
  const Tensor input = COLONY_CAST(baddbmm, input_arg), a = COLONY_CAST(baddbmm, batch1_arg),
               b = COLONY_CAST(baddbmm, batch2_arg);
  check_rank(a, 3, "baddbmm", "batch1");
  check_rank(b, 3, "baddbmm", "batch2");
  if (a.size(0) != b.size(0) || a.size(2) != b.size(1)) {
    throw std::invalid_argument("baddbmm: batch1 " + shape_str(a.sizes()) + " and batch2 " + shape_str(b.sizes()) +
                                " do not multiply: expected [b, n, m] and [b, m, p]");
  }
  Tensor out = start_from(input, {a.size(0), a.size(1), b.size(2)}, beta, a, "baddbmm");
  for (int64_t i = 0; i < a.size(0); ++i) {
    Tensor slice = raw::select(out, 0, i);  // contiguous: out is
    raw::addmm_(slice, raw::select(a, 0, i), raw::select(b, 0, i), beta, alpha);
  }
  if (autograd::needs_grad(input, a, b)) {
    SavedTensor sa = save_if(requires_grad_safe(b), a), sb = save_if(requires_grad_safe(a), b);
    const Shape input_shape = input.sizes();
    autograd::detail::record_differentiable("BaddbmmBackward", {input, a, b}, out, {sa, sb},
           [sa, sb, input_shape, beta, alpha](const Grads& g, const Needs& needs) -> Grads {
             Tensor gi, ga, gb;
             if (needs[0]) {
               gi = beta == 1 ? g[0] : mul(g[0], beta);
               if (gi.sizes() != input_shape) gi = sum_to(gi, input_shape);
             }
             if (needs[1]) ga = mul(bmm(g[0], transpose(sb.unpack(), 1, 2)), alpha);
             if (needs[2]) gb = mul(bmm(transpose(sa.unpack(), 1, 2), g[0]), alpha);
             return {gi, ga, gb};
           });
  }
  return out;
}

#undef COLONY_CAST

}  // namespace colony
