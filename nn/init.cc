#include "nn/init.h"

#include <cmath>
#include <stdexcept>

#include <algorithm>
#include <vector>

#include "autograd/linalg.h"
#include "log/log.h"
#include "ops/raw_ops.h"
#include "tensor/grad_mode.h"

namespace colony::nn::init {

double calculate_gain(Nonlinearity n, double param) {
  switch (n) {
    case Nonlinearity::Linear:
    case Nonlinearity::Conv:
    case Nonlinearity::Sigmoid: return 1.0;
    case Nonlinearity::Tanh: return 5.0 / 3.0;
    case Nonlinearity::ReLU: return std::sqrt(2.0);
    case Nonlinearity::LeakyReLU: return std::sqrt(2.0 / (1.0 + param * param));
  }
  return 1.0;
}

std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& t) {
  if (t.dim() < 2) {
    throw std::invalid_argument("init: fan in and fan out can not be computed for a tensor with fewer than 2 dimensions, got " +
                                shape_str(t.sizes()));
  }
  int64_t receptive = 1;
  for (int64_t d = 2; d < t.dim(); ++d) receptive *= t.size(d);
  return {t.size(1) * receptive, t.size(0) * receptive};
}

namespace {
thread_local bool skipping_init = false;
}  // namespace

SkipInitGuard::SkipInitGuard() : previous_(skipping_init) { skipping_init = true; }
SkipInitGuard::~SkipInitGuard() { skipping_init = previous_; }
bool SkipInitGuard::active() { return skipping_init; }

// The three functions every other one fills through; each returns early under a SkipInitGuard.
Tensor& uniform_(Tensor& t, double a, double b, Generator* gen) {
  if (SkipInitGuard::active()) return t;
  NoGradGuard g;
  raw::uniform_(t, a, b, gen);
  return t;
}

Tensor& normal_(Tensor& t, double mean, double std, Generator* gen) {
  if (SkipInitGuard::active()) return t;
  NoGradGuard g;
  raw::normal_(t, mean, std, gen);
  return t;
}

Tensor& constant_(Tensor& t, double value) {
  if (SkipInitGuard::active()) return t;
  NoGradGuard g;
  raw::fill_(t, value);
  return t;
}

Tensor& zeros_(Tensor& t) { return constant_(t, 0.0); }
Tensor& ones_(Tensor& t) { return constant_(t, 1.0); }

namespace {
double kaiming_std(const Tensor& t, double a, FanMode mode, Nonlinearity n) {
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  int64_t fan = mode == FanMode::FanIn ? fan_in : fan_out;
  if (fan == 0) throw std::invalid_argument("init: cannot initialize a tensor with zero elements in its fan");
  return calculate_gain(n, a) / std::sqrt(static_cast<double>(fan));
}
}  // namespace

Tensor& kaiming_uniform_(Tensor& t, double a, FanMode mode, Nonlinearity n, Generator* gen) {
  double bound = std::sqrt(3.0) * kaiming_std(t, a, mode, n);
  return uniform_(t, -bound, bound, gen);
}

Tensor& kaiming_normal_(Tensor& t, double a, FanMode mode, Nonlinearity n, Generator* gen) {
  return normal_(t, 0.0, kaiming_std(t, a, mode, n), gen);
}

Tensor& xavier_uniform_(Tensor& t, double gain, Generator* gen) {
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  double bound = gain * std::sqrt(6.0 / static_cast<double>(fan_in + fan_out));
  return uniform_(t, -bound, bound, gen);
}

Tensor& xavier_normal_(Tensor& t, double gain, Generator* gen) {
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  return normal_(t, 0.0, gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out)), gen);
}

namespace {

// Writes host values (row-major, t's shape) into t, whatever its device, dtype and strides.
void assign(Tensor& t, const std::vector<double>& values) {
  Tensor host = raw::from_vector(values, t.shape(), TensorOptions(kFloat64));
  raw::copy_(t, raw::to(host, t.device(), t.dtype()));
}

double norm_cdf(double x) { return (1.0 + std::erf(x / std::sqrt(2.0))) / 2.0; }

}  // namespace

Tensor& trunc_normal_(Tensor& t, double mean, double std, double a, double b, Generator* gen) {
  if (SkipInitGuard::active()) return t;
  if (mean < a - 2 * std || mean > b + 2 * std) {
    log::warning("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of values may be "
                 "incorrect.");
  }
  NoGradGuard g;
  const double l = norm_cdf((a - mean) / std), u = norm_cdf((b - mean) / std);
  raw::uniform_(t, 2 * l - 1, 2 * u - 1, gen);
  raw::copy_(t, raw::unary(raw::UnaryOp::Erfinv, t));
  raw::binary_(raw::BinaryOp::Mul, t, std * std::sqrt(2.0));
  raw::binary_(raw::BinaryOp::Add, t, mean);
  raw::clamp_(t, a, b);
  return t;
}

Tensor& orthogonal_(Tensor& t, double gain, Generator* gen) {
  if (t.dim() < 2) throw std::invalid_argument("orthogonal_: Only tensors with 2 or more dimensions are supported");
  if (SkipInitGuard::active() || t.numel() == 0) return t;
  NoGradGuard g;
  const int64_t rows = t.size(0), cols = t.numel() / rows;
  Tensor flattened = raw::empty({rows, cols}, TensorOptions(t.dtype()).device(t.device()));
  raw::normal_(flattened, 0, 1, gen);
  if (rows < cols) flattened = raw::transpose(flattened, 0, 1);
  auto [q, r] = linalg::qr(flattened);
  // Q's columns times the signs of R's diagonal: the factorization is then unique, and Q uniform
  // over the orthogonal matrices (torch's correction; a zero pivot zeroes its column, as torch's).
  q = raw::mul(q, raw::unary(raw::UnaryOp::Sign, raw::diagonal(r)));
  if (rows < cols) q = raw::transpose(q, 0, 1);
  raw::copy_(t, raw::reshape(q, t.shape()));
  raw::binary_(raw::BinaryOp::Mul, t, gain);
  return t;
}

Tensor& sparse_(Tensor& t, double sparsity, double std, Generator* gen) {
  if (t.dim() != 2) throw std::invalid_argument("sparse_: Only tensors with 2 dimensions are supported");
  if (SkipInitGuard::active()) return t;
  NoGradGuard g;
  const int64_t rows = t.size(0), cols = t.size(1);
  const auto num_zeros = std::min<int64_t>(rows, static_cast<int64_t>(std::ceil(sparsity * static_cast<double>(rows))));
  raw::normal_(t, 0, std, gen);
  std::vector<uint8_t> keep(static_cast<size_t>(rows * cols), 1);
  for (int64_t c = 0; c < cols; ++c) {
    Tensor perm = raw::randperm(rows, TensorOptions(kInt64), gen);
    const int64_t* idx = perm.data_ptr<int64_t>();
    for (int64_t i = 0; i < num_zeros; ++i) keep[static_cast<size_t>(idx[i] * cols + c)] = 0;
  }
  std::vector<double> scale(keep.begin(), keep.end());
  Tensor mask = raw::to(raw::from_vector(scale, t.shape(), TensorOptions(kFloat64)), t.device(), t.dtype());
  raw::binary_(raw::BinaryOp::Mul, t, mask);
  return t;
}

Tensor& dirac_(Tensor& t, int64_t groups) {
  const int64_t dims = t.dim();
  if (dims < 3 || dims > 5) throw std::invalid_argument("dirac_: Only tensors with 3, 4, or 5 dimensions are supported");
  if (groups < 1 || t.size(0) % groups != 0) throw std::invalid_argument("dirac_: dim 0 must be divisible by groups");
  if (SkipInitGuard::active()) return t;
  NoGradGuard g;
  const int64_t out_per_group = t.size(0) / groups, min_dim = std::min(out_per_group, t.size(1));
  std::vector<double> values(static_cast<size_t>(t.numel()), 0.0);
  // Row-major strides of t's shape.
  std::vector<int64_t> stride(static_cast<size_t>(dims), 1);
  for (int64_t d = dims - 2; d >= 0; --d) stride[d] = stride[d + 1] * t.size(d + 1);
  int64_t centre = 0;
  for (int64_t d = 2; d < dims; ++d) centre += (t.size(d) / 2) * stride[d];
  for (int64_t grp = 0; grp < groups; ++grp) {
    for (int64_t d = 0; d < min_dim; ++d) values[static_cast<size_t>((grp * out_per_group + d) * stride[0] + d * stride[1] + centre)] = 1;
  }
  assign(t, values);
  return t;
}

Tensor& eye_(Tensor& t) {
  if (t.dim() != 2) throw std::invalid_argument("eye_: Only tensors with 2 dimensions are supported");
  if (SkipInitGuard::active()) return t;
  NoGradGuard g;
  const int64_t rows = t.size(0), cols = t.size(1);
  std::vector<double> values(static_cast<size_t>(rows * cols), 0.0);
  for (int64_t i = 0; i < std::min(rows, cols); ++i) values[static_cast<size_t>(i * cols + i)] = 1;
  assign(t, values);
  return t;
}

}  // namespace colony::nn::init
