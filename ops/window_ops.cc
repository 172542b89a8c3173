// The window functions of torch.signal's classic set (torch.hann_window, ...), composed of arange and
// elementwise ops as ATen's TensorFactories.cpp composes them, so no kernel of their own.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "ops/raw_ops.h"

namespace colony::raw {
namespace {

constexpr double kPi = 3.14159265358979323846;

// torch's checks, in its order and words. Returns the window for the lengths that need no formula
// (0: empty, 1: [1]), or an undefined tensor.
Tensor check_window(const char* op, int64_t window_length, const TensorOptions& opts) {
  if (!is_floating(opts.dtype())) {
    throw std::invalid_argument(std::string(op) + " expects floating point dtypes, got: " + dtype_name(opts.dtype()));
  }
  if (window_length < 0) {
    throw std::invalid_argument(std::string(op) + " requires non-negative window_length, got window_length=" +
                                std::to_string(window_length));
  }
  TensorOptions plain = TensorOptions(opts.dtype()).device(opts.device());
  if (window_length == 0) return empty({0}, plain);
  if (window_length == 1) return ones({1}, plain);
  return Tensor();
}

// 0, 1, ..., n - 1 in the dtype of opts, on its device.
Tensor positions(int64_t n, const TensorOptions& opts) {
  return arange(static_cast<double>(n), TensorOptions(opts.dtype()).device(opts.device()));
}

// The periodic window of length L is the symmetric window of L + 1 without its last value.
Tensor drop_last_if(bool periodic, const Tensor& window) {
  return periodic ? narrow(window, 0, 0, window.size(0) - 1) : window;
}

}  // namespace

Tensor hamming_window(int64_t window_length, bool periodic, double alpha, double beta, const TensorOptions& opts) {
  if (Tensor w = check_window("hamming_window", window_length, opts); w.defined()) return w;
  const int64_t n = periodic ? window_length + 1 : window_length;
  // alpha - beta cos(2 pi k / (n - 1))
  Tensor w = unary(UnaryOp::Cos, mul(positions(n, opts), kPi * 2.0 / static_cast<double>(n - 1)));
  return drop_last_if(periodic, add(mul(w, -beta), alpha));
}

Tensor hann_window(int64_t window_length, bool periodic, const TensorOptions& opts) {
  if (Tensor w = check_window("hann_window", window_length, opts); w.defined()) return w;
  return hamming_window(window_length, periodic, 0.5, 0.5, opts);
}

Tensor blackman_window(int64_t window_length, bool periodic, const TensorOptions& opts) {
  if (Tensor w = check_window("blackman_window", window_length, opts); w.defined()) return w;
  const int64_t n = periodic ? window_length + 1 : window_length;
  // 0.42 - 0.5 cos(2 pi k / (n - 1)) + 0.08 cos(4 pi k / (n - 1))
  const Tensor x = mul(positions(n, opts), kPi / static_cast<double>(n - 1));
  const Tensor w = sub(mul(unary(UnaryOp::Cos, mul(x, 4.0)), 0.08), mul(unary(UnaryOp::Cos, mul(x, 2.0)), 0.5));
  return drop_last_if(periodic, add(w, 0.42));
}

Tensor bartlett_window(int64_t window_length, bool periodic, const TensorOptions& opts) {
  if (Tensor w = check_window("bartlett_window", window_length, opts); w.defined()) return w;
  const int64_t n = periodic ? window_length + 1 : window_length;
  // 2k / (n - 1) up to the middle, 2 - 2k / (n - 1) after it
  Tensor w = mul(positions(n, opts), 2.0 / static_cast<double>(n - 1));
  const int64_t first_half = ((n - 1) >> 1) + 1;
  Tensor second_half = narrow(w, 0, first_half, n - first_half);
  binary_(BinaryOp::Mul, second_half, -1.0);
  binary_(BinaryOp::Add, second_half, 2.0);
  return drop_last_if(periodic, w);
}

Tensor kaiser_window(int64_t window_length, bool periodic, double beta, const TensorOptions& opts) {
  if (Tensor w = check_window("kaiser_window", window_length, opts); w.defined()) return w;
  const int64_t n = periodic ? window_length + 1 : window_length;
  // i0(beta sqrt(|1 - ((k - a) / a)^2|)) / i0(beta), a = (n - 1) / 2, from the positions in the
  // dtype, computed in float32 for the 16-bit dtypes (ATen's opmath_t) and rounded once.
  const DType dtype = opts.dtype();
  const bool widen = dtype == kFloat16 || dtype == kBFloat16;
  Tensor k = positions(n, opts);
  if (widen) k = to(k, opts.device(), kFloat32);
  const double a = static_cast<double>(n - 1) / 2.0;
  const Tensor r = binary(BinaryOp::Div, add(k, -a), a);
  const Tensor s = unary(UnaryOp::Sqrt, abs(binary(BinaryOp::Sub, 1.0, mul(r, r))));
  const Tensor i0_beta = unary(UnaryOp::I0, full({}, beta, TensorOptions(k.dtype()).device(k.device())));
  Tensor w = div(unary(UnaryOp::I0, mul(s, beta)), i0_beta);
  if (widen) w = to(w, opts.device(), dtype);
  return drop_last_if(periodic, w);
}

}  // namespace colony::raw
