// Gradient checks of the fused cross-entropy / nll_loss node (autograd/nn_ops.cc) in float64 on
// the CPU, every reduction, with ignored targets and label smoothing.
#include "autograd/nn_ops.h"

#include "tests/autograd/gradcheck.h"

namespace colony {
namespace {

using testing::gradcheck;
using testing::input;
using testing::strided_input;
using In = const std::vector<Tensor>&;

raw::CrossEntropyOptions options(raw::LossReduction r, double smoothing, bool log_probs = false) {
  raw::CrossEntropyOptions o;
  o.reduction = r;
  o.label_smoothing = smoothing;
  o.log_probs = log_probs;
  return o;
}

TEST(CrossEntropyLoss, Gradcheck) {
  // Row 2 is ignored (ignore_index -100).
  Tensor target = raw::from_vector(std::vector<int64_t>{2, 0, -100, 3, 1});
  for (Tensor x : {input({5, 4}, -3, 3), strided_input({5, 4}, -3, 3)}) {
    for (auto r : {raw::LossReduction::Mean, raw::LossReduction::Sum, raw::LossReduction::None}) {
      for (double eps : {0.0, 0.2}) {
        raw::CrossEntropyOptions o = options(r, eps);
        EXPECT_TRUE(gradcheck([&](In in) { return colony::cross_entropy_loss(in[0], target, o); }, {x}))
            << "reduction " << static_cast<int>(r) << " smoothing " << eps;
      }
    }
  }
}

TEST(CrossEntropyLoss, NllGradcheck) {
  Tensor target = raw::from_vector(std::vector<int64_t>{1, -100, 0});
  for (auto r : {raw::LossReduction::Mean, raw::LossReduction::Sum, raw::LossReduction::None}) {
    raw::CrossEntropyOptions o = options(r, 0.0, /*log_probs=*/true);
    EXPECT_TRUE(gradcheck([&](In in) { return colony::cross_entropy_loss(in[0], target, o); }, {input({3, 4}, -3, -0.1)}))
        << "reduction " << static_cast<int>(r);
  }
}

TEST(CrossEntropyLoss, IgnoreIndexCanBeAValidClass) {
  // ignore_index 1 masks class-1 targets, as in PyTorch.
  Tensor target = raw::from_vector(std::vector<int64_t>{1, 0, 2});
  raw::CrossEntropyOptions o = options(raw::LossReduction::Mean, 0.0);
  o.ignore_index = 1;
  EXPECT_TRUE(gradcheck([&](In in) { return colony::cross_entropy_loss(in[0], target, o); }, {input({3, 3}, -2, 2)}));
}

}  // namespace
}  // namespace colony
