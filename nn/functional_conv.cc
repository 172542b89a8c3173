// F:: convolution, pooling and batch norm: option structs to the differentiable ops of
// autograd/nn_ops.h. The 1-D forms view [N, C, L] as [N, C, 1, L] and run the 2-D op; the 3-D
// convolutions run their own (autograd/nn_ops.h's conv3d, conv_transpose3d).
#include <stdexcept>
#include <string>

#include "autograd/nn_ops.h"
#include "autograd/ops.h"
#include "nn/functional.h"
#include "nn/conv_padding.h"
#include "nn/functional_image.h"

namespace colony::nn::functional {
namespace {

// [C, H, W] (unbatched) as [1, C, H, W]; 4-D as is.
Tensor batched_image(const Tensor& input, const char* op) {
  if (!input.defined() || (input.dim() != 3 && input.dim() != 4)) {
    throw std::invalid_argument(std::string(op) + ": expected 3-D (unbatched [C, H, W]) or 4-D ([N, C, H, W]) input, got " +
                                (input.defined() ? shape_str(input.sizes()) : std::string("undefined")));
  }
  return input.dim() == 3 ? unsqueeze(input, 0) : input;
}

void check_weight_rank(const Tensor& weight, int64_t rank, const char* layout, const char* op) {
  if (!weight.defined() || weight.dim() != rank) {
    throw std::invalid_argument(std::string(op) + ": expected weight of " + std::to_string(rank) + " dims " + layout +
                                ", got " + (weight.defined() ? shape_str(weight.sizes()) : std::string("undefined")));
  }
}

}  // namespace

namespace detail {

Tensor as_image(const Tensor& input, const char* op) {
  if (!input.defined() || (input.dim() != 2 && input.dim() != 3)) {
    throw std::invalid_argument(std::string(op) + ": expected 2-D (unbatched [C, L]) or 3-D ([N, C, L]) input, got " +
                                (input.defined() ? shape_str(input.sizes()) : std::string("undefined")));
  }
  return unsqueeze(input.dim() == 2 ? unsqueeze(input, 0) : input, 2);
}

Tensor from_image(const Tensor& y, const Tensor& input) {
  Tensor out = squeeze(y, 2);
  return input.dim() == 2 ? squeeze(out, 0) : out;
}

}  // namespace detail

using detail::as_image;
using detail::from_image;

Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, const Conv1dFuncOptions& o) {
  const char* op = "conv1d";
  const Tensor x = as_image(input, op);
  check_weight_rank(weight, 3, "[C_out, C_in / groups, k]", op);
  if (o.groups() > 0 && x.size(1) != weight.size(1) * o.groups()) {
    throw std::invalid_argument("conv1d: expected input with " + std::to_string(weight.size(1) * o.groups()) +
                                " channels (weight " + shape_str(weight.sizes()) + ", groups " +
                                std::to_string(o.groups()) + "), got input " + shape_str(input.sizes()));
  }
  int64_t padding = o.padding().size;
  Tensor xp = x;
  if (o.padding().is_string()) {
    const nn::detail::StringPadding p =
        nn::detail::string_padding(o.padding().mode, {weight.size(2)}, {o.stride()}, {o.dilation()}, op);
    padding = p.both[0];
    if (p.extra_right[0] > 0) xp = pad(x, PadFuncOptions(std::vector<int64_t>{0, p.extra_right[0]}));
  }
  const Tensor y = colony::conv2d(xp, unsqueeze(weight, 2), bias, {1, o.stride()}, {0, padding},
                                  {1, o.dilation()}, o.groups());
  return from_image(y, input);
}

Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias,
                        const ConvTranspose2dFuncOptions& o) {
  const Tensor y = colony::conv_transpose2d(batched_image(input, "conv_transpose2d"), weight, bias, o.stride(),
                                            o.padding(), o.output_padding(), o.dilation(), o.groups());
  return input.dim() == 3 ? squeeze(y, 0) : y;
}

Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias,
                        const ConvTranspose1dFuncOptions& o) {
  const char* op = "conv_transpose1d";
  const Tensor x = as_image(input, op);
  check_weight_rank(weight, 3, "[C_in, C_out / groups, k]", op);
  if (x.size(1) != weight.size(0)) {
    throw std::invalid_argument("conv_transpose1d: expected input with " + std::to_string(weight.size(0)) +
                                " channels (weight " + shape_str(weight.sizes()) + " is [C_in, C_out / groups, k]), got input " +
                                shape_str(input.sizes()));
  }
  if (o.output_padding() >= o.stride()) {
    throw std::invalid_argument("conv_transpose1d: output_padding " + std::to_string(o.output_padding()) +
                                " must be smaller than stride " + std::to_string(o.stride()));
  }
  const Tensor y = colony::conv_transpose2d(x, unsqueeze(weight, 2), bias, {1, o.stride()}, {0, o.padding()},
                                            {0, o.output_padding()}, {1, o.dilation()}, o.groups());
  return from_image(y, input);
}

Tensor max_pool1d(const Tensor& input, const MaxPool1dFuncOptions& o) {
  const Tensor y = colony::max_pool2d(as_image(input, "max_pool1d"), {1, o.kernel_size()}, Int2(1, o.stride()),
                                      {0, o.padding()}, {1, o.dilation()}, o.ceil_mode());
  return from_image(y, input);
}

Tensor avg_pool1d(const Tensor& input, const AvgPool1dFuncOptions& o) {
  const Tensor y = colony::avg_pool2d(as_image(input, "avg_pool1d"), {1, o.kernel_size()}, Int2(1, o.stride()),
                                      {0, o.padding()}, o.ceil_mode(), o.count_include_pad());
  return from_image(y, input);
}

Tensor adaptive_avg_pool1d(const Tensor& input, const AdaptiveAvgPool1dFuncOptions& o) {
  return from_image(colony::adaptive_avg_pool2d(as_image(input, "adaptive_avg_pool1d"), {1, o.output_size()}), input);
}
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const Conv2dFuncOptions& o) {
  // Unbatched [C, H, W] as [1, C, H, W], as torch takes it.
  if (input.defined() && input.dim() == 3) return squeeze(conv2d(unsqueeze(input, 0), weight, bias, o), 0);
  if (!o.padding().is_string()) {
    return colony::conv2d(input, weight, bias, o.stride(), o.padding().size, o.dilation(), o.groups());
  }
  const char* op = "conv2d";
  check_weight_rank(weight, 4, "[C_out, C_in / groups, kH, kW]", op);
  const nn::detail::StringPadding p = nn::detail::string_padding(o.padding().mode, {weight.size(2), weight.size(3)},
                                                                 o.stride().vec(), o.dilation().vec(), op);
  // An even extent: the odd zero on the right first (torch's constant_pad_nd), then symmetric.
  const bool extra = p.extra_right[0] > 0 || p.extra_right[1] > 0;
  const Tensor x = extra ? pad(input, PadFuncOptions(std::vector<int64_t>{0, p.extra_right[1], 0, p.extra_right[0]})) : input;
  return colony::conv2d(x, weight, bias, o.stride(), Int2(p.both[0], p.both[1]), o.dilation(), o.groups());
}

namespace {

// [C, D, H, W] (unbatched) as [1, C, D, H, W]; 5-D as is. torch's message.
Tensor batched_volume(const Tensor& input, const char* op) {
  if (!input.defined() || (input.dim() != 4 && input.dim() != 5)) {
    throw std::invalid_argument(std::string(op) + ": Expected 4D (unbatched) or 5D (batched) input to " + op +
                                ", but got input of size: " +
                                (input.defined() ? shape_str(input.sizes()) : std::string("undefined")));
  }
  return input.dim() == 4 ? unsqueeze(input, 0) : input;
}

Tensor unbatched_like(const Tensor& y, const Tensor& input) { return input.dim() == 4 ? squeeze(y, 0) : y; }

}  // namespace

Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias, const Conv3dFuncOptions& o) {
  const char* op = "conv3d";
  const Tensor x = batched_volume(input, op);
  if (!o.padding().is_string()) {
    return unbatched_like(colony::conv3d(x, weight, bias, o.stride(), o.padding().size, o.dilation(), o.groups()),
                          input);
  }
  check_weight_rank(weight, 5, "[C_out, C_in / groups, kD, kH, kW]", op);
  const nn::detail::StringPadding p =
      nn::detail::string_padding(o.padding().mode, {weight.size(2), weight.size(3), weight.size(4)},
                                 o.stride().vec(), o.dilation().vec(), op);
  // An even extent: the odd zero on the right first (torch's constant_pad_nd), then symmetric.
  const bool extra = p.extra_right[0] > 0 || p.extra_right[1] > 0 || p.extra_right[2] > 0;
  const Tensor xp = extra ? pad(x, PadFuncOptions(std::vector<int64_t>{0, p.extra_right[2], 0, p.extra_right[1], 0,
                                                                      p.extra_right[0]}))
                          : x;
  return unbatched_like(colony::conv3d(xp, weight, bias, o.stride(), Int3(p.both[0], p.both[1], p.both[2]),
                                       o.dilation(), o.groups()),
                        input);
}

Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const Tensor& bias,
                        const ConvTranspose3dFuncOptions& o) {
  const Tensor y = colony::conv_transpose3d(batched_volume(input, "conv_transpose3d"), weight, bias, o.stride(),
                                            o.padding(), o.output_padding(), o.dilation(), o.groups());
  return unbatched_like(y, input);
}

Tensor max_pool2d(const Tensor& input, const MaxPool2dFuncOptions& o) {
  return colony::max_pool2d(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(),
                            o.ceil_mode());
}

Tensor max_pool2d(const Tensor& input, int64_t kernel_size) { return max_pool2d(input, MaxPool2dFuncOptions(kernel_size)); }

Tensor avg_pool2d(const Tensor& input, const AvgPool2dFuncOptions& o) {
  return colony::avg_pool2d(input, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(),
                            o.count_include_pad());
}

Tensor avg_pool2d(const Tensor& input, int64_t kernel_size) { return avg_pool2d(input, AvgPool2dFuncOptions(kernel_size)); }

Tensor adaptive_avg_pool2d(const Tensor& input, Int2 output_size) {
  return colony::adaptive_avg_pool2d(input, output_size);
}

Tensor adaptive_avg_pool2d(const Tensor& input, int64_t output_size) {
  return colony::adaptive_avg_pool2d(input, Int2(output_size));
}

Tensor adaptive_avg_pool2d(const Tensor& input, const AdaptiveAvgPool2dFuncOptions& options) {
  return colony::adaptive_avg_pool2d(input, options.output_size());
}

Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum, double eps) {
  return colony::batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps);
}

}  // namespace colony::nn::functional
