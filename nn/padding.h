// The padding modules of torch.nn: ZeroPad1d/2d/3d, ConstantPad1d/2d/3d, ReflectionPad1d/2d/3d,
// ReplicationPad1d/2d/3d and CircularPad1d/2d/3d, thin modules over F::pad (nn/functional.h) in
// its "constant", "reflect", "replicate" and "circular" modes.
//
// Options as libtorch's: one number for every side (ReflectionPad2d(2)) or the full list of 2 * D
// values, last dim first ((left, right), then (top, bottom), then (front, back)):
// ZeroPad2d({1, 2, 3, 4}), ConstantPad1dOptions({1, 2}, 3.5). torch's Python modules also take a
// shorter tuple (and pad fewer dims); Colony, as libtorch, takes the full list only. Negative
// values crop. Inputs as F::pad takes them: unbatched ones too ([C, W] for 1-D reflection,
// replication and circular padding, [C, H, W] for 2-D, [C, D, H, W] for 3-D; the zero and constant
// pads any input with at least D dims), with torch's errors (a reflection pad must be smaller than
// the dim; CircularPad's "expected 3D or 4D input (got 2D input)"). Printed as torch prints them:
// ReflectionPad2d((1, 1, 2, 0)), ConstantPad1d(padding=(2, 2), value=3.5).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "base/arg.h"
#include "nn/module.h"

namespace colony::nn {

// The padding of a D-dim padding module: one number for all 2 * D sides, or 2 * D values.
template <int64_t D>
struct PadOptions {
  PadOptions(int64_t padding) : padding_(2 * D, padding) {}                      // NOLINT: ReflectionPad2d(2)
  PadOptions(std::initializer_list<int64_t> padding) : padding_(padding) {}      // NOLINT: ZeroPad2d({1, 2, 3, 4})
  PadOptions(std::vector<int64_t> padding) : padding_(std::move(padding)) {}     // NOLINT
  COLONY_ARG(std::vector<int64_t>, padding);
};

// ConstantPadNd's options: the padding and the fill value (torch's value has no default).
template <int64_t D>
struct ConstantPadOptions {
  ConstantPadOptions(PadOptions<D> padding, double value) : padding_(padding.padding()), value_(value) {}
  COLONY_ARG(std::vector<int64_t>, padding);
  COLONY_ARG(double, value);
};

using ZeroPad1dOptions = PadOptions<1>;
using ZeroPad2dOptions = PadOptions<2>;
using ZeroPad3dOptions = PadOptions<3>;
using ConstantPad1dOptions = ConstantPadOptions<1>;
using ConstantPad2dOptions = ConstantPadOptions<2>;
using ConstantPad3dOptions = ConstantPadOptions<3>;
using ReflectionPad1dOptions = PadOptions<1>;
using ReflectionPad2dOptions = PadOptions<2>;
using ReflectionPad3dOptions = PadOptions<3>;
using ReplicationPad1dOptions = PadOptions<1>;
using ReplicationPad2dOptions = PadOptions<2>;
using ReplicationPad3dOptions = PadOptions<3>;
using CircularPad1dOptions = PadOptions<1>;
using CircularPad2dOptions = PadOptions<2>;
using CircularPad3dOptions = PadOptions<3>;

namespace detail {

// What every padding module is: F::pad of `padding` in `mode` (with `value` for "constant").
class PadBase : public Module {
 public:
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const std::vector<int64_t>& padding() const { return padding_; }

 protected:
  // Checks that padding has 2 * dims values (torch's libtorch ExpandingArray), naming the module.
  PadBase(std::vector<int64_t> padding, int64_t dims, std::string mode, double value, bool print_value,
          const char* module);

 private:
  std::vector<int64_t> padding_;
  int64_t dims_;
  std::string mode_;
  double value_;
  bool print_value_;  // ConstantPad prints "padding=(...), value=v"; the others "(...)"
};

}  // namespace detail

#define COLONY_PAD_MODULE(Name, D, options_type, mode, value_expr, print_value)                       \
  class Name : public detail::PadBase {                                                                \
    COLONY_CLONEABLE \
   public:                                                                                             \
    explicit Name(const options_type& options)                                                         \
        : detail::PadBase(options.padding(), D, mode, value_expr, print_value, #Name), options(options) {} \
    options_type options;                                                                              \
  }

COLONY_PAD_MODULE(ZeroPad1d, 1, ZeroPad1dOptions, "constant", 0.0, false);
COLONY_PAD_MODULE(ZeroPad2d, 2, ZeroPad2dOptions, "constant", 0.0, false);
COLONY_PAD_MODULE(ZeroPad3d, 3, ZeroPad3dOptions, "constant", 0.0, false);
COLONY_PAD_MODULE(ConstantPad1d, 1, ConstantPad1dOptions, "constant", options.value(), true);
COLONY_PAD_MODULE(ConstantPad2d, 2, ConstantPad2dOptions, "constant", options.value(), true);
COLONY_PAD_MODULE(ConstantPad3d, 3, ConstantPad3dOptions, "constant", options.value(), true);
COLONY_PAD_MODULE(ReflectionPad1d, 1, ReflectionPad1dOptions, "reflect", 0.0, false);
COLONY_PAD_MODULE(ReflectionPad2d, 2, ReflectionPad2dOptions, "reflect", 0.0, false);
COLONY_PAD_MODULE(ReflectionPad3d, 3, ReflectionPad3dOptions, "reflect", 0.0, false);
COLONY_PAD_MODULE(ReplicationPad1d, 1, ReplicationPad1dOptions, "replicate", 0.0, false);
COLONY_PAD_MODULE(ReplicationPad2d, 2, ReplicationPad2dOptions, "replicate", 0.0, false);
COLONY_PAD_MODULE(ReplicationPad3d, 3, ReplicationPad3dOptions, "replicate", 0.0, false);
COLONY_PAD_MODULE(CircularPad1d, 1, CircularPad1dOptions, "circular", 0.0, false);
COLONY_PAD_MODULE(CircularPad2d, 2, CircularPad2dOptions, "circular", 0.0, false);
COLONY_PAD_MODULE(CircularPad3d, 3, CircularPad3dOptions, "circular", 0.0, false);

#undef COLONY_PAD_MODULE

}  // namespace colony::nn
