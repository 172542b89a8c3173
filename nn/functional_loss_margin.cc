// The margin, ranking, triplet and likelihood losses of F:: (nn/functional.h): margin_ranking_loss,
// hinge_embedding_loss, soft_margin_loss, multilabel_soft_margin_loss, multi_margin_loss,
// multilabel_margin_loss, triplet_margin_loss, triplet_margin_with_distance_loss, poisson_nll_loss
// and gaussian_nll_loss. Each composes differentiable ops after ATen's (or torch.nn.functional's)
// formula, so its gradient comes from those; the shared checks and the reduction are
// nn/loss_util.h's.
#include <cmath>
#include <stdexcept>
#include <string>

#include "autograd/autocast.h"
#include "autograd/ops.h"
#include "nn/functional.h"
#include "nn/loss_util.h"

namespace colony::nn::functional {
namespace {

using detail::check_floating;
using detail::check_reduction;
using detail::fail;
using detail::reduce;

constexpr double kPi = 3.14159265358979323846;

Tensor zeros_scalar(const Tensor& like) { return raw::zeros({}, TensorOptions(like.dtype()).device(like.device())); }

// The class-index target of multi_margin_loss: [N] for input [N, C], 0-d or [1] for input [C].
void check_multi_target(const char* op, const Tensor& input, const Tensor& target) {
  if (input.dim() < 1 || input.dim() > 2) fail(op, "expected a 1-D [C] or 2-D [N, C] input, got " + shape_str(input.sizes()));
  if (target.dtype() != kInt64) fail(op, std::string("expected an int64 target, got ") + dtype_name(target.dtype()));
  const int64_t n = input.dim() == 2 ? input.size(0) : 1;
  if (target.numel() != n || target.dim() > 1) {
    fail(op, "target tensor should be 1-D with size equal to the number of input samples (batch size). Expected target size [" +
                 std::to_string(n) + "], but got " + shape_str(target.sizes()) + ". Input has shape " +
                 shape_str(input.sizes()) + ".");
  }
  const int64_t c = input.size(-1);
  if (target.numel() > 0 && (amin(target).item<int64_t>() < 0 || amax(target).item<int64_t>() >= c)) {
    fail(op, "target out of range: class indices must be in [0, " + std::to_string(c) + ")");
  }
}

}  // namespace

Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           const MarginRankingLossFuncOptions& options) {
  const char* op = "margin_ranking_loss";
  check_reduction(op, options.reduction());
  if (input1.dim() != input2.dim() || input1.dim() != target.dim()) {
    fail(op, "All input tensors should have same dimension but got sizes: input1: " + shape_str(input1.sizes()) +
                 ", input2: " + shape_str(input2.sizes()) + ", target: " + shape_str(target.sizes()));
  }
  const Tensor a = autocast::cast(autocast::Op::margin_ranking_loss, input1),
               b = autocast::cast(autocast::Op::margin_ranking_loss, input2);
  // max(0, -target (x1 - x2) + margin)
  Tensor loss = clamp(add(mul(neg(target), sub(a, b)), options.margin()), 0.0, std::nullopt);
  return reduce(loss, options.reduction());
}

Tensor hinge_embedding_loss(const Tensor& input_arg, const Tensor& target, const HingeEmbeddingLossFuncOptions& options) {
  const char* op = "hinge_embedding_loss";
  check_reduction(op, options.reduction());
  const Tensor input = autocast::cast(autocast::Op::hinge_embedding_loss, input_arg);
  const Tensor zero = zeros_scalar(input);
  // ATen's form: max(0, margin - x) where target != 1, plus x where target != -1 (both for any
  // other target value).
  Tensor margin_part = where(ne(target, 1.0), clamp(rsub(input, options.margin()), 0.0, std::nullopt), zero);
  Tensor self_part = where(ne(target, -1.0), input, zero);
  return reduce(add(margin_part, self_part), options.reduction());
}

Tensor soft_margin_loss(const Tensor& input_arg, const Tensor& target, const SoftMarginLossFuncOptions& options) {
  const char* op = "soft_margin_loss";
  check_reduction(op, options.reduction());
  const Tensor input = autocast::cast(autocast::Op::soft_margin_loss, input_arg);
  // log(1 + exp(-y x)), as ATen computes it.
  return reduce(log1p(exp(neg(mul(input, target)))), options.reduction());
}

Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target,
                                   const MultilabelSoftMarginLossFuncOptions& options) {
  const char* op = "multilabel_soft_margin_loss";
  check_reduction(op, options.reduction());
  check_floating(op, "input", input);
  if (input.dim() == 0) fail(op, "expected an input with a class dim, got a 0-d tensor");
  // -(y log sigmoid(x) + (1 - y) log sigmoid(-x)), weighted, averaged over the class (last) dim.
  Tensor loss = neg(add(mul(target, log_sigmoid(input)), mul(rsub(target, 1.0), log_sigmoid(neg(input)))));
  if (options.weight().defined()) loss = mul(loss, options.weight());
  const int64_t class_dim = input.dim() - 1;
  loss = div(sum(loss, {class_dim}), static_cast<double>(input.size(class_dim)));
  return reduce(loss, options.reduction());
}

Tensor multi_margin_loss(const Tensor& input_arg, const Tensor& target, const MultiMarginLossFuncOptions& options) {
  const char* op = "multi_margin_loss";
  check_reduction(op, options.reduction());
  if (options.p() != 1 && options.p() != 2) fail(op, "only p == 1 and p == 2 supported, got " + std::to_string(options.p()));
  check_floating(op, "input", input_arg);
  check_multi_target(op, input_arg, target);
  const Tensor input = autocast::cast(autocast::Op::multi_margin_loss, input_arg);
  const int64_t c = input.size(-1);
  if (options.weight().defined() && (options.weight().dim() != 1 || options.weight().numel() != c)) {
    fail(op, "inconsistent weight size, expected " + std::to_string(c) + " but got " + shape_str(options.weight().sizes()));
  }
  // Per sample: sum over classes j != y of max(0, margin - x[y] + x[j])^p (times weight[y]), / C.
  Tensor x = input.dim() == 1 ? unsqueeze(input, 0) : input;
  Tensor y = reshape(target, {-1, 1});
  Tensor z = clamp(add(sub(x, gather(x, 1, y)), options.margin()), 0.0, std::nullopt);
  if (options.p() == 2) z = square(z);
  if (options.weight().defined()) z = mul(z, unsqueeze(index_select(options.weight(), 0, reshape(target, {-1})), 1));
  Tensor not_target = ne(unsqueeze(arange(static_cast<double>(c), TensorOptions(kInt64).device(x.device())), 0), y);
  Tensor loss = div(sum(where(not_target, z, zeros_scalar(z)), {1}), static_cast<double>(c));
  if (input.dim() == 1) loss = squeeze(loss, 0);
  return reduce(loss, options.reduction());
}

Tensor multilabel_margin_loss(const Tensor& input_arg, const Tensor& target,
                              const MultilabelMarginLossFuncOptions& options) {
  const char* op = "multilabel_margin_loss";
  check_reduction(op, options.reduction());
  check_floating(op, "input", input_arg);
  if (input_arg.dim() < 1 || input_arg.dim() > 2) fail(op, "expected a 1-D [C] or 2-D [N, C] input, got " + shape_str(input_arg.sizes()));
  if (target.sizes() != input_arg.sizes()) {
    fail(op, "inconsistent target size: " + shape_str(target.sizes()) + " for input of size: " + shape_str(input_arg.sizes()));
  }
  if (target.dtype() != kInt64) fail(op, std::string("expected an int64 target, got ") + dtype_name(target.dtype()));
  const int64_t c = input_arg.size(-1);
  if (target.numel() > 0 && (amin(target).item<int64_t>() < -1 || amax(target).item<int64_t>() >= c)) {
    fail(op, "target out of range: class indices must be in [0, " + std::to_string(c) + "), -1 ending a sample's list");
  }
  const Tensor input = autocast::cast(autocast::Op::multilabel_margin_loss, input_arg);
  Tensor x = input.dim() == 1 ? unsqueeze(input, 0) : input;
  Tensor t = target.dim() == 1 ? unsqueeze(target, 0) : target;
  // Each sample's targets are its entries up to the first -1. count[n, j]: how often class j is
  // among them (ATen loops over the list, so a repeated class counts again); the classes not
  // among them are the non-targets.
  Tensor listed = to(cumprod(to(ne(t, -1.0), t.device(), kInt64), 1), t.device(), kBool);
  Tensor classes = where(listed, t, static_cast<double>(c));  // a past-the-end class for the rest
  Tensor count = narrow(sum(one_hot(classes, c + 1), {1}), 1, 0, c);                  // [N, C] int64
  Tensor is_target = gt(count, 0.0);
  // sum over targets j and non-targets i of max(0, 1 - (x[j] - x[i])), / C.
  Tensor pair = clamp(rsub(sub(unsqueeze(x, 2), unsqueeze(x, 1)), 1.0), 0.0, std::nullopt);  // [N, j, i]
  Tensor weight = mul(unsqueeze(to(count, x.device(), x.dtype()), 2),
                      unsqueeze(to(logical_not(is_target), x.device(), x.dtype()), 1));
  Tensor loss = div(sum(mul(pair, weight), {1, 2}), static_cast<double>(c));
  if (input.dim() == 1) loss = squeeze(loss, 0);
  return reduce(loss, options.reduction());
}

Tensor triplet_margin_with_distance_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                                         const TripletMarginWithDistanceLossFuncOptions& options) {
  const char* op = "triplet_margin_with_distance_loss";
  check_reduction(op, options.reduction());
  if (anchor.dim() != positive.dim() || anchor.dim() != negative.dim()) {
    fail(op, "The anchor, positive, and negative tensors are expected to have the same number of dimensions, but got: anchor " +
                 std::to_string(anchor.dim()) + "D, positive " + std::to_string(positive.dim()) + "D, and negative " +
                 std::to_string(negative.dim()) + "D inputs");
  }
  if (!(options.margin() > 0)) fail(op, "margin must be greater than 0, got " + std::to_string(options.margin()));
  auto distance = [&](const Tensor& a, const Tensor& b) {
    return options.distance_function() ? (*options.distance_function())(a, b) : pairwise_distance(a, b);
  };
  Tensor d_pos = distance(anchor, positive), d_neg = distance(anchor, negative);
  if (options.swap()) d_neg = minimum(d_neg, distance(positive, negative));  // the harder negative
  return reduce(clamp(add(sub(d_pos, d_neg), options.margin()), 0.0, std::nullopt), options.reduction());
}

Tensor triplet_margin_loss(const Tensor& anchor_arg, const Tensor& positive_arg, const Tensor& negative_arg,
                           const TripletMarginLossFuncOptions& options) {
  const char* op = "triplet_margin_loss";
  check_reduction(op, options.reduction());
  if (anchor_arg.dim() != positive_arg.dim() || anchor_arg.dim() != negative_arg.dim()) {
    fail(op, "The anchor, positive, and negative tensors are expected to have the same number of dimensions, but got: anchor " +
                 std::to_string(anchor_arg.dim()) + "D, positive " + std::to_string(positive_arg.dim()) +
                 "D, and negative " + std::to_string(negative_arg.dim()) + "D inputs");
  }
  const Tensor anchor = autocast::cast(autocast::Op::triplet_margin_loss, anchor_arg),
               positive = autocast::cast(autocast::Op::triplet_margin_loss, positive_arg),
               negative = autocast::cast(autocast::Op::triplet_margin_loss, negative_arg);
  const PairwiseDistanceFuncOptions distance = PairwiseDistanceFuncOptions().p(options.p()).eps(options.eps());
  Tensor d_pos = pairwise_distance(anchor, positive, distance), d_neg = pairwise_distance(anchor, negative, distance);
  if (options.swap()) d_neg = minimum(d_neg, pairwise_distance(positive, negative, distance));
  return reduce(clamp(add(sub(d_pos, d_neg), options.margin()), 0.0, std::nullopt), options.reduction());
}

Tensor poisson_nll_loss(const Tensor& input_arg, const Tensor& target, const PoissonNLLLossFuncOptions& options) {
  const char* op = "poisson_nll_loss";
  check_reduction(op, options.reduction());
  const Tensor input = autocast::cast(autocast::Op::poisson_nll_loss, input_arg);
  // log_input: exp(x) - y x; otherwise x - y log(x + eps). full adds Stirling's approximation of
  // log(y!) where y > 1: y log y - y + log(2 pi y) / 2.
  Tensor loss = options.log_input() ? sub(exp(input), mul(target, input))
                                    : sub(input, mul(target, colony::log(add(input, options.eps()))));
  if (options.full()) {
    // The term and its gradient where target > 1; 0 elsewhere. (torch's gradient is NaN at a
    // target of exactly 0, from 0 * log(0) behind its masked_fill; here it is 0.)
    Tensor above = gt(detach(target), 1.0);
    Tensor y = where(above, target, 2.0);  // keeps log away from y <= 1, which the mask drops
    Tensor stirling = add(sub(mul(y, colony::log(y)), y), mul(colony::log(mul(y, 2 * kPi)), 0.5));
    loss = add(loss, where(above, stirling, 0.0));
  }
  return reduce(loss, options.reduction());
}

Tensor gaussian_nll_loss(const Tensor& input, const Tensor& target, const Tensor& var_arg,
                         const GaussianNLLLossFuncOptions& options) {
  const char* op = "gaussian_nll_loss";
  check_reduction(op, options.reduction());
  if (any(lt(detach(var_arg), 0.0)).item<bool>()) fail(op, "var has negative entry/entries");
  Tensor var = var_arg;
  if (var.sizes() != input.sizes()) {
    // torch's homoscedastic cases: var one dim short of input (a trailing 1 is added), or of
    // input's rank with exactly one size differing (which must be 1 to broadcast).
    const Shape lead(input.sizes().begin(), input.sizes().end() - (input.dim() > 0 ? 1 : 0));
    int64_t mismatched = 0;
    if (var.dim() == input.dim()) {
      for (int64_t d = 0; d < input.dim(); ++d) mismatched += var.size(d) != input.size(d) ? var.size(d) : 0;
    }
    if (input.dim() > 0 && var.sizes() == lead) {
      var = unsqueeze(var, -1);
    } else if (!(var.dim() == input.dim() && mismatched == 1)) {
      fail(op, "var is of incorrect size: " + shape_str(var_arg.sizes()) + " for input " + shape_str(input.sizes()) +
                   " (expected input's shape, input's shape without its last dim, or input's with one dim of size 1)");
    }
  }
  // The clamp at eps changes the value only: torch clamps a clone in place under no_grad, so the
  // gradient reaches var as if unclamped.
  var = add(var, detach(sub(clamp(var, options.eps(), std::nullopt), var)));
  Tensor loss = mul(add(colony::log(var), div(square(sub(input, target)), var)), 0.5);
  if (options.full()) loss = add(loss, 0.5 * std::log(2 * kPi));
  return reduce(loss, options.reduction());
}

Tensor gaussian_nll_loss(const Tensor& input, const Tensor& target, double var, const GaussianNLLLossFuncOptions& options) {
  if (var < 0) fail("gaussian_nll_loss", "var has negative entry/entries");
  return gaussian_nll_loss(input, target, full_like(input, var), options);
}

}  // namespace colony::nn::functional
