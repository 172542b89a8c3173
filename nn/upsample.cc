#include "nn/upsample.h"

#include <stdexcept>

#include "nn/repr.h"

namespace colony::nn {
namespace F = functional;

Upsample::Upsample(const UpsampleOptions& options) : options(options) {
  // torch's Upsample hands any of interpolate's modes through; a misspelt one fails here, early.
  const std::string& m = options.mode();
  if (m != "nearest" && m != "nearest-exact" && m != "linear" && m != "bilinear" && m != "bicubic" &&
      m != "trilinear" && m != "area") {
    throw std::invalid_argument("Upsample: unknown mode '" + m +
                                "'; expected nearest, nearest-exact, linear, bilinear, bicubic, trilinear or area");
  }
}

Tensor Upsample::forward(const Tensor& input) {
  return F::interpolate(input, F::InterpolateFuncOptions()
                                   .size(options.size())
                                   .scale_factor(options.scale_factor())
                                   .mode(options.mode())
                                   .align_corners(options.align_corners())
                                   .recompute_scale_factor(options.recompute_scale_factor()));
}

namespace {

// Python prints what the user passed: one number, or a tuple of one per dim.
template <typename T, typename Print>
std::string one_or_tuple(const std::vector<T>& v, Print print) {
  if (v.size() == 1) return print(v[0]);
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + print(v[i]);
  return s + ")";
}

}  // namespace

// torch: "scale_factor=2.0, mode='nearest'" or "size=(4, 6), mode='bilinear'".
std::string Upsample::extra_repr() const {
  std::string s = options.scale_factor()
                      ? "scale_factor=" + one_or_tuple(*options.scale_factor(), [](double v) { return repr::py_float(v); })
                      : "size=" + (options.size() ? one_or_tuple(*options.size(), [](int64_t v) { return std::to_string(v); })
                                                  : std::string("None"));
  return s + ", mode='" + options.mode() + "'";
}

namespace functional {

Tensor upsample_nearest(const Tensor& input, const UpsamplingOptions& options) {
  return interpolate(
      input, InterpolateFuncOptions().size(options.size()).scale_factor(options.scale_factor()).mode("nearest"));
}

Tensor upsample_bilinear(const Tensor& input, const UpsamplingOptions& options) {
  return interpolate(input, InterpolateFuncOptions()
                                .size(options.size())
                                .scale_factor(options.scale_factor())
                                .mode("bilinear")
                                .align_corners(true));
}

}  // namespace functional

PixelShuffle::PixelShuffle(const PixelShuffleOptions& options) : options(options) {
  if (options.upscale_factor() <= 0) {
    throw std::invalid_argument("PixelShuffle: upscale_factor must be positive, got " +
                                std::to_string(options.upscale_factor()));
  }
}
Tensor PixelShuffle::forward(const Tensor& input) { return F::pixel_shuffle(input, options.upscale_factor()); }
std::string PixelShuffle::extra_repr() const { return "upscale_factor=" + std::to_string(options.upscale_factor()); }

PixelUnshuffle::PixelUnshuffle(const PixelUnshuffleOptions& options) : options(options) {
  if (options.downscale_factor() <= 0) {
    throw std::invalid_argument("PixelUnshuffle: downscale_factor must be positive, got " +
                                std::to_string(options.downscale_factor()));
  }
}
Tensor PixelUnshuffle::forward(const Tensor& input) { return F::pixel_unshuffle(input, options.downscale_factor()); }
std::string PixelUnshuffle::extra_repr() const {
  return "downscale_factor=" + std::to_string(options.downscale_factor());
}

Tensor ChannelShuffle::forward(const Tensor& input) { return F::channel_shuffle(input, options.groups()); }
std::string ChannelShuffle::extra_repr() const { return "groups=" + std::to_string(options.groups()); }

}  // namespace colony::nn
