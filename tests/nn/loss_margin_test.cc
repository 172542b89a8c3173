// The margin, ranking, triplet and likelihood losses (nn/functional_loss_margin.cc) and their
// modules (nn/loss_margin.h): every case of loss_margin_golden.h (torch's outputs and gradients,
// written by loss_margin_golden.py) through the F:: function of the same name; gradchecks in
// float64; options, buffers, printing, autocast and every refusal; a `_CUDA` run of the cases.
#include "nn/loss_margin.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "autograd/autocast.h"
#include "nn/any_module.h"
#include "nn/nn.h"
#include "tests/autograd/gradcheck.h"
#include "tests/golden_check.h"
#include "tests/nn/loss_margin_golden.h"

namespace colony::nn {
namespace {

using colony::testing::gradcheck;
using colony::testing::input;
using colony::testing::throws_with;
using colony::testing::values;
using F::Reduction;
using In = const std::vector<Tensor>&;
namespace golden = colony::testing::golden;

Tensor longs(const std::vector<int64_t>& v, const Shape& shape, Device device) {
  return raw::to(raw::from_vector<int64_t>(v, shape, TensorOptions(kInt64)), device, kInt64);
}

Reduction reduction_of(const std::string& name) {
  if (name.size() >= 4 && name.compare(name.size() - 4, 4, "none") == 0) return Reduction::None;
  if (name.size() >= 3 && name.compare(name.size() - 3, 3, "sum") == 0) return Reduction::Sum;
  return Reduction::Mean;
}

// Colony's call for each case of loss_margin_golden.py. The cases run for mean, sum and none are
// added in a loop with the reduction read from the name.
const std::map<std::string, golden::Op>& calls() {
  static const std::map<std::string, golden::Op> table = [] {
    std::map<std::string, golden::Op> t;
    for (const std::string red : {"mean", "sum", "none"}) {
      const Reduction r = reduction_of(red);
      t["margin_ranking_" + red] = [r](In x, Device) {
        return F::margin_ranking_loss(x[0], x[1], x[2], F::MarginRankingLossFuncOptions(r).margin(0.3));
      };
      t["hinge_embedding_" + red] = [r](In x, Device) {
        return F::hinge_embedding_loss(x[0], x[1], F::HingeEmbeddingLossFuncOptions(r).margin(0.8));
      };
      t["soft_margin_" + red] = [r](In x, Device) { return F::soft_margin_loss(x[0], x[1], r); };
      t["multilabel_soft_margin_" + red] = [r](In x, Device) { return F::multilabel_soft_margin_loss(x[0], x[1], r); };
      t["multi_margin_" + red] = [r](In x, Device d) { return F::multi_margin_loss(x[0], longs({0, 3, 1}, {3}, d), r); };
      t["multilabel_margin_" + red] = [r](In x, Device d) {
        return F::multilabel_margin_loss(x[0], longs({3, 0, -1, 1, 1, 2, 3, 0, 2, 2, -1, -1}, {3, 4}, d), r);
      };
      t["triplet_margin_" + red] = [r](In x, Device) { return F::triplet_margin_loss(x[0], x[1], x[2], r); };
      t["poisson_nll_" + red] = [r](In x, Device) { return F::poisson_nll_loss(x[0], x[1], r); };
      t["gaussian_nll_" + red] = [r](In x, Device) { return F::gaussian_nll_loss(x[0], x[1], x[2], r); };
    }
    t["soft_margin_weighted_labels"] = [](In x, Device) { return F::soft_margin_loss(x[0], x[1]); };
    t["multilabel_soft_margin_weight"] = [](In x, Device) {
      return F::multilabel_soft_margin_loss(x[0], x[1], F::MultilabelSoftMarginLossFuncOptions().weight(x[2]));
    };
    t["multilabel_soft_margin_3d"] = [](In x, Device) {
      return F::multilabel_soft_margin_loss(x[0], x[1], Reduction::None);
    };
    t["multi_margin_p2_weight"] = [](In x, Device d) {
      return F::multi_margin_loss(x[0], longs({2, 0, 2}, {3}, d), F::MultiMarginLossFuncOptions().p(2).margin(0.7).weight(x[1]));
    };
    t["multi_margin_1d"] = [](In x, Device d) { return F::multi_margin_loss(x[0], longs({1}, {}, d)); };
    t["multilabel_margin_1d"] = [](In x, Device d) { return F::multilabel_margin_loss(x[0], longs({3, -1, 0, 0}, {4}, d)); };
    t["multilabel_margin_repeated"] = [](In x, Device d) {
      return F::multilabel_margin_loss(x[0], longs({1, 1, 0, -1}, {1, 4}, d), Reduction::None);
    };
    t["triplet_margin_p1_swap"] = [](In x, Device) {
      return F::triplet_margin_loss(x[0], x[1], x[2], F::TripletMarginLossFuncOptions(Reduction::None).margin(0.5).p(1).swap(true));
    };
    t["triplet_margin_1d"] = [](In x, Device) {
      return F::triplet_margin_loss(x[0], x[1], x[2], F::TripletMarginLossFuncOptions().swap(true));
    };
    t["triplet_distance_cosine"] = [](In x, Device) {
      auto cosine_distance = [](const Tensor& a, const Tensor& b) { return rsub(F::cosine_similarity(a, b), 1.0); };
      return F::triplet_margin_with_distance_loss(
          x[0], x[1], x[2],
          F::TripletMarginWithDistanceLossFuncOptions(Reduction::None).distance_function(cosine_distance).margin(0.4).swap(true));
    };
    t["triplet_distance_default"] = [](In x, Device) { return F::triplet_margin_with_distance_loss(x[0], x[1], x[2]); };
    t["poisson_nll_full"] = [](In x, Device) {
      return F::poisson_nll_loss(x[0], x[1], F::PoissonNLLLossFuncOptions(Reduction::None).full(true));
    };
    t["poisson_nll_rates"] = [](In x, Device) {
      return F::poisson_nll_loss(x[0], x[1], F::PoissonNLLLossFuncOptions().log_input(false).eps(1e-3));
    };
    t["poisson_nll_rates_full_sum"] = [](In x, Device) {
      return F::poisson_nll_loss(x[0], x[1], F::PoissonNLLLossFuncOptions(Reduction::Sum).log_input(false).full(true));
    };
    t["gaussian_nll_homoscedastic"] = [](In x, Device) {
      return F::gaussian_nll_loss(x[0], x[1], x[2], F::GaussianNLLLossFuncOptions().full(true));
    };
    t["gaussian_nll_one_dim_one"] = [](In x, Device) { return F::gaussian_nll_loss(x[0], x[1], x[2], Reduction::None); };
    t["gaussian_nll_clamped"] = [](In x, Device) {
      return F::gaussian_nll_loss(x[0], x[1], x[2], F::GaussianNLLLossFuncOptions(Reduction::Sum).eps(0.05));
    };
    return t;
  }();
  return table;
}

TEST(LossMarginGolden, EveryCaseAsTorch) {
  EXPECT_EQ(testing::loss_margin_golden::kCases.size(), calls().size()) << "a case without a call, or a call without a case";
  for (const golden::Case& c : testing::loss_margin_golden::kCases) EXPECT_TRUE(golden::matches(c, calls(), kCPU));
}

TEST(LossMarginGradcheck, EveryLossInFloat64) {
  Tensor classes = longs({2, 0, 1}, {3}, kCPU), labels = longs({0, 2, -1, 1, -1, 0, 1, 2, -1}, {3, 3}, kCPU);
  Tensor signs = raw::tensor({1.0, -1.0, 1.0}, kFloat64);
  EXPECT_TRUE(gradcheck([&](In x) { return F::margin_ranking_loss(x[0], x[1], signs, F::MarginRankingLossFuncOptions().margin(0.2)); },
                        {input({3}), input({3}, -1, 1, 8)}));
  EXPECT_TRUE(gradcheck([&](In x) { return F::soft_margin_loss(x[0], signs, Reduction::Sum); }, {input({3})}));
  EXPECT_TRUE(gradcheck([&](In x) { return F::multilabel_soft_margin_loss(x[0], x[1]); }, {input({3, 3}), input({3, 3}, 0, 1, 8)}));
  EXPECT_TRUE(gradcheck([&](In x) { return F::multi_margin_loss(x[0], classes, F::MultiMarginLossFuncOptions().p(2)); },
                        {input({3, 3})}));
  EXPECT_TRUE(gradcheck([&](In x) { return F::multilabel_margin_loss(x[0], labels, Reduction::Sum); }, {input({3, 3}, -3, 3)}));
  EXPECT_TRUE(gradcheck([&](In x) { return F::triplet_margin_loss(x[0], x[1], x[2], F::TripletMarginLossFuncOptions().p(3).swap(true)); },
                        {input({3, 4}), input({3, 4}, -1, 1, 8), input({3, 4}, -1, 1, 9)}));
  EXPECT_TRUE(gradcheck([&](In x) { return F::poisson_nll_loss(x[0], x[1], F::PoissonNLLLossFuncOptions().full(true)); },
                        {input({2, 3}), input({2, 3}, 1.5, 4, 8)}));
  EXPECT_TRUE(gradcheck([&](In x) { return F::gaussian_nll_loss(x[0], x[1], x[2], F::GaussianNLLLossFuncOptions().full(true)); },
                        {input({2, 3}), input({2, 3}, -1, 1, 8), input({2}, 0.2, 2, 9)}));
}

TEST(LossMargin, Float32StaysFloat32AndAutocastRunsInFloat32) {
  Tensor x = raw::randn({3, 4}), y = raw::randn({3, 4});
  EXPECT_EQ(F::soft_margin_loss(x, colony::sign(y)).dtype(), kFloat32);
  AutocastGuard amp(DeviceType::CPU, kBFloat16);
  Tensor h = raw::to(x, kCPU, kBFloat16);
  // torch's float32 rows: the loss of 16-bit inputs is computed and returned in float32.
  EXPECT_EQ(F::soft_margin_loss(h, colony::sign(y)).dtype(), kFloat32);
  EXPECT_EQ(F::hinge_embedding_loss(h, colony::sign(y)).dtype(), kFloat32);
  EXPECT_EQ(F::margin_ranking_loss(h, h, colony::sign(y)).dtype(), kFloat32);
  EXPECT_EQ(F::multi_margin_loss(h, longs({0, 1, 2}, {3}, kCPU)).dtype(), kFloat32);
  EXPECT_EQ(F::multilabel_margin_loss(h, longs({0, -1, 0, 0, 1, 2, -1, 0, 3, 3, 3, 3}, {3, 4}, kCPU)).dtype(), kFloat32);
  EXPECT_EQ(F::triplet_margin_loss(h, h, h).dtype(), kFloat32);
  EXPECT_EQ(F::poisson_nll_loss(h, raw::abs(y)).dtype(), kFloat32);
}

TEST(LossMargin, EveryRefusalSaysWhatWasWrong) {
  Tensor x = raw::randn({3, 4});
  EXPECT_TRUE(throws_with([&] { F::margin_ranking_loss(raw::ones({3}), raw::ones({3, 1}), raw::ones({3})); },
                          "All input tensors should have same dimension"));
  EXPECT_TRUE(throws_with([&] { F::multi_margin_loss(x, longs({0, 4, 1}, {3}, kCPU)); }, "target out of range"));
  EXPECT_TRUE(throws_with([&] { F::multi_margin_loss(x, longs({0, 1}, {2}, kCPU)); },
                          "Expected target size [3], but got [2]. Input has shape [3, 4]."));
  EXPECT_TRUE(throws_with([&] { F::multi_margin_loss(x, longs({0, 1, 1}, {3}, kCPU), F::MultiMarginLossFuncOptions().p(3)); },
                          "only p == 1 and p == 2 supported"));
  EXPECT_TRUE(throws_with([&] { F::multi_margin_loss(x, longs({0, 1, 1}, {3}, kCPU), F::MultiMarginLossFuncOptions().weight(raw::ones({3}))); },
                          "inconsistent weight size, expected 4 but got [3]"));
  EXPECT_TRUE(throws_with([&] { F::multi_margin_loss(x, raw::zeros({3})); }, "expected an int64 target"));
  EXPECT_TRUE(throws_with([&] { F::multilabel_margin_loss(x, longs({0, 1}, {1, 2}, kCPU)); },
                          "inconsistent target size: [1, 2] for input of size: [3, 4]"));
  EXPECT_TRUE(throws_with([&] { F::multilabel_margin_loss(raw::randn({4}), longs({4, -1, 0, 0}, {4}, kCPU)); }, "target out of range"));
  EXPECT_TRUE(throws_with([&] { F::triplet_margin_loss(x, x, raw::ones({4})); },
                          "anchor 2D, positive 2D, and negative 1D inputs"));
  EXPECT_TRUE(throws_with([&] { F::triplet_margin_with_distance_loss(x, x, x, F::TripletMarginWithDistanceLossFuncOptions().margin(0)); },
                          "margin must be greater than 0"));
  EXPECT_TRUE(throws_with([&] { F::gaussian_nll_loss(x, x, raw::ones({3, 3})); }, "var is of incorrect size"));
  EXPECT_TRUE(throws_with([&] { F::gaussian_nll_loss(x, x, raw::neg(raw::ones({3, 4}))); }, "var has negative entry/entries"));
  EXPECT_TRUE(throws_with([&] { F::gaussian_nll_loss(x, x, -1.0); }, "var has negative entry/entries"));
  EXPECT_TRUE(throws_with([&] { F::soft_margin_loss(x, x, Reduction::BatchMean); }, "kl_div's only"));
  EXPECT_TRUE(throws_with([&] { MultiMarginLoss(MultiMarginLossOptions().p(0)); }, "only p == 1 and p == 2 supported"));
  EXPECT_TRUE(throws_with([&] { TripletMarginWithDistanceLoss(TripletMarginWithDistanceLossOptions().margin(-1)); },
                          "margin must be greater than 0"));
}

TEST(LossMarginModule, ForwardIsTheFunctionAndPrintsAsPyTorch) {
  Tensor a = raw::randn({4, 3}), p = raw::randn({4, 3}), n = raw::randn({4, 3});
  TripletMarginLoss triplet(TripletMarginLossOptions().margin(0.5).swap(true));
  EXPECT_EQ(values(triplet.forward(a, p, n)),
            values(F::triplet_margin_loss(a, p, n, F::TripletMarginLossFuncOptions().margin(0.5).swap(true))));
  EXPECT_EQ(triplet.repr(), "TripletMarginLoss()");
  EXPECT_EQ(MarginRankingLoss().repr(), "MarginRankingLoss()");
  EXPECT_EQ(MultiLabelMarginLoss().repr(), "MultiLabelMarginLoss()");
  EXPECT_EQ(GaussianNLLLoss().repr(), "GaussianNLLLoss()");
  EXPECT_EQ(PoissonNLLLoss().repr(), "PoissonNLLLoss()");
  // The weights are buffers, as torch registers them: state_dict holds them.
  MultiMarginLoss mm(MultiMarginLossOptions().weight(raw::ones({3})));
  EXPECT_EQ(mm.named_buffers().size(), 1u);
  ASSERT_EQ(mm.state_dict().size(), 1u);
  EXPECT_EQ(mm.state_dict()[0].first, "weight");
  MultiLabelSoftMarginLoss ml(MultiLabelSoftMarginLossOptions().weight(raw::ones({3})));
  ASSERT_EQ(ml.state_dict().size(), 1u);
  EXPECT_EQ(ml.state_dict()[0].first, "weight");
  EXPECT_EQ(MultiMarginLoss().named_buffers().size(), 0u);
  Tensor v = raw::add(raw::rand({4, 3}), 0.5);
  GaussianNLLLoss gauss(GaussianNLLLossOptions(Reduction::Sum).full(true));
  EXPECT_EQ(values(gauss.forward(a, p, v)),
            values(F::gaussian_nll_loss(a, p, v, F::GaussianNLLLossFuncOptions(Reduction::Sum).full(true))));
  AnyModule any(std::make_shared<HingeEmbeddingLoss>());
  Tensor signs = colony::sign(raw::randn({4}));
  EXPECT_EQ(values(any.forward(raw::randn({4}), signs)).size(), 1u);
}

TEST(LossMargin, OnCudaMatchesTorch_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  for (const golden::Case& c : testing::loss_margin_golden::kCases) EXPECT_TRUE(golden::matches(c, calls(), Device::cuda(0)));
}

}  // namespace
}  // namespace colony::nn
