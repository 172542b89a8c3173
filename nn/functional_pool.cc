// F:: max pooling with indices, adaptive max pooling and max unpooling (torch's semantics, checks
// and messages). The 1-D forms run the 2-D ops on [N, C, 1, L] (nn/functional_image.h), where a
// plane's flat index ih * L + iw is the position l itself.
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "autograd/nn_ops.h"
#include "autograd/ops.h"
#include "nn/functional.h"
#include "nn/functional_image.h"

namespace colony::nn::functional {
namespace {

using detail::as_image;
using detail::from_image;

std::tuple<Tensor, Tensor> from_image(const std::tuple<Tensor, Tensor>& r, const Tensor& input) {
  return {from_image(std::get<0>(r), input), from_image(std::get<1>(r), input)};
}

std::string list_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// torch's _unpool_output_size: (in - 1) * stride + kernel - 2 * padding per spatial dim, or
// output_size (its last dims when it also holds N and C) within stride of that.
std::vector<int64_t> unpool_output_size(const Shape& input_shape, const std::vector<int64_t>& kernel,
                                        const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                                        const std::optional<std::vector<int64_t>>& given) {
  const size_t k = kernel.size();
  std::vector<int64_t> defaults;
  for (size_t d = 0; d < k; ++d) {
    defaults.push_back((input_shape[input_shape.size() - k + d] - 1) * stride[d] + kernel[d] - 2 * padding[d]);
  }
  if (!given) return defaults;
  std::vector<int64_t> out = *given;
  if (out.size() == k + 2) out.erase(out.begin(), out.begin() + 2);
  if (out.size() != k) {
    throw std::invalid_argument("max_unpool" + std::to_string(k) + "d: output_size should be a sequence containing " +
                                std::to_string(k) + " or " + std::to_string(k + 2) +
                                " elements, but it has a length of '" + std::to_string(out.size()) + "'");
  }
  for (size_t d = 0; d < k; ++d) {
    const int64_t lo = defaults[d] - stride[d], hi = defaults[d] + stride[d];
    if (!(lo < out[d] && out[d] < hi)) {
      throw std::invalid_argument("max_unpool" + std::to_string(k) + "d: invalid output_size \"" + list_str(out) +
                                  "\" (dim " + std::to_string(d) + " must be between " + std::to_string(lo) + " and " +
                                  std::to_string(hi) + ")");
    }
  }
  return out;
}

// torch._C._nn.max_unpool2d(input, indices, [Ho, Wo]) on [N, C, H, W] or [C, H, W], and
// max_unpool3d(input, indices, [Do, Ho, Wo]) on [N, C, D, H, W] or [C, D, H, W]: k = out.size().
Tensor max_unpool_raw(const Tensor& input, const Tensor& indices, const std::vector<int64_t>& out, const char* op) {
  const int64_t k = static_cast<int64_t>(out.size());
  const std::string kd = std::to_string(k) + "d";
  if (!input.defined() || !indices.defined()) throw std::invalid_argument(std::string(op) + ": undefined input or indices");
  if (indices.dtype() != kInt64) {
    throw std::invalid_argument(std::string(op) + ": elements in indices should be type int64 but got: " +
                                dtype_name(indices.dtype()));
  }
  if (input.dim() != k + 1 && input.dim() != k + 2) {
    throw std::invalid_argument(std::string(op) + ": Input to max_unpooling" + kd + " should be a " +
                                std::to_string(k + 1) + "d or " + std::to_string(k + 2) +
                                "d Tensor, but got a tensor with " + std::to_string(input.dim()) + " dimensions.");
  }
  if (indices.sizes() != input.sizes()) {
    throw std::invalid_argument(std::string(op) + ": Expected shape of indices to be same as that of the input tensor (" +
                                shape_str(input.sizes()) + ") but got indices tensor with shape: " +
                                shape_str(indices.sizes()));
  }
  for (int64_t v : out) {
    if (v < 0) throw std::invalid_argument(std::string(op) + ": output_size must be non-negative, got " + list_str(out));
  }
  for (int64_t d = 1; d < input.dim(); ++d) {
    if (input.size(d) == 0) {
      throw std::invalid_argument(std::string(op) + ": Expected input to have non-zero size for non-batch dimensions, "
                                  "but got input " + shape_str(input.sizes()));
    }
  }
  const int64_t planes = input.dim() == k + 2 ? input.size(0) * input.size(1) : input.size(0);
  int64_t plane_in = 1, plane_out = 1;
  std::string out_str;
  for (int64_t d = 0; d < k; ++d) {
    plane_in *= input.size(input.dim() - k + d);
    plane_out *= out[d];
    out_str += (d ? "x" : "") + std::to_string(out[d]);
  }
  Tensor idx = reshape(indices, {planes, plane_in});
  // On the CPU every index is checked here, with torch's message; on CUDA scatter checks its own
  // (reading them back here would wait for the device).
  if (indices.is_cpu() && indices.numel() > 0) {
    const Tensor c = contiguous(indices);
    const int64_t* p = c.data_ptr<int64_t>();
    for (int64_t i = 0; i < c.numel(); ++i) {
      if (p[i] < 0 || p[i] >= plane_out) {
        throw std::out_of_range(std::string(op) + ": Found an invalid max index: " + std::to_string(p[i]) +
                                " (output volumes are of size " + out_str + ")");
      }
    }
  }
  Shape out_shape = input.sizes();
  for (int64_t d = 0; d < k; ++d) out_shape[out_shape.size() - k + d] = out[d];
  const Tensor zeros = raw::zeros({planes, plane_out}, TensorOptions(input.dtype()).device(input.device()));
  return reshape(scatter(zeros, 1, idx, reshape(input, {planes, plane_in})), out_shape);
}

Int2 adaptive_size(const OptionalInt2& size, const Tensor& input) {
  const int64_t h = input.defined() && input.dim() >= 2 ? input.size(-2) : 0;
  const int64_t w = input.defined() && input.dim() >= 2 ? input.size(-1) : 0;
  return {size.h.value_or(h), size.w.value_or(w)};
}

}  // namespace

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, const MaxPool2dFuncOptions& o) {
  return colony::max_pool2d_with_indices(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}

std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input, const MaxPool1dFuncOptions& o) {
  return from_image(colony::max_pool2d_with_indices(as_image(input, "max_pool1d"), {1, o.kernel_size()},
                                                    Int2(1, o.stride()), {0, o.padding()}, {1, o.dilation()},
                                                    o.ceil_mode()),
                    input);
}

std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& input, const AdaptiveMaxPool2dFuncOptions& o) {
  return colony::adaptive_max_pool2d(input, adaptive_size(o.output_size(), input));
}

Tensor adaptive_max_pool2d(const Tensor& input, const AdaptiveMaxPool2dFuncOptions& o) {
  return std::get<0>(adaptive_max_pool2d_with_indices(input, o));
}

std::tuple<Tensor, Tensor> adaptive_max_pool1d_with_indices(const Tensor& input, const AdaptiveMaxPool1dFuncOptions& o) {
  return from_image(colony::adaptive_max_pool2d(as_image(input, "adaptive_max_pool1d"), {1, o.output_size()}), input);
}

Tensor adaptive_max_pool1d(const Tensor& input, const AdaptiveMaxPool1dFuncOptions& o) {
  return std::get<0>(adaptive_max_pool1d_with_indices(input, o));
}

Tensor max_unpool2d(const Tensor& input, const Tensor& indices, const MaxUnpool2dFuncOptions& o) {
  const char* op = "max_unpool2d";
  if (!input.defined() || input.dim() < 2) {
    throw std::invalid_argument(std::string(op) + ": Input to max_unpooling2d should be a 3d or 4d Tensor, but got " +
                                (input.defined() ? shape_str(input.sizes()) : std::string("undefined")));
  }
  const std::vector<int64_t> size = unpool_output_size(input.sizes(), o.kernel_size().vec(), o.stride().vec(),
                                                       o.padding().vec(), o.output_size());
  return max_unpool_raw(input, indices, size, op);
}

Tensor max_unpool1d(const Tensor& input, const Tensor& indices, const MaxUnpool1dFuncOptions& o) {
  const char* op = "max_unpool1d";
  if (!input.defined() || input.dim() < 1) {
    throw std::invalid_argument(std::string(op) + ": expected 2-D ([C, L]) or 3-D ([N, C, L]) input");
  }
  const std::vector<int64_t> size =
      unpool_output_size(input.sizes(), {o.kernel_size()}, {o.stride()}, {o.padding()}, o.output_size());
  // torch's form: [..., L, 1] through the 2-D op.
  const Tensor ind = indices.defined() ? unsqueeze(indices, -1) : indices;
  return squeeze(max_unpool_raw(unsqueeze(input, -1), ind, {size[0], 1}, op), -1);
}

Tensor max_unpool3d(const Tensor& input, const Tensor& indices, const MaxUnpool3dFuncOptions& o) {
  const char* op = "max_unpool3d";
  if (!input.defined() || input.dim() < 3) {
    throw std::invalid_argument(std::string(op) + ": Input to max_unpooling3d should be a 4d or 5d Tensor, but got " +
                                (input.defined() ? shape_str(input.sizes()) : std::string("undefined")));
  }
  const std::vector<int64_t> size = unpool_output_size(input.sizes(), o.kernel_size().vec(), o.stride().vec(),
                                                       o.padding().vec(), o.output_size());
  return max_unpool_raw(input, indices, size, op);
}

}  // namespace colony::nn::functional
