#include "base/type_name.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "nn/linear.h"

namespace colony::nn {
namespace {

TEST(TypeName, DropsTheLibrarysNamespacesAndSpellsStdString) {
  EXPECT_EQ(type_name(typeid(Tensor)), "Tensor");
  EXPECT_EQ(type_name(typeid(Linear)), "Linear");
  EXPECT_EQ(type_name(typeid(std::string)), "std::string");
  EXPECT_EQ(type_name(typeid(std::tuple<Tensor, double>)), "std::tuple<Tensor, double>");
}

TEST(TypeName, KeepsConstAndReferenceAsASignatureWritesThem) {
  EXPECT_EQ(type_name<const Tensor&>(), "const Tensor&");
  EXPECT_EQ(type_name<Tensor&&>(), "Tensor&&");
  EXPECT_EQ(type_name<int64_t>(), "long");
  EXPECT_EQ(type_name<const std::string&>(), "const std::string&");
}

}  // namespace
}  // namespace colony::nn
