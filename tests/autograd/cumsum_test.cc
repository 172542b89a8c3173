// cumsum (autograd/cumsum.cc): gradient checks, and torch's values and gradients (reduce_golden.h)
// on both devices; the gradient is the kernel's reversed scan.
#include "tests/autograd/gradcheck.h"
#include "tests/autograd/reduce_golden_check.h"

namespace colony {
namespace {

using testing::all_close;
using testing::gradcheck;
using testing::input;
using testing::strided_input;
using In = const std::vector<Tensor>&;

TEST(Cumsum, GradientIsTheReversedCumsum) {
  for (Tensor x : {input({3, 5}), strided_input({3, 5}), input({2, 3, 4}), input({})}) {
    for (int64_t dim : {0, -1}) {
      EXPECT_TRUE(gradcheck([&](In in) { return cumsum(in[0], dim); }, {x})) << shape_str(x.sizes()) << dim;
    }
  }
  Tensor x = tensor({1.0, 2.0, 3.0}, TensorOptions().requires_grad(true));
  x.cumsum(0).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({3.0, 2.0, 1.0})));
}

// Rows of 37 in float32 and float64 with a NaN and an infinity (they spread toward the start in
// the gradient, toward the end in the values), a middle dim, dim 0, size-1 rows and a 0-d input.
void check_cumsum_goldens(Device device) {
  struct Named {
    const char* name;
    int64_t dim;
  };
  for (const Named& n : std::vector<Named>{{"cumsum/rows/f32", 1},
                                           {"cumsum/rows/f64", -1},
                                           {"cumsum/dim0/f32", 0},
                                           {"cumsum/dim1/f64", 1},
                                           {"cumsum/one", 1},
                                           {"cumsum/scalar", 0}}) {
    const testing::reduce_golden::Case& c = testing::reduce_golden::golden(n.name);
    Tensor x = testing::reduce_golden::golden_input(c, device);
    EXPECT_TRUE(testing::reduce_golden::matches_golden(c, x, cumsum(x, n.dim)));
  }
}

TEST(Cumsum, MatchesTorch) { check_cumsum_goldens(kCPU); }

TEST(Cumsum, MatchesTorch_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  check_cumsum_goldens(Device::cuda(0));
}

}  // namespace
}  // namespace colony
