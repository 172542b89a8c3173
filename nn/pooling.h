// Adaptive max pooling and max unpooling modules (torch.nn.AdaptiveMaxPool1d/2d, MaxUnpool1d/2d)
// over nn/functional.h's F:: forms. As in libtorch, forward returns the output alone and
// forward_with_indices the output and the indices (torch's return_indices=True; MaxPool1d/2d in
// nn/layers.h have the same pair), which MaxUnpool's forward takes back.
#pragma once

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "base/arg.h"
#include "base/int2.h"
#include "nn/functional.h"
#include "nn/module.h"

namespace colony::nn {

// AdaptiveMaxPool2d(7), AdaptiveMaxPool2d(AdaptiveMaxPool2dOptions({3, std::nullopt})): a None
// (std::nullopt) dim keeps the input's size.
using AdaptiveMaxPool2dOptions = functional::AdaptiveMaxPool2dFuncOptions;
class AdaptiveMaxPool2d : public Module {
 public:
  explicit AdaptiveMaxPool2d(const AdaptiveMaxPool2dOptions& options);
  Tensor forward(const Tensor& input) override { return functional::adaptive_max_pool2d(input, options); }
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input) {
    return functional::adaptive_max_pool2d_with_indices(input, options);
  }
  std::string extra_repr() const override;
  AdaptiveMaxPool2dOptions options;
};

using AdaptiveMaxPool1dOptions = functional::AdaptiveMaxPool1dFuncOptions;
class AdaptiveMaxPool1d : public Module {
 public:
  explicit AdaptiveMaxPool1d(const AdaptiveMaxPool1dOptions& options);
  Tensor forward(const Tensor& input) override { return functional::adaptive_max_pool1d(input, options); }
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input) {
    return functional::adaptive_max_pool1d_with_indices(input, options);
  }
  std::string extra_repr() const override;
  AdaptiveMaxPool1dOptions options;
};

// torch.nn.MaxUnpool2d(kernel_size, stride = kernel_size, padding = 0).
struct MaxUnpool2dOptions {
  MaxUnpool2dOptions(Int2 kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  MaxUnpool2dOptions(int64_t kernel_size) : MaxUnpool2dOptions(Int2(kernel_size)) {}      // NOLINT
  COLONY_ARG(Int2, kernel_size);
  COLONY_ARG(Int2, stride);
  COLONY_ARG(Int2, padding) = 0;
};
class MaxUnpool2d : public Module {
 public:
  explicit MaxUnpool2d(const MaxUnpool2dOptions& options) : options(options) {}
  // output_size: [H, W] or [N, C, H, W], as F::max_unpool2d's.
  Tensor forward(const Tensor& input, const Tensor& indices,
                 const std::optional<std::vector<int64_t>>& output_size = std::nullopt);
  std::string extra_repr() const override;
  MaxUnpool2dOptions options;
};

struct MaxUnpool1dOptions {
  MaxUnpool1dOptions(int64_t kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  COLONY_ARG(int64_t, kernel_size);
  COLONY_ARG(int64_t, stride);
  COLONY_ARG(int64_t, padding) = 0;
};
class MaxUnpool1d : public Module {
 public:
  explicit MaxUnpool1d(const MaxUnpool1dOptions& options) : options(options) {}
  Tensor forward(const Tensor& input, const Tensor& indices,
                 const std::optional<std::vector<int64_t>>& output_size = std::nullopt);
  std::string extra_repr() const override;
  MaxUnpool1dOptions options;
};

}  // namespace colony::nn
