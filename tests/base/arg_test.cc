#include "base/arg.h"

#include <string>

#include <gtest/gtest.h>

namespace colony {
namespace {

struct ExampleOptions {
  explicit ExampleOptions(int size) : size_(size) {}
  COLONY_ARG(int, size);
  COLONY_ARG(double, eps) = 1e-5;
  COLONY_ARG(std::string, name) = "x";
};

TEST(ColonyArg, DefaultsAndChainedSetters) {
  ExampleOptions o(3);
  EXPECT_EQ(o.size(), 3);
  EXPECT_DOUBLE_EQ(o.eps(), 1e-5);
  o.eps(0.1).name("y").size(4);
  EXPECT_DOUBLE_EQ(o.eps(), 0.1);
  EXPECT_EQ(o.name(), "y");
  EXPECT_EQ(o.size(), 4);
}

}  // namespace
}  // namespace colony
