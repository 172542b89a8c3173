// nn::Conv2d over [N, C, H, W] inputs (cuDNN on CUDA, im2col/GEMM or direct kernels on the CPU),
// nn::Conv1d over [N, C, L] inputs (the same kernels on [N, C, 1, L]) and nn::Conv3d over
// [N, C, D, H, W] inputs (cuDNN, or vol2col/GEMM on the CPU), initialized like PyTorch.
// The transposed convolutions are nn/conv_transpose.h.
#pragma once

#include <string>

#include "nn/functional.h"
#include "nn/module.h"
#include "base/arg.h"
#include "base/int2.h"
#include "base/int3.h"

namespace colony::nn {

struct Conv2dOptions {
  Conv2dOptions(int64_t in_channels, int64_t out_channels, Int2 kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  COLONY_ARG(int64_t, in_channels);
  COLONY_ARG(int64_t, out_channels);
  COLONY_ARG(Int2, kernel_size);
  COLONY_ARG(Int2, stride) = 1;
  // A size, or "same" / "valid" (functional.h's Conv2dPadding).
  COLONY_ARG(functional::Conv2dPadding, padding) = 0;
  COLONY_ARG(Int2, dilation) = 1;
  COLONY_ARG(int64_t, groups) = 1;
  COLONY_ARG(bool, bias) = true;
  // "zeros" (the convolution's own padding), or "reflect", "replicate", "circular": the input is
  // padded by F::pad in that mode, then convolved with padding 0 (torch's _conv_forward).
  COLONY_ARG(std::string, padding_mode) = "zeros";
};

class Conv2d : public Module {
  COLONY_CLONEABLE
 public:
  explicit Conv2d(const Conv2dOptions& options);
  Tensor forward(const Tensor& input) override;
  void reset_parameters();
  std::string extra_repr() const override;

  Conv2dOptions options;
  Tensor weight;  // [out, in / groups, kH, kW]
  Tensor bias;    // [out]
};

struct Conv1dOptions {
  Conv1dOptions(int64_t in_channels, int64_t out_channels, int64_t kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  COLONY_ARG(int64_t, in_channels);
  COLONY_ARG(int64_t, out_channels);
  COLONY_ARG(int64_t, kernel_size);
  COLONY_ARG(int64_t, stride) = 1;
  COLONY_ARG(functional::Conv1dPadding, padding) = 0;  // a size, or "same" / "valid"
  COLONY_ARG(int64_t, dilation) = 1;
  COLONY_ARG(int64_t, groups) = 1;
  COLONY_ARG(bool, bias) = true;
  COLONY_ARG(std::string, padding_mode) = "zeros";  // as Conv2dOptions'
};

// torch.nn.Conv1d: input [N, C_in, L] or [C_in, L] (unbatched) -> [N, C_out, L_out] with
// L_out = (L + 2 * padding - dilation * (kernel_size - 1) - 1) / stride + 1.
class Conv1d : public Module {
  COLONY_CLONEABLE
 public:
  explicit Conv1d(const Conv1dOptions& options);
  Tensor forward(const Tensor& input) override;
  void reset_parameters();
  std::string extra_repr() const override;

  Conv1dOptions options;
  Tensor weight;  // [out, in / groups, k]
  Tensor bias;    // [out]
};

struct Conv3dOptions {
  Conv3dOptions(int64_t in_channels, int64_t out_channels, Int3 kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  COLONY_ARG(int64_t, in_channels);
  COLONY_ARG(int64_t, out_channels);
  COLONY_ARG(Int3, kernel_size);
  COLONY_ARG(Int3, stride) = 1;
  COLONY_ARG(functional::Conv3dPadding, padding) = 0;  // a size, or "same" / "valid"
  COLONY_ARG(Int3, dilation) = 1;
  COLONY_ARG(int64_t, groups) = 1;
  COLONY_ARG(bool, bias) = true;
  COLONY_ARG(std::string, padding_mode) = "zeros";  // as Conv2dOptions'
};

// torch.nn.Conv3d: input [N, C_in, D, H, W] or [C_in, D, H, W] (unbatched) -> [N, C_out, Do, Ho, Wo]
// with Do = (D + 2 * padding - dilation * (kernel_size - 1) - 1) / stride + 1 (likewise Ho, Wo).
class Conv3d : public Module {
  COLONY_CLONEABLE
 public:
  explicit Conv3d(const Conv3dOptions& options);
  Tensor forward(const Tensor& input) override;
  void reset_parameters();
  std::string extra_repr() const override;

  Conv3dOptions options;
  Tensor weight;  // [out, in / groups, kD, kH, kW]
  Tensor bias;    // [out]
};

namespace detail {
// torch's _ConvNd.reset_parameters: weight kaiming_uniform_(a = sqrt(5)), bias uniform in
// +-1 / sqrt(fan_in), fan_in from the weight's shape (weight.size(1) * kernel elements, which for a
// transposed convolution's [in, out / groups, k...] weight is out / groups * kernel elements).
void reset_conv_parameters(Tensor& weight, Tensor& bias);
// The constructor's checks of channels and groups, in the module's name.
void check_conv_channels(int64_t in_channels, int64_t out_channels, int64_t groups, const char* module);
}  // namespace detail

}  // namespace colony::nn
