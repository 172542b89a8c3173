// nn::Conv2d over [N, C, H, W] inputs (cuDNN on CUDA, im2col/GEMM or direct kernels on the CPU),
// initialized like PyTorch.
#pragma once

#include "nn/module.h"
#include "base/arg.h"
#include "base/int2.h"

namespace colony::nn {

struct Conv2dOptions {
  Conv2dOptions(int64_t in_channels, int64_t out_channels, Int2 kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  COLONY_ARG(int64_t, in_channels);
  COLONY_ARG(int64_t, out_channels);
  COLONY_ARG(Int2, kernel_size);
  COLONY_ARG(Int2, stride) = 1;
  COLONY_ARG(Int2, padding) = 0;
  COLONY_ARG(Int2, dilation) = 1;
  COLONY_ARG(int64_t, groups) = 1;
  COLONY_ARG(bool, bias) = true;
};

class Conv2d : public Module {
 public:
  explicit Conv2d(const Conv2dOptions& options);
  Tensor forward(const Tensor& input) override;
  void reset_parameters();
  std::string extra_repr() const override;

  Conv2dOptions options;
  Tensor weight;  // [out, in / groups, kH, kW]
  Tensor bias;    // [out]
};

}  // namespace colony::nn
