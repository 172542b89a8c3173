// A CIFAR-10-shaped stand-in for when the real data is not on disk: 50,000 train / 10,000 test
// uint8 [3, 32, 32] images in 10 classes, each rendered on demand from (seed, split, index), so
// construction is free and every run with the same seed sees the same images.
//
// Each class is a coloured disc filled with stripes: five colours, two stripe orientations per
// colour, so neither colour nor orientation alone separates the classes. Per image the disc's
// position (±6 px), radius, brightness and stripe phase vary, the background colour is random, half
// the images carry a small rectangle of a random colour, and every pixel gets uniform noise (±20).
// A LeNet learns it well above chance within one epoch; the seed also shuffles which class gets
// which template.
#pragma once

#include <string>
#include <vector>

#include "data/transformed_dataset.h"

namespace colony::data {

class SyntheticCIFAR10 : public Transformable<SyntheticCIFAR10> {
 public:
  static constexpr int64_t kTrainSize = 50000;
  static constexpr int64_t kTestSize = 10000;

  explicit SyntheticCIFAR10(Split split, uint64_t seed = 0);

  int64_t size() const override { return split_ == Split::kTrain ? kTrainSize : kTestSize; }
  Example get(int64_t index) const override;
  Shape example_shape() const override { return {3, 32, 32}; }
  DType example_dtype() const override { return kUInt8; }
  void copy_into(int64_t index, Batch& batch, int64_t row, const ExampleContext& ctx) const override;

  int64_t target(int64_t index) const;
  // Draws image `index` (3,072 bytes, CHW) into `out`.
  void render(int64_t index, uint8_t* out) const;
  // The templates' descriptions ("red horizontal stripes", ...), in class order for this seed.
  std::vector<std::string> classes() const;
  uint64_t seed() const { return seed_; }
  Split split() const { return split_; }

 private:
  Split split_;
  uint64_t seed_;
  std::vector<int> template_of_class_;  // a permutation of 0..9 drawn from the seed
};

}  // namespace colony::data
