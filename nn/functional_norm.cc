// F::group_norm and F::instance_norm: group_norm is colony::group_norm (autograd/nn_ops.h);
// instance_norm is batch_norm over [1, N * C, *], each (sample, channel) a channel of its own, as
// PyTorch computes it.
#include <stdexcept>
#include <string>

#include "autograd/nn_ops.h"
#include "autograd/ops.h"
#include "nn/functional.h"
#include "ops/raw_ops.h"
#include "tensor/grad_mode.h"

namespace colony::nn::functional {
namespace {

// A [C] running statistic repeated for each of n samples: [n * C], a copy batch_norm updates.
Tensor repeated(const Tensor& stat, int64_t n) {
  const int64_t c = stat.size(0);
  return raw::contiguous(raw::reshape(raw::expand(raw::reshape(stat, {1, c}), {n, c}), {n * c}));
}

}  // namespace

Tensor group_norm(const Tensor& input, const GroupNormFuncOptions& o) {
  return colony::group_norm(input, o.num_groups(), o.weight(), o.bias(), o.eps());
}

Tensor instance_norm(const Tensor& input, const InstanceNormFuncOptions& o) {
  if (!input.defined() || input.dim() < 3) {
    throw std::invalid_argument("instance_norm: expected input [N, C, *] with at least one spatial dim, got " +
                                (input.defined() ? shape_str(input.sizes()) : std::string("undefined")));
  }
  if (o.running_mean().defined() != o.running_var().defined()) {
    throw std::invalid_argument("instance_norm: running_mean and running_var must be given together");
  }
  if (!o.use_input_stats()) {
    // Every instance normalized by the running estimates: batch norm in evaluation mode.
    return colony::batch_norm(input, o.weight(), o.bias(), o.running_mean(), o.running_var(), /*training=*/false,
                              o.momentum(), o.eps());
  }
  const int64_t n = input.size(0), c = input.size(1);
  int64_t spatial = 1;
  for (int64_t d = 2; d < input.dim(); ++d) spatial *= input.size(d);
  if (spatial == 1) {
    throw std::invalid_argument("instance_norm: expected more than 1 spatial element when training, got input " +
                                shape_str(input.sizes()));
  }
  for (const Tensor* t : {&o.weight(), &o.bias(), &o.running_mean(), &o.running_var()}) {
    if (t->defined() && (t->dim() != 1 || t->size(0) != c)) {
      throw std::invalid_argument("instance_norm: expected weight, bias, running_mean and running_var of shape [" +
                                  std::to_string(c) + "] (one per channel of input " + shape_str(input.sizes()) +
                                  "), got " + shape_str(t->sizes()));
    }
  }
  Shape flat = input.sizes();
  flat[0] = 1;
  flat[1] = n * c;
  const bool tracks = o.running_mean().defined();
  Tensor mean_rep = tracks ? repeated(o.running_mean(), n) : Tensor();
  Tensor var_rep = tracks ? repeated(o.running_var(), n) : Tensor();
  const Tensor w = o.weight().defined() ? repeat(o.weight(), {n}) : Tensor();
  const Tensor b = o.bias().defined() ? repeat(o.bias(), {n}) : Tensor();
  Tensor y = colony::batch_norm(reshape(input, flat), w, b, mean_rep, var_rep, /*training=*/true, o.momentum(), o.eps());
  if (tracks) {
    // Each running statistic becomes the mean over the batch of its per-sample updates (PyTorch's
    // instance_norm does the same).
    NoGradGuard no_grad;
    Tensor rm = o.running_mean(), rv = o.running_var();
    raw::copy_(rm, raw::mean(raw::reshape(mean_rep, {n, c}), {0}));
    raw::copy_(rv, raw::mean(raw::reshape(var_rep, {n, c}), {0}));
  }
  return reshape(y, input.sizes());
}

// torch's functional, with the channel window's mean taken by a (size, 1) average pooling of x^2
// viewed as [N, 1, C, rest] (torch pools [N, 1, C, H, W...] with a (size, 1, 1) window for more than
// 3 dims: the same windows and sums).
Tensor local_response_norm(const Tensor& input, const LocalResponseNormFuncOptions& o) {
  const int64_t dim = input.dim();
  if (dim < 3) {
    throw std::invalid_argument("Expected 3D or higher dimensionality input (got " + std::to_string(dim) +
                                " dimensions)");
  }
  if (o.size() <= 0) {
    throw std::invalid_argument("kernel size should be greater than zero, but got kH: " + std::to_string(o.size()) +
                                " kW: 1");
  }
  if (input.numel() == 0) return input;
  const int64_t n = input.size(0), c = input.size(1), rest = input.numel() / (n * c);
  Tensor div = colony::reshape(colony::mul(input, input), {n, 1, c, rest});
  div = pad(div, PadFuncOptions({0, 0, o.size() / 2, (o.size() - 1) / 2}));
  div = colony::avg_pool2d(div, Int2(o.size(), 1), Int2(1, 1));
  div = colony::reshape(div, input.sizes());
  div = colony::pow(colony::add(colony::mul(div, o.alpha()), o.k()), o.beta());
  return colony::div(input, div);
}

}  // namespace colony::nn::functional
