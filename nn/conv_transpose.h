// nn::ConvTranspose2d, nn::ConvTranspose1d and nn::ConvTranspose3d (torch.nn.ConvTranspose2d/1d/3d):
// the adjoint of the convolution with the same options, through raw::conv_transpose2d (conv2d's
// input-gradient kernels; the 1-D form on [N, C, 1, L]) and raw::conv_transpose3d (conv3d's).
// Weight [in, out / groups, k...], initialized like PyTorch.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/arg.h"
#include "base/int2.h"
#include "base/int3.h"
#include "nn/module.h"

namespace colony::nn {

struct ConvTranspose2dOptions {
  ConvTranspose2dOptions(int64_t in_channels, int64_t out_channels, Int2 kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  COLONY_ARG(int64_t, in_channels);
  COLONY_ARG(int64_t, out_channels);
  COLONY_ARG(Int2, kernel_size);
  COLONY_ARG(Int2, stride) = 1;
  COLONY_ARG(Int2, padding) = 0;
  // Added to one side of each output dim: picks among the input sizes a strided convolution maps
  // to the same output size. Smaller than stride.
  COLONY_ARG(Int2, output_padding) = 0;
  COLONY_ARG(int64_t, groups) = 1;
  COLONY_ARG(bool, bias) = true;
  COLONY_ARG(Int2, dilation) = 1;
  // torch's argument, which takes "zeros" only (anything else is refused, as torch does).
  COLONY_ARG(std::string, padding_mode) = "zeros";
};

// Input [N, C_in, H, W] or [C_in, H, W] -> [N, C_out, Ho, Wo], Ho = (H - 1) * stride - 2 * padding +
// dilation * (kH - 1) + output_padding + 1.
class ConvTranspose2d : public Module {
  COLONY_CLONEABLE
 public:
  explicit ConvTranspose2d(const ConvTranspose2dOptions& options);
  Tensor forward(const Tensor& input) override;
  // torch's forward(input, output_size): output_size ([Ho, Wo], or [N, C, Ho, Wo]) in place of
  // output_padding, within [Ho with output_padding 0, that + stride - 1].
  Tensor forward(const Tensor& input, const std::vector<int64_t>& output_size);
  void reset_parameters();
  std::string extra_repr() const override;

  ConvTranspose2dOptions options;
  Tensor weight;  // [in, out / groups, kH, kW]
  Tensor bias;    // [out]
};

struct ConvTranspose1dOptions {
  ConvTranspose1dOptions(int64_t in_channels, int64_t out_channels, int64_t kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  COLONY_ARG(int64_t, in_channels);
  COLONY_ARG(int64_t, out_channels);
  COLONY_ARG(int64_t, kernel_size);
  COLONY_ARG(int64_t, stride) = 1;
  COLONY_ARG(int64_t, padding) = 0;
  COLONY_ARG(int64_t, output_padding) = 0;
  COLONY_ARG(int64_t, groups) = 1;
  COLONY_ARG(bool, bias) = true;
  COLONY_ARG(int64_t, dilation) = 1;
  COLONY_ARG(std::string, padding_mode) = "zeros";  // "zeros" only, as torch
};

// Input [N, C_in, L] or [C_in, L] -> [N, C_out, L_out], L_out as ConvTranspose2d's Ho.
class ConvTranspose1d : public Module {
  COLONY_CLONEABLE
 public:
  explicit ConvTranspose1d(const ConvTranspose1dOptions& options);
  Tensor forward(const Tensor& input) override;
  // output_size [L_out] or [N, C, L_out], as ConvTranspose2d's.
  Tensor forward(const Tensor& input, const std::vector<int64_t>& output_size);
  void reset_parameters();
  std::string extra_repr() const override;

  ConvTranspose1dOptions options;
  Tensor weight;  // [in, out / groups, k]
  Tensor bias;    // [out]
};

struct ConvTranspose3dOptions {
  ConvTranspose3dOptions(int64_t in_channels, int64_t out_channels, Int3 kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  COLONY_ARG(int64_t, in_channels);
  COLONY_ARG(int64_t, out_channels);
  COLONY_ARG(Int3, kernel_size);
  COLONY_ARG(Int3, stride) = 1;
  COLONY_ARG(Int3, padding) = 0;
  COLONY_ARG(Int3, output_padding) = 0;  // smaller than stride, as ConvTranspose2dOptions'
  COLONY_ARG(int64_t, groups) = 1;
  COLONY_ARG(bool, bias) = true;
  COLONY_ARG(Int3, dilation) = 1;
  COLONY_ARG(std::string, padding_mode) = "zeros";  // "zeros" only, as torch
};

// Input [N, C_in, D, H, W] or [C_in, D, H, W] -> [N, C_out, Do, Ho, Wo], each size as
// ConvTranspose2d's Ho.
class ConvTranspose3d : public Module {
  COLONY_CLONEABLE
 public:
  explicit ConvTranspose3d(const ConvTranspose3dOptions& options);
  Tensor forward(const Tensor& input) override;
  // output_size [Do, Ho, Wo] or [N, C, Do, Ho, Wo], as ConvTranspose2d's.
  Tensor forward(const Tensor& input, const std::vector<int64_t>& output_size);
  void reset_parameters();
  std::string extra_repr() const override;

  ConvTranspose3dOptions options;
  Tensor weight;  // [in, out / groups, kD, kH, kW]
  Tensor bias;    // [out]
};

}  // namespace colony::nn
