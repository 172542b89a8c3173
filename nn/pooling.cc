#include "nn/pooling.h"

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

}  // namespace colony::nn
