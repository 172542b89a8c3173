#include "nn/conv_transpose.h"

#include <stdexcept>
#include <string>

#include "nn/conv.h"
#include "nn/functional.h"
#include "nn/repr.h"
#include "ops/raw_ops.h"

namespace colony::nn {
namespace {

std::string list_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// torch's _ConvTransposeNd._output_padding: the output_padding that gives output_size (its last
// `spatial` entries), each within [the size with output_padding 0, that + stride - 1].
std::vector<int64_t> output_padding_for(const char* module, const Tensor& input, const std::vector<int64_t>& output_size,
                                        const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                                        const std::vector<int64_t>& kernel, const std::vector<int64_t>& dilation) {
  const size_t k = stride.size();
  if (output_size.size() != k && output_size.size() != k + 2) {
    throw std::invalid_argument(std::string(module) + ": output_size must have " + std::to_string(k) + " or " +
                                std::to_string(k + 2) + " elements, got " + list_str(output_size));
  }
  if (input.dim() < static_cast<int64_t>(k) + 1) {
    throw std::invalid_argument(std::string(module) + ": input " + shape_str(input.sizes()) + " has too few dims");
  }
  const std::vector<int64_t> wanted(output_size.end() - k, output_size.end());
  std::vector<int64_t> min_sizes(k), max_sizes(k), result(k);
  for (size_t d = 0; d < k; ++d) {
    const int64_t in = input.size(input.dim() - static_cast<int64_t>(k) + static_cast<int64_t>(d));
    min_sizes[d] = (in - 1) * stride[d] - 2 * padding[d] + dilation[d] * (kernel[d] - 1) + 1;
    max_sizes[d] = min_sizes[d] + stride[d] - 1;
  }
  for (size_t d = 0; d < k; ++d) {
    if (wanted[d] < min_sizes[d] || wanted[d] > max_sizes[d]) {
      const Shape& s = input.sizes();
      throw std::invalid_argument(std::string(module) + ": requested an output size of " + list_str(wanted) +
                                  ", but valid sizes range from " + list_str(min_sizes) + " to " +
                                  list_str(max_sizes) + " (for an input of " +
                                  list_str(std::vector<int64_t>(s.end() - k, s.end())) + ")");
    }
    result[d] = wanted[d] - min_sizes[d];
  }
  return result;
}

}  // namespace

ConvTranspose2d::ConvTranspose2d(const ConvTranspose2dOptions& o) : options(o) {
  if (o.padding_mode() != "zeros") {  // torch refuses every other mode here, before its other checks
    throw std::invalid_argument("ConvTranspose2d: Only \"zeros\" padding mode is supported for ConvTranspose2d");
  }
  detail::check_conv_channels(o.in_channels(), o.out_channels(), o.groups(), "ConvTranspose2d");
  weight = register_parameter(
      "weight", raw::empty({o.in_channels(), o.out_channels() / o.groups(), o.kernel_size().h, o.kernel_size().w}));
  if (o.bias()) bias = register_parameter("bias", raw::empty({o.out_channels()}));
  reset_parameters();
}

void ConvTranspose2d::reset_parameters() { detail::reset_conv_parameters(weight, bias); }

Tensor ConvTranspose2d::forward(const Tensor& input) {
  return functional::conv_transpose2d(input, weight, bias,
                                      functional::ConvTranspose2dFuncOptions()
                                          .stride(options.stride())
                                          .padding(options.padding())
                                          .output_padding(options.output_padding())
                                          .groups(options.groups())
                                          .dilation(options.dilation()));
}

Tensor ConvTranspose2d::forward(const Tensor& input, const std::vector<int64_t>& output_size) {
  const ConvTranspose2dOptions& o = options;
  std::vector<int64_t> op = output_padding_for("ConvTranspose2d", input, output_size, o.stride().vec(),
                                               o.padding().vec(), o.kernel_size().vec(), o.dilation().vec());
  return functional::conv_transpose2d(input, weight, bias,
                                      functional::ConvTranspose2dFuncOptions()
                                          .stride(o.stride())
                                          .padding(o.padding())
                                          .output_padding(Int2(op[0], op[1]))
                                          .groups(o.groups())
                                          .dilation(o.dilation()));
}

std::string ConvTranspose2d::extra_repr() const {
  auto s2 = repr::tuple;
  const ConvTranspose2dOptions& o = options;
  std::string r = std::to_string(o.in_channels()) + ", " + std::to_string(o.out_channels()) +
                  ", kernel_size=" + s2(o.kernel_size()) + ", stride=" + s2(o.stride());
  if (o.padding() != Int2(0)) r += ", padding=" + s2(o.padding());
  if (o.dilation() != Int2(1)) r += ", dilation=" + s2(o.dilation());
  if (o.output_padding() != Int2(0)) r += ", output_padding=" + s2(o.output_padding());
  if (o.groups() != 1) r += ", groups=" + std::to_string(o.groups());
  if (!o.bias()) r += ", bias=False";
  return r;
}

ConvTranspose1d::ConvTranspose1d(const ConvTranspose1dOptions& o) : options(o) {
  if (o.padding_mode() != "zeros") {  // torch refuses every other mode here, before its other checks
    throw std::invalid_argument("ConvTranspose1d: Only \"zeros\" padding mode is supported for ConvTranspose1d");
  }
  detail::check_conv_channels(o.in_channels(), o.out_channels(), o.groups(), "ConvTranspose1d");
  weight = register_parameter("weight", raw::empty({o.in_channels(), o.out_channels() / o.groups(), o.kernel_size()}));
  if (o.bias()) bias = register_parameter("bias", raw::empty({o.out_channels()}));
  reset_parameters();
}

void ConvTranspose1d::reset_parameters() { detail::reset_conv_parameters(weight, bias); }

Tensor ConvTranspose1d::forward(const Tensor& input) {
  return functional::conv_transpose1d(input, weight, bias,
                                      functional::ConvTranspose1dFuncOptions()
                                          .stride(options.stride())
                                          .padding(options.padding())
                                          .output_padding(options.output_padding())
                                          .groups(options.groups())
                                          .dilation(options.dilation()));
}

Tensor ConvTranspose1d::forward(const Tensor& input, const std::vector<int64_t>& output_size) {
  const ConvTranspose1dOptions& o = options;
  std::vector<int64_t> op = output_padding_for("ConvTranspose1d", input, output_size, {o.stride()}, {o.padding()},
                                               {o.kernel_size()}, {o.dilation()});
  return functional::conv_transpose1d(input, weight, bias,
                                      functional::ConvTranspose1dFuncOptions()
                                          .stride(o.stride())
                                          .padding(o.padding())
                                          .output_padding(op[0])
                                          .groups(o.groups())
                                          .dilation(o.dilation()));
}

std::string ConvTranspose1d::extra_repr() const {
  using repr::tuple1;
  const ConvTranspose1dOptions& o = options;
  std::string r = std::to_string(o.in_channels()) + ", " + std::to_string(o.out_channels()) +
                  ", kernel_size=" + tuple1(o.kernel_size()) + ", stride=" + tuple1(o.stride());
  if (o.padding() != 0) r += ", padding=" + tuple1(o.padding());
  if (o.dilation() != 1) r += ", dilation=" + tuple1(o.dilation());
  if (o.output_padding() != 0) r += ", output_padding=" + tuple1(o.output_padding());
  if (o.groups() != 1) r += ", groups=" + std::to_string(o.groups());
  if (!o.bias()) r += ", bias=False";
  return r;
}

ConvTranspose3d::ConvTranspose3d(const ConvTranspose3dOptions& o) : options(o) {
  if (o.padding_mode() != "zeros") {  // torch refuses every other mode here, before its other checks
    throw std::invalid_argument("ConvTranspose3d: Only \"zeros\" padding mode is supported for ConvTranspose3d");
  }
  detail::check_conv_channels(o.in_channels(), o.out_channels(), o.groups(), "ConvTranspose3d");
  const Int3 k = o.kernel_size();
  weight = register_parameter("weight", raw::empty({o.in_channels(), o.out_channels() / o.groups(), k.d, k.h, k.w}));
  if (o.bias()) bias = register_parameter("bias", raw::empty({o.out_channels()}));
  reset_parameters();
}

void ConvTranspose3d::reset_parameters() { detail::reset_conv_parameters(weight, bias); }

Tensor ConvTranspose3d::forward(const Tensor& input) {
  const ConvTranspose3dOptions& o = options;
  return functional::conv_transpose3d(input, weight, bias,
                                      functional::ConvTranspose3dFuncOptions()
                                          .stride(o.stride())
                                          .padding(o.padding())
                                          .output_padding(o.output_padding())
                                          .groups(o.groups())
                                          .dilation(o.dilation()));
}

Tensor ConvTranspose3d::forward(const Tensor& input, const std::vector<int64_t>& output_size) {
  const ConvTranspose3dOptions& o = options;
  std::vector<int64_t> op = output_padding_for("ConvTranspose3d", input, output_size, o.stride().vec(),
                                               o.padding().vec(), o.kernel_size().vec(), o.dilation().vec());
  return functional::conv_transpose3d(input, weight, bias,
                                      functional::ConvTranspose3dFuncOptions()
                                          .stride(o.stride())
                                          .padding(o.padding())
                                          .output_padding(Int3(op[0], op[1], op[2]))
                                          .groups(o.groups())
                                          .dilation(o.dilation()));
}

std::string ConvTranspose3d::extra_repr() const {
  auto s3 = [](const Int3& v) { return repr::tuple3(v); };
  const ConvTranspose3dOptions& o = options;
  std::string r = std::to_string(o.in_channels()) + ", " + std::to_string(o.out_channels()) +
                  ", kernel_size=" + s3(o.kernel_size()) + ", stride=" + s3(o.stride());
  if (o.padding() != Int3(0)) r += ", padding=" + s3(o.padding());
  if (o.dilation() != Int3(1)) r += ", dilation=" + s3(o.dilation());
  if (o.output_padding() != Int3(0)) r += ", output_padding=" + s3(o.output_padding());
  if (o.groups() != 1) r += ", groups=" + std::to_string(o.groups());
  if (!o.bias()) r += ", bias=False";
  return r;
}

}  // namespace colony::nn
