// Matrix products. mm and bmm have their own nodes; matmul is composed from them and views when a
// gradient is needed (torch.matmul is composite the same way), and is the raw op otherwise.
#include <stdexcept>

#include "autograd/autocast.h"
#include "autograd/op_util.h"
#include "autograd/ops.h"

namespace colony {
namespace {

using autograd::record;
using autograd::detail::record_differentiable;
using autograd::requires_grad_safe;
using autograd::SavedTensor;
using autograd::detail::Grads;
using autograd::detail::Needs;
using autograd::detail::save_if;


Tensor batched_matmul(const Tensor& a, const Tensor& b) {
  // Batch dims broadcast; matrices are the last two dims (a 1-D operand becomes a row/column).
  Tensor a2 = a.dim() == 1 ? unsqueeze(a, 0) : a;
  Tensor b2 = b.dim() == 1 ? unsqueeze(b, 1) : b;
  Shape batch_a(a2.sizes().begin(), a2.sizes().end() - 2);
  Shape batch_b(b2.sizes().begin(), b2.sizes().end() - 2);
  Shape batch = broadcast_shapes(batch_a, batch_b, "matmul");
  int64_t n = a2.size(-2), k = a2.size(-1), k2 = b2.size(-2), m = b2.size(-1);
  if (k != k2) {
    throw std::invalid_argument("matmul: shapes " + shape_str(a.sizes()) + " and " + shape_str(b.sizes()) +
                                " cannot be multiplied (" + std::to_string(k) + " vs " + std::to_string(k2) + ")");
  }
  int64_t batch_numel = shape_numel(batch);
  Shape ea = batch, eb = batch;
  ea.insert(ea.end(), {n, k});
  eb.insert(eb.end(), {k, m});
  Tensor out = bmm(reshape(expand(a2, ea), {batch_numel, n, k}), reshape(expand(b2, eb), {batch_numel, k, m}));
  Shape out_shape = batch;
  out_shape.insert(out_shape.end(), {n, m});
  out = reshape(out, out_shape);
  if (a.dim() == 1) out = squeeze(out, -2);
  if (b.dim() == 1) out = squeeze(out, -1);
  return out;
}

// A 2-D matrix stored column by column: the transpose of a contiguous one.
bool is_transposed_contiguous(const Tensor& t) {
  return t.dim() == 2 && t.size(0) > 1 && t.size(1) > 1 && t.stride(0) == 1 && t.stride(1) == t.size(0);
}

}  // namespace

Tensor mm(const Tensor& a_arg, const Tensor& b_arg) {
  const Tensor a = autocast::cast(autocast::Op::mm, a_arg), b = autocast::cast(autocast::Op::mm, b_arg);
  Tensor out = raw::mm(a, b);
  if (autograd::needs_grad(a, b)) {
    SavedTensor sa = save_if(requires_grad_safe(b), a), sb = save_if(requires_grad_safe(a), b);
    // Each gradient comes in its input's layout: for an input that is a transposed contiguous
    // matrix (linear's t(weight)) it is computed transposed, so that once TransposeBackward turns
    // it round the leaf gets a contiguous gradient. A strided one would make every later pass
    // over it strided: the optimizer's, DDP's copy into its bucket (1.3 % of a LeNet step).
    const bool a_transposed = is_transposed_contiguous(a), b_transposed = is_transposed_contiguous(b);
    record_differentiable("MmBackward", {a, b}, out, {sa, sb},
           [sa, sb, a_transposed, b_transposed](const Grads& g, const Needs& needs) -> Grads {
             Tensor ga, gb;
             const Tensor gt = transpose(g[0], 0, 1);
             if (needs[0])
               ga = a_transposed ? transpose(mm(sb.unpack(), gt), 0, 1)  // (b gᵀ)ᵀ
                                 : mm(g[0], transpose(sb.unpack(), 0, 1));
             if (needs[1])
               gb = b_transposed ? transpose(mm(gt, sa.unpack()), 0, 1)  // (gᵀ a)ᵀ
                                 : mm(transpose(sa.unpack(), 0, 1), g[0]);
             return {ga, gb};
           });
  }
  return out;
}

Tensor bmm(const Tensor& a_arg, const Tensor& b_arg) {
  const Tensor a = autocast::cast(autocast::Op::bmm, a_arg), b = autocast::cast(autocast::Op::bmm, b_arg);
  Tensor out = raw::bmm(a, b);
  if (autograd::needs_grad(a, b)) {
    SavedTensor sa = save_if(requires_grad_safe(b), a), sb = save_if(requires_grad_safe(a), b);
    record_differentiable("BmmBackward", {a, b}, out, {sa, sb}, [sa, sb](const Grads& g, const Needs& needs) -> Grads {
      Tensor ga, gb;
      if (needs[0]) ga = bmm(g[0], transpose(sb.unpack(), 1, 2));
      if (needs[1]) gb = bmm(transpose(sa.unpack(), 1, 2), g[0]);
      return {ga, gb};
    });
  }
  return out;
}

Tensor matmul(const Tensor& a_arg, const Tensor& b_arg) {
  const Tensor a = autocast::cast(autocast::Op::matmul, a_arg), b = autocast::cast(autocast::Op::matmul, b_arg);
  if (!autograd::needs_grad(a, b)) return raw::matmul(a, b);
  if (a.dim() == 0 || b.dim() == 0) {
    throw std::invalid_argument("matmul: both arguments need to be at least 1-D, got " + shape_str(a.sizes()) +
                                " and " + shape_str(b.sizes()));
  }
  if (a.dim() <= 2 && b.dim() <= 2) {
    Tensor a2 = a.dim() == 1 ? unsqueeze(a, 0) : a;
    Tensor b2 = b.dim() == 1 ? unsqueeze(b, 1) : b;
    Tensor out = mm(a2, b2);
    if (a.dim() == 1) out = squeeze(out, 0);
    if (b.dim() == 1) out = squeeze(out, -1);
    return out;
  }
  if (b.dim() <= 2) {
    // [..., n, k] @ [k, m]: fold the batch into rows, one GEMM (the common Linear-on-3-D case).
    Shape lead(a.sizes().begin(), a.sizes().end() - 1);
    Tensor rows = reshape(a, {-1, a.size(-1)});
    Tensor out = mm(rows, b.dim() == 1 ? unsqueeze(b, 1) : b);
    if (b.dim() == 2) lead.push_back(b.size(1));
    return reshape(out, lead);
  }
  return batched_matmul(a, b);
}

Tensor outer(const Tensor& a, const Tensor& b) {
  if (a.dim() != 1 || b.dim() != 1) {
    throw std::invalid_argument("outer: both operands must be 1-D, got " + shape_str(a.sizes()) + " and " +
                                shape_str(b.sizes()));
  }
  return mul(unsqueeze(a, 1), unsqueeze(b, 0));  // a broadcast product; its gradient sums back
}

Tensor linear(const Tensor& input_arg, const Tensor& weight_arg, const Tensor& bias_arg) {
  if (weight_arg.dim() != 2) {
    throw std::invalid_argument("linear: weight must be 2-D [out, in], got " + shape_str(weight_arg.sizes()));
  }
  if (input_arg.dim() < 1 || input_arg.size(-1) != weight_arg.size(1)) {
    throw std::invalid_argument("linear: input " + shape_str(input_arg.sizes()) + " does not end in in_features = " +
                                std::to_string(weight_arg.size(1)) + " (weight " + shape_str(weight_arg.sizes()) + ")");
  }
  const Tensor x = autocast::cast(autocast::Op::linear, input_arg), w = autocast::cast(autocast::Op::linear, weight_arg);
  const Tensor b = bias_arg.defined() ? autocast::cast(autocast::Op::linear, bias_arg) : Tensor();
  // The fused form: one GEMM over the input's rows (a [..., in] input folded to [rows, in]) with
  // the bias added in place, and one node whose backward is
  //   dx = g W,  dW = gᵀ x,  db = Σ_rows g.
  // Composed of mm and add it cost a second output-sized tensor and pass in the forward, and the
  // add's sum_to in the backward (together ~5 % of a char-level GPT's step on the CPU). Mixed
  // dtypes or devices take the composed route, whose ops promote and check them.
  const bool fused = b.defined() && b.dim() == 1 && b.size(0) == w.size(0) && x.dim() >= 2 && x.dtype() == w.dtype() &&
                     b.dtype() == w.dtype() && x.device() == w.device() && b.device() == w.device();
  if (!fused) {
    Tensor out = x.dim() == 2 ? mm(x, t(w)) : matmul(x, t(w));
    return b.defined() ? add(out, b) : out;
  }
  const int64_t in_features = w.size(1), out_features = w.size(0);
  Shape out_shape(x.sizes().begin(), x.sizes().end() - 1);
  out_shape.push_back(out_features);
  const Tensor rows = x.dim() == 2 ? x : raw::reshape(x, {-1, in_features});
  Tensor out;
  if (w.device().is_cpu()) {
    // raw::addmm: 16-bit types get the bias in the product's float32 sums, rounded once as
    // PyTorch's CPU linear gives it (a separate add was also an element-by-element pass, 6.1 % of
    // the char GPT's bf16 step, and so were the bias rows' copy into the output and the GEMM's
    // beta = 1 read of them: docs/benchmarks.md, "The bfloat16 GPT step: linear's bias inside the
    // product" and the bf16elem section); float32 and float64 get the same bits as mm followed by
    // the add, the large products adding the bias as they store C, without the second pass over it.
    out = raw::addmm(b, rows, raw::transpose(w, 0, 1));
  } else {
    out = raw::mm(rows, raw::transpose(w, 0, 1));
    raw::binary_(raw::BinaryOp::Add, out, b);
  }
  if (x.dim() != 2) out = raw::reshape(out, out_shape);
  if (autograd::needs_grad(x, w, b)) {
    SavedTensor sx = save_if(requires_grad_safe(w), x), sw = save_if(requires_grad_safe(x), w);
    const Shape x_shape = x.sizes();
    record_differentiable("LinearBackward", {x, w, b}, out, {sx, sw},
           [sx, sw, x_shape, in_features, out_features](const Grads& g, const Needs& needs) -> Grads {
             const Tensor g2 = reshape(g[0], {-1, out_features});
             Tensor gx, gw, gb;
             if (needs[0]) gx = reshape(mm(g2, sw.unpack()), x_shape);
             // gᵀ x straight into W's [out, in] layout, so the leaf's gradient is contiguous.
             if (needs[1]) gw = mm(transpose(g2, 0, 1), reshape(sx.unpack(), {-1, in_features}));
             if (needs[2]) gb = sum(g2, {0});
             return {gx, gw, gb};
           });
  }
  return out;
}

}  // namespace colony
