// The differentiable Tensor members: each forwards to the free function of autograd/ops.h (trace,
// whose free name would clash with the colony::trace namespace, is composed here).
#include <stdexcept>
#include <string>

#include "autograd/ops.h"

namespace colony {

Tensor Tensor::view(const Shape& shape) const { return colony::view(*this, shape); }
Tensor Tensor::reshape(const Shape& shape) const { return colony::reshape(*this, shape); }
Tensor Tensor::transpose(int64_t dim0, int64_t dim1) const { return colony::transpose(*this, dim0, dim1); }
Tensor Tensor::t() const { return colony::t(*this); }
Tensor Tensor::permute(const std::vector<int64_t>& dims) const { return colony::permute(*this, dims); }
Tensor Tensor::narrow(int64_t dim, int64_t start, int64_t length) const {
  return colony::narrow(*this, dim, start, length);
}
Tensor Tensor::slice(int64_t dim, int64_t start, int64_t end, int64_t step) const {
  return colony::slice(*this, dim, start, end, step);
}
Tensor Tensor::select(int64_t dim, int64_t index) const { return colony::select(*this, dim, index); }
Tensor Tensor::operator[](int64_t index) const { return colony::select(*this, 0, index); }
Tensor Tensor::operator[](const Tensor& index) const { return this->index({index}); }
Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim) const { return colony::flatten(*this, start_dim, end_dim); }
Tensor Tensor::squeeze() const { return colony::squeeze(*this); }
Tensor Tensor::squeeze(int64_t dim) const { return colony::squeeze(*this, dim); }
Tensor Tensor::unsqueeze(int64_t dim) const { return colony::unsqueeze(*this, dim); }
Tensor Tensor::expand(const Shape& shape) const { return colony::expand(*this, shape); }
Tensor Tensor::contiguous() const { return colony::contiguous(*this); }
Tensor Tensor::clone() const { return colony::clone(*this); }
Tensor Tensor::to(Device device, bool non_blocking) const { return colony::to(*this, device, dtype(), non_blocking); }
Tensor Tensor::to(DType dtype) const { return colony::to(*this, device(), dtype); }
Tensor Tensor::to(Device device, DType dtype, bool non_blocking) const {
  return colony::to(*this, device, dtype, non_blocking);
}
Tensor Tensor::pin_memory() const { return colony::pin_memory(*this); }

Tensor Tensor::neg() const { return colony::neg(*this); }
Tensor Tensor::abs() const { return colony::abs(*this); }
Tensor Tensor::exp() const { return colony::exp(*this); }
Tensor Tensor::log() const { return colony::log(*this); }
Tensor Tensor::sqrt() const { return colony::sqrt(*this); }
Tensor Tensor::rsqrt() const { return colony::rsqrt(*this); }
Tensor Tensor::pow(double exponent) const { return colony::pow(*this, exponent); }
Tensor Tensor::pow(const Tensor& exponent) const { return colony::pow(*this, exponent); }
Tensor Tensor::clamp(std::optional<double> min, std::optional<double> max) const {
  return colony::clamp(*this, min, max);
}
Tensor Tensor::relu() const { return colony::relu(*this); }
Tensor Tensor::sigmoid() const { return colony::sigmoid(*this); }
Tensor Tensor::tanh() const { return colony::tanh(*this); }
Tensor Tensor::erf() const { return colony::erf(*this); }
Tensor Tensor::sin() const { return colony::sin(*this); }
Tensor Tensor::cos() const { return colony::cos(*this); }
Tensor Tensor::log1p() const { return colony::log1p(*this); }
Tensor Tensor::expm1() const { return colony::expm1(*this); }
Tensor Tensor::square() const { return colony::square(*this); }
Tensor Tensor::reciprocal() const { return colony::reciprocal(*this); }
Tensor Tensor::sign() const { return colony::sign(*this); }
Tensor Tensor::floor() const { return colony::floor(*this); }
Tensor Tensor::ceil() const { return colony::ceil(*this); }
Tensor Tensor::round() const { return colony::round(*this); }
Tensor Tensor::round(int64_t decimals) const { return colony::round(*this, decimals); }
Tensor Tensor::trunc() const { return colony::trunc(*this); }
Tensor Tensor::fix() const { return colony::fix(*this); }
Tensor Tensor::frac() const { return colony::frac(*this); }
Tensor Tensor::tan() const { return colony::tan(*this); }
Tensor Tensor::asin() const { return colony::asin(*this); }
Tensor Tensor::acos() const { return colony::acos(*this); }
Tensor Tensor::atan() const { return colony::atan(*this); }
Tensor Tensor::sinh() const { return colony::sinh(*this); }
Tensor Tensor::cosh() const { return colony::cosh(*this); }
Tensor Tensor::asinh() const { return colony::asinh(*this); }
Tensor Tensor::acosh() const { return colony::acosh(*this); }
Tensor Tensor::atanh() const { return colony::atanh(*this); }
Tensor Tensor::log2() const { return colony::log2(*this); }
Tensor Tensor::log10() const { return colony::log10(*this); }
Tensor Tensor::exp2() const { return colony::exp2(*this); }
Tensor Tensor::erfc() const { return colony::erfc(*this); }
Tensor Tensor::erfinv() const { return colony::erfinv(*this); }
Tensor Tensor::lgamma() const { return colony::lgamma(*this); }
Tensor Tensor::digamma() const { return colony::digamma(*this); }
Tensor Tensor::polygamma(int64_t n) const { return colony::polygamma(n, *this); }
Tensor Tensor::logit(std::optional<double> eps) const { return colony::logit(*this, eps); }
Tensor Tensor::sinc() const { return colony::sinc(*this); }
Tensor Tensor::i0() const { return colony::i0(*this); }
Tensor Tensor::atan2(const Tensor& other) const { return colony::atan2(*this, other); }
Tensor Tensor::fmod(const Tensor& other) const { return colony::fmod(*this, other); }
Tensor Tensor::fmod(double other) const { return colony::fmod(*this, other); }
Tensor Tensor::remainder(const Tensor& other) const { return colony::remainder(*this, other); }
Tensor Tensor::remainder(double other) const { return colony::remainder(*this, other); }
Tensor Tensor::floor_divide(const Tensor& other) const { return colony::floor_divide(*this, other); }
Tensor Tensor::floor_divide(double other) const { return colony::floor_divide(*this, other); }
Tensor Tensor::hypot(const Tensor& other) const { return colony::hypot(*this, other); }
Tensor Tensor::copysign(const Tensor& other) const { return colony::copysign(*this, other); }
Tensor Tensor::copysign(double other) const { return colony::copysign(*this, other); }
Tensor Tensor::xlogy(const Tensor& other) const { return colony::xlogy(*this, other); }
Tensor Tensor::xlogy(double other) const { return colony::xlogy(*this, other); }
Tensor Tensor::logaddexp(const Tensor& other) const { return colony::logaddexp(*this, other); }
Tensor Tensor::logaddexp2(const Tensor& other) const { return colony::logaddexp2(*this, other); }
Tensor Tensor::tril(int64_t diagonal) const { return colony::tril(*this, diagonal); }
Tensor Tensor::triu(int64_t diagonal) const { return colony::triu(*this, diagonal); }
Tensor Tensor::masked_fill(const Tensor& mask, double value) const { return colony::masked_fill(*this, mask, value); }
Tensor Tensor::masked_fill(const Tensor& mask, const Tensor& value) const {
  return colony::masked_fill(*this, mask, value);
}
Tensor Tensor::cumsum(int64_t dim) const { return colony::cumsum(*this, dim); }
Tensor Tensor::cumprod(int64_t dim) const { return colony::cumprod(*this, dim); }
std::pair<Tensor, Tensor> Tensor::cummax(int64_t dim) const { return colony::cummax(*this, dim); }
std::pair<Tensor, Tensor> Tensor::cummin(int64_t dim) const { return colony::cummin(*this, dim); }
Tensor Tensor::logcumsumexp(int64_t dim) const { return colony::logcumsumexp(*this, dim); }
Tensor Tensor::prod() const { return colony::prod(*this); }
Tensor Tensor::prod(int64_t dim, bool keepdim) const { return colony::prod(*this, dim, keepdim); }
Tensor Tensor::median() const { return colony::median(*this); }
std::pair<Tensor, Tensor> Tensor::median(int64_t dim, bool keepdim) const { return colony::median(*this, dim, keepdim); }
Tensor Tensor::nanmedian() const { return colony::nanmedian(*this); }
std::pair<Tensor, Tensor> Tensor::nanmedian(int64_t dim, bool keepdim) const {
  return colony::nanmedian(*this, dim, keepdim);
}
std::pair<Tensor, Tensor> Tensor::kthvalue(int64_t k, int64_t dim, bool keepdim) const {
  return colony::kthvalue(*this, k, dim, keepdim);
}
Tensor Tensor::quantile(double q, std::optional<int64_t> dim, bool keepdim, const std::string& interpolation) const {
  return colony::quantile(*this, q, dim, keepdim, interpolation);
}
Tensor Tensor::quantile(const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                        const std::string& interpolation) const {
  return colony::quantile(*this, q, dim, keepdim, interpolation);
}
Tensor Tensor::nanquantile(double q, std::optional<int64_t> dim, bool keepdim, const std::string& interpolation) const {
  return colony::nanquantile(*this, q, dim, keepdim, interpolation);
}
Tensor Tensor::nanquantile(const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                           const std::string& interpolation) const {
  return colony::nanquantile(*this, q, dim, keepdim, interpolation);
}
Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Tensor& src) const {
  return colony::scatter(*this, dim, index, src);
}
Tensor Tensor::scatter(int64_t dim, const Tensor& index, double value) const {
  return colony::scatter(*this, dim, index, value);
}
Tensor Tensor::scatter_reduce(int64_t dim, const Tensor& index, const Tensor& src, const std::string& reduce,
                              bool include_self) const {
  return colony::scatter_reduce(*this, dim, index, src, reduce, include_self);
}
Tensor Tensor::index_fill(int64_t dim, const Tensor& index, double value) const {
  return colony::index_fill(*this, dim, index, value);
}
Tensor Tensor::index_fill(int64_t dim, const Tensor& index, const Tensor& value) const {
  return colony::index_fill(*this, dim, index, value);
}
Tensor Tensor::index_copy(int64_t dim, const Tensor& index, const Tensor& source) const {
  return colony::index_copy(*this, dim, index, source);
}
Tensor Tensor::scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const {
  return colony::scatter_add(*this, dim, index, src);
}
Tensor Tensor::index_add(int64_t dim, const Tensor& index, const Tensor& source, double alpha) const {
  return colony::index_add(*this, dim, index, source, alpha);
}
Tensor Tensor::masked_scatter(const Tensor& mask, const Tensor& source) const {
  return colony::masked_scatter(*this, mask, source);
}
Tensor Tensor::bincount(const Tensor& weights, int64_t minlength) const {
  return colony::bincount(*this, weights, minlength);
}
Tensor Tensor::histc(int64_t bins, double min, double max) const { return colony::histc(*this, bins, min, max); }
Tensor Tensor::nansum(const std::vector<int64_t>& dims, bool keepdim) const { return colony::nansum(*this, dims, keepdim); }
Tensor Tensor::nanmean(const std::vector<int64_t>& dims, bool keepdim) const {
  return colony::nanmean(*this, dims, keepdim);
}
std::pair<Tensor, Tensor> Tensor::sort(int64_t dim, bool descending) const { return colony::sort(*this, dim, descending); }
std::pair<Tensor, Tensor> Tensor::topk(int64_t k, int64_t dim, bool largest, bool sorted) const {
  return colony::topk(*this, k, dim, largest, sorted);
}
Tensor Tensor::sum() const { return colony::sum(*this); }
Tensor Tensor::sum(const std::vector<int64_t>& dims, bool keepdim) const { return colony::sum(*this, dims, keepdim); }
Tensor Tensor::mean() const { return colony::mean(*this); }
Tensor Tensor::mean(const std::vector<int64_t>& dims, bool keepdim) const {
  return colony::mean(*this, dims, keepdim);
}
Tensor Tensor::var(const std::vector<int64_t>& dims, bool unbiased, bool keepdim) const {
  return colony::var(*this, dims, unbiased, keepdim);
}
Tensor Tensor::std(const std::vector<int64_t>& dims, bool unbiased, bool keepdim) const {
  return colony::std(*this, dims, unbiased, keepdim);
}
Tensor Tensor::norm(double p, const std::vector<int64_t>& dims, bool keepdim) const {
  return colony::norm(*this, p, dims, keepdim);
}
Tensor Tensor::max() const { return colony::max(*this); }
Tensor Tensor::min() const { return colony::min(*this); }
std::pair<Tensor, Tensor> Tensor::max(int64_t dim, bool keepdim) const { return colony::max(*this, dim, keepdim); }
std::pair<Tensor, Tensor> Tensor::min(int64_t dim, bool keepdim) const { return colony::min(*this, dim, keepdim); }
Tensor Tensor::amax(const std::vector<int64_t>& dims, bool keepdim) const { return colony::amax(*this, dims, keepdim); }
Tensor Tensor::amin(const std::vector<int64_t>& dims, bool keepdim) const { return colony::amin(*this, dims, keepdim); }
Tensor Tensor::logsumexp(const std::vector<int64_t>& dims, bool keepdim) const {
  return colony::logsumexp(*this, dims, keepdim);
}
Tensor Tensor::argmax(int64_t dim, bool keepdim) const { return colony::argmax(*this, dim, keepdim); }
Tensor Tensor::argmin(int64_t dim, bool keepdim) const { return colony::argmin(*this, dim, keepdim); }
Tensor Tensor::argmax() const { return colony::argmax(colony::reshape(*this, {-1}), 0); }
Tensor Tensor::argmin() const { return colony::argmin(colony::reshape(*this, {-1}), 0); }
Tensor Tensor::argsort(int64_t dim, bool descending) const { return colony::argsort(*this, dim, descending); }
Tensor Tensor::any(const std::vector<int64_t>& dims, bool keepdim) const { return colony::any(*this, dims, keepdim); }
Tensor Tensor::all(const std::vector<int64_t>& dims, bool keepdim) const { return colony::all(*this, dims, keepdim); }
Tensor Tensor::isnan() const { return colony::isnan(*this); }
Tensor Tensor::isinf() const { return colony::isinf(*this); }
Tensor Tensor::isfinite() const { return colony::isfinite(*this); }
Tensor Tensor::matmul(const Tensor& other) const { return colony::matmul(*this, other); }
Tensor Tensor::mm(const Tensor& other) const { return colony::mm(*this, other); }
Tensor Tensor::bmm(const Tensor& other) const { return colony::bmm(*this, other); }
Tensor Tensor::outer(const Tensor& other) const { return colony::outer(*this, other); }
Tensor Tensor::softmax(int64_t dim) const { return colony::softmax(*this, dim); }
Tensor Tensor::log_softmax(int64_t dim) const { return colony::log_softmax(*this, dim); }
Tensor Tensor::index_select(int64_t dim, const Tensor& index) const { return colony::index_select(*this, dim, index); }
Tensor Tensor::gather(int64_t dim, const Tensor& index) const { return colony::gather(*this, dim, index); }
std::vector<Tensor> Tensor::split(int64_t split_size, int64_t dim) const {
  return colony::split(*this, split_size, dim);
}
std::vector<Tensor> Tensor::split_with_sizes(const std::vector<int64_t>& sizes, int64_t dim) const {
  return colony::split_with_sizes(*this, sizes, dim);
}
std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t dim) const { return colony::chunk(*this, chunks, dim); }
Tensor Tensor::repeat(const Shape& repeats) const { return colony::repeat(*this, repeats); }
Tensor Tensor::flip(const std::vector<int64_t>& dims) const { return colony::flip(*this, dims); }
Tensor Tensor::repeat_interleave(int64_t repeats, std::optional<int64_t> dim) const {
  return colony::repeat_interleave(*this, repeats, dim);
}
Tensor Tensor::nonzero() const { return colony::nonzero(*this); }
Tensor Tensor::masked_select(const Tensor& mask) const { return colony::masked_select(*this, mask); }
Tensor Tensor::roll(const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims) const {
  return colony::roll(*this, shifts, dims);
}
std::vector<Tensor> Tensor::unbind(int64_t dim) const { return colony::unbind(*this, dim); }
Tensor Tensor::movedim(int64_t source, int64_t destination) const { return colony::movedim(*this, source, destination); }
Tensor Tensor::unflatten(int64_t dim, const Shape& sizes) const { return colony::unflatten(*this, dim, sizes); }
Tensor Tensor::lerp(const Tensor& end, double weight) const { return colony::lerp(*this, end, weight); }
Tensor Tensor::lerp(const Tensor& end, const Tensor& weight) const { return colony::lerp(*this, end, weight); }
Tensor Tensor::addcmul(const Tensor& tensor1, const Tensor& tensor2, double value) const {
  return colony::addcmul(*this, tensor1, tensor2, value);
}
Tensor Tensor::addcdiv(const Tensor& tensor1, const Tensor& tensor2, double value) const {
  return colony::addcdiv(*this, tensor1, tensor2, value);
}
Tensor Tensor::nan_to_num(std::optional<double> nan, std::optional<double> posinf, std::optional<double> neginf) const {
  return colony::nan_to_num(*this, nan, posinf, neginf);
}
Tensor Tensor::count_nonzero(const std::vector<int64_t>& dims) const { return colony::count_nonzero(*this, dims); }
Tensor Tensor::diagonal(int64_t offset, int64_t dim1, int64_t dim2) const {
  return colony::diagonal(*this, offset, dim1, dim2);
}
Tensor Tensor::unfold(int64_t dim, int64_t size, int64_t step) const { return colony::unfold(*this, dim, size, step); }
Tensor Tensor::as_strided(const Shape& size, const Shape& stride, std::optional<int64_t> storage_offset) const {
  return colony::as_strided(*this, size, stride, storage_offset);
}
Tensor Tensor::diag(int64_t diagonal) const { return colony::diag(*this, diagonal); }
Tensor Tensor::trace() const {
  if (dim() != 2) throw std::invalid_argument("trace: expected a matrix, but got tensor with dim " + std::to_string(dim()));
  return colony::sum(colony::diagonal(*this));
}
Tensor Tensor::logical_not() const { return colony::logical_not(*this); }
Tensor Tensor::logical_and(const Tensor& other) const { return colony::logical_and(*this, other); }
Tensor Tensor::bitwise_left_shift(const Tensor& other) const { return colony::bitwise_left_shift(*this, other); }
Tensor Tensor::bitwise_left_shift(double other) const { return colony::bitwise_left_shift(*this, other); }
Tensor Tensor::bitwise_right_shift(const Tensor& other) const { return colony::bitwise_right_shift(*this, other); }
Tensor Tensor::bitwise_right_shift(double other) const { return colony::bitwise_right_shift(*this, other); }
Tensor Tensor::nextafter(const Tensor& other) const { return colony::nextafter(*this, other); }
std::pair<Tensor, Tensor> Tensor::frexp() const { return colony::frexp(*this); }
Tensor Tensor::logical_or(const Tensor& other) const { return colony::logical_or(*this, other); }
Tensor Tensor::logical_xor(const Tensor& other) const { return colony::logical_xor(*this, other); }

}  // namespace colony
