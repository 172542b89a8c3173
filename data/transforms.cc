#include "data/transforms.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "ops/raw_ops.h"

namespace colony::data {
namespace {

std::string image_str(const ImageShape& s) { return shape_str(s.shape()); }

// x / 255 for every uint8 value, computed once: the same floats as a division, at the cost of a load.
const std::array<float, 256>& byte_to_unit() {
  static const std::array<float, 256> table = [] {
    std::array<float, 256> t{};
    for (int i = 0; i < 256; ++i) t[i] = static_cast<float>(i) / 255.0f;
    return t;
  }();
  return table;
}

template <typename T>
float to_float(T v) {
  if constexpr (std::is_same_v<T, uint8_t>) {
    return byte_to_unit()[v];
  } else {
    return static_cast<float>(v);
  }
}

template <typename T>
void convert_typed(const T* in, const ImageShape& s, ImageLayout layout, float* out) {
  const int64_t hw = s.height * s.width;
  if (layout == ImageLayout::kCHW) {
    for (int64_t i = 0; i < s.numel(); ++i) out[i] = to_float(in[i]);
    return;
  }
  for (int64_t p = 0; p < hw; ++p) {
    for (int64_t c = 0; c < s.channels; ++c) out[c * hw + p] = to_float(in[p * s.channels + c]);
  }
}

}  // namespace

ImageShape ToTensor::output_shape(const Shape& raw) const {
  if (raw.size() == 2) return {1, raw[0], raw[1]};
  if (raw.size() == 3) {
    return layout_ == ImageLayout::kCHW ? ImageShape{raw[0], raw[1], raw[2]} : ImageShape{raw[2], raw[0], raw[1]};
  }
  throw std::invalid_argument("ToTensor: expected an image of shape [H, W] or " +
                              std::string(layout_ == ImageLayout::kCHW ? "[C, H, W]" : "[H, W, C]") + ", got " +
                              shape_str(raw));
}

void ToTensor::convert(const Tensor& raw, float* out) const {
  const ImageShape s = output_shape(raw.sizes());
  Tensor src = raw.is_cpu() && raw.is_contiguous() ? raw : raw::contiguous(raw::to(raw, kCPU, raw.dtype()));
  // A 2-D image is the 1-channel case of either layout.
  const ImageLayout layout = raw.dim() == 2 ? ImageLayout::kCHW : layout_;
  switch (src.dtype()) {
    case DType::UInt8:
      convert_typed(src.data_ptr<uint8_t>(), s, layout, out);
      break;
    case DType::Float32:
      convert_typed(src.data_ptr<float>(), s, layout, out);
      break;
    case DType::Float64:
      convert_typed(src.data_ptr<double>(), s, layout, out);
      break;
    default:
      throw std::invalid_argument(std::string("ToTensor: expected uint8, float32 or float64 images, got ") +
                                  dtype_name(src.dtype()));
  }
}

Normalize::Normalize(std::vector<double> mean, std::vector<double> std) : mean_(std::move(mean)), std_(std::move(std)) {
  if (mean_.empty() || mean_.size() != std_.size()) {
    throw std::invalid_argument("Normalize: mean and std need the same positive number of values, got " +
                                std::to_string(mean_.size()) + " and " + std::to_string(std_.size()));
  }
  for (size_t c = 0; c < mean_.size(); ++c) {
    mean_f_.push_back(static_cast<float>(mean_[c]));
    std_f_.push_back(static_cast<float>(std_[c]));
    if (std_f_.back() == 0.0f) {
      throw std::invalid_argument("Normalize: std[" + std::to_string(c) +
                                  "] evaluated to zero in float32, leading to division by zero");
    }
  }
}

ImageShape Normalize::output_shape(const ImageShape& in) const {
  if (mean_.size() != 1 && static_cast<int64_t>(mean_.size()) != in.channels) {
    throw std::invalid_argument("Normalize: " + std::to_string(mean_.size()) +
                                " mean/std values for an image of shape " + image_str(in) + " (" +
                                std::to_string(in.channels) + " channels)");
  }
  return in;
}

void Normalize::apply(const float* in, const ImageShape& s, float* out, ExampleRng&) const {
  const int64_t hw = s.height * s.width;
  for (int64_t c = 0; c < s.channels; ++c) {
    const size_t k = mean_f_.size() == 1 ? 0 : static_cast<size_t>(c);
    const float m = mean_f_[k], sd = std_f_[k];
    const float* src = in + c * hw;
    float* dst = out + c * hw;
    for (int64_t i = 0; i < hw; ++i) dst[i] = (src[i] - m) / sd;
  }
}

RandomCrop::RandomCrop(int64_t height, int64_t width, int64_t padding)
    : height_(height), width_(width), padding_(padding) {
  if (height <= 0 || width <= 0 || padding < 0) {
    throw std::invalid_argument("RandomCrop: expected a positive size and a non-negative padding, got size (" +
                                std::to_string(height) + ", " + std::to_string(width) + ") and padding " +
                                std::to_string(padding));
  }
}

ImageShape RandomCrop::output_shape(const ImageShape& in) const {
  const int64_t h = in.height + 2 * padding_, w = in.width + 2 * padding_;
  if (height_ > h || width_ > w) {
    throw std::invalid_argument("RandomCrop: crop size (" + std::to_string(height_) + ", " + std::to_string(width_) +
                                ") is larger than the padded image (" + std::to_string(h) + ", " + std::to_string(w) +
                                ") of an input of shape " + image_str(in));
  }
  return {in.channels, height_, width_};
}

void RandomCrop::apply(const float* in, const ImageShape& s, float* out, ExampleRng& rng) const {
  const int64_t padded_h = s.height + 2 * padding_, padded_w = s.width + 2 * padding_;
  const int64_t top = rng.uniform_int(padded_h - height_ + 1);
  const int64_t left = rng.uniform_int(padded_w - width_ + 1);
  // Output (y, x) reads input (y + top - padding, x + left - padding), zero outside the image.
  const int64_t y0 = top - padding_, x0 = left - padding_;
  const int64_t x_begin = std::clamp<int64_t>(-x0, 0, width_);
  const int64_t x_end = std::clamp<int64_t>(s.width - x0, x_begin, width_);
  for (int64_t c = 0; c < s.channels; ++c) {
    const float* src = in + c * s.height * s.width;
    for (int64_t y = 0; y < height_; ++y) {
      float* dst = out + (c * height_ + y) * width_;
      const int64_t sy = y + y0;
      if (sy < 0 || sy >= s.height) {
        std::fill(dst, dst + width_, 0.0f);
        continue;
      }
      std::fill(dst, dst + x_begin, 0.0f);
      std::memcpy(dst + x_begin, src + sy * s.width + x_begin + x0, sizeof(float) * (x_end - x_begin));
      std::fill(dst + x_end, dst + width_, 0.0f);
    }
  }
}

RandomHorizontalFlip::RandomHorizontalFlip(double p) : p_(p) {
  if (!(p >= 0.0 && p <= 1.0)) {
    throw std::invalid_argument("RandomHorizontalFlip: p must be in [0, 1], got " + std::to_string(p));
  }
}

void RandomHorizontalFlip::apply(const float* in, const ImageShape& s, float* out, ExampleRng& rng) const {
  if (!(rng.uniform() < p_)) {
    std::memcpy(out, in, sizeof(float) * s.numel());
    return;
  }
  for (int64_t r = 0; r < s.channels * s.height; ++r) {
    const float* src = in + r * s.width;
    float* dst = out + r * s.width;
    for (int64_t x = 0; x < s.width; ++x) dst[x] = src[s.width - 1 - x];
  }
}

}  // namespace colony::data
