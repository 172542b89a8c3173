// torch's isin, block_diag, diagflat, dist, renorm, logdet, nuclear_norm and unravel_index, composed
// of other ops as torch composes them (composed_ops.h says what each computes), so their gradients
// come from those.
#include <limits>
#include <stdexcept>
#include <string>

#include "autograd/autocast.h"
#include "autograd/linalg.h"
#include "autograd/ops.h"

namespace colony {

Tensor isin(const Tensor& elements, const Tensor& test_elements, bool /*assume_unique*/, bool invert) {
  const Tensor flat = reshape(elements, {-1, 1});
  const Tensor tests = reshape(test_elements, {1, -1});
  Tensor found = reshape(any(eq(flat, tests), {1}), elements.sizes());
  return invert ? logical_not(found) : found;
}

Tensor block_diag(const std::vector<Tensor>& tensors) {
  if (tensors.empty()) return raw::empty({1, 0});
  DType dtype = tensors[0].dtype();
  int64_t cols = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (t.dim() > 2) {
      throw std::invalid_argument("torch.block_diag: Input tensors must have 2 or fewer dimensions. Input " +
                                  std::to_string(i) + " has " + std::to_string(t.dim()) + " dimensions");
    }
    if (t.device() != tensors[0].device()) {
      throw std::invalid_argument("torch.block_diag: input tensors must all be on the same device. Input 0 is on " +
                                  tensors[0].device().str() + ", input " + std::to_string(i) + " is on " +
                                  t.device().str());
    }
    if (i > 0) dtype = promote_types(dtype, t.dtype());
  }
  std::vector<Tensor> blocks;
  for (const Tensor& t : tensors) {
    const Tensor b = t.dim() == 2 ? t : reshape(t, {1, t.dim() == 0 ? 1 : t.size(0)});
    blocks.push_back(b.dtype() == dtype ? b : to(b, b.device(), dtype));
    cols += blocks.back().size(1);
  }
  const TensorOptions opts = TensorOptions(dtype).device(tensors[0].device());
  std::vector<Tensor> row_bands;
  int64_t left = 0;
  for (const Tensor& b : blocks) {
    const int64_t r = b.size(0), c = b.size(1);
    row_bands.push_back(cat({raw::zeros({r, left}, opts), b, raw::zeros({r, cols - left - c}, opts)}, 1));
    left += c;
  }
  return cat(row_bands, 0);
}

Tensor diagflat(const Tensor& t, int64_t offset) { return diag(reshape(t, {-1}), offset); }

Tensor Tensor::dist(const Tensor& other, double p) const {
  const Tensor a = autocast::cast(autocast::Op::dist, *this), b = autocast::cast(autocast::Op::dist, other);
  return linalg::vector_norm(sub(a, b), p);
}

Tensor renorm(const Tensor& t_arg, double p, int64_t dim, double maxnorm) {
  const Tensor t = autocast::cast(autocast::Op::renorm, t_arg);
  if (p <= 0) throw std::invalid_argument("renorm: non-positive-norm not supported");
  if (maxnorm < 0) {
    throw std::invalid_argument("renorm: expected maxnorm to be >= 0 but got " + std::to_string(maxnorm));
  }
  if (t.dim() < 2) {
    throw std::invalid_argument("renorm: input needs at least 2 dimensions, got " + std::to_string(t.dim()) +
                                " dimensions");
  }
  const int64_t d = wrap_dim(dim, t.dim(), "renorm");
  std::vector<int64_t> others;
  for (int64_t i = 0; i < t.dim(); ++i) {
    if (i != d) others.push_back(i);
  }
  // norm (keepdim) per slice; factor maxnorm / (norm + 1e-7) where norm > maxnorm, 1 elsewhere.
  const Tensor norm = linalg::vector_norm(t, p, others, /*keepdim=*/true);
  const Tensor scale = rdiv(add(norm, 1e-7), maxnorm);
  const Tensor factor = where(gt(norm.detach(), maxnorm), scale, 1.0);
  return mul(t, factor);
}

Tensor logdet(const Tensor& A) {
  auto [sign, logabsdet] = linalg::slogdet(A);
  return where(eq(sign, -1.0), std::numeric_limits<double>::quiet_NaN(), logabsdet);
}

Tensor nuclear_norm(const Tensor& A, bool keepdim) { return nuclear_norm(A, {-2, -1}, keepdim); }
Tensor nuclear_norm(const Tensor& A, const std::vector<int64_t>& dims, bool keepdim) {
  return linalg::matrix_norm(autocast::cast(autocast::Op::nuclear_norm, A), "nuc", dims, keepdim);
}

std::vector<Tensor> unravel_index(const Tensor& indices, const Shape& shape) {
  if (is_floating(indices.dtype()) || indices.dtype() == kBool) {
    throw std::invalid_argument(std::string("expected 'indices' to be integer dtype, but got ") +
                                dtype_name(indices.dtype()));
  }
  for (int64_t s : shape) {
    if (s < 0) throw std::invalid_argument("'shape' cannot have negative values, but got " + shape_str(shape));
  }
  // From the last dimension: the coordinate is index % size, the rest index // size (Python's).
  std::vector<Tensor> coords(shape.size());
  Tensor rest = to(indices, indices.device(), kInt64);
  for (size_t i = shape.size(); i-- > 0;) {
    coords[i] = remainder(rest, static_cast<double>(shape[i]));
    rest = floor_divide(rest, static_cast<double>(shape[i]));
  }
  return coords;
}

}  // namespace colony
