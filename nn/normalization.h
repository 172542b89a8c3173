// nn::LayerNorm and nn::RMSNorm, with F::layer_norm and F::rms_norm: the front of the fused ops of
// autograd/nn_ops.h (colony::layer_norm / colony::rms_norm), spelled as libtorch spells them; and
// nn::GroupNorm over colony::group_norm (F::group_norm is in nn/functional.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/arg.h"
#include "nn/module.h"

namespace colony::nn {
namespace functional {

// F::layer_norm(x, F::LayerNormFuncOptions({C}).weight(w).bias(b).eps(1e-5)).
struct LayerNormFuncOptions {
  LayerNormFuncOptions(std::vector<int64_t> normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}  // NOLINT
  COLONY_ARG(std::vector<int64_t>, normalized_shape);
  COLONY_ARG(Tensor, weight);  // undefined: 1
  COLONY_ARG(Tensor, bias);    // undefined: 0
  COLONY_ARG(double, eps) = 1e-5;
};
Tensor layer_norm(const Tensor& input, const LayerNormFuncOptions& options);

// F::rms_norm(x, F::RMSNormFuncOptions({C}).weight(w).eps(1e-6)); without eps, the machine epsilon of
// the type accumulated in (float32's for the 16-bit dtypes, float64's for float64), as PyTorch's.
struct RMSNormFuncOptions {
  RMSNormFuncOptions(std::vector<int64_t> normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}  // NOLINT
  COLONY_ARG(std::vector<int64_t>, normalized_shape);
  COLONY_ARG(Tensor, weight);
  COLONY_ARG(std::optional<double>, eps);
};
Tensor rms_norm(const Tensor& input, const RMSNormFuncOptions& options);

}  // namespace functional

struct LayerNormOptions {
  LayerNormOptions(std::vector<int64_t> normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}  // NOLINT
  COLONY_ARG(std::vector<int64_t>, normalized_shape);
  COLONY_ARG(double, eps) = 1e-5;
  // Learnable weight (ones) and, with bias, a learnable bias (zeros), each of normalized_shape.
  COLONY_ARG(bool, elementwise_affine) = true;
  COLONY_ARG(bool, bias) = true;
};

// torch.nn.LayerNorm: parameters "weight" and "bias" (when elementwise_affine, bias when bias).
class LayerNorm : public Module {
  COLONY_CLONEABLE
 public:
  explicit LayerNorm(const LayerNormOptions& options);
  Tensor forward(const Tensor& input) override;
  void reset_parameters();
  std::string extra_repr() const override;

  LayerNormOptions options;
  Tensor weight, bias;  // undefined when not elementwise_affine (bias: or not bias)
};

struct RMSNormOptions {
  RMSNormOptions(std::vector<int64_t> normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}  // NOLINT
  COLONY_ARG(std::vector<int64_t>, normalized_shape);
  COLONY_ARG(std::optional<double>, eps);  // unset: the accumulation type's machine epsilon
  COLONY_ARG(bool, elementwise_affine) = true;
};

// torch.nn.RMSNorm: parameter "weight" (ones) when elementwise_affine.
class RMSNorm : public Module {
  COLONY_CLONEABLE
 public:
  explicit RMSNorm(const RMSNormOptions& options);
  Tensor forward(const Tensor& input) override;
  void reset_parameters();
  std::string extra_repr() const override;

  RMSNormOptions options;
  Tensor weight;
};

struct GroupNormOptions {
  GroupNormOptions(int64_t num_groups, int64_t num_channels) : num_groups_(num_groups), num_channels_(num_channels) {}
  COLONY_ARG(int64_t, num_groups);
  COLONY_ARG(int64_t, num_channels);
  COLONY_ARG(double, eps) = 1e-5;
  // Learnable per-channel weight (ones) and, with bias, bias (zeros).
  COLONY_ARG(bool, affine) = true;
  COLONY_ARG(bool, bias) = true;
};

// torch.nn.GroupNorm: input [N, C, *] with C = num_channels; parameters "weight" and "bias" [C].
class GroupNorm : public Module {
  COLONY_CLONEABLE
 public:
  explicit GroupNorm(const GroupNormOptions& options);
  Tensor forward(const Tensor& input) override;
  void reset_parameters();
  std::string extra_repr() const override;

  GroupNormOptions options;
  Tensor weight, bias;
};

// nn::LocalResponseNorm(LocalResponseNormOptions(2).alpha(1e-4).beta(0.75).k(1.0)): F::local_response_norm
// (nn/functional.h); no parameters. Prints as torch: "LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)".
struct LocalResponseNormOptions {
  LocalResponseNormOptions(int64_t size) : size_(size) {}  // NOLINT
  COLONY_ARG(int64_t, size);
  COLONY_ARG(double, alpha) = 1e-4;
  COLONY_ARG(double, beta) = 0.75;
  COLONY_ARG(double, k) = 1.0;
};

class LocalResponseNorm : public Module {
  COLONY_CLONEABLE
 public:
  explicit LocalResponseNorm(const LocalResponseNormOptions& options) : options(options) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

  LocalResponseNormOptions options;
};

// nn::CrossMapLRN2d(CrossMapLRN2dOptions(size).alpha(1e-4).beta(0.75).k(1)) (torch.nn.CrossMapLRN2d,
// the legacy Lua-torch port): x / (k + alpha / size * s)^beta over 4-D [N, C, H, W], where s sums x^2
// over a window of channels, exactly as torch's forward forms it: channels c - pre_pad + 1 to
// c + pre_pad - 1 (pre_pad = int((size - 1) / 2 + 1), so an even size's window is one short), and,
// as torch's running sum never removes it, channel 0 for every c. Differs from torch on purpose:
// the gradient is the exact gradient of that forward (autograd of the composition); torch's
// hand-written backward uses another window and fails torch.autograd.gradcheck. Prints as torch:
// "CrossMapLRN2d(3, alpha=0.0001, beta=0.75, k=1)" (k as torch's default int prints when integral).
struct CrossMapLRN2dOptions {
  CrossMapLRN2dOptions(int64_t size) : size_(size) {}  // NOLINT
  COLONY_ARG(int64_t, size);
  COLONY_ARG(double, alpha) = 1e-4;
  COLONY_ARG(double, beta) = 0.75;
  COLONY_ARG(double, k) = 1.0;
};

class CrossMapLRN2d : public Module {
  COLONY_CLONEABLE
 public:
  explicit CrossMapLRN2d(const CrossMapLRN2dOptions& options);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

  CrossMapLRN2dOptions options;
};

}  // namespace colony::nn
