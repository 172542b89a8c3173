// Tensor ops PyTorch users reach for that are compositions of other differentiable ops, so their
// gradients come from those: roll, unbind, movedim, unflatten, meshgrid, lerp, addcmul, addcdiv,
// nan_to_num, count_nonzero and diag.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

#include "autograd/factory.h"
#include "autograd/op_util.h"
#include "autograd/ops.h"

namespace colony {

Tensor roll(const Tensor& t, const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims) {
  if (shifts.empty()) throw std::invalid_argument("roll: `shifts` required");
  if (dims.empty()) {
    // torch.roll without dims rolls the flattened tensor, then restores the shape.
    if (shifts.size() != 1) {
      throw std::invalid_argument("roll: shifts and dimensions must align. shifts: " + std::to_string(shifts.size()) +
                                  ", dims: 0");
    }
    return reshape(roll(reshape(t, {-1}), shifts, {0}), t.sizes());
  }
  if (shifts.size() != dims.size()) {
    throw std::invalid_argument("roll: shifts and dimensions must align. shifts: " + std::to_string(shifts.size()) +
                                ", dims: " + std::to_string(dims.size()));
  }
  Tensor out = t;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = wrap_dim(dims[i], std::max<int64_t>(t.dim(), 1), "roll");
    const int64_t n = out.dim() == 0 ? 1 : out.size(d);
    if (n == 0) continue;
    const int64_t s = ((shifts[i] % n) + n) % n;  // element j moves to (j + shift) mod n
    if (s == 0) continue;
    out = cat({narrow(out, d, n - s, s), narrow(out, d, 0, n - s)}, d);
  }
  return out.is_same(t) ? clone(t) : out;  // a new tensor, as torch.roll's
}

std::vector<Tensor> unbind(const Tensor& t, int64_t dim) {
  const int64_t d = wrap_dim(dim, t.dim(), "unbind");
  std::vector<Tensor> out;
  for (int64_t i = 0; i < t.size(d); ++i) out.push_back(select(t, d, i));
  return out;
}

Tensor movedim(const Tensor& t, const std::vector<int64_t>& source, const std::vector<int64_t>& destination) {
  if (source.size() != destination.size()) {
    throw std::invalid_argument("movedim: Invalid source or destination dims: source (" + std::to_string(source.size()) +
                                " dims) should contain the same number of dims as destination (" +
                                std::to_string(destination.size()) + " dims)");
  }
  const int64_t n = t.dim();
  const std::vector<int64_t> src = wrap_dims(source, n, "movedim"), dst = wrap_dims(destination, n, "movedim");
  // torch's rule: the moved dims go to their destinations; the others keep their order in the rest.
  std::vector<int64_t> order(n, -1);
  std::vector<bool> taken(n, false);
  for (size_t i = 0; i < src.size(); ++i) {
    order[dst[i]] = src[i];
    taken[src[i]] = true;
  }
  int64_t next = 0;
  for (int64_t& o : order) {
    if (o != -1) continue;
    while (taken[next]) ++next;
    o = next++;
  }
  return permute(t, order);
}

Tensor movedim(const Tensor& t, int64_t source, int64_t destination) {
  return movedim(t, std::vector<int64_t>{source}, std::vector<int64_t>{destination});
}

Tensor unflatten(const Tensor& t, int64_t dim, const Shape& sizes) {
  const int64_t d = wrap_dim(dim, t.dim(), "unflatten");
  if (sizes.empty()) throw std::invalid_argument("unflatten: sizes must be non-empty");
  int64_t known = 1, unknown = -1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      if (unknown != -1) throw std::invalid_argument("unflatten: only one dimension can be inferred");
      unknown = static_cast<int64_t>(i);
    } else {
      known *= sizes[i];
    }
  }
  if ((unknown == -1 && known != t.size(d)) || (unknown != -1 && (known == 0 || t.size(d) % known != 0))) {
    throw std::invalid_argument("unflatten: Provided sizes " + shape_str(sizes) + " don't multiply up to the size of dim " +
                                std::to_string(dim) + " (" + std::to_string(t.size(d)) + ") in the input tensor");
  }
  Shape shape(t.sizes().begin(), t.sizes().begin() + d);
  shape.insert(shape.end(), sizes.begin(), sizes.end());
  shape.insert(shape.end(), t.sizes().begin() + d + 1, t.sizes().end());
  return reshape(t, shape);
}

std::vector<Tensor> meshgrid(const std::vector<Tensor>& tensors, const std::string& indexing) {
  if (indexing != "ij" && indexing != "xy") {
    throw std::invalid_argument("meshgrid: indexing must be \"ij\" or \"xy\", got \"" + indexing + "\"");
  }
  if (tensors.empty()) throw std::invalid_argument("meshgrid: expects a non-empty list of tensors");
  Shape shape;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].dim() > 1) {
      throw std::invalid_argument("meshgrid: Expected 0D or 1D tensor in the tensor list but got: " +
                                  shape_str(tensors[i].sizes()));
    }
    shape.push_back(tensors[i].numel());
  }
  // "xy" (Cartesian) swaps the first two dims of the grid, as numpy's meshgrid.
  const bool swap = indexing == "xy" && tensors.size() >= 2;
  if (swap) std::swap(shape[0], shape[1]);
  std::vector<Tensor> out;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const size_t at = swap && i < 2 ? 1 - i : i;
    Shape view(tensors.size(), 1);
    view[at] = shape[at];
    out.push_back(expand(reshape(tensors[i], view), shape));
  }
  return out;
}

Tensor lerp(const Tensor& start, const Tensor& end, double weight) {
  // PyTorch's form: from start for |weight| < 0.5, from end otherwise (exact at both ends).
  Tensor diff = sub(end, start);
  return std::abs(weight) < 0.5 ? add(start, mul(diff, weight)) : sub(end, mul(diff, 1.0 - weight));
}

Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight) {
  Tensor diff = sub(end, start);
  return where(lt(abs(weight), 0.5), add(start, mul(weight, diff)), sub(end, mul(diff, rsub(weight, 1.0))));
}

Tensor addcmul(const Tensor& t, const Tensor& tensor1, const Tensor& tensor2, double value) {
  return add(t, mul(mul(tensor1, tensor2), value));
}

Tensor addcdiv(const Tensor& t, const Tensor& tensor1, const Tensor& tensor2, double value) {
  if (!is_floating(tensor1.dtype()) && !is_floating(tensor2.dtype())) {
    throw std::invalid_argument(
        "addcdiv: Integer division with addcdiv is no longer supported; divide tensor1 by tensor2 as floats first");
  }
  return add(t, mul(div(tensor1, tensor2), value));
}

Tensor nan_to_num(const Tensor& t, std::optional<double> nan, std::optional<double> posinf,
                  std::optional<double> neginf) {
  if (!is_floating(t.dtype())) return clone(t);  // integers and bool hold no NaN or infinity
  // The defaults are the dtype's largest and lowest finite values, as torch's.
  const double largest = autograd::detail::largest_finite(t.dtype());
  Tensor out = where(isnan(t), nan.value_or(0.0), t);
  out = where(eq(t, std::numeric_limits<double>::infinity()), posinf.value_or(largest), out);
  return where(eq(t, -std::numeric_limits<double>::infinity()), neginf.value_or(-largest), out);
}

Tensor count_nonzero(const Tensor& t, const std::vector<int64_t>& dims) {
  return sum(to(ne(t, 0.0), t.device(), kInt64), dims);
}

Tensor diag(const Tensor& t, int64_t diagonal_offset) {
  if (t.dim() == 2) return diagonal(t, diagonal_offset);
  if (t.dim() != 1) {
    throw std::invalid_argument("diag: Supports 1D or 2D tensors. Got " + std::to_string(t.dim()) + "D");
  }
  // A vector onto the offset diagonal of a square matrix: eye * t is the n x n block, which zeros
  // then place k columns to the right (k > 0) or k rows down (k < 0).
  const int64_t n = t.size(0), k = std::abs(diagonal_offset), m = n + k;
  const TensorOptions o = TensorOptions(t.dtype()).device(t.device());
  Tensor block = mul(raw::eye(n, n, o), t);
  if (k == 0) return block;
  if (diagonal_offset > 0) return cat({cat({raw::zeros({n, k}, o), block}, 1), raw::zeros({k, m}, o)}, 0);
  return cat({cat({raw::zeros({k, n}, o), block}, 0), raw::zeros({m, k}, o)}, 1);
}

}  // namespace colony
