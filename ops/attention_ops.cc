// Fused scaled-dot-product attention: checks, the [batch, heads] view of the broadcast leading
// dims, and the kernel calls (kernels/common/attention.h).
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "kernels/common/attention.h"
#include "ops/op_checks.h"
#include "ops/raw_nn_ops.h"
#include "ops/raw_ops.h"
#include "runtime/run_kernel.h"
#include "tensor/shape.h"

namespace colony::raw {
namespace {

constexpr const char* kOp = "scaled_dot_product_attention";

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument(std::string(kOp) + ": " + what); }

// The layout one call runs on: the broadcast batch shape and its flattening to [batch, heads].
struct Layout {
  Shape batch_shape;
  int64_t batch = 1, heads = 1, L = 0, S = 0, E = 0, Ev = 0;
};

Shape leading(const Tensor& t) { return Shape(t.sizes().begin(), t.sizes().end() - 2); }

Layout layout_of(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, bool is_causal) {
  check_defined(q, kOp, "query");
  check_defined(k, kOp, "key");
  check_defined(v, kOp, "value");
  for (const Tensor* t : {&q, &k, &v}) {
    if (t->dim() < 2) fail("query, key and value need at least 2 dims ([..., L, E]), got " + shape_str(t->sizes()));
  }
  check_floating(q, kOp, "query");
  if (k.dtype() != q.dtype() || v.dtype() != q.dtype()) {
    fail(std::string("query, key and value must have the same dtype, got ") + dtype_name(q.dtype()) + ", " +
         dtype_name(k.dtype()) + " and " + dtype_name(v.dtype()));
  }
  if (k.device() != q.device() || v.device() != q.device()) {
    fail("query, key and value must be on one device, got " + q.device().str() + ", " + k.device().str() + " and " +
         v.device().str());
  }
  Layout lay;
  lay.L = q.size(-2);
  lay.E = q.size(-1);
  lay.S = k.size(-2);
  lay.Ev = v.size(-1);
  if (k.size(-1) != lay.E) {
    fail("query " + shape_str(q.sizes()) + " and key " + shape_str(k.sizes()) + " must have the same last dim (E)");
  }
  if (v.size(-2) != lay.S) {
    fail("key " + shape_str(k.sizes()) + " and value " + shape_str(v.sizes()) +
         " must have the same sequence length (dim -2)");
  }
  lay.batch_shape = broadcast_shapes(broadcast_shapes(leading(q), leading(k), kOp), leading(v), kOp);
  for (size_t i = 0; i + 1 < lay.batch_shape.size(); ++i) lay.batch *= lay.batch_shape[i];
  lay.heads = lay.batch_shape.empty() ? 1 : lay.batch_shape.back();
  if (mask.defined()) {
    if (is_causal) fail("an explicit attn_mask cannot be given with is_causal=true (PyTorch's rule)");
    if (mask.dtype() != kBool && !is_floating(mask.dtype())) {
      fail(std::string("attn_mask must be bool or floating, got ") + dtype_name(mask.dtype()));
    }
    if (mask.device() != q.device()) fail("attn_mask is on " + mask.device().str() + ", expected " + q.device().str());
  }
  return lay;
}

// Strides of t (already expanded to batch_shape + [rows, cols]) as [batch, heads, rows, cols]; false
// when the batch dims before the last cannot be read with one stride.
bool view_strides(const Tensor& t, size_t nb, kernels::AttentionStrides& s) {
  const Shape& sz = t.sizes();
  const Shape& st = t.strides();
  s.h = nb >= 1 ? st[nb - 1] : 0;
  s.row = st[nb];
  s.col = st[nb + 1];
  // Dims 0 .. nb-2 collapse into one when each non-1 dim's stride is its inner neighbour's
  // stride times its size (zeros, i.e. broadcast dims, collapse only with zeros).
  s.b = 0;
  int64_t inner_stride = 0, inner_size = 1;
  bool seen = false;
  for (int64_t d = static_cast<int64_t>(nb) - 2; d >= 0; --d) {
    if (sz[d] == 1) continue;
    if (!seen) {
      s.b = st[d];
      seen = true;
    } else if (st[d] != inner_stride * inner_size) {
      return false;
    }
    inner_stride = st[d];
    inner_size = sz[d];
  }
  return true;
}

// t broadcast to batch_shape + [rows, cols] and its [batch, heads, rows, cols] strides; a copy
// only when the view cannot be described (or, with unit_cols, when its columns are not adjacent).
Tensor batch_view(const Tensor& t, const Layout& lay, int64_t rows, int64_t cols, bool unit_cols,
                  kernels::AttentionStrides& s, const char* what) {
  Shape full = lay.batch_shape;
  full.push_back(rows);
  full.push_back(cols);
  Tensor e;
  try {
    e = expand(t, full);
  } catch (const std::exception&) {
    fail(std::string(what) + " of shape " + shape_str(t.sizes()) + " does not broadcast to " + shape_str(full));
  }
  const size_t nb = lay.batch_shape.size();
  if (view_strides(e, nb, s) && (!unit_cols || s.col == 1 || cols == 1)) {
    if (cols == 1) s.col = 1;
    return e;
  }
  e = contiguous(e);
  view_strides(e, nb, s);
  s.col = 1;
  return e;
}

DType compute_dtype(DType d) { return d == kFloat64 ? kFloat64 : kFloat32; }

// Everything but the outputs: the operand views (kept alive by the caller) and the arguments.
struct Prepared {
  Layout lay;
  Tensor q, k, v, mask;
  kernels::AttentionArgs args;
};

Prepared prepare(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& attn_mask, bool is_causal,
                 double scale, double dropout_p) {
  Prepared p;
  p.lay = layout_of(q, k, v, attn_mask, is_causal);
  const Layout& lay = p.lay;
  kernels::AttentionArgs& a = p.args;
  a.dtype = q.dtype();
  a.batch = lay.batch;
  a.heads = lay.heads;
  a.L = lay.L;
  a.S = lay.S;
  a.E = lay.E;
  a.Ev = lay.Ev;
  p.q = batch_view(q, lay, lay.L, lay.E, true, a.qs, "query");
  p.k = batch_view(k, lay, lay.S, lay.E, true, a.ks, "key");
  p.v = batch_view(v, lay, lay.S, lay.Ev, true, a.vs, "value");
  a.q = p.q.data_ptr_raw();
  a.k = p.k.data_ptr_raw();
  a.v = p.v.data_ptr_raw();
  if (attn_mask.defined()) {
    const TensorOptions opts = TensorOptions(compute_dtype(q.dtype())).device(q.device());
    // A boolean mask becomes the additive one: 0 where it takes part, -inf where not.
    Tensor additive = attn_mask.dtype() == kBool
                          ? where(attn_mask, scalar_tensor(0.0, opts),
                                  scalar_tensor(-std::numeric_limits<double>::infinity(), opts))
                          : to(attn_mask, q.device(), compute_dtype(q.dtype()));
    p.mask = batch_view(additive, lay, lay.L, lay.S, false, a.ms, "attn_mask");
    a.mask = p.mask.data_ptr_raw();
  }
  a.causal = is_causal;
  a.scale = scale;
  a.dropout_p = dropout_p;
  return p;
}

Shape with_rows(const Shape& batch, int64_t rows, int64_t cols) {
  Shape s = batch;
  s.push_back(rows);
  s.push_back(cols);
  return s;
}

}  // namespace

AttentionResult scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                             const Tensor& attn_mask, double dropout_p, bool is_causal,
                                             std::optional<double> scale, Generator* gen) {
  if (!(dropout_p >= 0.0 && dropout_p <= 1.0)) fail("dropout_p must be in [0, 1], got " + std::to_string(dropout_p));
  Layout check = layout_of(q, k, v, attn_mask, is_causal);
  AttentionResult r;
  r.scale = scale.has_value() ? *scale : 1.0 / std::sqrt(static_cast<double>(check.E));
  const TensorOptions opts = TensorOptions(q.dtype()).device(q.device());
  if (dropout_p == 1.0) {
    // Every weight dropped: the output is zeros (PyTorch's dropout(p=1) gives zeros, not NaN).
    r.output = zeros(with_rows(check.batch_shape, check.L, check.Ev), opts);
    r.lse = full({check.batch * check.heads, check.L}, -std::numeric_limits<double>::infinity(),
                 TensorOptions(compute_dtype(q.dtype())).device(q.device()));
    return r;
  }
  Prepared p = prepare(q, k, v, attn_mask, is_causal, r.scale, dropout_p);
  r.output = empty(with_rows(p.lay.batch_shape, p.lay.L, p.lay.Ev), opts);
  r.lse = empty({p.lay.batch * p.lay.heads, p.lay.L}, TensorOptions(compute_dtype(q.dtype())).device(q.device()));
  if (r.output.numel() == 0) return r;
  if (p.lay.S == 0) {  // no keys: every row fully masked
    r.output = zeros(r.output.sizes(), opts);
    r.lse = full(r.lse.sizes(), -std::numeric_limits<double>::infinity(),
                 TensorOptions(compute_dtype(q.dtype())).device(q.device()));
    return r;
  }
  if (dropout_p > 0) {
    Generator& g = gen ? *gen : default_generator();
    r.philox = g.philox_args(kernels::attention_dropout_blocks(p.lay.batch * p.lay.heads, p.lay.L, p.lay.S),
                             q.device());
    p.args.philox = r.philox;
  }
  p.args.out = r.output.data_ptr_raw();
  p.args.lse = r.lse.data_ptr_raw();
  run_kernel<kernels::AttentionForward>(q.device(), p.args);
  return r;
}

AttentionGrads scaled_dot_product_attention_backward(const Tensor& grad_output, const Tensor& q, const Tensor& k,
                                                     const Tensor& v, const Tensor& attn_mask,
                                                     const AttentionResult& fwd, double dropout_p, bool is_causal) {
  Prepared p = prepare(q, k, v, attn_mask, is_causal, fwd.scale, dropout_p);
  const Layout& lay = p.lay;
  if (grad_output.sizes() != fwd.output.sizes()) {
    fail("grad_output has shape " + shape_str(grad_output.sizes()) + ", expected the output's " +
         shape_str(fwd.output.sizes()));
  }
  const TensorOptions opts = TensorOptions(q.dtype()).device(q.device());
  AttentionGrads g;
  // The kernel writes every element; without a kernel call (no weights) the gradients are zero.
  const bool run = dropout_p < 1.0 && lay.L > 0 && lay.S > 0 && lay.batch * lay.heads > 0;
  auto alloc = [&](int64_t rows, int64_t cols) {
    return run ? empty(with_rows(lay.batch_shape, rows, cols), opts) : zeros(with_rows(lay.batch_shape, rows, cols), opts);
  };
  Tensor dq = alloc(lay.L, lay.E), dk = alloc(lay.S, lay.E), dv = alloc(lay.S, lay.Ev);
  if (run) {
    Tensor go = contiguous(to(grad_output, q.device(), q.dtype()));
    Tensor out = contiguous(fwd.output);
    p.args.philox = fwd.philox;
    p.args.out = out.data_ptr_raw();
    p.args.lse = fwd.lse.data_ptr_raw();  // written contiguous by the forward
    p.args.grad_out = go.data_ptr_raw();
    p.args.dq = dq.data_ptr_raw();
    p.args.dk = dk.data_ptr_raw();
    p.args.dv = dv.data_ptr_raw();
    Tensor dq_accum, delta;
    if (!q.is_cpu()) {  // the CUDA kernel's scratch (kernels/common/attention.h)
      const TensorOptions c = TensorOptions(compute_dtype(q.dtype())).device(q.device());
      dq_accum = zeros({lay.batch * lay.heads, lay.L, lay.E}, c);
      delta = empty({lay.batch * lay.heads, lay.L}, c);
      p.args.dq_accum = dq_accum.data_ptr_raw();
      p.args.delta = delta.data_ptr_raw();
    }
    run_kernel<kernels::AttentionBackward>(q.device(), p.args);
  }
  // Broadcast leading dims sum back to each input's own shape.
  g.grad_q = dq.sizes() == q.sizes() ? dq : sum_to(dq, q.sizes());
  g.grad_k = dk.sizes() == k.sizes() ? dk : sum_to(dk, k.sizes());
  g.grad_v = dv.sizes() == v.sizes() ? dv : sum_to(dv, v.sizes());
  return g;
}

}  // namespace colony::raw
