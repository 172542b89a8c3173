#include "data/synthetic.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <numeric>

#include "data/example_rng.h"
#include "ops/raw_ops.h"

namespace colony::data {
namespace {

struct Template {
  const char* name;
  uint8_t r, g, b;
  int kx, ky;  // stripe frequency in cycles per 32 px along x and y
};

// Pairs share a colour and differ in stripe orientation (and frequency).
constexpr std::array<Template, 10> kTemplates = {{
    {"red horizontal stripes", 220, 50, 40, 0, 4},
    {"red vertical stripes", 220, 50, 40, 4, 0},
    {"green diagonal stripes", 50, 200, 60, 3, 3},
    {"green anti-diagonal stripes", 50, 200, 60, 3, -3},
    {"blue fine horizontal stripes", 40, 70, 230, 0, 6},
    {"blue coarse vertical stripes", 40, 70, 230, 2, 0},
    {"yellow diagonal stripes", 230, 210, 50, 4, 4},
    {"yellow coarse horizontal stripes", 230, 210, 50, 0, 2},
    {"purple fine vertical stripes", 160, 60, 200, 6, 0},
    {"purple anti-diagonal stripes", 160, 60, 200, 2, -2},
}};

// sin over one period in 256 steps: a stripe pattern is a table lookup per pixel.
const std::array<float, 256>& sine_table() {
  static const std::array<float, 256> t = [] {
    std::array<float, 256> s{};
    for (int i = 0; i < 256; ++i) s[i] = static_cast<float>(std::sin(2.0 * M_PI * i / 256.0));
    return s;
  }();
  return t;
}

int64_t split_key(Split split) { return split == Split::kTrain ? 0 : 1; }

}  // namespace

SyntheticCIFAR10::SyntheticCIFAR10(Split split, uint64_t seed) : split_(split), seed_(seed), template_of_class_(10) {
  std::iota(template_of_class_.begin(), template_of_class_.end(), 0);
  ExampleRng rng(seed, -1, -1, 0);  // a stream no image uses
  for (int i = 9; i > 0; --i) std::swap(template_of_class_[i], template_of_class_[rng.uniform_int(i + 1)]);
}

int64_t SyntheticCIFAR10::target(int64_t index) const {
  check_index(index, "SyntheticCIFAR10");
  return ExampleRng(seed_, split_key(split_), index, 0).uniform_int(10);
}

std::vector<std::string> SyntheticCIFAR10::classes() const {
  std::vector<std::string> names;
  for (int t : template_of_class_) names.emplace_back(kTemplates[t].name);
  return names;
}

void SyntheticCIFAR10::render(int64_t index, uint8_t* out) const {
  const Template& tp = kTemplates[template_of_class_[target(index)]];
  ExampleRng rng(seed_, split_key(split_), index, 1);
  const float bg[3] = {30.0f + 120.0f * static_cast<float>(rng.uniform()),
                       30.0f + 120.0f * static_cast<float>(rng.uniform()),
                       30.0f + 120.0f * static_cast<float>(rng.uniform())};
  const float brightness = 0.7f + 0.45f * static_cast<float>(rng.uniform());
  const float fg[3] = {tp.r * brightness, tp.g * brightness, tp.b * brightness};
  const int64_t cx = 10 + rng.uniform_int(13), cy = 10 + rng.uniform_int(13);  // 16 ± 6
  const int64_t radius = 7 + rng.uniform_int(5);
  const int phase = static_cast<int>(rng.uniform_int(256));
  const bool has_patch = rng.uniform() < 0.5;
  const int64_t pw = 4 + rng.uniform_int(5), ph = 4 + rng.uniform_int(5);
  const int64_t px = rng.uniform_int(32 - pw + 1), py = rng.uniform_int(32 - ph + 1);
  const float patch[3] = {255.0f * static_cast<float>(rng.uniform()), 255.0f * static_cast<float>(rng.uniform()),
                          255.0f * static_cast<float>(rng.uniform())};
  const auto& sine = sine_table();

  // Noise: one byte per value in (y, x, channel) order, eight bytes per draw, low byte first;
  // drawn up front so that each channel's row below is a straight loop over x that the compiler
  // vectorizes (with -fno-trapping-math: a scalar loop took ~8 % of a one-thread LeNet step).
  uint8_t noise[3 * 1024];
  for (int i = 0; i < 3 * 1024; i += 8) {
    const uint64_t bits = rng.next_u64();
    std::memcpy(noise + i, &bits, 8);  // little-endian: byte 0 is the low byte
  }
  const int r2 = static_cast<int>(radius * radius), disc_x = static_cast<int>(cx);
  const int patch_x0 = static_cast<int>(px), patch_x1 = static_cast<int>(px + pw);
  for (int y = 0; y < 32; ++y) {
    const int dy = y - static_cast<int>(cy);
    const bool patch_row = has_patch && y >= py && y < py + ph;
    float stripe[32];
    for (int x = 0; x < 32; ++x)
      stripe[x] = 0.55f + 0.45f * sine[static_cast<size_t>((tp.kx * x + tp.ky * y) * 8 + phase) & 255];
    for (int c = 0; c < 3; ++c) {
      const float pc = patch[c], fc = fg[c], bc = bg[c];
      const uint8_t* nz = noise + y * 32 * 3 + c;  // stride 3
      uint8_t* dst = out + c * 1024 + y * 32;
      for (int x = 0; x < 32; ++x) {
        const int dx = x - disc_x;
        const bool in_disc = dx * dx + dy * dy <= r2;
        const bool in_patch = patch_row & (x >= patch_x0) & (x < patch_x1);  // & : no branches
        float v = in_disc ? fc * stripe[x] : bc;
        v = in_patch ? pc : v;
        // One byte of noise mapped to an integer in [-20, 20].
        v += static_cast<float>(((nz[x * 3] * 41) >> 8) - 20);
        v = v < 0.0f ? 0.0f : v;  // clamped to [0, 255] by value selects (std::min/max pick by reference)
        v = v > 255.0f ? 255.0f : v;
        dst[x] = static_cast<uint8_t>(static_cast<int>(v + 0.5f));
      }
    }
  }
}

Example SyntheticCIFAR10::get(int64_t index) const {
  Tensor image = raw::empty({3, 32, 32}, kUInt8);
  render(index, image.data_ptr<uint8_t>());
  return {image, raw::scalar_tensor(static_cast<double>(target(index)), kInt64)};
}

void SyntheticCIFAR10::copy_into(int64_t index, Batch& batch, int64_t row, const ExampleContext& ctx) const {
  if (batch.data.dtype() != kUInt8 || !batch.data.is_contiguous() || batch.data.dim() != 4 ||
      batch.data.numel() != batch.data.size(0) * 3072) {
    Dataset::copy_into(index, batch, row, ctx);
    return;
  }
  render(index, batch.data.data_ptr<uint8_t>() + row * 3072);
  batch.target.data_ptr<int64_t>()[row] = target(index);
}

}  // namespace colony::data
