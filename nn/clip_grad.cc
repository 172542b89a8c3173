#include "nn/clip_grad.h"

#include <cmath>
#include <sstream>
#include <string>
#include <stdexcept>

#include "tensor/grad_mode.h"
#include "ops/raw_ops.h"

namespace colony::nn::utils {

double get_total_norm(const std::vector<Tensor>& tensors, double norm_type, bool error_if_nonfinite) {
  NoGradGuard no_grad;
  double total = 0;
  // -inf (torch's smallest magnitude) is refused with the other non-positive orders.
  const bool inf_norm = norm_type == INFINITY;
  if (!inf_norm && norm_type <= 0) throw std::invalid_argument("get_total_norm: norm_type must be positive");
  for (const Tensor& g : tensors) {
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
      if (g.numel() == 0) continue;
      const double m = raw::amax(a).item<double>();
      if (std::isnan(m) || m > total) total = m;  // a NaN stays, as torch's max norm keeps it
    } else {
      total += raw::sum(raw::pow(a, norm_type)).item<double>();
    }
  }
  if (!inf_norm) total = std::pow(total, 1.0 / norm_type);
  if (error_if_nonfinite && !std::isfinite(total)) {
    std::ostringstream order;  // as Python prints a float: 2.0, 3.5, inf
    if (inf_norm) {
      order << "inf";
    } else {
      order << norm_type << (norm_type == std::floor(norm_type) ? ".0" : "");
    }
    throw std::runtime_error("The total norm of order " + order.str() +
                             " for gradients from `parameters` is non-finite, so it cannot be clipped. To disable "
                             "this error and scale the gradients by the non-finite norm anyway, set "
                             "`error_if_nonfinite=False`");
  }
  return total;
}

void clip_grads_with_norm_(const std::vector<Tensor>& parameters, double max_norm, double total_norm) {
  NoGradGuard no_grad;
  const double coef = max_norm / (total_norm + 1e-6);
  // torch multiplies by min(coef, 1) whatever it is; a factor of 1 changes no value, so it is skipped.
  // A NaN total gives a NaN coefficient, which torch's clamp keeps: every gradient becomes NaN.
  if (!(coef < 1) && !std::isnan(coef)) return;
  for (const Tensor& p : parameters) {
    Tensor g = p.grad();
    if (g.defined()) raw::binary_(raw::BinaryOp::Mul, g, coef);
  }
}

double clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  std::vector<Tensor> grads;
  grads.reserve(parameters.size());
  for (const Tensor& p : parameters) grads.push_back(p.grad());
  const double total = get_total_norm(grads, norm_type, error_if_nonfinite);
  clip_grads_with_norm_(parameters, max_norm, total);
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
