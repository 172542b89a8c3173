#include "data/transforms.h"

#include <gtest/gtest.h>

#include <set>

#include "data/image_dataset.h"
#include "data/transformed_dataset.h"
#include "tests/test_util.h"

namespace colony::data {
namespace {

using colony::testing::throws_with;

// Images with the given values ([N, C, H, W] uint8), targets 0..N-1.
class Images : public Transformable<Images, InMemoryImageDataset> {
 public:
  Images(int64_t n, int64_t c, int64_t h, int64_t w, std::vector<uint8_t> values) {
    Tensor images = raw::empty({n, c, h, w}, kUInt8);
    std::copy(values.begin(), values.end(), images.data_ptr<uint8_t>());
    Tensor targets = raw::arange(0, static_cast<double>(n), 1, TensorOptions(kInt64));
    static_cast<InMemoryImageDataset&>(*this) = InMemoryImageDataset(images, targets);
  }
};

std::vector<float> floats(const Tensor& t) {
  const float* p = t.data_ptr<float>();
  return std::vector<float>(p, p + t.numel());
}

Images ramp(int64_t n, int64_t c, int64_t h, int64_t w) {
  std::vector<uint8_t> v(static_cast<size_t>(n * c * h * w));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint8_t>(i + 1);
  return Images(n, c, h, w, v);
}

TEST(ToTensor, ScalesBytesToUnitInterval) {
  auto ds = Images(1, 1, 1, 4, {0, 51, 128, 255}).transform(ToTensor());
  EXPECT_EQ(floats(ds.get(0).data), (std::vector<float>{0.0f, 0.2f, 128.0f / 255.0f, 1.0f}));
}

TEST(ToTensor, TransposesHwcToChw) {
  ToTensor t(ImageLayout::kHWC);
  Tensor hwc = raw::empty({1, 2, 3}, kUInt8);  // H=1, W=2, C=3: pixels (0,51,102) and (153,204,255)
  uint8_t vals[] = {0, 51, 102, 153, 204, 255};
  std::copy(vals, vals + 6, hwc.data_ptr<uint8_t>());
  EXPECT_EQ(t.output_shape(hwc.sizes()), (ImageShape{3, 1, 2}));
  std::vector<float> out(6);
  t.convert(hwc, out.data());
  EXPECT_EQ(out, (std::vector<float>{0.0f, 0.6f, 0.2f, 0.8f, 0.4f, 1.0f}));
}

TEST(ToTensor, TwoDimensionalImagesGetOneChannelAndFloatsPassUnchanged) {
  ToTensor t;
  Tensor img = raw::tensor({{0.25, -1.0}, {3.0, 0.5}});
  EXPECT_EQ(t.output_shape(img.sizes()), (ImageShape{1, 2, 2}));
  std::vector<float> out(4);
  t.convert(img, out.data());
  EXPECT_EQ(out, (std::vector<float>{0.25f, -1.0f, 3.0f, 0.5f}));
  EXPECT_TRUE(throws_with([&] { t.convert(raw::zeros({2, 2}, kInt64), out.data()); }, "ToTensor: expected uint8"));
  EXPECT_TRUE(throws_with([&] { t.output_shape({2, 2, 2, 2}); }, "got [2, 2, 2, 2]"));
}

TEST(Normalize, SubtractsMeanAndDividesByStdPerChannel) {
  // Two channels of two pixels: bytes 0, 255 | 51, 102 -> 0, 1 | 0.2, 0.4 before normalizing.
  auto ds = Images(1, 2, 1, 2, {0, 255, 51, 102}).transform(Normalize({0.5, 0.2}, {0.5, 0.1}));
  std::vector<float> v = floats(ds.get(0).data);
  ASSERT_EQ(v.size(), 4u);
  EXPECT_FLOAT_EQ(v[0], -1.0f);
  EXPECT_FLOAT_EQ(v[1], 1.0f);
  EXPECT_NEAR(v[2], 0.0f, 1e-6);
  EXPECT_NEAR(v[3], 2.0f, 1e-5);
}

TEST(Normalize, OneValueAppliesToEveryChannel) {
  auto ds = Images(1, 3, 1, 1, {0, 255, 51}).transform(Normalize({0.5}, {0.25}));
  std::vector<float> v = floats(ds.get(0).data);
  EXPECT_FLOAT_EQ(v[0], -2.0f);
  EXPECT_FLOAT_EQ(v[1], 2.0f);
  EXPECT_NEAR(v[2], -1.2f, 1e-6);
}

TEST(Normalize, RejectsBadArguments) {
  EXPECT_TRUE(throws_with([] { Normalize({0.5, 0.5}, {0.5}); }, "got 2 and 1"));
  EXPECT_TRUE(throws_with([] { Normalize({0.5}, {0.0}); }, "std[0] evaluated to zero"));
  EXPECT_TRUE(throws_with(
      [] {
        ramp(1, 1, 2, 2).transform(Normalize({0.5, 0.5, 0.5}, {1, 1, 1}));
      },
      "Normalize: 3 mean/std values for an image of shape [1, 2, 2] (1 channels)"));
}

// The [h, w] window of a 1-channel image (as floats) padded by `pad`, top-left at (top, left).
std::vector<float> window(const std::vector<float>& img, int64_t H, int64_t W, int64_t pad, int64_t top, int64_t left,
                          int64_t h, int64_t w) {
  std::vector<float> out;
  for (int64_t y = 0; y < h; ++y) {
    for (int64_t x = 0; x < w; ++x) {
      const int64_t sy = top + y - pad, sx = left + x - pad;
      out.push_back(sy >= 0 && sy < H && sx >= 0 && sx < W ? img[sy * W + sx] : 0.0f);
    }
  }
  return out;
}

TEST(RandomCrop, EveryOutputIsAPaddedWindowAndEveryWindowOccurs) {
  auto base = ramp(400, 1, 3, 3);
  auto ds = base.transform(RandomCrop(3, 1));
  auto plain = base.transform(ToTensor());
  std::set<std::pair<int64_t, int64_t>> seen;
  for (int64_t i = 0; i < 400; ++i) {
    std::vector<float> img = floats(plain.get(i).data);
    std::vector<float> out = floats(ds.get(i).data);
    bool matched = false;
    for (int64_t top = 0; top <= 2 && !matched; ++top) {
      for (int64_t left = 0; left <= 2 && !matched; ++left) {
        if (window(img, 3, 3, 1, top, left, 3, 3) == out) {
          seen.insert({top, left});
          matched = true;
        }
      }
    }
    EXPECT_TRUE(matched) << "example " << i;
  }
  EXPECT_EQ(seen.size(), 9u);  // 400 draws over 9 positions: each appears
}

TEST(RandomCrop, HandComputedWindow) {
  // 1x2x2 image 1,2 / 3,4 (bytes 51, 102, 153, 204 -> 0.2, 0.4, 0.6, 0.8), padding 1, crop 2: the
  // output is one of the 9 windows of the 4x4 padded image, e.g. top-left (0, 0) = 0, 0 / 0, 0.2.
  auto ds = Images(50, 1, 2, 2, std::vector<uint8_t>(200, 0)).transform(RandomCrop(2, 1));
  EXPECT_EQ(ds.example_shape(), (Shape{1, 2, 2}));
  std::vector<float> img = {0.2f, 0.4f, 0.6f, 0.8f};
  EXPECT_EQ(window(img, 2, 2, 1, 0, 0, 2, 2), (std::vector<float>{0, 0, 0, 0.2f}));
  EXPECT_EQ(window(img, 2, 2, 1, 2, 1, 2, 2), (std::vector<float>{0.6f, 0.8f, 0, 0}));
}

TEST(RandomCrop, SizeEqualToImageWithoutPaddingIsIdentity) {
  auto base = ramp(3, 2, 4, 5);
  auto plain = base.transform(ToTensor());
  auto cropped = base.transform(RandomCrop(4, 5, 0));
  for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(floats(cropped.get(i).data), floats(plain.get(i).data));
}

TEST(RandomCrop, TooLargeCropIsRejectedWhenTheChainIsBuilt) {
  EXPECT_TRUE(throws_with([] { ramp(1, 3, 32, 32).transform(RandomCrop(40, 2)); },
                          "RandomCrop: crop size (40, 40) is larger than the padded image (36, 36)"));
  EXPECT_TRUE(throws_with([] { RandomCrop(0, 1); }, "expected a positive size"));
}

TEST(RandomHorizontalFlip, AlwaysAndNever) {
  auto base = Images(1, 2, 1, 3, {51, 102, 153, 0, 255, 51});
  EXPECT_EQ(floats(base.transform(RandomHorizontalFlip(1.0)).get(0).data),
            (std::vector<float>{0.6f, 0.4f, 0.2f, 0.2f, 1.0f, 0.0f}));
  EXPECT_EQ(floats(base.transform(RandomHorizontalFlip(0.0)).get(0).data),
            (std::vector<float>{0.2f, 0.4f, 0.6f, 0.0f, 1.0f, 0.2f}));
  EXPECT_TRUE(throws_with([] { RandomHorizontalFlip(1.5); }, "p must be in [0, 1]"));
}

TEST(RandomHorizontalFlip, FlipsAboutHalfAndDependsOnSeedEpochAndIndexOnly) {
  auto ds = ramp(2000, 1, 1, 2).transform(RandomHorizontalFlip());
  int flipped = 0;
  int changed_with_epoch = 0;
  for (int64_t i = 0; i < 2000; ++i) {
    std::vector<float> a = floats(ds.get(i, {7, 3}).data);
    EXPECT_EQ(a, floats(ds.get(i, {7, 3}).data));  // same (seed, epoch, index): same draw
    flipped += a[0] > a[1];
    changed_with_epoch += a != floats(ds.get(i, {7, 4}).data);
  }
  EXPECT_NEAR(flipped, 1000, 120);  // binomial(2000, 0.5): sd 22
  EXPECT_NEAR(changed_with_epoch, 1000, 120);
}

TEST(TransformedDataset, ChainsAndKeepsTargets) {
  auto ds = ramp(4, 3, 8, 8).transform(RandomCrop(6)).transform(RandomHorizontalFlip(), Normalize({0.5}, {0.5}));
  EXPECT_EQ(ds.transforms().size(), 3u);
  EXPECT_EQ(ds.example_shape(), (Shape{3, 6, 6}));
  EXPECT_EQ(ds.get(3).target.item<int64_t>(), 3);
  for (float v : floats(ds.get(1).data)) {
    EXPECT_GE(v, -1.0f);
    EXPECT_LE(v, 1.0f);
  }
}

TEST(TransformedDataset, ToTensorMustComeFirst) {
  EXPECT_NO_THROW(ramp(1, 1, 2, 2).transform(ToTensor(), Normalize({0}, {1})));
  EXPECT_TRUE(
      throws_with([] { ramp(1, 1, 2, 2).transform(Normalize({0}, {1}), ToTensor()); }, "ToTensor must come first"));
}

TEST(TransformedDataset, CopyIntoMatchesGet) {
  auto ds = ramp(5, 3, 4, 4).transform(RandomCrop(4, 1), Normalize({0.1, 0.2, 0.3}, {0.5, 0.6, 0.7}));
  Batch batch{raw::zeros({2, 3, 4, 4}), raw::zeros({2}, kInt64)};
  ds.copy_into(4, batch, 1, {9, 2});
  Example ex = ds.get(4, {9, 2});
  EXPECT_EQ(floats(raw::contiguous(raw::select(batch.data, 0, 1))), floats(ex.data));
  EXPECT_EQ(batch.target.data_ptr<int64_t>()[1], 4);
  EXPECT_EQ(floats(raw::select(batch.data, 0, 0)), std::vector<float>(48, 0.0f));  // other rows untouched
}

}  // namespace
}  // namespace colony::data
