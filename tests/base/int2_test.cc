#include "base/int2.h"

#include <sstream>
#include <stdexcept>

#include <gtest/gtest.h>

namespace colony {
namespace {

Int2 pass(Int2 v) { return v; }

TEST(Int2, OneNumberMeansBoth) {
  EXPECT_EQ(pass(5), Int2(5, 5));
  EXPECT_EQ(pass({5}), Int2(5, 5));
}

TEST(Int2, PairKeepsOrder) {
  Int2 v = pass({3, 4});
  EXPECT_EQ(v.h, 3);
  EXPECT_EQ(v.w, 4);
  EXPECT_EQ(v.vec(), (std::vector<int64_t>{3, 4}));
  EXPECT_NE(v, Int2(4, 3));
}

TEST(Int2, ThreeValuesAreRefused) { EXPECT_THROW(pass({1, 2, 3}), std::invalid_argument); }

TEST(Int2, PrintsAsATuple) {
  std::ostringstream os;
  os << Int2(2, 3);
  EXPECT_EQ(os.str(), "(2, 3)");
}

}  // namespace
}  // namespace colony
