#include "data/synthetic.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/test_util.h"

namespace colony::data {
namespace {

TEST(SyntheticCIFAR10, ShapesAndSizes) {
  SyntheticCIFAR10 train(Split::kTrain), test(Split::kTest);
  EXPECT_EQ(train.size(), 50000);
  EXPECT_EQ(test.size(), 10000);
  Example ex = train.get(123);
  EXPECT_EQ(ex.data.sizes(), (Shape{3, 32, 32}));
  EXPECT_EQ(ex.data.dtype(), kUInt8);
  EXPECT_EQ(ex.target.dtype(), kInt64);
  EXPECT_EQ(train.classes().size(), 10u);
}

TEST(SyntheticCIFAR10, DeterministicFromSeedSplitAndIndex) {
  SyntheticCIFAR10 a(Split::kTrain, 7), b(Split::kTrain, 7), c(Split::kTrain, 8), t(Split::kTest, 7);
  for (int64_t i : {0, 1, 999, 49999}) {
    EXPECT_TRUE(raw::equal(a.get(i).data, b.get(i).data));
    EXPECT_EQ(a.target(i), b.target(i));
  }
  int differ_seed = 0, differ_split = 0;
  for (int64_t i = 0; i < 20; ++i) {
    differ_seed += !raw::equal(a.get(i).data, c.get(i).data);
    differ_split += !raw::equal(a.get(i).data, t.get(i).data);
  }
  EXPECT_EQ(differ_seed, 20);
  EXPECT_EQ(differ_split, 20);
  EXPECT_EQ(a.classes(), t.classes());  // train and test of one seed share the class templates
}

TEST(SyntheticCIFAR10, CopyIntoMatchesGet) {
  SyntheticCIFAR10 ds(Split::kTest, 3);
  Batch batch{raw::zeros({4, 3, 32, 32}, kUInt8), raw::zeros({4}, kInt64)};
  ds.copy_into(77, batch, 2, {});
  EXPECT_TRUE(raw::equal(raw::select(batch.data, 0, 2), ds.get(77).data));
  EXPECT_EQ(batch.target.data_ptr<int64_t>()[2], ds.target(77));
}

TEST(SyntheticCIFAR10, ClassesAreBalancedAndCarryDistinctColours) {
  SyntheticCIFAR10 ds(Split::kTest, 0);
  std::vector<int64_t> counts(10, 0);
  std::vector<std::array<double, 3>> centre_colour(10, {0, 0, 0});
  for (int64_t i = 0; i < ds.size(); ++i) {
    const int64_t c = ds.target(i);
    ++counts[c];
    if (counts[c] > 100) continue;
    Example ex = ds.get(i);
    for (int ch = 0; ch < 3; ++ch) centre_colour[c][ch] += ex.data.data_ptr<uint8_t>()[ch * 1024 + 16 * 32 + 16];
  }
  for (int c = 0; c < 10; ++c) {
    EXPECT_NEAR(counts[c], 1000, 150) << "class " << c;  // multinomial: sd 30
  }
  // Classes come in five colour pairs: the mean centre colour separates the pairs.
  int distinct_pairs = 0;
  for (int a = 0; a < 10; ++a) {
    for (int b = a + 1; b < 10; ++b) {
      double d = 0;
      for (int ch = 0; ch < 3; ++ch) d += std::pow((centre_colour[a][ch] - centre_colour[b][ch]) / 100.0, 2);
      distinct_pairs += std::sqrt(d) > 30.0;
    }
  }
  EXPECT_GE(distinct_pairs, 40);  // all 45 pairs but the 5 same-colour ones, give or take jitter
}

}  // namespace
}  // namespace colony::data
