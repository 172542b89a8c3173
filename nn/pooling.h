// Adaptive max pooling and max unpooling modules (torch.nn.AdaptiveMaxPool1d/2d, MaxUnpool1d/2d),
// the 3-D pools (MaxPool3d, AvgPool3d, AdaptiveAvgPool3d, AdaptiveMaxPool3d, MaxUnpool3d),
// LPPool1d/2d/3d and FractionalMaxPool2d/3d over nn/functional.h's F:: forms, printing as torch's. As in libtorch, forward returns the output alone and
// forward_with_indices the output and the indices (torch's return_indices=True; MaxPool1d/2d in
// nn/layers.h have the same pair), which MaxUnpool's forward takes back.
#pragma once

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "base/arg.h"
#include "base/int2.h"
#include "base/int3.h"
#include "nn/functional.h"
#include "nn/module.h"

namespace colony::nn {

// AdaptiveMaxPool2d(7), AdaptiveMaxPool2d(AdaptiveMaxPool2dOptions({3, std::nullopt})): a None
// (std::nullopt) dim keeps the input's size.
using AdaptiveMaxPool2dOptions = functional::AdaptiveMaxPool2dFuncOptions;
class AdaptiveMaxPool2d : public Module {
  COLONY_CLONEABLE
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
  COLONY_CLONEABLE
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
  COLONY_CLONEABLE
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
  COLONY_CLONEABLE
 public:
  explicit MaxUnpool1d(const MaxUnpool1dOptions& options) : options(options) {}
  Tensor forward(const Tensor& input, const Tensor& indices,
                 const std::optional<std::vector<int64_t>>& output_size = std::nullopt);
  std::string extra_repr() const override;
  MaxUnpool1dOptions options;
};

// MaxPool3d(2), MaxPool3d(MaxPool3dOptions({1, 2, 2}).padding({0, 1, 1})).
using MaxPool3dOptions = functional::MaxPool3dFuncOptions;
class MaxPool3d : public Module {
  COLONY_CLONEABLE
 public:
  explicit MaxPool3d(const MaxPool3dOptions& options) : options(options) {}
  Tensor forward(const Tensor& input) override { return functional::max_pool3d(input, options); }
  // torch's return_indices=True: the output and each maximum's flat index in its input volume.
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input) {
    return functional::max_pool3d_with_indices(input, options);
  }
  std::string extra_repr() const override;
  MaxPool3dOptions options;
};

using AvgPool3dOptions = functional::AvgPool3dFuncOptions;
class AvgPool3d : public Module {
  COLONY_CLONEABLE
 public:
  explicit AvgPool3d(const AvgPool3dOptions& options) : options(options) {}
  Tensor forward(const Tensor& input) override { return functional::avg_pool3d(input, options); }
  std::string extra_repr() const override;
  AvgPool3dOptions options;
};

// AdaptiveAvgPool3d(2), AdaptiveAvgPool3d(AdaptiveAvgPool3dOptions({2, std::nullopt, 3})).
using AdaptiveAvgPool3dOptions = functional::AdaptiveAvgPool3dFuncOptions;
class AdaptiveAvgPool3d : public Module {
  COLONY_CLONEABLE
 public:
  explicit AdaptiveAvgPool3d(const AdaptiveAvgPool3dOptions& options);
  Tensor forward(const Tensor& input) override { return functional::adaptive_avg_pool3d(input, options); }
  std::string extra_repr() const override;
  AdaptiveAvgPool3dOptions options;
};

using AdaptiveMaxPool3dOptions = functional::AdaptiveMaxPool3dFuncOptions;
class AdaptiveMaxPool3d : public Module {
  COLONY_CLONEABLE
 public:
  explicit AdaptiveMaxPool3d(const AdaptiveMaxPool3dOptions& options);
  Tensor forward(const Tensor& input) override { return functional::adaptive_max_pool3d(input, options); }
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input) {
    return functional::adaptive_max_pool3d_with_indices(input, options);
  }
  std::string extra_repr() const override;
  AdaptiveMaxPool3dOptions options;
};

struct MaxUnpool3dOptions {
  MaxUnpool3dOptions(Int3 kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  MaxUnpool3dOptions(int64_t kernel_size) : MaxUnpool3dOptions(Int3(kernel_size)) {}      // NOLINT
  COLONY_ARG(Int3, kernel_size);
  COLONY_ARG(Int3, stride);
  COLONY_ARG(Int3, padding) = 0;
};
class MaxUnpool3d : public Module {
  COLONY_CLONEABLE
 public:
  explicit MaxUnpool3d(const MaxUnpool3dOptions& options) : options(options) {}
  // output_size: [D, H, W] or [N, C, D, H, W].
  Tensor forward(const Tensor& input, const Tensor& indices,
                 const std::optional<std::vector<int64_t>>& output_size = std::nullopt);
  std::string extra_repr() const override;
  MaxUnpool3dOptions options;
};

// LPPool1d(2, 3): torch.nn.LPPool1d(norm_type, kernel_size, stride=None, ceil_mode=False). The
// norm type prints as Python prints the number given (an integral value as an int).
using LPPool1dOptions = functional::LPPool1dFuncOptions;
class LPPool1d : public Module {
  COLONY_CLONEABLE
 public:
  explicit LPPool1d(const LPPool1dOptions& options);
  Tensor forward(const Tensor& input) override { return functional::lp_pool1d(input, options); }
  std::string extra_repr() const override;
  LPPool1dOptions options;
};
using LPPool2dOptions = functional::LPPool2dFuncOptions;
class LPPool2d : public Module {
  COLONY_CLONEABLE
 public:
  explicit LPPool2d(const LPPool2dOptions& options);
  Tensor forward(const Tensor& input) override { return functional::lp_pool2d(input, options); }
  std::string extra_repr() const override;
  LPPool2dOptions options;
};
using LPPool3dOptions = functional::LPPool3dFuncOptions;
class LPPool3d : public Module {
  COLONY_CLONEABLE
 public:
  explicit LPPool3d(const LPPool3dOptions& options);
  Tensor forward(const Tensor& input) override { return functional::lp_pool3d(input, options); }
  std::string extra_repr() const override;
  LPPool3dOptions options;
};

// FractionalMaxPool2d(FractionalMaxPool2dOptions(3).output_ratio(0.5)): exactly one of
// output_size and output_ratio (each ratio in (0, 1)), checked at construction as torch's. A
// _random_samples tensor given in the options is kept as the buffer of that name and fixes the
// windows; without it each forward draws new ones. Prints "FractionalMaxPool2d()", as torch.
using FractionalMaxPool2dOptions = functional::FractionalMaxPool2dFuncOptions;
class FractionalMaxPool2d : public Module {
  COLONY_CLONEABLE
 public:
  explicit FractionalMaxPool2d(const FractionalMaxPool2dOptions& options);
  Tensor forward(const Tensor& input) override { return std::get<0>(forward_with_indices(input)); }
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  FractionalMaxPool2dOptions options;
  Tensor random_samples;  // the buffer _random_samples (undefined: drawn per forward)
};
using FractionalMaxPool3dOptions = functional::FractionalMaxPool3dFuncOptions;
class FractionalMaxPool3d : public Module {
  COLONY_CLONEABLE
 public:
  explicit FractionalMaxPool3d(const FractionalMaxPool3dOptions& options);
  Tensor forward(const Tensor& input) override { return std::get<0>(forward_with_indices(input)); }
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  FractionalMaxPool3dOptions options;
  Tensor random_samples;  // the buffer _random_samples (undefined: drawn per forward)
};

}  // namespace colony::nn
