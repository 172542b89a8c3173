#include "nn/any_module.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <tuple>

#include "autograd/ops.h"
#include "nn/containers.h"
#include "nn/layers.h"
#include "nn/linear.h"
#include "tests/test_util.h"

namespace colony::nn {
namespace {

using colony::testing::all_close;
using colony::testing::throws_with;

// Two inputs: the projection of x, masked (what attention with a mask looks like from outside).
struct MaskedProjection : Module {
  MaskedProjection() { proj = register_module("proj", std::make_shared<Linear>(3, 3)); }
  Tensor forward(const Tensor& x, const Tensor& mask) { return proj->forward(x) * mask; }
  std::shared_ptr<Linear> proj;
};

// An optional trailing argument, the C++ spelling of a default.
struct Scale : Module {
  Tensor forward(const Tensor& x, std::optional<double> factor) { return x * factor.value_or(2.0); }
};

// A result that is not a Tensor.
struct Count : Module {
  int64_t forward(const Tensor& x) const { return x.numel(); }
};

// A Tensor by value: it hides Module's forward instead of overriding it, and AnyModule still calls it.
struct ByValue : Module {
  Tensor forward(Tensor x) { return x * 3.0; }
};

// The virtual forward and another overload: held as an AnyModule, the virtual one is called.
struct Overloaded : Module {
  Tensor forward(const Tensor& x) override { return x + 1.0; }
  Tensor forward(const Tensor& x, double y) { return x + y; }
};

TEST(AnyModule, CallsAForwardOfAnySignature) {
  auto m = std::make_shared<MaskedProjection>();
  AnyModule any = m;
  Tensor x = raw::ones({2, 3}), mask = raw::zeros({2, 3});
  raw::narrow(mask, 1, 0, 1).fill_(1.0);
  EXPECT_TRUE(all_close(any.forward(x, mask), m->forward(x, mask)));
  EXPECT_EQ(any.signature(), "MaskedProjection::forward(const Tensor&, const Tensor&) -> Tensor");
  EXPECT_FALSE(any.maps_tensor_to_tensor());
  EXPECT_EQ(any.ptr(), m);
}

TEST(AnyModule, AWrongCountOrTypeNamesTheModuleAndItsSignature) {
  AnyModule any = std::make_shared<MaskedProjection>();
  Tensor x = raw::ones({2, 3});
  EXPECT_TRUE(throws_with<ForwardArgumentError>(
      [&] { any.forward(x); },
      "MaskedProjection::forward(const Tensor&, const Tensor&) -> Tensor takes 2 arguments, but 1 was given"));
  EXPECT_TRUE(throws_with<ForwardArgumentError>([&] { any.forward(x, x, x); }, "but 3 were given"));
  EXPECT_TRUE(throws_with<ForwardArgumentError>(
      [&] { any.forward(x, 0.5); },
      "MaskedProjection::forward(const Tensor&, const Tensor&) -> Tensor: argument 2 must be Tensor, not double"));
}

TEST(AnyModule, TrailingOptionalArgumentsMayBeLeftOut) {
  AnyModule any = std::make_shared<Scale>();
  Tensor x = raw::ones({2});
  EXPECT_EQ(colony::testing::values(any.forward(x)), (std::vector<double>{2.0, 2.0}));
  EXPECT_EQ(colony::testing::values(any.forward(x, 3.0)), (std::vector<double>{3.0, 3.0}));
  EXPECT_EQ(colony::testing::values(any.forward(x, 4)), (std::vector<double>{4.0, 4.0}));  // an int converts
  EXPECT_EQ(colony::testing::values(any.forward(x, std::nullopt)), (std::vector<double>{2.0, 2.0}));
  EXPECT_TRUE(throws_with<ForwardArgumentError>(
      [&] { any.forward(); }, "Scale::forward(const Tensor&, std::optional<double>) -> Tensor takes 1 to 2 arguments"));
  EXPECT_TRUE(throws_with<ForwardArgumentError>([&] { any.forward(x, "three"); },
                                                "argument 2 must be std::optional<double>, not std::string"));
}

TEST(AnyModule, OtherResultsAreAskedForByType) {
  AnyModule any = std::make_shared<Count>();
  EXPECT_EQ(any.forward<int64_t>(raw::ones({2, 5})), 10);
  EXPECT_EQ(any.forward<double>(raw::ones({2, 5})), 10.0);  // converts, as an argument would
  EXPECT_EQ(any.any_forward(raw::ones({3})).get<int64_t>(), 3);
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { any.forward(raw::ones({3})); },
                                                 "Count::forward(const Tensor&) -> long returned long, not Tensor: "
                                                 "call forward<long>(...)"));
}

TEST(AnyModule, TensorToTensorModulesTakeTheDirectPath) {
  auto linear = std::make_shared<Linear>(3, 2);
  AnyModule any = linear;
  EXPECT_TRUE(any.maps_tensor_to_tensor());
  EXPECT_EQ(any.signature(), "Linear::forward(const Tensor&) -> Tensor");
  Tensor x = raw::ones({4, 3});
  EXPECT_TRUE(all_close(any.forward(x), linear->forward(x)));
  EXPECT_TRUE(throws_with<ForwardArgumentError>([&] { any.forward(1.0); }, "argument 1 must be Tensor, not double"));
  AnyModule by_value = std::make_shared<ByValue>();
  EXPECT_TRUE(by_value.maps_tensor_to_tensor());
  EXPECT_EQ(colony::testing::values(by_value.forward(raw::ones({2}))), (std::vector<double>{3.0, 3.0}));
  Sequential seq{std::make_shared<ByValue>(), std::make_shared<ByValue>()};
  EXPECT_EQ(colony::testing::values(seq.forward(raw::ones({1}))), (std::vector<double>{9.0}));
}

TEST(AnyModule, AModuleHeldAsModuleOrWithOverloadsIsCalledThroughTheVirtualForward) {
  AnyModule overloaded = std::make_shared<Overloaded>();
  EXPECT_EQ(colony::testing::values(overloaded.forward(raw::zeros({1}))), (std::vector<double>{1.0}));
  std::shared_ptr<Module> base = std::make_shared<ReLU>();
  AnyModule relu = base;
  EXPECT_EQ(relu.signature(), "ReLU::forward(const Tensor&) -> Tensor");
  EXPECT_EQ(colony::testing::values(relu.forward(raw::full({2}, -1.0))), (std::vector<double>{0.0, 0.0}));
}

TEST(AnyModule, ASequentialTakesWhatItsFirstModuleTakes) {
  auto seq = std::make_shared<Sequential>();
  seq->push_back(std::make_shared<MaskedProjection>());
  seq->push_back(std::make_shared<ReLU>());
  AnyModule any = seq;
  Tensor x = raw::ones({2, 3}), mask = raw::ones({2, 3});
  EXPECT_TRUE(all_close(any.forward(x, mask), seq->forward(x, mask)));
  EXPECT_EQ(any.signature(), "Sequential::forward(...)");
}

TEST(AnyModule, TypedAccessNamesBothTypesOnAMismatch) {
  auto linear = std::make_shared<Linear>(3, 2);
  AnyModule any = linear;
  EXPECT_EQ(any.ptr<Linear>(), linear);
  EXPECT_EQ(&any.get<Linear>(), linear.get());
  EXPECT_EQ(any.ptr<Module>(), linear);  // a base class is fine
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { any.ptr<ReLU>(); }, "AnyModule's module is a Linear, not a ReLU"));
}

TEST(AnyModule, EmptyAndNullAreRefused) {
  AnyModule empty;
  EXPECT_TRUE(empty.is_empty());
  EXPECT_TRUE(throws_with<std::logic_error>([&] { empty.forward(raw::ones({1})); }, "AnyModule is empty"));
  EXPECT_TRUE(throws_with<std::logic_error>([&] { empty.ptr(); }, "AnyModule is empty"));
  EXPECT_TRUE(throws_with<std::invalid_argument>([] { AnyModule(std::shared_ptr<Linear>()); }, "the module is null"));
}

TEST(AnyModule, CopiesShareTheModule) {
  AnyModule a = std::make_shared<Linear>(2, 2);
  AnyModule b = a;
  EXPECT_EQ(a.ptr(), b.ptr());
}

}  // namespace
}  // namespace colony::nn
