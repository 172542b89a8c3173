#include "nn/clip_grad.h"

#include <cmath>
#include <stdexcept>

#include "tensor/grad_mode.h"
#include "ops/raw_ops.h"

namespace colony::nn::utils {

double clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type) {
  NoGradGuard no_grad;
  double total = 0;
  bool inf_norm = std::isinf(norm_type);
  if (!inf_norm && norm_type <= 0) throw std::invalid_argument("clip_grad_norm_: norm_type must be positive");
  for (const Tensor& p : parameters) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    if (!inf_norm && norm_type == 2 && (g.dtype() == kFloat32 || g.dtype() == kFloat64)) {
      // The Euclidean norm, the usual case, in the gradient's dtype as PyTorch's foreach norm
      // takes it: g * g and its sum, without the float64 copy, abs and pow of the general route
      // below (four passes and three allocations of twice the gradient's size; docs/benchmarks.md
      // has what it cost the character-level GPT's step).
      total += raw::sum(raw::mul(g, g)).item<double>();
      continue;
    }
    Tensor a = raw::abs(raw::to(g, g.device(), kFloat64));
    if (inf_norm) {
      if (g.numel() > 0) total = std::max(total, raw::amax(a).item<double>());
    } else {
      total += raw::sum(raw::pow(a, norm_type)).item<double>();
    }
  }
  if (!inf_norm) total = std::pow(total, 1.0 / norm_type);
  double coef = max_norm / (total + 1e-6);
  if (coef < 1) {
    for (const Tensor& p : parameters) {
      Tensor g = p.grad();
      if (g.defined()) raw::binary_(raw::BinaryOp::Mul, g, coef);
    }
  }
  return total;
}

void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value) {
  NoGradGuard no_grad;
  for (const Tensor& p : parameters) {
    Tensor g = p.grad();
    if (g.defined()) raw::clamp_(g, -clip_value, clip_value);
  }
}

}  // namespace colony::nn::utils
