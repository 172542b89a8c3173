// nn::Upsample, nn::PixelShuffle, nn::PixelUnshuffle and nn::ChannelShuffle: modules over
// F::interpolate, F::pixel_shuffle, F::pixel_unshuffle and F::channel_shuffle (nn/functional.h), with
// torch's options and printing.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "nn/functional.h"
#include "nn/module.h"

namespace colony::nn {

// torch.nn.Upsample: size or scale_factor (one value for every spatial dim, or one per dim), mode
// "nearest" (default), "linear", "bilinear", "bicubic", "trilinear" (or interpolate's others,
// "nearest-exact" and "area", which torch's Upsample passes through too), align_corners for the
// interpolating modes. Upsample(UpsampleOptions().scale_factor({2.0}).mode("bilinear")).
struct UpsampleOptions {
  COLONY_ARG(std::optional<std::vector<int64_t>>, size);
  COLONY_ARG(std::optional<std::vector<double>>, scale_factor);
  COLONY_ARG(std::string, mode) = "nearest";
  COLONY_ARG(std::optional<bool>, align_corners);
  COLONY_ARG(std::optional<bool>, recompute_scale_factor);

 public:
  // size({4, 6}) and scale_factor({2.0}) as a user writes them; one number for every spatial dim.
  auto& size(std::vector<int64_t> v) { return size(std::optional<std::vector<int64_t>>(std::move(v))); }
  auto& size(int64_t v) { return size(std::vector<int64_t>{v}); }
  auto& scale_factor(std::vector<double> v) { return scale_factor(std::optional<std::vector<double>>(std::move(v))); }
  auto& scale_factor(double v) { return scale_factor(std::vector<double>{v}); }
};

class Upsample : public Module {
  COLONY_CLONEABLE
 public:
  explicit Upsample(const UpsampleOptions& options = {});
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  UpsampleOptions options;

 protected:
  // The clone of a subclass: `fresh` takes this module's options (and state).
  std::shared_ptr<Module> clone_from(std::shared_ptr<Upsample> fresh) const {
    fresh->options = options;
    fresh->copy_state_from(*this);
    return fresh;
  }
};

// The size or scale_factor of F::upsample_nearest, F::upsample_bilinear and of the modules
// UpsamplingNearest2d and UpsamplingBilinear2d (exactly one of them; one value or one per dim).
struct UpsamplingOptions {
  COLONY_ARG(std::optional<std::vector<int64_t>>, size);
  COLONY_ARG(std::optional<std::vector<double>>, scale_factor);

 public:
  auto& size(std::vector<int64_t> v) { return size(std::optional<std::vector<int64_t>>(std::move(v))); }
  auto& size(int64_t v) { return size(std::vector<int64_t>{v}); }
  auto& scale_factor(std::vector<double> v) { return scale_factor(std::optional<std::vector<double>>(std::move(v))); }
  auto& scale_factor(double v) { return scale_factor(std::vector<double>{v}); }
};

namespace functional {
// torch's F.upsample_nearest and F.upsample_bilinear (deprecated there in favour of interpolate,
// without a warning here): F::interpolate in mode "nearest", and in mode "bilinear" with
// align_corners=True (4-D input).
Tensor upsample_nearest(const Tensor& input, const UpsamplingOptions& options);
Tensor upsample_bilinear(const Tensor& input, const UpsamplingOptions& options);
}  // namespace functional

// torch.nn.UpsamplingNearest2d and UpsamplingBilinear2d: Upsample with mode "nearest", and with mode
// "bilinear" and align_corners=True, printed as torch prints them ("UpsamplingBilinear2d(size=(3,
// 4), mode='bilinear')"). UpsamplingNearest2d(UpsamplingOptions().scale_factor(2.0)).
class UpsamplingNearest2d : public Upsample {
 public:
  explicit UpsamplingNearest2d(const UpsamplingOptions& options)
      : Upsample(UpsampleOptions().size(options.size()).scale_factor(options.scale_factor()).mode("nearest")) {}

 protected:
  std::shared_ptr<Module> clone_module() const override {
    return clone_from(std::make_shared<UpsamplingNearest2d>(UpsamplingOptions()));
  }
};
class UpsamplingBilinear2d : public Upsample {
 public:
  explicit UpsamplingBilinear2d(const UpsamplingOptions& options)
      : Upsample(UpsampleOptions()
                     .size(options.size())
                     .scale_factor(options.scale_factor())
                     .mode("bilinear")
                     .align_corners(true)) {}

 protected:
  std::shared_ptr<Module> clone_module() const override {
    return clone_from(std::make_shared<UpsamplingBilinear2d>(UpsamplingOptions()));
  }
};

struct PixelShuffleOptions {
  PixelShuffleOptions(int64_t upscale_factor) : upscale_factor_(upscale_factor) {}  // NOLINT
  COLONY_ARG(int64_t, upscale_factor);
};

class PixelShuffle : public Module {
  COLONY_CLONEABLE
 public:
  explicit PixelShuffle(const PixelShuffleOptions& options);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  PixelShuffleOptions options;
};

struct PixelUnshuffleOptions {
  PixelUnshuffleOptions(int64_t downscale_factor) : downscale_factor_(downscale_factor) {}  // NOLINT
  COLONY_ARG(int64_t, downscale_factor);
};

class PixelUnshuffle : public Module {
  COLONY_CLONEABLE
 public:
  explicit PixelUnshuffle(const PixelUnshuffleOptions& options);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  PixelUnshuffleOptions options;
};

// nn::ChannelShuffle(ChannelShuffleOptions(groups)) (torch.nn.ChannelShuffle): F::channel_shuffle.
// Prints as torch: "ChannelShuffle(groups=2)".
struct ChannelShuffleOptions {
  ChannelShuffleOptions(int64_t groups) : groups_(groups) {}  // NOLINT
  COLONY_ARG(int64_t, groups);
};

class ChannelShuffle : public Module {
  COLONY_CLONEABLE
 public:
  explicit ChannelShuffle(const ChannelShuffleOptions& options) : options(options) {}
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  ChannelShuffleOptions options;
};

}  // namespace colony::nn
