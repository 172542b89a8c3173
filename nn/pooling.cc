#include "nn/pooling.h"

#include <cmath>
#include <stdexcept>

#include "nn/repr.h"

namespace colony::nn {
namespace {

std::string optional_str(const std::optional<int64_t>& v) { return v ? std::to_string(*v) : "None"; }

// torch checks the sizes when the pool runs; a negative one can be refused at construction.
void check_output_size(const std::optional<int64_t>& v, const char* module) {
  if (v && *v < 0) {
    throw std::invalid_argument(std::string(module) + ": output_size must be non-negative, got " + std::to_string(*v));
  }
}

// An OptionalInt3 as torch prints what it was given: 2, or (2, None, 3).
std::string optional3_str(const functional::OptionalInt3& s) {
  if (s.one_number) return optional_str(s.d);
  return "(" + optional_str(s.d) + ", " + optional_str(s.h) + ", " + optional_str(s.w) + ")";
}

void check_output_size3(const functional::OptionalInt3& s, const char* module) {
  check_output_size(s.d, module);
  check_output_size(s.h, module);
  check_output_size(s.w, module);
}

// Python's print of the number given as norm_type: 2 for an integral value, 1.5 otherwise.
std::string norm_type_str(double p) {
  return p == std::floor(p) && std::fabs(p) < 1e15 ? std::to_string(static_cast<int64_t>(p)) : repr::py_float(p);
}

void check_norm_type(double p) {
  if (p == 0) throw std::invalid_argument("norm_type must be a non-zero value, but got 0");
}

template <typename Ratio>
void check_fractional(bool has_size, const std::optional<Ratio>& ratio, const std::vector<double>& values,
                      const char* module) {
  if (!has_size && !ratio) {
    throw std::invalid_argument(std::string(module) + " requires specifying either an output size, or a pooling ratio");
  }
  if (has_size && ratio) throw std::invalid_argument("only one of output_size and output_ratio may be specified");
  if (ratio) {
    for (double r : values) {
      if (!(0 < r && r < 1)) {
        throw std::invalid_argument(std::string(module) + ": output_ratio must be between 0 and 1 (got " +
                                    repr::py_float(r) + ")");
      }
    }
  }
}

}  // namespace

AdaptiveMaxPool2d::AdaptiveMaxPool2d(const AdaptiveMaxPool2dOptions& o) : options(o) {
  check_output_size(o.output_size().h, "AdaptiveMaxPool2d");
  check_output_size(o.output_size().w, "AdaptiveMaxPool2d");
}

// torch prints output_size as it was given: 7, or (3, None).
std::string AdaptiveMaxPool2d::extra_repr() const {
  const functional::OptionalInt2& s = options.output_size();
  if (s.one_number) return "output_size=" + optional_str(s.h);
  return "output_size=(" + optional_str(s.h) + ", " + optional_str(s.w) + ")";
}

AdaptiveMaxPool1d::AdaptiveMaxPool1d(const AdaptiveMaxPool1dOptions& o) : options(o) {
  check_output_size(o.output_size(), "AdaptiveMaxPool1d");
}

std::string AdaptiveMaxPool1d::extra_repr() const { return "output_size=" + std::to_string(options.output_size()); }

Tensor MaxUnpool2d::forward(const Tensor& input, const Tensor& indices,
                            const std::optional<std::vector<int64_t>>& output_size) {
  return functional::max_unpool2d(input, indices,
                                  functional::MaxUnpool2dFuncOptions(options.kernel_size())
                                      .stride(options.stride())
                                      .padding(options.padding())
                                      .output_size(output_size));
}

// torch stores the sizes as tuples (_pair, _single) and prints them so.
std::string MaxUnpool2d::extra_repr() const {
  return "kernel_size=" + repr::tuple(options.kernel_size()) + ", stride=" + repr::tuple(options.stride()) +
         ", padding=" + repr::tuple(options.padding());
}

Tensor MaxUnpool1d::forward(const Tensor& input, const Tensor& indices,
                            const std::optional<std::vector<int64_t>>& output_size) {
  return functional::max_unpool1d(input, indices,
                                  functional::MaxUnpool1dFuncOptions(options.kernel_size())
                                      .stride(options.stride())
                                      .padding(options.padding())
                                      .output_size(output_size));
}

std::string MaxUnpool1d::extra_repr() const {
  return "kernel_size=" + repr::tuple1(options.kernel_size()) + ", stride=" + repr::tuple1(options.stride()) +
         ", padding=" + repr::tuple1(options.padding());
}

std::string MaxPool3d::extra_repr() const {
  return "kernel_size=" + repr::int_or_tuple3(options.kernel_size()) + ", stride=" + repr::int_or_tuple3(options.stride()) +
         ", padding=" + repr::int_or_tuple3(options.padding()) + ", dilation=" + repr::int_or_tuple3(options.dilation()) +
         ", ceil_mode=" + (options.ceil_mode() ? "True" : "False");
}

std::string AvgPool3d::extra_repr() const {
  return "kernel_size=" + repr::int_or_tuple3(options.kernel_size()) + ", stride=" + repr::int_or_tuple3(options.stride()) +
         ", padding=" + repr::int_or_tuple3(options.padding());
}

AdaptiveAvgPool3d::AdaptiveAvgPool3d(const AdaptiveAvgPool3dOptions& o) : options(o) {
  check_output_size3(o.output_size(), "AdaptiveAvgPool3d");
}

std::string AdaptiveAvgPool3d::extra_repr() const { return "output_size=" + optional3_str(options.output_size()); }

AdaptiveMaxPool3d::AdaptiveMaxPool3d(const AdaptiveMaxPool3dOptions& o) : options(o) {
  check_output_size3(o.output_size(), "AdaptiveMaxPool3d");
}

std::string AdaptiveMaxPool3d::extra_repr() const { return "output_size=" + optional3_str(options.output_size()); }

Tensor MaxUnpool3d::forward(const Tensor& input, const Tensor& indices,
                            const std::optional<std::vector<int64_t>>& output_size) {
  return functional::max_unpool3d(input, indices,
                                  functional::MaxUnpool3dFuncOptions(options.kernel_size())
                                      .stride(options.stride())
                                      .padding(options.padding())
                                      .output_size(output_size));
}

std::string MaxUnpool3d::extra_repr() const {
  return "kernel_size=" + repr::tuple3(options.kernel_size()) + ", stride=" + repr::tuple3(options.stride()) +
         ", padding=" + repr::tuple3(options.padding());
}

LPPool1d::LPPool1d(const LPPool1dOptions& o) : options(o) { check_norm_type(o.norm_type()); }
LPPool2d::LPPool2d(const LPPool2dOptions& o) : options(o) { check_norm_type(o.norm_type()); }
LPPool3d::LPPool3d(const LPPool3dOptions& o) : options(o) { check_norm_type(o.norm_type()); }

// torch keeps the arguments as given: stride None until one is set.
std::string LPPool1d::extra_repr() const {
  return "norm_type=" + norm_type_str(options.norm_type()) + ", kernel_size=" + std::to_string(options.kernel_size()) +
         ", stride=" + optional_str(options.stride()) + ", ceil_mode=" + (options.ceil_mode() ? "True" : "False");
}

std::string LPPool2d::extra_repr() const {
  return "norm_type=" + norm_type_str(options.norm_type()) + ", kernel_size=" +
         repr::int_or_tuple(options.kernel_size()) + ", stride=" +
         (options.stride() ? repr::int_or_tuple(*options.stride()) : std::string("None")) +
         ", ceil_mode=" + (options.ceil_mode() ? "True" : "False");
}

std::string LPPool3d::extra_repr() const {
  return "norm_type=" + norm_type_str(options.norm_type()) + ", kernel_size=" +
         repr::int_or_tuple3(options.kernel_size()) + ", stride=" +
         (options.stride() ? repr::int_or_tuple3(*options.stride()) : std::string("None")) +
         ", ceil_mode=" + (options.ceil_mode() ? "True" : "False");
}

FractionalMaxPool2d::FractionalMaxPool2d(const FractionalMaxPool2dOptions& o) : options(o) {
  const auto& r = o.output_ratio();
  check_fractional(o.output_size().has_value(), r, r ? std::vector<double>{r->h, r->w} : std::vector<double>{},
                   "FractionalMaxPool2d");
  if (o._random_samples().defined()) random_samples = register_buffer("_random_samples", o._random_samples());
}

std::tuple<Tensor, Tensor> FractionalMaxPool2d::forward_with_indices(const Tensor& input) {
  auto o = options;
  return functional::fractional_max_pool2d_with_indices(input, o._random_samples(random_samples));
}

FractionalMaxPool3d::FractionalMaxPool3d(const FractionalMaxPool3dOptions& o) : options(o) {
  const Int3 k = o.kernel_size();
  if (k.d <= 0 || k.h <= 0 || k.w <= 0) {
    throw std::invalid_argument("FractionalMaxPool3d: kernel_size must be greater than 0, but got " +
                                repr::int_or_tuple3(k));
  }
  const auto& r = o.output_ratio();
  check_fractional(o.output_size().has_value(), r, r ? std::vector<double>{r->d, r->h, r->w} : std::vector<double>{},
                   "FractionalMaxPool3d");
  if (o._random_samples().defined()) random_samples = register_buffer("_random_samples", o._random_samples());
}

std::tuple<Tensor, Tensor> FractionalMaxPool3d::forward_with_indices(const Tensor& input) {
  auto o = options;
  return functional::fractional_max_pool3d_with_indices(input, o._random_samples(random_samples));
}

}  // namespace colony::nn
