// The Tensor members of the composed ops (tensor/tensor.h): each forwards to the free function of
// autograd/composed_ops.h.
#include "autograd/ops.h"

namespace colony {

Tensor Tensor::tile(const Shape& dims) const { return colony::tile(*this, dims); }
Tensor Tensor::broadcast_to(const Shape& shape) const { return colony::broadcast_to(*this, shape); }
std::vector<Tensor> Tensor::tensor_split(int64_t sections, int64_t dim) const {
  return colony::tensor_split(*this, sections, dim);
}
std::vector<Tensor> Tensor::tensor_split(const std::vector<int64_t>& indices, int64_t dim) const {
  return colony::tensor_split(*this, indices, dim);
}
Tensor Tensor::fliplr() const { return colony::fliplr(*this); }
Tensor Tensor::flipud() const { return colony::flipud(*this); }
Tensor Tensor::rot90(int64_t k, const std::vector<int64_t>& dims) const { return colony::rot90(*this, k, dims); }
Tensor Tensor::take_along_dim(const Tensor& indices, std::optional<int64_t> dim) const {
  return colony::take_along_dim(*this, indices, dim);
}
Tensor Tensor::argwhere() const { return colony::argwhere(*this); }
Tensor Tensor::diag_embed(int64_t offset, int64_t dim1, int64_t dim2) const {
  return colony::diag_embed(*this, offset, dim1, dim2);
}
Tensor Tensor::msort() const { return colony::msort(*this); }
Tensor Tensor::isclose(const Tensor& other, double rtol, double atol, bool equal_nan) const {
  return colony::isclose(*this, other, rtol, atol, equal_nan);
}
Tensor Tensor::diff(int64_t n, int64_t dim, const Tensor& prepend, const Tensor& append) const {
  return colony::diff(*this, n, dim, prepend, append);
}
std::pair<Tensor, Tensor> Tensor::aminmax(std::optional<int64_t> dim, bool keepdim) const {
  return colony::aminmax(*this, dim, keepdim);
}
Tensor Tensor::kron(const Tensor& other) const { return colony::kron(*this, other); }
Tensor Tensor::dot(const Tensor& other) const { return colony::dot(*this, other); }
Tensor Tensor::vdot(const Tensor& other) const { return colony::vdot(*this, other); }
Tensor Tensor::inner(const Tensor& other) const { return colony::inner(*this, other); }
Tensor Tensor::mv(const Tensor& vec) const { return colony::mv(*this, vec); }
Tensor Tensor::addmm(const Tensor& mat1, const Tensor& mat2, double beta, double alpha) const {
  return colony::addmm(*this, mat1, mat2, beta, alpha);
}
Tensor Tensor::addmv(const Tensor& mat, const Tensor& vec, double beta, double alpha) const {
  return colony::addmv(*this, mat, vec, beta, alpha);
}
Tensor Tensor::addr(const Tensor& vec1, const Tensor& vec2, double beta, double alpha) const {
  return colony::addr(*this, vec1, vec2, beta, alpha);
}
Tensor Tensor::baddbmm(const Tensor& batch1, const Tensor& batch2, double beta, double alpha) const {
  return colony::baddbmm(*this, batch1, batch2, beta, alpha);
}
Tensor Tensor::addbmm(const Tensor& batch1, const Tensor& batch2, double beta, double alpha) const {
  return colony::addbmm(*this, batch1, batch2, beta, alpha);
}
Tensor Tensor::sgn() const { return colony::sgn(*this); }
Tensor Tensor::signbit() const { return colony::signbit(*this); }
Tensor Tensor::heaviside(const Tensor& values) const { return colony::heaviside(*this, values); }
Tensor Tensor::float_power(const Tensor& exponent) const { return colony::float_power(*this, exponent); }
Tensor Tensor::float_power(double exponent) const { return colony::float_power(*this, exponent); }
Tensor Tensor::clamp_min(double min) const { return colony::clamp_min(*this, min); }
Tensor Tensor::clamp_max(double max) const { return colony::clamp_max(*this, max); }
Tensor Tensor::cov(int64_t correction, const Tensor& fweights, const Tensor& aweights) const {
  return colony::cov(*this, correction, fweights, aweights);
}
Tensor Tensor::corrcoef() const { return colony::corrcoef(*this); }
Tensor Tensor::new_zeros(const Shape& shape) const { return raw::zeros(shape, TensorOptions(dtype()).device(device())); }
Tensor Tensor::new_ones(const Shape& shape) const { return raw::ones(shape, TensorOptions(dtype()).device(device())); }
Tensor Tensor::new_full(const Shape& shape, double value) const {
  return raw::full(shape, value, TensorOptions(dtype()).device(device()));
}
Tensor Tensor::new_empty(const Shape& shape) const { return raw::empty(shape, TensorOptions(dtype()).device(device())); }

}  // namespace colony
