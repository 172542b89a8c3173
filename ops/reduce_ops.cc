// Reductions: the reduced elements of each output are arranged as a row (permuting the reduced
// dims last and copying only when needed) or, for sums of a contiguous tensor over a block of
// adjacent dims, as columns of [outer, len, inner], which reads the input in place.
#include <stdexcept>
#include <string>

#include "kernels/common/reduce.h"
#include "kernels/common/vector_norm.h"
#include "ops/raw_ops.h"
#include "runtime/run_kernel.h"

namespace colony::raw {
namespace {

// The CUDA column kernel gives each column one warp lane: under a warp's width of columns it
// leaves lanes idle, and the permuted row layout is faster.
constexpr int64_t kMinCudaColumns = 32;

struct ReducePlan {
  Tensor input;  // contiguous, read as [outer, len, inner]
  int64_t outer = 1, len = 1, inner = 1;
  Shape out_shape;
};

ReducePlan plan_reduction(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim, const char* op,
                          bool allow_columns) {
  const int64_t nd = t.dim();
  std::vector<int64_t> wrapped = wrap_dims(dims, nd, op);
  std::vector<bool> reduced(nd, dims.empty());
  for (int64_t d : wrapped) {
    if (nd > 0) reduced[d] = true;
  }
  ReducePlan p;
  for (int64_t d = 0; d < nd; ++d) {
    if (reduced[d]) {
      p.len *= t.size(d);
      if (keepdim) p.out_shape.push_back(1);
    } else {
      p.outer *= t.size(d);
      p.out_shape.push_back(t.size(d));
    }
  }
  if (allow_columns && t.is_contiguous()) {
    // Size-1 dims can sit anywhere; the others' reduced ones must be adjacent.
    int64_t first = -1, last = -1;
    for (int64_t d = 0; d < nd; ++d) {
      if (reduced[d] && t.size(d) != 1) {
        if (first < 0) first = d;
        last = d;
      }
    }
    bool adjacent = true;
    for (int64_t d = first + 1; first >= 0 && d < last; ++d) {
      if (!reduced[d] && t.size(d) != 1) adjacent = false;
    }
    if (first >= 0 && adjacent) {
      int64_t before = 1, after = 1;
      for (int64_t d = 0; d < first; ++d) before *= t.size(d);
      for (int64_t d = last + 1; d < nd; ++d) after *= t.size(d);
      if (t.is_cpu() || after == 1 || after >= kMinCudaColumns) {
        p.input = t;
        p.outer = before;
        p.inner = after;
        return p;
      }
    }
  }
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < nd; ++d)
    if (!reduced[d]) perm.push_back(d);
  for (int64_t d = 0; d < nd; ++d)
    if (reduced[d]) perm.push_back(d);
  p.input = nd == 0 ? contiguous(t) : contiguous(permute(t, perm));
  return p;
}

TensorOptions options_on(DType dtype, const Tensor& like) { return TensorOptions(dtype).device(like.device()); }

void run_sum(const ReducePlan& p, Tensor& out, double scale) {
  if (out.numel() == 0) return;
  const Tensor& x = p.input;
  run_kernel<kernels::Sum>(x.device(), x.dtype(), x.data_ptr_raw(), out.dtype(), out.data_ptr_raw(), p.outer, p.len,
                           p.inner, scale);
}

void check_nonempty(const ReducePlan& p, const Tensor& t, const char* op) {
  if (p.len == 0 && p.outer > 0) {
    throw std::invalid_argument(std::string(op) + ": cannot reduce over a dimension of size 0 (input shape " +
                                shape_str(t.sizes()) + "); the result has no identity value");
  }
}

// values (t's dtype) and/or int64 indices of the extremes of each row.
void run_max_min(const ReducePlan& p, Tensor* values, Tensor* indices, bool is_max) {
  const Tensor& x = p.input;
  int64_t rows = p.outer;
  if (rows == 0) return;
  void* vp = values ? values->data_ptr_raw() : nullptr;
  int64_t* ip = indices ? indices->data_ptr<int64_t>() : nullptr;
  run_kernel<kernels::MaxMin>(x.device(), x.dtype(), x.data_ptr_raw(), vp, ip, rows, p.len, is_max);
}

Tensor extreme_values(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim, bool is_max) {
  const char* op = is_max ? "amax" : "amin";
  ReducePlan p = plan_reduction(t, dims, keepdim, op, false);
  check_nonempty(p, t, op);
  Tensor values = empty(p.out_shape, options_on(t.dtype(), t));
  run_max_min(p, &values, nullptr, is_max);
  return values;
}

std::pair<Tensor, Tensor> extreme_with_index(const Tensor& t, int64_t dim, bool keepdim, bool is_max, bool want_values,
                                             const char* op) {
  ReducePlan p = plan_reduction(t, {dim}, keepdim, op, false);
  check_nonempty(p, t, op);
  Tensor values = want_values ? empty(p.out_shape, options_on(t.dtype(), t)) : Tensor();
  Tensor indices = empty(p.out_shape, options_on(kInt64, t));
  run_max_min(p, want_values ? &values : nullptr, &indices, is_max);
  return {values, indices};
}

}  // namespace

Tensor sum(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim) {
  ReducePlan p = plan_reduction(t, dims, keepdim, "sum", true);
  DType out_dtype = is_floating(t.dtype()) ? t.dtype() : kInt64;
  Tensor out = empty(p.out_shape, options_on(out_dtype, t));
  run_sum(p, out, 1.0);
  return out;
}

Tensor mean(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim) {
  if (!is_floating(t.dtype())) {
    throw std::invalid_argument(std::string("mean: could not infer output dtype. Input dtype must be a floating "
                                            "point dtype, got ") + dtype_name(t.dtype()) +
                                " (convert it first, e.g. t.to(kFloat32))");
  }
  ReducePlan p = plan_reduction(t, dims, keepdim, "mean", true);
  Tensor out = empty(p.out_shape, options_on(t.dtype(), t));
  // An empty reduction divides 0 by 0: NaN, as in PyTorch.
  run_sum(p, out, 1.0 / static_cast<double>(p.len));
  return out;
}

Tensor var(const Tensor& t, const std::vector<int64_t>& dims, bool unbiased, bool keepdim) {
  if (!is_floating(t.dtype())) {
    throw std::invalid_argument(std::string("var: only floating point dtypes are supported, got ") +
                                dtype_name(t.dtype()));
  }
  ReducePlan p = plan_reduction(t, dims, keepdim, "var", false);
  Tensor out = empty(p.out_shape, options_on(t.dtype(), t));
  if (out.numel() == 0) return out;
  const Tensor& x = p.input;
  int64_t correction = unbiased ? 1 : 0;
  run_kernel<kernels::Var>(x.device(), x.dtype(), x.data_ptr_raw(), out.data_ptr_raw(), p.outer, p.len, correction);
  return out;
}

Tensor vector_norm2(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim) {
  if (!is_floating(t.dtype())) {
    throw std::invalid_argument(std::string("norm: expected a floating point tensor, got ") + dtype_name(t.dtype()) +
                                " (convert it first, e.g. t.to(kFloat32))");
  }
  ReducePlan p = plan_reduction(t, dims, keepdim, "norm", true);
  Tensor out = empty(p.out_shape, options_on(t.dtype(), t));
  if (out.numel() == 0) return out;
  const Tensor& x = p.input;
  run_kernel<kernels::VectorNorm2>(x.device(), x.dtype(), x.data_ptr_raw(), out.data_ptr_raw(), p.outer, p.len,
                                   p.inner);
  return out;
}

Tensor amax(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim) {
  return extreme_values(t, dims, keepdim, true);
}

Tensor amin(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim) {
  return extreme_values(t, dims, keepdim, false);
}

std::pair<Tensor, Tensor> max(const Tensor& t, int64_t dim, bool keepdim) {
  return extreme_with_index(t, dim, keepdim, true, true, "max");
}

std::pair<Tensor, Tensor> min(const Tensor& t, int64_t dim, bool keepdim) {
  return extreme_with_index(t, dim, keepdim, false, true, "min");
}

Tensor argmax(const Tensor& t, int64_t dim, bool keepdim) {
  return extreme_with_index(t, dim, keepdim, true, false, "argmax").second;
}

Tensor argmin(const Tensor& t, int64_t dim, bool keepdim) {
  return extreme_with_index(t, dim, keepdim, false, false, "argmin").second;
}

Tensor sum_to(const Tensor& t, const Shape& shape) {
  if (t.sizes() == shape) return t;
  const int64_t nd = t.dim(), lead = nd - static_cast<int64_t>(shape.size());
  auto mismatch = [&] {
    return std::invalid_argument("sum_to: shape " + shape_str(shape) + " does not broadcast to " +
                                 shape_str(t.sizes()) + ", so a tensor of that shape cannot be summed to it");
  };
  if (lead < 0) throw mismatch();
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < lead; ++d) dims.push_back(d);
  for (int64_t d = lead; d < nd; ++d) {
    int64_t target = shape[d - lead];
    if (target == t.size(d)) continue;
    if (target != 1) throw mismatch();
    dims.push_back(d);
  }
  // Only size-1 leading dims differ: no summing, just drop them (dims = {} would mean "all").
  if (dims.empty()) return reshape(t, shape);
  return reshape(sum(t, dims, true), shape);
}

}  // namespace colony::raw
