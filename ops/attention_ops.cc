// Fused scaled-dot-product attention: checks, the [batch, heads] view of the broadcast leading
// dims, and the kernel calls (kernels/common/attention.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

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

// Whether the kernel takes strided outputs and output gradients (AttentionArgs' os ... dvs): the
// CPU's kernels do, in every dtype (under --amp bf16 the GPT's output then needs no copy back to
// [B, T, H, D], its gradient none in, and dq, dk, dv land in one qkv gradient); CUDA's take them
// contiguous.
bool strided_outputs(const Tensor& q) { return q.is_cpu(); }

// An output or gradient [batch_shape..., rows, cols] and its strides. 4-D [B, H, rows, cols] where
// the kernel writes strided ones is stored [B, rows, H, cols], as PyTorch's CPU flash attention
// stores its output: a multi-head caller's transpose(1, 2) back to [B, T, H, D] is then contiguous
// (no copy before the output projection), the gradient arriving through that transpose is read in
// place (no copy in the backward), and dq, dk, dv in the same layout reach the [B, T, C] views of
// q, k, v that the heads were cut from without a copy in their views' backward.
Tensor alloc_output(const Layout& lay, int64_t rows, int64_t cols, const TensorOptions& opts, bool heads_inner,
                    bool zero, kernels::AttentionStrides& s) {
  Tensor t;
  if (heads_inner && lay.batch_shape.size() == 2) {
    const Shape stored{lay.batch_shape[0], rows, lay.batch_shape[1], cols};
    t = transpose(zero ? zeros(stored, opts) : empty(stored, opts), 1, 2);
  } else {
    const Shape shape = with_rows(lay.batch_shape, rows, cols);
    t = zero ? zeros(shape, opts) : empty(shape, opts);
  }
  view_strides(t, lay.batch_shape.size(), s);
  s.col = 1;
  return t;
}

// dq, dk, dv as views of one new buffer laid out as q, k and v are in theirs, when the kernel takes
// strided gradients and q, k, v are views of one tensor with the same sizes and strides that
// together fill a dense span of it: a packed qkv projection cut into heads (the GPT's c_attn output
// split in three). That buffer is then the projection's gradient, which split's backward
// (autograd/join.cc) takes as it is instead of concatenating three copies. Empty otherwise.
std::vector<Tensor> packed_gradients(const Tensor& q, const Tensor& k, const Tensor& v, const Layout& lay,
                                     bool strided, bool zero, kernels::AttentionArgs& a) {
  const Tensor* ts[3] = {&q, &k, &v};
  if (!strided || lay.E != lay.Ev || q.sizes() != with_rows(lay.batch_shape, lay.L, lay.E) || q.numel() == 0) return {};
  int64_t offsets[3];
  for (int i = 0; i < 3; ++i) {
    const Tensor& t = *ts[i];
    if (t.storage().get() != q.storage().get() || t.sizes() != q.sizes() || t.strides() != q.strides()) return {};
    offsets[i] = t.storage_offset();
  }
  std::sort(offsets, offsets + 3);
  // The three as one [3, ...] tensor (offsets equally spaced) must be dense and free of overlaps:
  // its dims sorted by stride, each stride the product of the sizes below it.
  const int64_t step = offsets[1] - offsets[0];
  if (step <= 0 || offsets[2] - offsets[1] != step) return {};
  std::vector<std::pair<int64_t, int64_t>> dims{{step, 3}};  // (stride, size)
  for (int64_t d = 0; d < q.dim(); ++d) {
    if (q.size(d) != 1) dims.emplace_back(q.stride(d), q.size(d));
  }
  std::sort(dims.begin(), dims.end());
  int64_t dense = 1;
  for (const auto& [stride, size] : dims) {
    if (stride != dense) return {};
    dense *= size;
  }
  const int64_t lo = offsets[0];
  const TensorOptions opts = TensorOptions(q.dtype()).device(q.device());
  Tensor buffer = zero ? zeros({dense}, opts) : empty({dense}, opts);
  std::vector<Tensor> grads;
  kernels::AttentionStrides* strides[3] = {&a.dqs, &a.dks, &a.dvs};
  for (int i = 0; i < 3; ++i) {
    grads.push_back(as_strided(buffer, q.sizes(), q.strides(), ts[i]->storage_offset() - lo));
    if (!view_strides(grads.back(), lay.batch_shape.size(), *strides[i]) || strides[i]->col != 1) return {};
  }
  return grads;
}

// A tensor the kernel reads ([batch_shape..., rows, cols]: the output, its gradient) as a view where
// it takes strided ones, contiguous elsewhere.
Tensor kernel_input(const Tensor& t, const Layout& lay, int64_t rows, int64_t cols, bool strided,
                    kernels::AttentionStrides& s, const char* what) {
  if (strided) return batch_view(t, lay, rows, cols, true, s, what);
  Tensor c = contiguous(t);
  view_strides(c, lay.batch_shape.size(), s);
  s.col = 1;
  return c;
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
  r.output = alloc_output(p.lay, p.lay.L, p.lay.Ev, opts, strided_outputs(q), false, p.args.os);
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
  const bool strided = strided_outputs(q);
  std::vector<Tensor> packed = packed_gradients(q, k, v, lay, strided, !run, p.args);
  Tensor dq = packed.empty() ? alloc_output(lay, lay.L, lay.E, opts, strided, !run, p.args.dqs) : packed[0];
  Tensor dk = packed.empty() ? alloc_output(lay, lay.S, lay.E, opts, strided, !run, p.args.dks) : packed[1];
  Tensor dv = packed.empty() ? alloc_output(lay, lay.S, lay.Ev, opts, strided, !run, p.args.dvs) : packed[2];
  if (run) {
    Tensor go = kernel_input(to(grad_output, q.device(), q.dtype()), lay, lay.L, lay.Ev, strided, p.args.gs, "grad_output");
    Tensor out = kernel_input(fwd.output, lay, lay.L, lay.Ev, strided, p.args.os, "output");
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
