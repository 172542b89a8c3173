// nn::BatchNorm2d: normalizes each channel with the batch statistics while training (updating the
// running estimates, kept as buffers) and with the running estimates in eval mode.
#pragma once

#include "nn/module.h"
#include "base/arg.h"
#include "base/int2.h"

namespace colony::nn {

struct BatchNorm2dOptions {
  BatchNorm2dOptions(int64_t num_features) : num_features_(num_features) {}  // NOLINT
  COLONY_ARG(int64_t, num_features);
  COLONY_ARG(double, eps) = 1e-5;
  COLONY_ARG(double, momentum) = 0.1;
  COLONY_ARG(bool, affine) = true;
  COLONY_ARG(bool, track_running_stats) = true;
};

class BatchNorm2d : public Module {
 public:
  explicit BatchNorm2d(const BatchNorm2dOptions& options);
  Tensor forward(const Tensor& input) override;
  void reset_parameters();
  std::string extra_repr() const override;

  BatchNorm2dOptions options;
  Tensor weight, bias;                                    // [C] (affine)
  Tensor running_mean, running_var, num_batches_tracked;  // buffers (track_running_stats)
};

}  // namespace colony::nn
