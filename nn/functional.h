// nn::functional (used as F:: in user code): the stateless layer math. Everything here is
// differentiable; the layers in this folder are thin modules over these functions.
#pragma once

#include <optional>
#include <vector>

#include "nn/options.h"
#include "tensor/random.h"
#include "tensor/tensor.h"

namespace colony::nn::functional {

enum class Reduction { Mean, Sum, None };

// y = x W^T + b; x [..., in], weight [out, in], bias [out] (optional).
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor());
Tensor relu(const Tensor& input);
Tensor sigmoid(const Tensor& input);
Tensor tanh(const Tensor& input);
// Zeroes each element with probability p and scales the rest by 1/(1-p) while training; the
// identity otherwise.
Tensor dropout(const Tensor& input, double p = 0.5, bool training = true, Generator* gen = nullptr);
Tensor softmax(const Tensor& input, int64_t dim);
Tensor log_softmax(const Tensor& input, int64_t dim);
Tensor flatten(const Tensor& input, int64_t start_dim = 1, int64_t end_dim = -1);

struct Conv2dFuncOptions {
  COLONY_ARG(Size2, stride) = 1;
  COLONY_ARG(Size2, padding) = 0;
  COLONY_ARG(Size2, dilation) = 1;
  COLONY_ARG(int64_t, groups) = 1;
};
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
              const Conv2dFuncOptions& options = {});

struct MaxPool2dFuncOptions {
  MaxPool2dFuncOptions(Size2 kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  COLONY_ARG(Size2, kernel_size);
  COLONY_ARG(Size2, stride);  // defaults to kernel_size
  COLONY_ARG(Size2, padding) = 0;
  COLONY_ARG(Size2, dilation) = 1;
  COLONY_ARG(bool, ceil_mode) = false;
};
Tensor max_pool2d(const Tensor& input, const MaxPool2dFuncOptions& options);
// F::max_pool2d(x, 2): a 2x2 window with stride 2.
Tensor max_pool2d(const Tensor& input, Size2 kernel_size);

struct AvgPool2dFuncOptions {
  AvgPool2dFuncOptions(Size2 kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  COLONY_ARG(Size2, kernel_size);
  COLONY_ARG(Size2, stride);
  COLONY_ARG(Size2, padding) = 0;
  COLONY_ARG(bool, ceil_mode) = false;
  COLONY_ARG(bool, count_include_pad) = true;
};
Tensor avg_pool2d(const Tensor& input, const AvgPool2dFuncOptions& options);
Tensor avg_pool2d(const Tensor& input, Size2 kernel_size);
Tensor adaptive_avg_pool2d(const Tensor& input, Size2 output_size);

// Batch normalization over dim 1. In training mode the batch statistics normalize and the running
// estimates (when given) are updated in place with `momentum` and the unbiased variance.
Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight = Tensor(), const Tensor& bias = Tensor(), bool training = false,
                  double momentum = 0.1, double eps = 1e-5);

struct CrossEntropyFuncOptions {
  COLONY_ARG(Reduction, reduction) = Reduction::Mean;
  COLONY_ARG(int64_t, ignore_index) = -100;
  COLONY_ARG(double, label_smoothing) = 0.0;
};
// input [N, C] logits (or [N, C, d...]); target int64 class indices [N] (or [N, d...]).
Tensor cross_entropy(const Tensor& input, const Tensor& target, const CrossEntropyFuncOptions& options = {});

struct NLLLossFuncOptions {
  COLONY_ARG(Reduction, reduction) = Reduction::Mean;
  COLONY_ARG(int64_t, ignore_index) = -100;
};
// input [N, C] log-probabilities; target int64 [N].
Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossFuncOptions& options = {});

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);

}  // namespace colony::nn::functional

namespace colony {
namespace F = nn::functional;
}
