// nn::InstanceNorm1d, InstanceNorm2d and InstanceNorm3d (torch.nn.InstanceNorm1d/2d/3d): each (sample, channel)
// normalized over its spatial positions, through F::instance_norm (batch_norm on [1, N * C, *]).
// torch's defaults: no affine parameters, no running statistics; with track_running_stats the
// running estimates take the batch mean of the instances' statistics in training and normalize
// in eval mode.
#pragma once

#include "base/arg.h"
#include "nn/module.h"

namespace colony::nn {

struct InstanceNormOptions {
  InstanceNormOptions(int64_t num_features) : num_features_(num_features) {}  // NOLINT
  COLONY_ARG(int64_t, num_features);
  COLONY_ARG(double, eps) = 1e-5;
  COLONY_ARG(double, momentum) = 0.1;
  COLONY_ARG(bool, affine) = false;
  COLONY_ARG(bool, track_running_stats) = false;
  COLONY_ARG(bool, bias) = true;  // with affine: a learnable bias as well as the weight
};
using InstanceNorm1dOptions = InstanceNormOptions;
using InstanceNorm2dOptions = InstanceNormOptions;
using InstanceNorm3dOptions = InstanceNormOptions;

class InstanceNormBase : public Module {
 public:
  Tensor forward(const Tensor& input) override;
  void reset_parameters();
  void reset_running_stats();
  std::string extra_repr() const override;

  InstanceNormOptions options;
  Tensor weight, bias;                                    // [C] (affine)
  Tensor running_mean, running_var, num_batches_tracked;  // buffers (track_running_stats)

 protected:
  // spatial_dims: 1 for InstanceNorm1d, 2 for InstanceNorm2d, 3 for InstanceNorm3d.
  InstanceNormBase(const InstanceNormOptions& options, const char* name, int64_t spatial_dims);
  const char* name_;
  int64_t spatial_dims_;
};

// Input [N, C, L] or [C, L] (unbatched).
class InstanceNorm1d : public InstanceNormBase {
  COLONY_CLONEABLE
 public:
  explicit InstanceNorm1d(const InstanceNorm1dOptions& options) : InstanceNormBase(options, "InstanceNorm1d", 1) {}
};

// Input [N, C, H, W] or [C, H, W] (unbatched).
class InstanceNorm2d : public InstanceNormBase {
  COLONY_CLONEABLE
 public:
  explicit InstanceNorm2d(const InstanceNorm2dOptions& options) : InstanceNormBase(options, "InstanceNorm2d", 2) {}
};

// Input [N, C, D, H, W] or [C, D, H, W] (unbatched).
class InstanceNorm3d : public InstanceNormBase {
  COLONY_CLONEABLE
 public:
  explicit InstanceNorm3d(const InstanceNorm3dOptions& options) : InstanceNormBase(options, "InstanceNorm3d", 3) {}
};

}  // namespace colony::nn
