// Image transforms in the style of torchvision: ToTensor, Normalize, RandomCrop, RandomHorizontalFlip.
//
// A transform maps one float image in CHW layout to another; dataset.transform(...) (see
// transformed_dataset.h) chains them behind a dataset. The step from the dataset's raw images to
// floats is ToTensor's: uint8 values are scaled to [0, 1] (x / 255), float values pass unchanged.
// When a chain does not start with ToTensor, ToTensor() (CHW input) is applied implicitly, so
// `CIFAR10(...).transform(Normalize(...))` means torchvision's Compose([ToTensor(), Normalize(...)]).
//
// Random transforms draw from the example's own stream (ExampleRng keyed by seed, epoch, index and
// the transform's position in the chain): a batch is the same whichever worker built it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/example_rng.h"
#include "tensor/tensor.h"

namespace colony::data {

struct ImageShape {
  int64_t channels = 0, height = 0, width = 0;
  int64_t numel() const { return channels * height * width; }
  Shape shape() const { return {channels, height, width}; }
  bool operator==(const ImageShape& o) const {
    return channels == o.channels && height == o.height && width == o.width;
  }
  bool operator!=(const ImageShape& o) const { return !(*this == o); }
};

class Transform {
 public:
  virtual ~Transform() = default;
  virtual std::string name() const = 0;
  // The shape produced from an input of shape `in`; throws (naming the transform) when `in` does
  // not suit it.
  virtual ImageShape output_shape(const ImageShape& in) const { return in; }
  // Reads in.numel() floats (CHW) from `in` and writes output_shape(in).numel() floats to `out`
  // (`out` never aliases `in`).
  virtual void apply(const float* in, const ImageShape& in_shape, float* out, ExampleRng& rng) const = 0;
};

enum class ImageLayout { kCHW, kHWC };

// uint8 images to float in [0, 1] (x / 255), float32/float64 images as they are; [H, W] becomes
// [1, H, W], and HWC input is transposed to CHW. Only valid as the first transform of a chain.
class ToTensor {
 public:
  explicit ToTensor(ImageLayout layout = ImageLayout::kCHW) : layout_(layout) {}
  ImageLayout layout() const { return layout_; }
  ImageShape output_shape(const Shape& raw) const;
  void convert(const Tensor& raw, float* out) const;  // writes output_shape(raw.sizes()).numel() floats

 private:
  ImageLayout layout_;
};

// out[c] = (in[c] - mean[c]) / std[c]. One mean/std value applies to every channel.
class Normalize : public Transform {
 public:
  Normalize(std::vector<double> mean, std::vector<double> std);
  std::string name() const override { return "Normalize"; }
  ImageShape output_shape(const ImageShape& in) const override;
  void apply(const float* in, const ImageShape& in_shape, float* out, ExampleRng& rng) const override;
  const std::vector<double>& mean() const { return mean_; }
  const std::vector<double>& std() const { return std_; }

 private:
  std::vector<double> mean_, std_;
  std::vector<float> mean_f_, std_f_;
};

// Zero-pads each side by `padding` (torchvision's constant fill 0), then crops a [height, width]
// window whose top-left corner is uniform over the valid positions (row drawn first, then column).
class RandomCrop : public Transform {
 public:
  explicit RandomCrop(int64_t size, int64_t padding = 0) : RandomCrop(size, size, padding) {}
  RandomCrop(int64_t height, int64_t width, int64_t padding);
  std::string name() const override { return "RandomCrop"; }
  ImageShape output_shape(const ImageShape& in) const override;
  void apply(const float* in, const ImageShape& in_shape, float* out, ExampleRng& rng) const override;

 private:
  int64_t height_, width_, padding_;
};

// Mirrors the image left-right with probability p.
class RandomHorizontalFlip : public Transform {
 public:
  explicit RandomHorizontalFlip(double p = 0.5);
  std::string name() const override { return "RandomHorizontalFlip"; }
  void apply(const float* in, const ImageShape& in_shape, float* out, ExampleRng& rng) const override;

 private:
  double p_;
};

}  // namespace colony::data
