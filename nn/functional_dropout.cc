// The dropout variants of F:: beyond F::dropout (nn/functional.cc): channel dropout (dropout1d,
// dropout2d, dropout3d: torch's feature_dropout), SELU's alpha dropout and its channel form, and
// gumbel_softmax. Each draws its mask with raw::bernoulli and applies it with differentiable
// products, so the gradient is the mask's (scaled) and flows only through kept elements.
#include <cmath>
#include <stdexcept>
#include <string>

#include "autograd/ops.h"
#include "log/log.h"
#include "nn/functional.h"

namespace colony::nn::functional {
namespace {

void check_probability(const char* op, double p) {
  if (!(p >= 0 && p <= 1)) {
    throw std::invalid_argument(std::string(op) + ": dropout probability has to be between 0 and 1, but got " +
                                std::to_string(p));
  }
}

// A keep-mask of Bernoulli(1 - p) draws in `input`'s dtype: one per element, or, for channel
// dropout, one per (n, c) broadcast over the rest of [N, C, *].
Tensor keep_mask(const Tensor& input, double p, bool per_channel, Generator* gen) {
  Shape shape = input.sizes();
  if (per_channel) {
    for (size_t d = 2; d < shape.size(); ++d) shape[d] = 1;
  }
  return raw::bernoulli(raw::full(shape, 1.0 - p, TensorOptions(input.dtype()).device(input.device())), gen);
}

// torch's _dropout_impl with feature_dropout: input * mask / (1 - p), the mask per channel.
Tensor channel_dropout(const Tensor& input, double p, bool training, Generator* gen) {
  if (!training || p == 0 || input.numel() == 0) return input;
  if (p == 1) return mul(input, raw::zeros({}, TensorOptions(input.dtype()).device(input.device())));
  return mul(input, raw::mul(keep_mask(input, p, true, gen), 1.0 / (1.0 - p)));
}

// Writes `out` into `input` (recorded) when inplace is asked for, as F::dropout does.
Tensor maybe_inplace(const Tensor& input, const Tensor& out, bool inplace) {
  if (!inplace || out.is_same(input)) return out;
  Tensor self = input;
  self.mul_(0.0).add_(out);
  return self;
}

// dropout1d/2d/3d: the batched rank is `spatial + 2`; an unbatched input (one dim fewer) is run as
// a batch of one.
Tensor feature_dropout(const char* op, const Tensor& input, int64_t spatial, const DropoutFuncOptions& options,
                       Generator* gen) {
  check_probability(op, options.p());
  const int64_t batched = spatial + 2;
  if (input.dim() != batched && input.dim() != batched - 1) {
    throw std::invalid_argument(std::string(op) + ": Expected " + std::to_string(batched - 1) + "D or " +
                                std::to_string(batched) + "D input, but received a " + std::to_string(input.dim()) +
                                "D input");
  }
  const bool unbatched = input.dim() == batched - 1;
  Tensor x = unbatched ? unsqueeze(input, 0) : input;
  Tensor out = channel_dropout(x, options.p(), options.training(), gen);
  if (unbatched && !out.is_same(x)) out = squeeze(out, 0);
  if (out.is_same(x)) out = input;
  return maybe_inplace(input, out, options.inplace());
}

// torch's alpha dropout (ATen's _dropout_impl with alpha): with alpha' = SELU's scale * alpha and
// a = 1 / sqrt((alpha'^2 p + 1)(1 - p)),
//   b = (keep - 1) alpha' a + alpha' a p;  out = x (keep a) + b,
// so a kept element is a x + alpha' a p and a dropped one alpha' a (p - 1): mean 0 and variance 1
// are kept for SELU's outputs.
Tensor alpha_dropout_impl(const Tensor& input, double p, bool training, bool per_channel, Generator* gen) {
  if (!training || p == 0 || input.numel() == 0) return input;
  if (p == 1) return mul(input, raw::zeros({}, TensorOptions(input.dtype()).device(input.device())));
  constexpr double kAlpha = 1.7580993408473766;  // -SELU's negative saturation (scale * alpha), as ATen's
  const double a = 1.0 / std::sqrt((kAlpha * kAlpha * p + 1) * (1 - p));
  Tensor keep = keep_mask(input, p, per_channel, gen);
  Tensor b = raw::add(raw::mul(raw::add(keep, -1.0), kAlpha * a), kAlpha * a * p);
  return add(mul(input, raw::mul(keep, a)), b);
}

}  // namespace

Tensor dropout1d(const Tensor& input, const DropoutFuncOptions& options, Generator* gen) {
  return feature_dropout("dropout1d", input, 1, options, gen);
}

Tensor dropout2d(const Tensor& input, const DropoutFuncOptions& options, Generator* gen) {
  check_probability("dropout2d", options.p());
  if (input.dim() == 3) {
    // torch's historical rule: a 3-D input is [N, C, L], dropped per (n, c) (1-D channel dropout).
    log::warning("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior is "
                 "desired - input is interpreted as shape (N, C, L). Use dropout1d for that.");
    return feature_dropout("dropout2d", input, 1, options, gen);
  }
  return feature_dropout("dropout2d", input, 2, options, gen);
}

Tensor dropout3d(const Tensor& input, const DropoutFuncOptions& options, Generator* gen) {
  return feature_dropout("dropout3d", input, 3, options, gen);
}

Tensor alpha_dropout(const Tensor& input, const AlphaDropoutFuncOptions& options, Generator* gen) {
  check_probability("alpha_dropout", options.p());
  return maybe_inplace(input, alpha_dropout_impl(input, options.p(), options.training(), false, gen),
                       options.inplace());
}

Tensor feature_alpha_dropout(const Tensor& input, const AlphaDropoutFuncOptions& options, Generator* gen) {
  check_probability("feature_alpha_dropout", options.p());
  if (input.dim() < 2) {
    throw std::invalid_argument("feature_alpha_dropout: expected an input [N, C, *] with at least 2 dims, got " +
                                shape_str(input.sizes()));
  }
  return maybe_inplace(input, alpha_dropout_impl(input, options.p(), options.training(), true, gen),
                       options.inplace());
}

Tensor gumbel_softmax(const Tensor& logits, const GumbelSoftmaxFuncOptions& options, Generator* gen) {
  if (!is_floating(logits.dtype())) {
    throw std::invalid_argument(std::string("gumbel_softmax: expected floating logits, got ") + dtype_name(logits.dtype()));
  }
  if (!(options.tau() > 0)) throw std::invalid_argument("gumbel_softmax: tau must be positive, got " + std::to_string(options.tau()));
  // Gumbel(0, 1) = -log(E) for E ~ Exponential(1) = -log(1 - U), U uniform in [0, 1) (torch's
  // -empty_like().exponential_().log()).
  Tensor u = raw::rand(logits.sizes(), TensorOptions(logits.dtype()).device(logits.device()), gen);
  Tensor gumbels = neg(colony::log(neg(log1p(neg(u)))));
  Tensor y_soft = colony::softmax(div(add(logits, gumbels), options.tau()), options.dim());
  if (!options.hard()) return y_soft;
  // Straight-through: the one-hot forward, the soft sample's gradient.
  const int64_t d = wrap_dim(options.dim(), std::max<int64_t>(logits.dim(), 1), "gumbel_softmax");
  Tensor index = argmax(detach(y_soft), d, true);
  Tensor y_hard = scatter(raw::zeros_like(y_soft), d, index, 1.0);
  return add(sub(y_hard, detach(y_soft)), y_soft);
}

}  // namespace colony::nn::functional
