// View ops: new shapes and strides over the same storage; no data moves (reshape copies only when
// no view exists).
#include <algorithm>
#include <numeric>
#include <optional>
#include <stdexcept>

#include "ops/raw_ops.h"

namespace colony::raw {
namespace {

Tensor make_view(const Tensor& t, Shape sizes, Shape strides, int64_t offset) {
  return Tensor(std::make_shared<TensorImpl>(t.storage(), std::move(sizes), std::move(strides), offset, t.dtype()));
}

// Strides that let `shape` view memory laid out as (old_sizes, old_strides), or nullopt when the
// reshaping mixes dimensions that are not contiguous with each other. Dimensions are grouped into
// chunks that are contiguous among themselves; each chunk of the old shape must be exactly covered
// by consecutive dimensions of the new one.
std::optional<Shape> view_strides(const Shape& old_sizes, const Shape& old_strides, const Shape& shape) {
  if (old_sizes.empty() || shape_numel(old_sizes) == 0) return contiguous_strides(shape);
  Shape strides(shape.size());
  int64_t view_d = static_cast<int64_t>(shape.size()) - 1;
  int64_t chunk_base_stride = old_strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(old_sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= old_sizes[d];
    bool chunk_ends = d == 0 || (old_sizes[d - 1] != 1 && old_strides[d - 1] != tensor_numel * chunk_base_stride);
    if (!chunk_ends) continue;
    while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
      strides[view_d] = view_numel * chunk_base_stride;
      view_numel *= shape[view_d];
      --view_d;
    }
    if (view_numel != tensor_numel) return std::nullopt;
    if (d > 0) {
      chunk_base_stride = old_strides[d - 1];
      tensor_numel = 1;
      view_numel = 1;
    }
  }
  if (view_d != -1) return std::nullopt;
  return strides;
}

}  // namespace

Shape infer_size(const Shape& shape, int64_t numel, const char* op) {
  Shape out = shape;
  int64_t known = 1;
  int infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) throw std::invalid_argument(std::string(op) + ": only one dimension can be inferred (-1)");
      infer = static_cast<int>(i);
    } else if (shape[i] < 0) {
      throw std::invalid_argument(std::string(op) + ": invalid shape dimension " + std::to_string(shape[i]) +
                                  " in " + shape_str(shape));
    } else {
      known *= shape[i];
    }
  }
  bool ok = infer >= 0 ? (known != 0 && numel % known == 0) : known == numel;
  if (!ok) {
    throw std::invalid_argument(std::string(op) + ": shape " + shape_str(shape) + " is invalid for input of size " +
                                std::to_string(numel));
  }
  if (infer >= 0) out[infer] = numel / known;
  return out;
}

Tensor as_strided(const Tensor& t, const Shape& sizes, const Shape& strides, int64_t offset) {
  if (sizes.size() != strides.size()) {
    throw std::invalid_argument("as_strided: mismatch in length of strides and shape (sizes " + shape_str(sizes) +
                                ", strides " + shape_str(strides) + ")");
  }
  // torch's checks (TensorImpl's setStorage and as_strided), in its words.
  if (offset < 0) throw std::invalid_argument("as_strided: Tensor: invalid storage offset " + std::to_string(offset));
  int64_t last = offset;  // the last element the view reaches
  bool empty = false;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] < 0) {
      throw std::invalid_argument("as_strided: Trying to create tensor with negative dimension " +
                                  std::to_string(sizes[d]) + ": " + shape_str(sizes));
    }
    if (strides[d] < 0) {
      throw std::invalid_argument("as_strided: Negative strides are not supported at the moment, got strides: " +
                                  shape_str(strides));
    }
    empty = empty || sizes[d] == 0;
    last += (sizes[d] - 1) * strides[d];
  }
  const int64_t item = element_size(t.dtype());
  const int64_t needed = empty ? 0 : (last + 1) * item;
  if (needed > static_cast<int64_t>(t.storage()->nbytes())) {
    throw std::invalid_argument("as_strided: setStorage: sizes " + shape_str(sizes) + ", strides " +
                                shape_str(strides) + ", storage offset " + std::to_string(offset) +
                                ", and itemsize " + std::to_string(item) + " requiring a storage size of " +
                                std::to_string(needed) + " are out of bounds for storage of size " +
                                std::to_string(t.storage()->nbytes()));
  }
  return make_view(t, sizes, strides, offset);
}

Tensor diagonal(const Tensor& t, int64_t offset, int64_t dim1, int64_t dim2) {
  if (t.dim() < 2) {
    throw std::invalid_argument("diagonal: expected a tensor with at least 2 dimensions, got " + shape_str(t.sizes()));
  }
  const int64_t given1 = dim1, given2 = dim2;
  dim1 = wrap_dim(dim1, t.dim(), "diagonal");
  dim2 = wrap_dim(dim2, t.dim(), "diagonal");
  if (dim1 == dim2) {
    throw std::invalid_argument("diagonal: diagonal dimensions cannot be identical " + std::to_string(given1) + ", " +
                                std::to_string(given2));
  }
  const Shape& in_sizes = t.sizes();
  const Shape& in_strides = t.strides();
  // Element i of the diagonal is t[.., i, .., i + offset, ..] (offset >= 0) or t[.., i - offset, .., i, ..].
  int64_t length = offset >= 0 ? std::min(in_sizes[dim1], in_sizes[dim2] - offset)
                               : std::min(in_sizes[dim1] + offset, in_sizes[dim2]);
  length = std::max<int64_t>(length, 0);
  int64_t storage_offset = t.storage_offset();
  if (length > 0) storage_offset += offset >= 0 ? offset * in_strides[dim2] : -offset * in_strides[dim1];
  Shape sizes, strides;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (d == dim1 || d == dim2) continue;
    sizes.push_back(in_sizes[d]);
    strides.push_back(in_strides[d]);
  }
  sizes.push_back(length);
  strides.push_back(in_strides[dim1] + in_strides[dim2]);
  return make_view(t, sizes, strides, storage_offset);
}

Tensor unfold(const Tensor& t, int64_t dim, int64_t size, int64_t step) {
  const int64_t nd = std::max<int64_t>(t.dim(), 1);
  dim = wrap_dim(dim, nd, "unfold");
  const int64_t extent = t.dim() == 0 ? 1 : t.size(dim), stride = t.dim() == 0 ? 1 : t.stride(dim);
  if (size > extent) {
    throw std::invalid_argument("unfold: maximum size for tensor at dimension " + std::to_string(dim) + " is " +
                                std::to_string(extent) + " but size is " + std::to_string(size));
  }
  if (step <= 0) throw std::invalid_argument("unfold: step is " + std::to_string(step) + " but must be > 0");
  if (size < 0) throw std::invalid_argument("unfold: size is " + std::to_string(size) + " but must be >= 0");
  Shape sizes = t.dim() == 0 ? Shape{1} : t.sizes();
  Shape strides = t.dim() == 0 ? Shape{1} : t.strides();
  sizes[dim] = (extent - size) / step + 1;
  strides[dim] = step * stride;
  sizes.push_back(size);
  strides.push_back(stride);
  if (t.dim() == 0) return make_view(t, {size}, {1}, t.storage_offset());  // torch: a 0-D tensor gives [size]
  return make_view(t, sizes, strides, t.storage_offset());
}

Tensor alias(const Tensor& t) { return make_view(t, t.sizes(), t.strides(), t.storage_offset()); }

Tensor view(const Tensor& t, const Shape& shape) {
  Shape sizes = infer_size(shape, t.numel(), "view");
  std::optional<Shape> strides = view_strides(t.sizes(), t.strides(), sizes);
  if (!strides) {
    throw std::invalid_argument("view: size " + shape_str(sizes) + " is not compatible with the input's sizes " +
                                shape_str(t.sizes()) + " and strides " + shape_str(t.strides()) +
                                " (at least one dimension spans two contiguous subspaces); use reshape() instead");
  }
  return make_view(t, sizes, *strides, t.storage_offset());
}

Tensor reshape(const Tensor& t, const Shape& shape) {
  Shape sizes = infer_size(shape, t.numel(), "reshape");
  if (std::optional<Shape> strides = view_strides(t.sizes(), t.strides(), sizes)) {
    return make_view(t, sizes, *strides, t.storage_offset());
  }
  Tensor c = contiguous(t);
  return make_view(c, sizes, contiguous_strides(sizes), c.storage_offset());
}

Tensor transpose(const Tensor& t, int64_t dim0, int64_t dim1) {
  int64_t n = t.dim();
  if (n == 0) return alias(t);
  dim0 = wrap_dim(dim0, n, "transpose");
  dim1 = wrap_dim(dim1, n, "transpose");
  Shape sizes = t.sizes(), strides = t.strides();
  std::swap(sizes[dim0], sizes[dim1]);
  std::swap(strides[dim0], strides[dim1]);
  return make_view(t, sizes, strides, t.storage_offset());
}

Tensor permute(const Tensor& t, const std::vector<int64_t>& dims) {
  if (static_cast<int64_t>(dims.size()) != t.dim()) {
    throw std::invalid_argument("permute: number of dims " + std::to_string(dims.size()) +
                                " does not match the tensor's " + std::to_string(t.dim()) + " dims " +
                                shape_str(t.sizes()));
  }
  std::vector<int64_t> d = wrap_dims(dims, t.dim(), "permute");
  Shape sizes(d.size()), strides(d.size());
  for (size_t i = 0; i < d.size(); ++i) {
    sizes[i] = t.sizes()[d[i]];
    strides[i] = t.strides()[d[i]];
  }
  return make_view(t, sizes, strides, t.storage_offset());
}

Tensor slice(const Tensor& t, int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (t.dim() == 0) throw std::invalid_argument("slice: cannot slice a 0-d tensor");
  dim = wrap_dim(dim, t.dim(), "slice");
  if (step <= 0) throw std::invalid_argument("slice: step must be positive, got " + std::to_string(step));
  int64_t size = t.sizes()[dim];
  // Python slicing: negative indices count from the end, out-of-range bounds clamp.
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = std::clamp<int64_t>(start, 0, size);
  end = std::clamp<int64_t>(end, start, size);
  Shape sizes = t.sizes(), strides = t.strides();
  sizes[dim] = (end - start + step - 1) / step;
  strides[dim] *= step;
  return make_view(t, sizes, strides, t.storage_offset() + start * t.strides()[dim]);
}

Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t length) {
  if (t.dim() == 0) throw std::invalid_argument("narrow: cannot narrow a 0-d tensor");
  dim = wrap_dim(dim, t.dim(), "narrow");
  int64_t size = t.sizes()[dim];
  if (start < 0) start += size;
  if (start < 0 || length < 0 || start + length > size) {
    throw std::out_of_range("narrow: start " + std::to_string(start) + " + length " + std::to_string(length) +
                            " exceeds dimension " + std::to_string(dim) + " of size " + std::to_string(size));
  }
  Shape sizes = t.sizes();
  sizes[dim] = length;
  return make_view(t, sizes, t.strides(), t.storage_offset() + start * t.strides()[dim]);
}

Tensor select(const Tensor& t, int64_t dim, int64_t index) {
  if (t.dim() == 0) throw std::invalid_argument("select: cannot select from a 0-d tensor");
  dim = wrap_dim(dim, t.dim(), "select");
  int64_t size = t.sizes()[dim];
  if (index < -size || index >= size) {
    throw std::out_of_range("select: index " + std::to_string(index) + " is out of range for dimension " +
                            std::to_string(dim) + " with size " + std::to_string(size));
  }
  if (index < 0) index += size;
  Shape sizes = t.sizes(), strides = t.strides();
  int64_t offset = t.storage_offset() + index * strides[dim];
  sizes.erase(sizes.begin() + dim);
  strides.erase(strides.begin() + dim);
  return make_view(t, sizes, strides, offset);
}

Tensor flatten(const Tensor& t, int64_t start_dim, int64_t end_dim) {
  if (t.dim() == 0) return reshape(t, {1});
  start_dim = wrap_dim(start_dim, t.dim(), "flatten");
  end_dim = wrap_dim(end_dim, t.dim(), "flatten");
  if (start_dim > end_dim) {
    throw std::invalid_argument("flatten: start_dim " + std::to_string(start_dim) + " comes after end_dim " +
                                std::to_string(end_dim));
  }
  Shape shape(t.sizes().begin(), t.sizes().begin() + start_dim);
  int64_t flat = 1;
  for (int64_t d = start_dim; d <= end_dim; ++d) flat *= t.sizes()[d];
  shape.push_back(flat);
  shape.insert(shape.end(), t.sizes().begin() + end_dim + 1, t.sizes().end());
  return reshape(t, shape);
}

Tensor squeeze(const Tensor& t) {
  Shape sizes, strides;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.sizes()[d] != 1) {
      sizes.push_back(t.sizes()[d]);
      strides.push_back(t.strides()[d]);
    }
  }
  return make_view(t, sizes, strides, t.storage_offset());
}

Tensor squeeze(const Tensor& t, int64_t dim) {
  if (t.dim() == 0) return alias(t);
  dim = wrap_dim(dim, t.dim(), "squeeze");
  if (t.sizes()[dim] != 1) return alias(t);  // PyTorch: squeezing a non-1 dim is a no-op
  Shape sizes = t.sizes(), strides = t.strides();
  sizes.erase(sizes.begin() + dim);
  strides.erase(strides.begin() + dim);
  return make_view(t, sizes, strides, t.storage_offset());
}

Tensor unsqueeze(const Tensor& t, int64_t dim) {
  dim = wrap_dim(dim, t.dim() + 1, "unsqueeze");
  Shape sizes = t.sizes(), strides = t.strides();
  int64_t stride = dim < t.dim() ? sizes[dim] * strides[dim] : 1;
  sizes.insert(sizes.begin() + dim, 1);
  strides.insert(strides.begin() + dim, stride);
  return make_view(t, sizes, strides, t.storage_offset());
}

Tensor expand(const Tensor& t, const Shape& shape) {
  int64_t n = static_cast<int64_t>(shape.size());
  if (n < t.dim()) {
    throw std::invalid_argument("expand: the number of sizes provided (" + std::to_string(n) +
                                ") must be greater or equal to the number of dimensions in the tensor (" +
                                std::to_string(t.dim()) + ")");
  }
  Shape sizes(n), strides(n);
  for (int64_t i = n - 1; i >= 0; --i) {
    int64_t j = i - (n - t.dim());
    int64_t cur = j >= 0 ? t.sizes()[j] : 1;
    int64_t want = shape[i];
    if (want == -1) {
      if (j < 0) throw std::invalid_argument("expand: -1 is not allowed in a new leading dimension");
      want = cur;
    }
    if (cur == want) {
      sizes[i] = cur;
      strides[i] = j >= 0 ? t.strides()[j] : 0;
    } else if (cur == 1) {
      sizes[i] = want;
      strides[i] = 0;
    } else {
      throw std::invalid_argument("expand: the expanded size of the tensor (" + std::to_string(want) +
                                  ") must match the existing size (" + std::to_string(cur) +
                                  ") at non-singleton dimension " + std::to_string(i) + ". Target sizes: " +
                                  shape_str(shape) + ". Tensor sizes: " + shape_str(t.sizes()));
    }
  }
  return make_view(t, sizes, strides, t.storage_offset());
}

}  // namespace colony::raw
