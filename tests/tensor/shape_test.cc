#include "tensor/shape.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <stdexcept>

#include "tests/test_util.h"

namespace colony {
namespace {

using colony::testing::throws_with;

TEST(Shape, CheckedMulDetectsOverflow) {
  EXPECT_EQ(checked_mul(3, 4), 12);
  EXPECT_EQ(checked_mul(int64_t{1} << 31, int64_t{1} << 31), int64_t{1} << 62);
  EXPECT_FALSE(checked_mul(int64_t{1} << 62, 4));
  EXPECT_FALSE(checked_mul(std::numeric_limits<int64_t>::max(), 2));
  EXPECT_FALSE(checked_mul(int64_t{1} << 32, int64_t{1} << 32));
}

TEST(Shape, NumelOverflowIsAnError) {
  EXPECT_EQ(shape_numel({2, 3, 4}), 24);
  EXPECT_EQ(shape_numel({}), 1);
  EXPECT_EQ(shape_numel({0, int64_t{1} << 62}), 0);
  // Unchecked, [2^32, 2^32] was 0 elements and [2^62, 4] too.
  EXPECT_TRUE(throws_with<std::overflow_error>([] { shape_numel({int64_t{1} << 32, int64_t{1} << 32}); },
                                               "shape [4294967296, 4294967296] has more elements than int64 can count"));
  EXPECT_FALSE(try_shape_numel({int64_t{1} << 62, 4}));
  EXPECT_FALSE(try_shape_numel({2, -3}));
  EXPECT_EQ(try_shape_numel({int64_t{1} << 62}), int64_t{1} << 62);
}

// A zero-sized dimension makes the element count 0, but the other sizes still enter the strides:
// [0, 2^32, 2^32] has stride 2^64 for its first dimension (idx_fuzz found it through a file header).
TEST(Shape, StridesThatOverflowAreAnError) {
  EXPECT_EQ(contiguous_strides({2, 3, 4}), (Shape{12, 4, 1}));
  EXPECT_EQ(contiguous_strides({2, 0, 4}), (Shape{4, 4, 1}));
  EXPECT_EQ(contiguous_strides({int64_t{1} << 62, 2}), (Shape{2, 1}));  // the outermost size enters no stride
  EXPECT_TRUE(throws_with<std::overflow_error>(
      [] { contiguous_strides({0, int64_t{1} << 32, int64_t{1} << 32}); },
      "shape [0, 4294967296, 4294967296]: its strides do not fit int64"));
}

}  // namespace
}  // namespace colony
