#include "nn/conv.h"

#include "nn/repr.h"

#include <cmath>
#include <stdexcept>
#include <vector>

#include "nn/conv_padding.h"
#include "nn/functional.h"
#include "nn/init.h"
#include "ops/raw_ops.h"

namespace colony::nn {

namespace detail {

void reset_conv_parameters(Tensor& weight, Tensor& bias) {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    auto [fan_in, fan_out] = init::calculate_fan_in_and_fan_out(weight);
    double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
    init::uniform_(bias, -bound, bound);
  }
}

void check_conv_channels(int64_t in_channels, int64_t out_channels, int64_t groups, const char* module) {
  if (in_channels <= 0 || out_channels <= 0 || groups <= 0) {
    throw std::invalid_argument(std::string(module) + ": channels and groups must be positive, got in_channels " +
                                std::to_string(in_channels) + ", out_channels " + std::to_string(out_channels) +
                                ", groups " + std::to_string(groups));
  }
  if (in_channels % groups != 0 || out_channels % groups != 0) {
    throw std::invalid_argument(std::string(module) + ": in_channels (" + std::to_string(in_channels) +
                                ") and out_channels (" + std::to_string(out_channels) +
                                ") must be divisible by groups (" + std::to_string(groups) + ")");
  }
}

}  // namespace detail

Conv2d::Conv2d(const Conv2dOptions& o) : options(o) {
  detail::check_conv_channels(o.in_channels(), o.out_channels(), o.groups(), "Conv2d");
  detail::check_conv_padding_options(o.padding().mode, o.stride().vec(), o.padding_mode(), "Conv2d");
  weight = register_parameter(
      "weight", raw::empty({o.out_channels(), o.in_channels() / o.groups(), o.kernel_size().h, o.kernel_size().w}));
  if (o.bias()) bias = register_parameter("bias", raw::empty({o.out_channels()}));
  reset_parameters();
}

void Conv2d::reset_parameters() { detail::reset_conv_parameters(weight, bias); }

Tensor Conv2d::forward(const Tensor& input) {
  if (options.padding_mode() != "zeros") {
    const functional::Conv2dPadding& p = options.padding();
    const std::vector<int64_t> pads = detail::mode_pad_list(p.is_string() ? std::vector<int64_t>{} : p.size.vec(), p.mode,
                                                            options.kernel_size().vec(), options.dilation().vec());
    return functional::conv2d(functional::pad(input, functional::PadFuncOptions(pads).mode(options.padding_mode())),
                              weight, bias,
                              functional::Conv2dFuncOptions()
                                  .stride(options.stride())
                                  .padding(0)
                                  .dilation(options.dilation())
                                  .groups(options.groups()));
  }
  return functional::conv2d(input, weight, bias,
                            functional::Conv2dFuncOptions()
                                .stride(options.stride())
                                .padding(options.padding())
                                .dilation(options.dilation())
                                .groups(options.groups()));
}

std::string Conv2d::extra_repr() const {
  auto s2 = repr::tuple;
  std::string r = std::to_string(options.in_channels()) + ", " + std::to_string(options.out_channels()) +
                  ", kernel_size=" + s2(options.kernel_size()) + ", stride=" + s2(options.stride());
  // torch prints a string padding bare (padding=same) and a size unless it is all zeros.
  if (options.padding().is_string()) {
    r += ", padding=" + options.padding().mode;
  } else if (!(options.padding().size == Int2(0))) {
    r += ", padding=" + s2(options.padding().size);
  }
  if (!(options.dilation() == Int2(1))) r += ", dilation=" + s2(options.dilation());
  if (options.groups() != 1) r += ", groups=" + std::to_string(options.groups());
  if (!options.bias()) r += ", bias=False";
  if (options.padding_mode() != "zeros") r += ", padding_mode=" + options.padding_mode();
  return r;
}

Conv1d::Conv1d(const Conv1dOptions& o) : options(o) {
  detail::check_conv_channels(o.in_channels(), o.out_channels(), o.groups(), "Conv1d");
  detail::check_conv_padding_options(o.padding().mode, {o.stride()}, o.padding_mode(), "Conv1d");
  weight = register_parameter("weight", raw::empty({o.out_channels(), o.in_channels() / o.groups(), o.kernel_size()}));
  if (o.bias()) bias = register_parameter("bias", raw::empty({o.out_channels()}));
  reset_parameters();
}

void Conv1d::reset_parameters() { detail::reset_conv_parameters(weight, bias); }

Tensor Conv1d::forward(const Tensor& input) {
  if (options.padding_mode() != "zeros") {
    const functional::Conv1dPadding& p = options.padding();
    const std::vector<int64_t> pads = detail::mode_pad_list(p.is_string() ? std::vector<int64_t>{} : std::vector<int64_t>{p.size},
                                                            p.mode, {options.kernel_size()}, {options.dilation()});
    return functional::conv1d(functional::pad(input, functional::PadFuncOptions(pads).mode(options.padding_mode())),
                              weight, bias,
                              functional::Conv1dFuncOptions()
                                  .stride(options.stride())
                                  .padding(0)
                                  .dilation(options.dilation())
                                  .groups(options.groups()));
  }
  return functional::conv1d(input, weight, bias,
                            functional::Conv1dFuncOptions()
                                .stride(options.stride())
                                .padding(options.padding())
                                .dilation(options.dilation())
                                .groups(options.groups()));
}

std::string Conv1d::extra_repr() const {
  using repr::tuple1;
  std::string r = std::to_string(options.in_channels()) + ", " + std::to_string(options.out_channels()) +
                  ", kernel_size=" + tuple1(options.kernel_size()) + ", stride=" + tuple1(options.stride());
  if (options.padding().is_string()) {
    r += ", padding=" + options.padding().mode;
  } else if (options.padding().size != 0) {
    r += ", padding=" + tuple1(options.padding().size);
  }
  if (options.dilation() != 1) r += ", dilation=" + tuple1(options.dilation());
  if (options.groups() != 1) r += ", groups=" + std::to_string(options.groups());
  if (!options.bias()) r += ", bias=False";
  if (options.padding_mode() != "zeros") r += ", padding_mode=" + options.padding_mode();
  return r;
}

Conv3d::Conv3d(const Conv3dOptions& o) : options(o) {
  detail::check_conv_channels(o.in_channels(), o.out_channels(), o.groups(), "Conv3d");
  detail::check_conv_padding_options(o.padding().mode, o.stride().vec(), o.padding_mode(), "Conv3d");
  const Int3 k = o.kernel_size();
  weight = register_parameter("weight", raw::empty({o.out_channels(), o.in_channels() / o.groups(), k.d, k.h, k.w}));
  if (o.bias()) bias = register_parameter("bias", raw::empty({o.out_channels()}));
  reset_parameters();
}

void Conv3d::reset_parameters() { detail::reset_conv_parameters(weight, bias); }

Tensor Conv3d::forward(const Tensor& input) {
  auto conv = functional::Conv3dFuncOptions().stride(options.stride()).dilation(options.dilation()).groups(options.groups());
  if (options.padding_mode() != "zeros") {
    const functional::Conv3dPadding& p = options.padding();
    const std::vector<int64_t> pads = detail::mode_pad_list(p.is_string() ? std::vector<int64_t>{} : p.size.vec(), p.mode,
                                                            options.kernel_size().vec(), options.dilation().vec());
    return functional::conv3d(functional::pad(input, functional::PadFuncOptions(pads).mode(options.padding_mode())),
                              weight, bias, conv.padding(0));
  }
  return functional::conv3d(input, weight, bias, conv.padding(options.padding()));
}

std::string Conv3d::extra_repr() const {
  auto s3 = [](const Int3& v) { return repr::tuple3(v); };
  std::string r = std::to_string(options.in_channels()) + ", " + std::to_string(options.out_channels()) +
                  ", kernel_size=" + s3(options.kernel_size()) + ", stride=" + s3(options.stride());
  // torch prints a string padding bare (padding=same) and a size unless it is all zeros.
  if (options.padding().is_string()) {
    r += ", padding=" + options.padding().mode;
  } else if (options.padding().size != Int3(0)) {
    r += ", padding=" + s3(options.padding().size);
  }
  if (options.dilation() != Int3(1)) r += ", dilation=" + s3(options.dilation());
  if (options.groups() != 1) r += ", groups=" + std::to_string(options.groups());
  if (!options.bias()) r += ", bias=False";
  if (options.padding_mode() != "zeros") r += ", padding_mode=" + options.padding_mode();
  return r;
}

}  // namespace colony::nn
