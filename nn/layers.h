// Small layers without parameters: activations, reshaping, dropout, pooling. (Sequential and the
// other containers: nn/containers.h, included here for code that found Sequential here.)
#pragma once

#include <memory>
#include <tuple>
#include <vector>

#include "nn/containers.h"
#include "nn/functional.h"
#include "nn/module.h"
#include "base/arg.h"
#include "base/int2.h"

namespace colony::nn {

struct ReLUOptions {
  ReLUOptions(bool inplace = false) : inplace_(inplace) {}  // NOLINT
  // Rectifies the input tensor itself (nn.ReLU(inplace=True)); recorded by autograd.
  COLONY_ARG(bool, inplace);
};
class ReLU : public Module {
  COLONY_CLONEABLE
 public:
  explicit ReLU(const ReLUOptions& options = {}) : options(options) {}
  Tensor forward(const Tensor& input) override { return functional::relu(input, options.inplace()); }
  std::string extra_repr() const override { return options.inplace() ? "inplace=True" : ""; }
  ReLUOptions options;
};

struct FlattenOptions {
  COLONY_ARG(int64_t, start_dim) = 1;
  COLONY_ARG(int64_t, end_dim) = -1;
};
class Flatten : public Module {
  COLONY_CLONEABLE
 public:
  explicit Flatten(const FlattenOptions& options = {}) : options(options) {}
  Flatten(int64_t start_dim, int64_t end_dim = -1) : options(FlattenOptions().start_dim(start_dim).end_dim(end_dim)) {}
  Tensor forward(const Tensor& input) override {
    return functional::flatten(input, options.start_dim(), options.end_dim());
  }
  std::string extra_repr() const override;
  FlattenOptions options;
};

// nn.Identity: returns its input (the same tensor), a placeholder where a layer is optional.
class Identity : public Module {
  COLONY_CLONEABLE
 public:
  Tensor forward(const Tensor& input) override { return input; }
};

// nn.Unflatten(dim, unflattened_size): dim split into sizes (one of them may be -1), as
// torch.unflatten; a view where the input's strides allow one.
struct UnflattenOptions {
  UnflattenOptions(int64_t dim, std::vector<int64_t> sizes) : dim_(dim), sizes_(std::move(sizes)) {}
  COLONY_ARG(int64_t, dim);
  COLONY_ARG(std::vector<int64_t>, sizes);
};
class Unflatten : public Module {
  COLONY_CLONEABLE
 public:
  explicit Unflatten(const UnflattenOptions& options) : options(options) {}
  Unflatten(int64_t dim, std::vector<int64_t> sizes) : options(dim, std::move(sizes)) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  UnflattenOptions options;
};

struct DropoutOptions {
  DropoutOptions(double p = 0.5) : p_(p) {}  // NOLINT
  COLONY_ARG(double, p);
  COLONY_ARG(bool, inplace) = false;
};
namespace detail {
// What the dropout modules share (Dropout here, the channel and alpha ones in dropout.h): the
// options, p checked at construction (the error names the module), and torch's printing
// `p=0.5, inplace=False`. Each is active only in training mode (train()/eval()).
class DropoutBase : public Module {
 public:
  std::string extra_repr() const override;
  DropoutOptions options;

 protected:
  DropoutBase(const char* name, const DropoutOptions& options);
};
}  // namespace detail

class Dropout : public detail::DropoutBase {
  COLONY_CLONEABLE
 public:
  explicit Dropout(const DropoutOptions& options = {}) : DropoutBase("Dropout", options) {}
  Tensor forward(const Tensor& input) override;
};

// MaxPool2d(2) or MaxPool2d(MaxPool2dOptions({3, 2}).stride(1)): the options accept a plain size.
using MaxPool2dOptions = functional::MaxPool2dFuncOptions;
class MaxPool2d : public Module {
  COLONY_CLONEABLE
 public:
  explicit MaxPool2d(const MaxPool2dOptions& options) : options(options) {}
  Tensor forward(const Tensor& input) override { return functional::max_pool2d(input, options); }
  // torch's return_indices=True (libtorch's spelling): the output and the int64 index of each
  // maximum within its input plane (ih * W + iw), which MaxUnpool2d takes.
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input) {
    return functional::max_pool2d_with_indices(input, options);
  }
  std::string extra_repr() const override;
  MaxPool2dOptions options;
};

using AvgPool2dOptions = functional::AvgPool2dFuncOptions;
class AvgPool2d : public Module {
  COLONY_CLONEABLE
 public:
  explicit AvgPool2d(const AvgPool2dOptions& options) : options(options) {}
  Tensor forward(const Tensor& input) override { return functional::avg_pool2d(input, options); }
  std::string extra_repr() const override;
  AvgPool2dOptions options;
};

using AdaptiveAvgPool2dOptions = functional::AdaptiveAvgPool2dFuncOptions;
class AdaptiveAvgPool2d : public Module {
  COLONY_CLONEABLE
 public:
  explicit AdaptiveAvgPool2d(const AdaptiveAvgPool2dOptions& options) : options(options) {}
  Tensor forward(const Tensor& input) override { return functional::adaptive_avg_pool2d(input, options); }
  std::string extra_repr() const override;
  AdaptiveAvgPool2dOptions options;
};

// The 1-D pools over [N, C, L] or [C, L] (F::max_pool1d, ...: the 2-D kernels on [N, C, 1, L]).
using MaxPool1dOptions = functional::MaxPool1dFuncOptions;
class MaxPool1d : public Module {
  COLONY_CLONEABLE
 public:
  explicit MaxPool1d(const MaxPool1dOptions& options) : options(options) {}
  Tensor forward(const Tensor& input) override { return functional::max_pool1d(input, options); }
  // The output and each maximum's position l in its input row (MaxUnpool1d takes them).
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input) {
    return functional::max_pool1d_with_indices(input, options);
  }
  std::string extra_repr() const override;
  MaxPool1dOptions options;
};

using AvgPool1dOptions = functional::AvgPool1dFuncOptions;
class AvgPool1d : public Module {
  COLONY_CLONEABLE
 public:
  explicit AvgPool1d(const AvgPool1dOptions& options) : options(options) {}
  Tensor forward(const Tensor& input) override { return functional::avg_pool1d(input, options); }
  std::string extra_repr() const override;
  AvgPool1dOptions options;
};

using AdaptiveAvgPool1dOptions = functional::AdaptiveAvgPool1dFuncOptions;
class AdaptiveAvgPool1d : public Module {
  COLONY_CLONEABLE
 public:
  explicit AdaptiveAvgPool1d(const AdaptiveAvgPool1dOptions& options) : options(options) {}
  Tensor forward(const Tensor& input) override { return functional::adaptive_avg_pool1d(input, options); }
  std::string extra_repr() const override;
  AdaptiveAvgPool1dOptions options;
};

}  // namespace colony::nn
