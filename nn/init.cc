#include "nn/init.h"

#include <cmath>
#include <stdexcept>

#include "tensor/grad_mode.h"
#include "ops/raw_ops.h"

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

}  // namespace colony::nn::init
