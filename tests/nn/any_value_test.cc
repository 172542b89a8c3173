#include "nn/any_value.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <tuple>

#include "tests/test_util.h"

namespace colony::nn {
namespace {

using colony::testing::throws_with;

TEST(AnyValue, HoldsAnyCopyableValueAndHandsItBack) {
  Tensor t = raw::ones({2, 3});
  AnyValue v(t);
  EXPECT_TRUE(v.has_value());
  EXPECT_EQ(v.type_name(), "Tensor");
  EXPECT_TRUE(v.get<Tensor>().is_same(t));  // a handle to the same tensor, not a copy of its data
  AnyValue pair(std::make_tuple(t, 2.5));
  EXPECT_EQ(std::get<1>(pair.get<std::tuple<Tensor, double>>()), 2.5);
  EXPECT_FALSE(AnyValue().has_value());
  EXPECT_EQ(AnyValue().type_name(), "nothing");
}

TEST(AnyValue, CopiesAreIndependentAndMovingLeavesTheSourceEmpty) {
  AnyValue a(std::string("gelu"));
  AnyValue b = a;
  *b.try_get<std::string>() = "tanh";
  EXPECT_EQ(a.get<std::string>(), "gelu");
  AnyValue c = std::move(a);
  EXPECT_EQ(c.get<std::string>(), "gelu");
  EXPECT_FALSE(a.has_value());  // NOLINT(bugprone-use-after-move): a moved-from AnyValue is empty
}

TEST(AnyValue, NumbersConvertWhereNothingIsLost) {
  EXPECT_EQ(AnyValue(3).get<double>(), 3.0);
  EXPECT_EQ(AnyValue(2.5).get<float>(), 2.5f);
  EXPECT_EQ(AnyValue(7).get<int64_t>(), 7);
  EXPECT_EQ(AnyValue(int64_t{-4}).get<int>(), -4);
  EXPECT_TRUE(throws_with<std::invalid_argument>([] { AnyValue(2.5).get<int64_t>(); }, "holds double 2.5, not long"));
  EXPECT_TRUE(throws_with<std::invalid_argument>([] { AnyValue(int64_t{1} << 40).get<int>(); }, "not int"));
  EXPECT_TRUE(throws_with<std::invalid_argument>([] { AnyValue(true).get<int>(); }, "holds bool, not int"));
  EXPECT_TRUE(throws_with<std::invalid_argument>([] { AnyValue(1).get<bool>(); }, "not bool"));
}

TEST(AnyValue, StringLiteralsAreKeptAsStrings) {
  AnyValue v("tanh");
  EXPECT_EQ(v.type_name(), "std::string");
  EXPECT_EQ(v.get<std::string>(), "tanh");
}

TEST(AnyValue, AWrongTypeNamesBoth) {
  AnyValue v(raw::ones({1}));
  EXPECT_FALSE(v.can_get<double>());
  EXPECT_EQ(v.try_get<double>(), nullptr);
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { v.get<std::optional<Tensor>>(); },
                                                 "AnyValue holds Tensor, not std::optional<Tensor>"));
}

}  // namespace
}  // namespace colony::nn
