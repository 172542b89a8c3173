// The checker itself: it must pass a correct gradient and catch a wrong one.
#include "tests/autograd/gradcheck.h"

#include "autograd/engine/function_node.h"

namespace colony {
namespace {

using testing::gradcheck;
using testing::input;

// x * 3 whose backward claims the derivative is 2: a deliberately wrong formula.
Tensor wrong_triple(const Tensor& x) {
  Tensor out = raw::mul(x, 3.0);
  autograd::record("WrongBackward", {x}, out, {},
                   [](const std::vector<Tensor>& g, const std::vector<bool>&) -> std::vector<Tensor> {
                     return {raw::mul(g[0], 2.0)};
                   });
  return out;
}

TEST(Gradcheck, AcceptsCorrectGradient) {
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return mul(in[0], 3.0); }, {input({2, 3})}));
}

TEST(Gradcheck, RejectsWrongGradient) {
  ::testing::AssertionResult r = gradcheck([](const std::vector<Tensor>& in) { return wrong_triple(in[0]); },
                                           {input({2, 3})});
  EXPECT_FALSE(r);
  EXPECT_NE(std::string(r.message()).find("analytic"), std::string::npos) << r.message();
}

TEST(Gradcheck, RejectsMissingGradientForUsedInput) {
  // b is used, but the recorded node reports no gradient for it.
  auto f = [](const std::vector<Tensor>& in) {
    Tensor out = raw::mul(in[0], in[1]);
    if (autograd::needs_grad(in[0], in[1])) {
      Tensor b = in[1];
      autograd::record("HalfBackward", {in[0], in[1]}, out, {},
                       [b](const std::vector<Tensor>& g, const std::vector<bool>&) -> std::vector<Tensor> {
                         return {raw::mul(g[0], b), Tensor()};
                       });
    }
    return out;
  };
  EXPECT_FALSE(gradcheck(f, {input({3}), input({3}, 0.5, 1.5, 3)}));
}

TEST(Gradcheck, StridedInputIsNonContiguousWithSameValues) {
  Tensor a = testing::input({3, 4});
  Tensor b = testing::strided_input({3, 4});
  EXPECT_FALSE(b.is_contiguous());
  EXPECT_TRUE(b.requires_grad());
  EXPECT_TRUE(testing::all_close(a, b, 0, 0));
}

}  // namespace
}  // namespace colony
