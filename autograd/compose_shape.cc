// Shape ops PyTorch users reach for that are compositions of views, cat, flip, gather and index
// ops, so their gradients come from those: tile, broadcast_to/broadcast_tensors, swapaxes,
// tensor_split and the h/v/dsplit and h/v/d/column_stack families, atleast_1d/2d/3d, fliplr/flipud,
// rot90, take_along_dim, argwhere, diag_embed, cartesian_prod, combinations, msort, and the
// tril_indices/triu_indices factories.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "autograd/ops.h"

namespace colony {
namespace {

// One more dim of size 1 in front until t has `dims` dims, as torch.atleast_Nd (but [n] becomes
// [1, n, 1] for 3-D, torch's rule, handled in atleast_3d).
Tensor with_leading_ones(const Tensor& t, int64_t dims) {
  Tensor out = t;
  while (out.dim() < dims) out = unsqueeze(out, 0);
  return out;
}

std::vector<Tensor> each(const std::vector<Tensor>& tensors, Tensor (*f)(const Tensor&)) {
  std::vector<Tensor> out;
  out.reserve(tensors.size());
  for (const Tensor& t : tensors) out.push_back(f(t));
  return out;
}

// torch.hsplit/vsplit/dsplit: tensor_split along `dim` after checking the rank and, for an int,
// that it divides the dim.
std::vector<Tensor> split_family(const Tensor& t, int64_t sections, int64_t min_dims, int64_t dim, const char* op) {
  if (t.dim() < min_dims) {
    throw std::invalid_argument(std::string(op) + " requires a tensor with at least " + std::to_string(min_dims) +
                                " dimension, but got a tensor with " + std::to_string(t.dim()) + " dimensions!");
  }
  if (sections <= 0 || t.size(dim) % sections != 0) {
    throw std::invalid_argument(std::string(op) + " attempted to split along dimension " + std::to_string(dim) +
                                ", but the size of the dimension " + std::to_string(t.size(dim)) +
                                " is not divisible by the split_size " + std::to_string(sections) + "!");
  }
  return tensor_split(t, sections, dim);
}

std::vector<Tensor> split_family(const Tensor& t, const std::vector<int64_t>& indices, int64_t min_dims, int64_t dim,
                                 const char* op) {
  if (t.dim() < min_dims) {
    throw std::invalid_argument(std::string(op) + " requires a tensor with at least " + std::to_string(min_dims) +
                                " dimension, but got a tensor with " + std::to_string(t.dim()) + " dimensions!");
  }
  return tensor_split(t, indices, dim);
}

}  // namespace

Tensor tile(const Tensor& t, const Shape& dims) {
  // torch.tile: too few reps are padded with ones in front, then it is torch.repeat.
  Shape reps(dims);
  if (static_cast<int64_t>(reps.size()) < t.dim()) reps.insert(reps.begin(), t.dim() - reps.size(), 1);
  return repeat(t, reps);
}

Tensor broadcast_to(const Tensor& t, const Shape& shape) { return expand(t, shape); }

Shape broadcast_shapes(const std::vector<Shape>& shapes) {
  Shape out;
  for (const Shape& s : shapes) out = broadcast_shapes(out, s, "broadcast_shapes");
  return out;
}

std::vector<Tensor> broadcast_tensors(const std::vector<Tensor>& tensors) {
  Shape shape;
  for (const Tensor& t : tensors) shape = broadcast_shapes(shape, t.sizes(), "broadcast_tensors");
  std::vector<Tensor> out;
  out.reserve(tensors.size());
  for (const Tensor& t : tensors) out.push_back(expand(t, shape));
  return out;
}

Tensor swapaxes(const Tensor& t, int64_t axis0, int64_t axis1) { return transpose(t, axis0, axis1); }
Tensor swapdims(const Tensor& t, int64_t dim0, int64_t dim1) { return transpose(t, dim0, dim1); }

std::vector<Tensor> tensor_split(const Tensor& t, int64_t sections, int64_t dim) {
  if (t.dim() == 0) throw std::invalid_argument("tensor_split: expected at least a 1-dimensional tensor");
  if (sections <= 0) throw std::invalid_argument("tensor_split: number of sections must be larger than 0, got " + std::to_string(sections));
  const int64_t d = wrap_dim(dim, t.dim(), "tensor_split"), n = t.size(d);
  // The first n % sections pieces get one element more, as numpy.array_split.
  const int64_t base = n / sections, extra = n % sections;
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t i = 0; i < sections; ++i) {
    const int64_t len = base + (i < extra ? 1 : 0);
    out.push_back(narrow(t, d, start, len));
    start += len;
  }
  return out;
}

std::vector<Tensor> tensor_split(const Tensor& t, const std::vector<int64_t>& indices, int64_t dim) {
  if (t.dim() == 0) throw std::invalid_argument("tensor_split: expected at least a 1-dimensional tensor");
  const int64_t d = wrap_dim(dim, t.dim(), "tensor_split"), n = t.size(d);
  // Python slices t[indices[i - 1]:indices[i]]: negative indices count from the end, both ends
  // clamp to [0, n], and a piece whose end is before its start is empty (the next one still starts
  // at its own index, so pieces can overlap).
  auto clamp_index = [n](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + n : i, 0, n); };
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t index : indices) {
    const int64_t end = clamp_index(index);
    out.push_back(narrow(t, d, start, std::max<int64_t>(end - start, 0)));
    start = end;
  }
  out.push_back(narrow(t, d, start, n - start));
  return out;
}

std::vector<Tensor> hsplit(const Tensor& t, int64_t sections) {
  return split_family(t, sections, 1, t.dim() == 1 ? 0 : 1, "torch.hsplit");
}
std::vector<Tensor> hsplit(const Tensor& t, const std::vector<int64_t>& indices) {
  return split_family(t, indices, 1, t.dim() == 1 ? 0 : 1, "torch.hsplit");
}
std::vector<Tensor> vsplit(const Tensor& t, int64_t sections) { return split_family(t, sections, 2, 0, "torch.vsplit"); }
std::vector<Tensor> vsplit(const Tensor& t, const std::vector<int64_t>& indices) {
  return split_family(t, indices, 2, 0, "torch.vsplit");
}
std::vector<Tensor> dsplit(const Tensor& t, int64_t sections) { return split_family(t, sections, 3, 2, "torch.dsplit"); }
std::vector<Tensor> dsplit(const Tensor& t, const std::vector<int64_t>& indices) {
  return split_family(t, indices, 3, 2, "torch.dsplit");
}

Tensor atleast_1d(const Tensor& t) { return with_leading_ones(t, 1); }
Tensor atleast_2d(const Tensor& t) { return with_leading_ones(t, 2); }
Tensor atleast_3d(const Tensor& t) {
  // torch's rule: [] -> [1, 1, 1], [n] -> [1, n, 1], [m, n] -> [m, n, 1].
  if (t.dim() == 0) return reshape(t, {1, 1, 1});
  if (t.dim() == 1) return unsqueeze(unsqueeze(t, 0), 2);
  if (t.dim() == 2) return unsqueeze(t, 2);
  return t;
}

Tensor hstack(const std::vector<Tensor>& tensors) {
  std::vector<Tensor> ts = each(tensors, atleast_1d);
  // 1-D tensors join end to end; others side by side along dim 1.
  return cat(ts, !ts.empty() && ts[0].dim() == 1 ? 0 : 1);
}
Tensor vstack(const std::vector<Tensor>& tensors) { return cat(each(tensors, atleast_2d), 0); }
Tensor row_stack(const std::vector<Tensor>& tensors) { return vstack(tensors); }
Tensor dstack(const std::vector<Tensor>& tensors) { return cat(each(tensors, atleast_3d), 2); }
Tensor column_stack(const std::vector<Tensor>& tensors) {
  std::vector<Tensor> columns;
  columns.reserve(tensors.size());
  // 0-D and 1-D tensors become columns [n, 1]; the rest join as they are along dim 1.
  for (const Tensor& t : tensors) columns.push_back(t.dim() <= 1 ? reshape(t, {t.numel(), 1}) : t);
  return cat(columns, 1);
}

Tensor fliplr(const Tensor& t) {
  if (t.dim() < 2) throw std::invalid_argument("fliplr: Input must be >= 2-d, got " + shape_str(t.sizes()));
  return flip(t, {1});
}
Tensor flipud(const Tensor& t) {
  if (t.dim() < 1) throw std::invalid_argument("flipud: Input must be >= 1-d, got a 0-d tensor");
  return flip(t, {0});
}

Tensor rot90(const Tensor& t, int64_t k, const std::vector<int64_t>& dims) {
  if (dims.size() != 2) {
    throw std::invalid_argument("rot90: expected total rotation dims == 2, but got dims = " + std::to_string(dims.size()));
  }
  if (t.dim() < 2) throw std::invalid_argument("rot90: expected total dims >= 2, but got total dims = " + std::to_string(t.dim()));
  const int64_t d0 = wrap_dim(dims[0], t.dim(), "rot90"), d1 = wrap_dim(dims[1], t.dim(), "rot90");
  if (d0 == d1) {
    throw std::invalid_argument("rot90: expected rotation dims to be different, but got dim0 = " + std::to_string(d0) +
                                " and dim1 = " + std::to_string(d1));
  }
  // Counter-clockwise from dims[0] towards dims[1], as torch.rot90 and numpy.rot90.
  switch (((k % 4) + 4) % 4) {
    case 1: return transpose(flip(t, {d1}), d0, d1);
    case 2: return flip(t, {d0, d1});
    case 3: return flip(transpose(t, d0, d1), {d1});
    default: return clone(t);
  }
}

Tensor take_along_dim(const Tensor& t, const Tensor& indices, std::optional<int64_t> dim) {
  if (indices.dtype() != kInt64) {
    throw std::invalid_argument(std::string("take_along_dim: dtype of indices should be Long but got ") +
                                dtype_name(indices.dtype()));
  }
  if (!dim) return gather(reshape(t, {-1}), 0, reshape(indices, {-1}));
  if (t.dim() != indices.dim()) {
    throw std::invalid_argument("take_along_dim: input and indices should have the same number of dimensions, but got " +
                                std::to_string(t.dim()) + " dimensions for input, and " + std::to_string(indices.dim()) +
                                " dimensions for indices");
  }
  const int64_t d = wrap_dim(*dim, t.dim(), "take_along_dim");
  // Both broadcast against each other in every dim but `dim`, where each keeps its own size.
  Shape t_shape = t.sizes(), i_shape = indices.sizes();
  t_shape[d] = 1;
  i_shape[d] = 1;
  const Shape common = broadcast_shapes(t_shape, i_shape, "take_along_dim");
  Shape t_target = common, i_target = common;
  t_target[d] = t.size(d);
  i_target[d] = indices.size(d);
  return gather(expand(t, t_target), d, expand(indices, i_target));
}

Tensor argwhere(const Tensor& t) { return nonzero(t); }

Tensor diag_embed(const Tensor& t, int64_t offset, int64_t dim1, int64_t dim2) {
  if (t.dim() < 1) throw std::invalid_argument("diag_embed: expected a tensor with at least 1 dim, got a 0-d tensor");
  const int64_t out_dims = t.dim() + 1;
  const int64_t d1 = wrap_dim(dim1, out_dims, "diag_embed"), d2 = wrap_dim(dim2, out_dims, "diag_embed");
  if (d1 == d2) {
    throw std::invalid_argument("diag_embed: diagonal dimensions cannot be identical " + std::to_string(dim1) + ", " + std::to_string(dim2));
  }
  // out[..., i, j] = row[..., j] where j - i == offset, else 0; row is t's last dim placed at
  // [start, start + n) of a length-m row (m = n + |offset|), so that row[i + offset] = t[i] (offset
  // >= 0) or row[j] = t[j] (offset < 0). A where() over a broadcast row: differentiable as it is.
  const int64_t n = t.size(-1), m = n + std::abs(offset), start = offset >= 0 ? offset : 0;
  const TensorOptions o = TensorOptions(t.dtype()).device(t.device());
  Shape before(t.sizes().begin(), t.sizes().end() - 1), after = before;
  before.push_back(start);
  after.push_back(m - n - start);
  Tensor row = cat({raw::zeros(before, o), t, raw::zeros(after, o)}, -1);
  const TensorOptions positions = TensorOptions(kInt64).device(t.device());
  Tensor j_minus_i = raw::sub(raw::unsqueeze(raw::arange(m, positions), 0), raw::unsqueeze(raw::arange(m, positions), 1));
  Tensor block = where(eq(j_minus_i, static_cast<double>(offset)), unsqueeze(row, -2), 0.0);  // [..., m, m]
  return movedim(block, std::vector<int64_t>{out_dims - 2, out_dims - 1}, std::vector<int64_t>{d1, d2});
}

Tensor cartesian_prod(const std::vector<Tensor>& tensors) {
  for (const Tensor& t : tensors) {
    if (t.dim() != 1) {
      throw std::invalid_argument("cartesian_prod: expect a 1D vector, but got shape " + shape_str(t.sizes()));
    }
  }
  if (tensors.size() == 1) return tensors[0];
  std::vector<Tensor> grid = meshgrid(tensors, "ij"), columns;
  for (const Tensor& g : grid) columns.push_back(reshape(g, {-1}));
  return stack(columns, 1);
}

Tensor combinations(const Tensor& t, int64_t r, bool with_replacement) {
  if (t.dim() != 1) {
    throw std::invalid_argument("combinations: Expect a 1D vector, but got shape " + shape_str(t.sizes()));
  }
  if (r < 0) throw std::invalid_argument("combinations: Expect a non-negative number, but got " + std::to_string(r));
  if (r == 0) return raw::empty({0}, TensorOptions(t.dtype()).device(t.device()));
  // The index tuples in lexicographic order (itertools.combinations[_with_replacement]), built on
  // the host, then one index_select per position.
  const int64_t n = t.size(0);
  std::vector<std::vector<int64_t>> columns(r);
  std::vector<int64_t> idx(r, 0);
  if (!with_replacement) for (int64_t i = 0; i < r; ++i) idx[i] = i;
  const bool any = with_replacement ? n > 0 : r <= n;
  while (any) {
    for (int64_t i = 0; i < r; ++i) columns[i].push_back(idx[i]);
    // Advance the rightmost position that can still grow, then reset the ones after it.
    int64_t i = r - 1;
    while (i >= 0 && idx[i] == (with_replacement ? n - 1 : n - r + i)) --i;
    if (i < 0) break;
    ++idx[i];
    for (int64_t j = i + 1; j < r; ++j) idx[j] = with_replacement ? idx[i] : idx[j - 1] + 1;
  }
  std::vector<Tensor> picked;
  for (const auto& c : columns) {
    Tensor positions = raw::from_vector<int64_t>(c, {static_cast<int64_t>(c.size())}, TensorOptions(kInt64));
    picked.push_back(index_select(t, 0, raw::to(positions, t.device(), kInt64)));
  }
  return stack(picked, 1);
}

Tensor msort(const Tensor& t) { return sort(t, 0).first; }

namespace {

// The (row, col) pairs of an [rows, cols] matrix with col - row <= offset (lower) or >= offset
// (upper), row-major, as a [2, count] tensor.
Tensor triangle_indices(int64_t rows, int64_t cols, int64_t offset, bool lower, const TensorOptions& opts,
                        const char* op) {
  if (rows < 0 || cols < 0) {
    throw std::invalid_argument(std::string(op) + ": row and col must be non-negative, got " + std::to_string(rows) + " and " +
                                std::to_string(cols));
  }
  if (opts.dtype() != kInt64 && opts.dtype() != kInt32) {
    throw std::invalid_argument(std::string(op) + ": expected an int64 or int32 dtype, got " + dtype_name(opts.dtype()));
  }
  std::vector<int64_t> r_idx, c_idx;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      if (lower ? c - r <= offset : c - r >= offset) {
        r_idx.push_back(r);
        c_idx.push_back(c);
      }
    }
  }
  r_idx.insert(r_idx.end(), c_idx.begin(), c_idx.end());
  Tensor out = raw::from_vector<int64_t>(r_idx, {2, static_cast<int64_t>(c_idx.size())}, TensorOptions(kInt64));
  return raw::to(out, opts.device(), opts.dtype());
}

}  // namespace

Tensor tril_indices(int64_t row, int64_t col, int64_t offset, const TensorOptions& opts) {
  return triangle_indices(row, col, offset, true, opts, "tril_indices");
}
Tensor triu_indices(int64_t row, int64_t col, int64_t offset, const TensorOptions& opts) {
  return triangle_indices(row, col, offset, false, opts, "triu_indices");
}

}  // namespace colony
