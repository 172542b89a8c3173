// Factory functions in namespace colony: the ops/raw_ops.h factories plus TensorOptions::requires_grad,
// so a user writes colony::randn({3, 4}, TensorOptions().requires_grad(true)).
#pragma once

#include <initializer_list>
#include <optional>
#include <vector>

#include "ops/raw_ops.h"

namespace colony {

namespace detail {
inline Tensor with_grad(Tensor t, const TensorOptions& opts) {
  if (opts.requires_grad()) t.requires_grad_(true);
  return t;
}
}  // namespace detail

inline Tensor empty(const Shape& shape, const TensorOptions& opts = {}) {
  return detail::with_grad(raw::empty(shape, opts), opts);
}
inline Tensor empty_strided(const Shape& shape, const Shape& strides, const TensorOptions& opts = {}) {
  return detail::with_grad(raw::empty_strided(shape, strides, opts), opts);
}
inline Tensor zeros(const Shape& shape, const TensorOptions& opts = {}) {
  return detail::with_grad(raw::zeros(shape, opts), opts);
}
inline Tensor ones(const Shape& shape, const TensorOptions& opts = {}) {
  return detail::with_grad(raw::ones(shape, opts), opts);
}
inline Tensor full(const Shape& shape, double value, const TensorOptions& opts = {}) {
  return detail::with_grad(raw::full(shape, value, opts), opts);
}
// The *_like functions copy shape, dtype and device; the result never requires grad (as in PyTorch
// without requires_grad=True).
inline Tensor empty_like(const Tensor& t) { return raw::empty_like(t); }
inline Tensor zeros_like(const Tensor& t) { return raw::zeros_like(t); }
inline Tensor ones_like(const Tensor& t) { return raw::ones_like(t); }
inline Tensor full_like(const Tensor& t, double value) { return raw::full_like(t, value); }
inline Tensor scalar_tensor(double value, const TensorOptions& opts = {}) {
  return detail::with_grad(raw::scalar_tensor(value, opts), opts);
}
inline Tensor arange(double start, double end, double step = 1.0, std::optional<TensorOptions> opts = {}) {
  Tensor t = raw::arange(start, end, step, opts);
  return opts ? detail::with_grad(t, *opts) : t;
}
inline Tensor arange(double end, std::optional<TensorOptions> opts = {}) {
  Tensor t = raw::arange(end, opts);
  return opts ? detail::with_grad(t, *opts) : t;
}
inline Tensor linspace(double start, double end, int64_t steps, const TensorOptions& opts = {}) {
  return detail::with_grad(raw::linspace(start, end, steps, opts), opts);
}
// torch.logspace: base ** linspace(start, end, steps), computed in float64 and rounded once to the
// dtype (torch computes in the dtype; float32 results may differ from its by one rounding).
inline Tensor logspace(double start, double end, int64_t steps, double base = 10.0, const TensorOptions& opts = {}) {
  TensorOptions wide = TensorOptions(kFloat64).device(opts.device());
  Tensor exponents = raw::linspace(start, end, steps, wide);
  Tensor out = raw::pow(raw::full_like(exponents, base), exponents);
  return detail::with_grad(raw::to(out, opts.device(), opts.dtype()), opts);
}
inline Tensor eye(int64_t n, int64_t m = -1, const TensorOptions& opts = {}) {
  return detail::with_grad(raw::eye(n, m, opts), opts);
}
// Window functions (torch.hann_window, ...; ops/raw_ops.h says how they are computed): periodic by
// default, floating dtypes only. hann is hamming with alpha = beta = 0.5.
inline Tensor hann_window(int64_t window_length, bool periodic = true, const TensorOptions& opts = {}) {
  return detail::with_grad(raw::hann_window(window_length, periodic, opts), opts);
}
inline Tensor hann_window(int64_t window_length, const TensorOptions& opts) { return hann_window(window_length, true, opts); }
inline Tensor hamming_window(int64_t window_length, bool periodic = true, double alpha = 0.54, double beta = 0.46,
                             const TensorOptions& opts = {}) {
  return detail::with_grad(raw::hamming_window(window_length, periodic, alpha, beta, opts), opts);
}
inline Tensor hamming_window(int64_t window_length, const TensorOptions& opts) {
  return hamming_window(window_length, true, 0.54, 0.46, opts);
}
inline Tensor blackman_window(int64_t window_length, bool periodic = true, const TensorOptions& opts = {}) {
  return detail::with_grad(raw::blackman_window(window_length, periodic, opts), opts);
}
inline Tensor blackman_window(int64_t window_length, const TensorOptions& opts) {
  return blackman_window(window_length, true, opts);
}
inline Tensor bartlett_window(int64_t window_length, bool periodic = true, const TensorOptions& opts = {}) {
  return detail::with_grad(raw::bartlett_window(window_length, periodic, opts), opts);
}
inline Tensor bartlett_window(int64_t window_length, const TensorOptions& opts) {
  return bartlett_window(window_length, true, opts);
}
// I0(beta sqrt(1 - ((k - a) / a)^2)) / I0(beta), a = (N - 1) / 2.
inline Tensor kaiser_window(int64_t window_length, bool periodic = true, double beta = 12.0,
                            const TensorOptions& opts = {}) {
  return detail::with_grad(raw::kaiser_window(window_length, periodic, beta, opts), opts);
}
inline Tensor kaiser_window(int64_t window_length, const TensorOptions& opts) {
  return kaiser_window(window_length, true, 12.0, opts);
}
// dtype from T unless opts names one: from_vector<int64_t>(...) is int64, <float> float32, <int> int32.
template <typename T>
Tensor from_vector(const std::vector<T>& values, const Shape& shape = {}, std::optional<TensorOptions> opts = {}) {
  Tensor t = raw::from_vector<T>(values, shape, opts);
  return opts ? detail::with_grad(t, *opts) : t;
}
inline Tensor tensor(std::initializer_list<double> values, const TensorOptions& opts = {}) {
  return detail::with_grad(raw::tensor(values, opts), opts);
}
inline Tensor tensor(std::initializer_list<std::initializer_list<double>> rows, const TensorOptions& opts = {}) {
  return detail::with_grad(raw::tensor(rows, opts), opts);
}
inline Tensor from_blob(void* data, const Shape& shape, DType dtype, Device device = kCPU,
                        std::function<void(void*)> deleter = {}) {
  return raw::from_blob(data, shape, dtype, device, std::move(deleter));
}
inline Tensor from_blob(void* data, const Shape& shape, const Shape& strides, DType dtype, Device device = kCPU,
                        std::function<void(void*)> deleter = {}) {
  return raw::from_blob(data, shape, strides, dtype, device, std::move(deleter));
}

// Comparisons of whole tensors (not differentiable): same shape and every element within
// atol + rtol * |b| / exactly equal, as torch.allclose / torch.equal.
inline bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false) {
  return raw::allclose(a, b, rtol, atol, equal_nan);
}
inline bool equal(const Tensor& a, const Tensor& b) { return raw::equal(a, b); }

inline Tensor rand(const Shape& shape, const TensorOptions& opts = {}, Generator* gen = nullptr) {
  return detail::with_grad(raw::rand(shape, opts, gen), opts);
}
inline Tensor randn(const Shape& shape, const TensorOptions& opts = {}, Generator* gen = nullptr) {
  return detail::with_grad(raw::randn(shape, opts, gen), opts);
}
inline Tensor randint(int64_t low, int64_t high, const Shape& shape, const TensorOptions& opts = TensorOptions(kInt64),
                      Generator* gen = nullptr) {
  return raw::randint(low, high, shape, opts, gen);
}
inline Tensor randperm(int64_t n, const TensorOptions& opts = TensorOptions(kInt64), Generator* gen = nullptr) {
  return raw::randperm(n, opts, gen);
}
// torch.rand_like / randn_like / randint_like: t's shape, dtype and device (randint_like's values in
// [low, high)); samples, never requiring grad.
inline Tensor rand_like(const Tensor& t, Generator* gen = nullptr) {
  return raw::rand(t.sizes(), TensorOptions(t.dtype()).device(t.device()), gen);
}
inline Tensor randn_like(const Tensor& t, Generator* gen = nullptr) {
  return raw::randn(t.sizes(), TensorOptions(t.dtype()).device(t.device()), gen);
}
inline Tensor randint_like(const Tensor& t, int64_t low, int64_t high, Generator* gen = nullptr) {
  return raw::randint(low, high, t.sizes(), TensorOptions(t.dtype()).device(t.device()), gen);
}
// Not differentiable (a sample), as in PyTorch.
inline Tensor bernoulli(const Tensor& p, Generator* gen = nullptr) { return raw::bernoulli(p, gen); }

}  // namespace colony
