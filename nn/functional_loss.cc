// The losses of F:: (nn/functional.h). cross_entropy and nll_loss over index targets without a
// weight are the fused op of autograd/nn_ops.h (one kernel each way: the GPT training loop's
// path); everything else composes differentiable ops, so gradients come from those ops' formulas,
// except where PyTorch's gradient differs from the formula's at the edges (binary_cross_entropy at
// inputs 0 and 1, the clamped norms of cosine_similarity), which says so where it is done.
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/autocast.h"
#include "autograd/nn_ops.h"
#include "autograd/ops.h"
#include "nn/functional.h"
#include "nn/loss_util.h"

namespace colony::nn::functional {
namespace {

using detail::check_broadcasts_to;
using detail::check_floating;
using detail::check_reduction;
using detail::check_same_device;
using detail::check_same_shape;
using detail::fail;
using detail::reduce;
using detail::zero_like_scalar;


raw::LossReduction fused_reduction(Reduction r) {
  return r == Reduction::None ? raw::LossReduction::None
         : r == Reduction::Sum ? raw::LossReduction::Sum
                               : raw::LossReduction::Mean;
}

// ---- class-index targets -------------------------------------------------------------------------

void check_class_target(const char* op, const Tensor& input, const Tensor& target) {
  if (input.dim() < 1) fail(op, "input must have a class dimension, got a 0-d tensor");
  if (target.dtype() != kInt64 && target.dtype() != kInt32) {
    fail(op, std::string("expected class-index targets of dtype int64 or int32, got ") + dtype_name(target.dtype()));
  }
  int64_t n = input.dim() == 1 ? 1 : input.size(0);
  Shape expected;
  if (input.dim() >= 2) {
    expected.push_back(n);
    for (int64_t d = 2; d < input.dim(); ++d) expected.push_back(input.size(d));
  }
  if (target.sizes() != expected) {
    fail(op, "expected target of shape " + shape_str(expected) + " for input " + shape_str(input.sizes()) + ", got " +
                 shape_str(target.sizes()));
  }
  check_same_device(op, "target", input, target);
}

int64_t class_dim(const Tensor& input) { return input.dim() == 1 ? 0 : 1; }

// A per-class weight: one floating value per class, on the input's device.
void check_class_weight(const char* op, const Tensor& input, const Tensor& weight) {
  if (!weight.defined()) return;
  const int64_t classes = input.size(class_dim(input));
  if (weight.dim() != 1 || weight.numel() != classes) {
    fail(op, "weight tensor should be defined either for all " + std::to_string(classes) +
                 " classes or no classes but got weight tensor of shape: " + shape_str(weight.sizes()));
  }
  check_floating(op, "weight", weight);
  check_same_device(op, "weight", input, weight);
}

// Moves the class dim last and flattens: [N, C, d...] -> [N*d..., C]; targets to [N*d...] int64.
std::pair<Tensor, Tensor> as_rows(const Tensor& input, const Tensor& target) {
  Tensor rows, targets;
  if (input.dim() == 1) {
    rows = unsqueeze(input, 0);
    targets = unsqueeze(target, 0);
  } else if (input.dim() == 2) {
    rows = input;
    targets = target;
  } else {
    std::vector<int64_t> perm = {0};
    for (int64_t d = 2; d < input.dim(); ++d) perm.push_back(d);
    perm.push_back(1);
    rows = reshape(permute(input, perm), {-1, input.size(1)});
    targets = reshape(target, {-1});
  }
  if (targets.dtype() != kInt64) targets = raw::to(targets, targets.device(), kInt64);
  return {rows, targets};
}

// The fused loss over [rows, C] and int64 targets, shaped like target for Reduction::None.
Tensor fused_loss(const Tensor& input, const Tensor& target, const raw::CrossEntropyOptions& o) {
  auto [rows, targets] = as_rows(input, target);
  Tensor loss = colony::cross_entropy_loss(rows, targets, o);
  return o.reduction == raw::LossReduction::None ? reshape(loss, target.sizes()) : loss;
}

// The fused kernel's check, for the composed path: every target a class or ignore_index. Reads
// the targets on the host (a synchronization on CUDA; the weighted path is not the fast one).
void check_target_range(const char* op, const Tensor& targets, int64_t classes, int64_t ignore_index) {
  const Tensor host = raw::to(targets, kCPU, kInt64);
  const int64_t* t = host.data_ptr<int64_t>();
  for (int64_t i = 0; i < host.numel(); ++i) {
    if (t[i] != ignore_index && (t[i] < 0 || t[i] >= classes)) {
      throw std::out_of_range(std::string(op) + ": target " + std::to_string(t[i]) + " is out of bounds for " +
                              std::to_string(classes) + " classes");
    }
  }
}

// -weight[t] logp[t] per row (0 where t is ignore_index), plus label smoothing's
// -sum_c weight[c] logp[c] (PyTorch's cross_entropy_loss_label_smoothing); Mean divides both by
// the sum of the counted targets' weights, as PyTorch's weighted nll_loss.
Tensor weighted_class_loss(const char* op, const Tensor& input, const Tensor& target, const Tensor& weight_arg,
                           int64_t ignore_index, double label_smoothing, bool log_probs, Reduction reduction) {
  auto [rows, targets] = as_rows(input, target);
  const int64_t classes = rows.size(1);
  check_target_range(op, targets, classes, ignore_index);
  const Tensor logp = log_probs ? rows : colony::log_softmax(rows, 1);
  const Tensor weight = to(weight_arg, logp.device(), logp.dtype());
  const Tensor ignored = eq(targets, static_cast<double>(ignore_index));
  const Tensor safe = masked_fill(targets, ignored, 0.0);  // any class: its terms are zeroed below
  const Tensor target_weight = masked_fill(index_select(weight, 0, safe), ignored, 0.0);
  const Tensor picked = squeeze(gather(logp, 1, unsqueeze(safe, 1)), 1);
  Tensor nll = neg(mul(picked, target_weight));
  Tensor smooth;
  if (label_smoothing > 0) smooth = masked_fill(neg(sum(mul(logp, unsqueeze(weight, 0)), {1})), ignored, 0.0);
  auto combine = [&](const Tensor& n, const Tensor& s) {
    if (!s.defined()) return n;
    return add(mul(n, 1.0 - label_smoothing), mul(s, label_smoothing / static_cast<double>(classes)));
  };
  switch (reduction) {
    case Reduction::None: {
      const Tensor per_row = combine(nll, smooth);
      return reshape(per_row, target.sizes());
    }
    case Reduction::Sum: return combine(sum(nll), smooth.defined() ? sum(smooth) : Tensor());
    case Reduction::Mean: {
      const Tensor total_weight = sum(target_weight);
      return combine(div(sum(nll), total_weight), smooth.defined() ? div(sum(smooth), total_weight) : Tensor());
    }
    case Reduction::BatchMean: break;
  }
  throw std::logic_error("weighted_class_loss: BatchMean was refused before");
}

// Class-probability targets (PyTorch's cross_entropy_loss_prob_target): -sum_c w[c] t[c] logp[c]
// per sample, t mixed with the uniform distribution by label_smoothing; Mean divides by the
// number of samples (numel / C), whatever the weights.
Tensor probability_target_loss(const Tensor& input_arg, const Tensor& target_arg, const CrossEntropyFuncOptions& o) {
  const char* op = "cross_entropy";
  if (!is_floating(target_arg.dtype())) {
    fail(op, std::string("expected floating point type for target with class probabilities, got ") +
                 dtype_name(target_arg.dtype()));
  }
  if (o.ignore_index() >= 0) fail(op, "ignore_index is not supported for floating point target (class probabilities)");
  check_same_device(op, "target", input_arg, target_arg);
  check_class_weight(op, input_arg, o.weight());
  const Tensor input = autocast::cast(autocast::Op::cross_entropy, input_arg);
  const int64_t dim = class_dim(input), classes = input.size(dim);
  const Tensor logp = colony::log_softmax(input, dim);
  Tensor target = to(autocast::cast(autocast::Op::cross_entropy, target_arg), logp.device(), logp.dtype());
  const double eps = o.label_smoothing();
  if (eps > 0) target = add(mul(target, 1.0 - eps), eps / static_cast<double>(classes));
  Tensor terms = mul(logp, target);
  if (o.weight().defined()) {
    Shape view_shape(static_cast<size_t>(input.dim()), 1);
    view_shape[static_cast<size_t>(dim)] = classes;
    terms = mul(terms, reshape(to(o.weight(), logp.device(), logp.dtype()), view_shape));
  }
  switch (o.reduction()) {
    case Reduction::None: return neg(sum(terms, {dim}));
    case Reduction::Sum: return neg(sum(terms));
    case Reduction::Mean: return div(neg(sum(terms)), static_cast<double>(input.numel() / std::max<int64_t>(classes, 1)));
    case Reduction::BatchMean: break;
  }
  throw std::logic_error("probability_target_loss: BatchMean was refused before");
}

// ---- elementwise helpers --------------------------------------------------------------------------


// `value` (computed without a graph) carrying the gradient d value / d x = gx: value + (x - x)·gx.
// x - detach(x) is exactly 0 for finite x, so the value is unchanged, and the product's gradient
// is gx. For the places where PyTorch's gradient formula is not the derivative of the clamped
// forward (it stays finite where the forward is clamped).
Tensor with_gradient(const Tensor& value, const Tensor& x, const Tensor& gx) {
  if (!x.requires_grad()) return value;
  return add(value, mul(sub(x, detach(x)), gx));
}

}  // namespace

// ---- class losses ----------------------------------------------------------------------------------

Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossFuncOptions& options) {
  const char* op = "nll_loss";
  check_reduction(op, options.reduction());
  check_class_target(op, input, target);
  check_class_weight(op, input, options.weight());
  if (options.weight().defined()) {
    return weighted_class_loss(op, autocast::cast(autocast::Op::nll_loss, input), target, options.weight(),
                               options.ignore_index(), 0.0, /*log_probs=*/true, options.reduction());
  }
  raw::CrossEntropyOptions o;
  o.ignore_index = options.ignore_index();
  o.reduction = fused_reduction(options.reduction());
  o.log_probs = true;
  return fused_loss(input, target, o);
}

Tensor cross_entropy(const Tensor& input, const Tensor& target, const CrossEntropyFuncOptions& options) {
  const char* op = "cross_entropy";
  check_reduction(op, options.reduction());
  const double eps = options.label_smoothing();
  if (eps < 0 || eps > 1) fail(op, "label_smoothing must be in [0, 1], got " + std::to_string(eps));
  if (input.dim() >= 1 && target.sizes() == input.sizes()) return probability_target_loss(input, target, options);
  check_class_target(op, input, target);
  check_class_weight(op, input, options.weight());
  if (options.weight().defined()) {
    return weighted_class_loss(op, autocast::cast(autocast::Op::cross_entropy, input), target, options.weight(),
                               options.ignore_index(), eps, /*log_probs=*/false, options.reduction());
  }
  raw::CrossEntropyOptions o;
  o.ignore_index = options.ignore_index();
  o.reduction = fused_reduction(options.reduction());
  o.label_smoothing = eps;
  return fused_loss(input, target, o);
}

// ---- regression losses -------------------------------------------------------------------------

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  check_reduction("mse_loss", reduction);
  return colony::mse_loss(input, target, fused_reduction(reduction));
}

Tensor mse_loss(const Tensor& input, const Tensor& target, const MSELossFuncOptions& options) {
  return functional::mse_loss(input, target, options.reduction());
}

Tensor l1_loss(const Tensor& input_arg, const Tensor& target_arg, const L1LossFuncOptions& options) {
  const char* op = "l1_loss";
  check_reduction(op, options.reduction());
  check_same_shape(op, input_arg, target_arg);
  const Tensor input = autocast::cast(autocast::Op::l1_loss, input_arg),
               target = autocast::cast(autocast::Op::l1_loss, target_arg);
  return reduce(abs(sub(input, target)), options.reduction());
}

Tensor smooth_l1_loss(const Tensor& input_arg, const Tensor& target_arg, const SmoothL1LossFuncOptions& options) {
  const char* op = "smooth_l1_loss";
  check_reduction(op, options.reduction());
  check_same_shape(op, input_arg, target_arg);
  const double beta = options.beta();
  if (!(beta >= 0)) fail(op, "beta must be >= 0 (PyTorch: does not support negative values for beta), got " + std::to_string(beta));
  const Tensor input = autocast::cast(autocast::Op::smooth_l1_loss, input_arg),
               target = autocast::cast(autocast::Op::smooth_l1_loss, target_arg);
  const Tensor d = sub(input, target), ad = abs(d);
  if (beta == 0) return reduce(ad, options.reduction());
  const Tensor loss = where(lt(ad, beta), mul(mul(d, d), 0.5 / beta), sub(ad, 0.5 * beta));
  return reduce(loss, options.reduction());
}

Tensor huber_loss(const Tensor& input_arg, const Tensor& target_arg, const HuberLossFuncOptions& options) {
  const char* op = "huber_loss";
  check_reduction(op, options.reduction());
  check_same_shape(op, input_arg, target_arg);
  const double delta = options.delta();
  if (!(delta > 0)) fail(op, "delta must be > 0 (PyTorch: does not support non-positive values for delta), got " + std::to_string(delta));
  const Tensor input = autocast::cast(autocast::Op::huber_loss, input_arg),
               target = autocast::cast(autocast::Op::huber_loss, target_arg);
  const Tensor d = sub(input, target), ad = abs(d);
  const Tensor loss = where(lt(ad, delta), mul(mul(d, d), 0.5), mul(sub(ad, 0.5 * delta), delta));
  return reduce(loss, options.reduction());
}

// ---- binary classification ----------------------------------------------------------------------

Tensor binary_cross_entropy(const Tensor& input_arg, const Tensor& target_arg,
                            const BinaryCrossEntropyFuncOptions& options) {
  const char* op = "binary_cross_entropy";
  check_reduction(op, options.reduction());
  if (input_arg.device().is_cuda() && is_autocast_enabled(DeviceType::CUDA)) {
    fail(op,
         "F::binary_cross_entropy and nn::BCELoss are unsafe to autocast (CUDA). Many models use a sigmoid layer "
         "right before the binary cross entropy layer. In this case, combine the two layers using "
         "F::binary_cross_entropy_with_logits or nn::BCEWithLogitsLoss, which are safe to autocast");
  }
  if (input_arg.sizes() != target_arg.sizes()) {
    fail(op, "target size " + shape_str(target_arg.sizes()) + " is different to the input size " +
                 shape_str(input_arg.sizes()) + "; they must be the same");
  }
  check_same_device(op, "target", input_arg, target_arg);
  check_floating(op, "input", input_arg);
  check_floating(op, "target", target_arg);
  check_broadcasts_to(op, "weight", options.weight(), input_arg.sizes());
  check_same_device(op, "weight", input_arg, options.weight());
  const Tensor x_in = autocast::cast(autocast::Op::binary_cross_entropy, input_arg);
  // 16-bit inputs compute in float32, the result in their dtype: in float16 the 1e-12 below is 0,
  // and the gradient's 1 / 0 times the (x - x) = 0 of with_gradient would make the loss NaN.
  const bool widen = x_in.dtype() == kFloat16 || x_in.dtype() == kBFloat16;
  const DType compute = widen ? kFloat32 : x_in.dtype();
  const Tensor x = to(x_in, x_in.device(), compute),
               y = to(autocast::cast(autocast::Op::binary_cross_entropy, target_arg), x.device(), compute);
  const Tensor xd = detach(x), yd = detach(y);
  if (xd.numel() > 0 && (min(xd).item<double>() < 0 || max(xd).item<double>() > 1)) {
    fail(op, "all elements of input should be between 0 and 1");
  }
  // PyTorch's forward: each log clamped to >= -100, so input 0 or 1 gives a finite loss.
  const Tensor log_x = clamp(log(xd), -100.0, std::nullopt), log_1mx = clamp(log1p(neg(xd)), -100.0, std::nullopt);
  Tensor loss = neg(add(mul(yd, log_x), mul(rsub(yd, 1.0), log_1mx)));
  // PyTorch's gradients (binary_cross_entropy_backward and its target backward), not the clamped
  // forward's derivative, which is 0 * inf = NaN where a sigmoid saturated to exactly 0 or 1.
  // ATen's EPSILON here is a float: 1e-12 rounded to float32 (9.9999999600e-13), which moves a
  // saturated gradient by 4e-9 relative; the float keeps it equal to torch's.
  constexpr double kEpsilon = static_cast<double>(1e-12f);
  loss = with_gradient(loss, x, div(sub(xd, yd), clamp(mul(xd, rsub(xd, 1.0)), kEpsilon, std::nullopt)));
  loss = with_gradient(loss, y, sub(log_1mx, log_x));
  if (options.weight().defined()) loss = mul(loss, to(options.weight(), x.device(), x.dtype()));
  const Tensor out = reduce(loss, options.reduction());
  return widen ? to(out, out.device(), x_in.dtype()) : out;
}

Tensor binary_cross_entropy_with_logits(const Tensor& input_arg, const Tensor& target_arg,
                                        const BinaryCrossEntropyWithLogitsFuncOptions& options) {
  const char* op = "binary_cross_entropy_with_logits";
  check_reduction(op, options.reduction());
  if (input_arg.sizes() != target_arg.sizes()) {
    fail(op, "target size " + shape_str(target_arg.sizes()) + " must be the same as input size " +
                 shape_str(input_arg.sizes()));
  }
  check_same_device(op, "target", input_arg, target_arg);
  check_floating(op, "input", input_arg);
  check_floating(op, "target", target_arg);
  check_broadcasts_to(op, "weight", options.weight(), input_arg.sizes());
  check_broadcasts_to(op, "pos_weight", options.pos_weight(), input_arg.sizes());
  check_same_device(op, "weight", input_arg, options.weight());
  check_same_device(op, "pos_weight", input_arg, options.pos_weight());
  auto f32 = [](const Tensor& t) { return autocast::cast(autocast::Op::binary_cross_entropy_with_logits, t); };
  const Tensor x = f32(input_arg), y = to(f32(target_arg), x.device(), x.dtype());
  // log_sigmoid(x) = min(x, 0) - log1p(exp(-|x|)): no overflow for any x. minimum() splits the
  // gradient at x = 0 as PyTorch's log_sigmoid_backward gives it (sigmoid(-0) = 1/2).
  Tensor log_sigmoid = sub(minimum(x, zero_like_scalar(x)), log1p(exp(neg(abs(x)))));
  if (options.pos_weight().defined()) {
    // PyTorch folds pos_weight into the log-sigmoid term: l = 1 + (pos_weight - 1) target.
    const Tensor pos_weight = to(f32(options.pos_weight()), x.device(), x.dtype());
    log_sigmoid = mul(log_sigmoid, add(mul(sub(pos_weight, 1.0), y), 1.0));
  }
  Tensor loss = sub(mul(rsub(y, 1.0), x), log_sigmoid);
  if (options.weight().defined()) loss = mul(loss, to(f32(options.weight()), x.device(), x.dtype()));
  return reduce(loss, options.reduction());
}

// ---- distributions and embeddings ---------------------------------------------------------------

Tensor kl_div(const Tensor& input_arg, const Tensor& target_arg, const KLDivFuncOptions& options) {
  const char* op = "kl_div";
  check_floating(op, "input", input_arg);
  check_floating(op, "target", target_arg);
  check_same_device(op, "target", input_arg, target_arg);
  broadcast_shapes(input_arg.sizes(), target_arg.sizes(), op);
  const Tensor input = autocast::cast(autocast::Op::kl_div, input_arg),
               target = autocast::cast(autocast::Op::kl_div, target_arg);
  Tensor loss;
  if (options.log_target()) {
    loss = mul(exp(target), sub(target, input));
  } else {
    // xlogy(target, target) - target input: 0 where target is 0 (log of 1 there, so neither the
    // value nor the gradient meets log(0); PyTorch's xlogy gives the target a NaN gradient there).
    const Tensor safe = where(eq(target, 0.0), 1.0, target);
    loss = sub(mul(target, log(safe)), mul(target, input));
  }
  if (options.reduction() == Reduction::BatchMean) {
    const Tensor total = sum(loss);
    return input.dim() == 0 ? total : div(total, static_cast<double>(input.size(0)));
  }
  return reduce(loss, options.reduction());
}

Tensor cosine_similarity(const Tensor& x1_arg, const Tensor& x2_arg, const CosineSimilarityFuncOptions& options) {
  const char* op = "cosine_similarity";
  check_floating(op, "x1", x1_arg);
  check_floating(op, "x2", x2_arg);
  check_same_device(op, "x2", x1_arg, x2_arg);
  const Shape shape = broadcast_shapes(x1_arg.sizes(), x2_arg.sizes(), op);
  const int64_t dim = wrap_dim(options.dim(), static_cast<int64_t>(shape.size()), op);
  const Tensor x1 = expand(autocast::cast(autocast::Op::cosine_similarity, x1_arg), shape),
               x2 = expand(autocast::cast(autocast::Op::cosine_similarity, x2_arg), shape);
  const double eps = options.eps();
  // Each norm clamped to >= eps for its value only: PyTorch clamps them in place under no_grad,
  // so the gradient flows through the unclamped norm. n - detach(n) + eps is eps exactly, with
  // n's gradient.
  auto clamped_norm = [&](const Tensor& x) {
    const Tensor n = norm(x, 2.0, {dim}, /*keepdim=*/true);
    return where(lt(n, eps), add(sub(n, detach(n)), eps), n);
  };
  return sum(mul(div(x1, clamped_norm(x1)), div(x2, clamped_norm(x2))), {dim});
}

Tensor cosine_embedding_loss(const Tensor& x1_arg, const Tensor& x2_arg, const Tensor& target,
                             const CosineEmbeddingLossFuncOptions& options) {
  const char* op = "cosine_embedding_loss";
  check_reduction(op, options.reduction());
  if (target.dim() > 1) fail(op, "0D or 1D target tensor expected, multi-target not supported, got target " + shape_str(target.sizes()));
  const int64_t input_dims = target.dim() + 1;
  if (x1_arg.dim() != input_dims || x2_arg.dim() != input_dims) {
    fail(op, std::to_string(target.dim()) + "D target tensor expects " + std::to_string(input_dims) +
                 "D input tensors, but found inputs with sizes " + shape_str(x1_arg.sizes()) + " and " +
                 shape_str(x2_arg.sizes()));
  }
  if (x1_arg.sizes() != x2_arg.sizes()) {
    fail(op, "x1 " + shape_str(x1_arg.sizes()) + " and x2 " + shape_str(x2_arg.sizes()) + " must have the same shape");
  }
  if (target.dim() == 1 && target.size(0) != x1_arg.size(0)) {
    fail(op, "target " + shape_str(target.sizes()) + " must have one entry per row of the inputs " + shape_str(x1_arg.sizes()));
  }
  check_floating(op, "x1", x1_arg);
  check_floating(op, "x2", x2_arg);
  check_same_device(op, "x2", x1_arg, x2_arg);
  check_same_device(op, "target", x1_arg, target);
  const Tensor x1 = autocast::cast(autocast::Op::cosine_embedding_loss, x1_arg),
               x2 = autocast::cast(autocast::Op::cosine_embedding_loss, x2_arg);
  const int64_t d = target.dim();
  constexpr double kEpsilon = 1e-12;  // ATen's EPSILON in cosine_embedding_loss
  const Tensor dot = sum(mul(x1, x2), {d});
  const Tensor denom = sqrt(mul(add(sum(mul(x1, x1), {d}), kEpsilon), add(sum(mul(x2, x2), {d}), kEpsilon)));
  const Tensor cos = div(dot, denom);
  const Tensor zero = zero_like_scalar(cos);
  const Tensor positive = where(eq(target, 1.0), rsub(cos, 1.0), zero);
  const Tensor negative = where(eq(target, -1.0), clamp(sub(cos, options.margin()), 0.0, std::nullopt), zero);
  return reduce(add(positive, negative), options.reduction());
}

Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, const PairwiseDistanceFuncOptions& options) {
  const char* op = "pairwise_distance";
  check_floating(op, "x1", x1);
  check_floating(op, "x2", x2);
  check_same_device(op, "x2", x1, x2);
  const Shape shape = broadcast_shapes(x1.sizes(), x2.sizes(), op);
  if (shape.empty()) fail(op, "expected inputs with at least one dim, got two 0-d tensors");
  const int64_t last = static_cast<int64_t>(shape.size()) - 1;
  return norm(add(sub(x1, x2), options.eps()), options.p(), {last}, options.keepdim());
}

}  // namespace colony::nn::functional
