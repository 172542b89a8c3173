// The losses of F:: (nn/functional_loss.cc) and their modules (nn/loss.h): values and gradients
// against torch in float64 (tests/nn/loss_golden.py writes loss_golden.h from the same closed-form
// inputs), finite-difference gradchecks, the modules' options, buffers, printing and AnyModule
// calls, and every refusal.
#include "nn/loss.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "autograd/autocast.h"
#include "autograd/ops.h"
#include "nn/any_module.h"
#include "nn/nn.h"
#include "tests/autograd/gradcheck.h"
#include "tests/nn/loss_golden.h"
#include "tests/test_util.h"

namespace colony::nn {
namespace {

using colony::testing::throws_with;
using colony::testing::values;
using F::Reduction;

// ---- the inputs of loss_golden.py -------------------------------------------------------------------

int64_t numel_of(const Shape& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

Tensor filled(const Shape& shape, const std::function<double(int64_t)>& f) {
  std::vector<double> v(static_cast<size_t>(numel_of(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = f(static_cast<int64_t>(i));
  return raw::from_vector(v, shape, TensorOptions(kFloat64));
}

Tensor wave(const Shape& shape, double a, double b, double s = 1.0) {
  return filled(shape, [=](int64_t i) { return s * std::sin(a * static_cast<double>(i) + b); });
}

Tensor unit(const Shape& shape, double a, double b) {
  return filled(shape, [=](int64_t i) { return 0.05 + 0.9 * (0.5 + 0.5 * std::sin(a * static_cast<double>(i) + b)); });
}

Tensor classes(const Shape& shape, int64_t c, int64_t k) {
  std::vector<int64_t> v(static_cast<size_t>(numel_of(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = (static_cast<int64_t>(i) * k + 1) % c;
  return raw::from_vector(v, shape, TensorOptions(kInt64));
}

Tensor probs(const Shape& shape, double a, double b, int64_t dim) {
  NoGradGuard no_grad;
  Tensor u = unit(shape, a, b);
  return raw::contiguous(colony::div(u, colony::sum(u, {dim}, true)));
}

Tensor with_entry(const Tensor& t, int64_t flat_index, double value) {
  Tensor out = raw::clone(t);
  if (out.dtype() == kInt64) {
    out.data_ptr<int64_t>()[flat_index] = static_cast<int64_t>(value);
  } else {
    out.data_ptr<double>()[flat_index] = value;
  }
  return out;
}

using LossFn = std::function<Tensor(const std::vector<Tensor>&)>;

// Runs `fn` on leaves made from `inputs` (those listed in `grads` requiring grad) and compares the
// output and the gradients of sum(out * wave(out.shape, 0.31, 0.2)) with torch's.
void expect_golden(const std::string& name, const std::vector<Tensor>& inputs, const std::vector<size_t>& grads,
                   const LossFn& fn) {
  SCOPED_TRACE(name);
  const auto& golden = colony::testing::loss_golden();
  std::vector<Tensor> xs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Tensor x = raw::clone(inputs[i]);
    if (std::find(grads.begin(), grads.end(), i) != grads.end()) x.requires_grad_(true);
    xs.push_back(x);
  }
  Tensor out = fn(xs);
  auto it = golden.find(name + ".out");
  ASSERT_NE(it, golden.end()) << "no golden values for " << name;
  EXPECT_EQ(out.dtype(), kFloat64);
  EXPECT_TRUE(colony::testing::matches_values(out, it->second, 1e-10)) << "output";
  colony::sum(colony::mul(out, wave(out.sizes(), 0.31, 0.2))).backward();
  for (size_t i : grads) {
    auto g = golden.find(name + ".g" + std::to_string(i));
    ASSERT_NE(g, golden.end());
    ASSERT_TRUE(xs[i].grad().defined()) << "input " << i << " got no gradient";
    EXPECT_TRUE(colony::testing::matches_values(xs[i].grad(), g->second, 1e-10)) << "gradient of input " << i;
  }
}

struct NamedReduction {
  const char* name;
  Reduction r;
};
const NamedReduction kReductions[] = {{"mean", Reduction::Mean}, {"sum", Reduction::Sum}, {"none", Reduction::None}};

// ---- golden values --------------------------------------------------------------------------------------

Tensor target5() { return with_entry(classes({5}, 4, 3), 2, -100); }

TEST(LossGolden, CrossEntropyWithClassWeight) {
  for (const auto& [name, r] : kReductions) {
    expect_golden(std::string("ce_weight_") + name, {wave({5, 4}, 0.7, 0.1, 2.0), target5(), unit({4}, 0.5, 0.3)}, {0},
                  [r = r](const std::vector<Tensor>& x) {
                    return F::cross_entropy(x[0], x[1], F::CrossEntropyFuncOptions(r).weight(x[2]));
                  });
    expect_golden(std::string("ce_weight_smooth_") + name, {wave({5, 4}, 0.7, 0.1, 2.0), target5(), unit({4}, 0.5, 0.3)},
                  {0}, [r = r](const std::vector<Tensor>& x) {
                    return F::cross_entropy(x[0], x[1], F::CrossEntropyFuncOptions(r).weight(x[2]).label_smoothing(0.2));
                  });
  }
  Tensor t4d = with_entry(classes({2, 2, 2}, 3, 2), 5, 1);  // t4d[1, 0, 1] = 1, the ignore_index
  expect_golden("ce_weight_smooth_4d_mean", {wave({2, 3, 2, 2}, 0.45, 0.2, 1.5), t4d, unit({3}, 0.9, 0.1)}, {0},
                [](const std::vector<Tensor>& x) {
                  return F::cross_entropy(x[0], x[1],
                                          F::CrossEntropyFuncOptions().weight(x[2]).ignore_index(1).label_smoothing(0.1));
                });
  // int32 targets take the same path.
  expect_golden("ce_weight_1d_sum",
                {wave({4}, 0.7, 0.4), raw::to(raw::scalar_tensor(2, TensorOptions(kInt64)), kCPU, kInt32), unit({4}, 0.5, 0.3)},
                {0}, [](const std::vector<Tensor>& x) {
                  return F::cross_entropy(x[0], x[1], F::CrossEntropyFuncOptions(Reduction::Sum).weight(x[2]));
                });
}

TEST(LossGolden, CrossEntropyWithClassProbabilities) {
  for (const auto& [name, r] : kReductions) {
    expect_golden(std::string("ce_prob_") + name, {wave({3, 5}, 0.6, 0.3, 2.0), probs({3, 5}, 0.8, 0.5, 1)}, {0, 1},
                  [r = r](const std::vector<Tensor>& x) { return F::cross_entropy(x[0], x[1], F::CrossEntropyFuncOptions(r)); });
  }
  expect_golden("ce_prob_weight_smooth_mean",
                {wave({3, 5}, 0.6, 0.3, 2.0), probs({3, 5}, 0.8, 0.5, 1), unit({5}, 0.3, 0.9)}, {0, 1},
                [](const std::vector<Tensor>& x) {
                  return F::cross_entropy(x[0], x[1], F::CrossEntropyFuncOptions().weight(x[2]).label_smoothing(0.15));
                });
  expect_golden("ce_prob_3d_none", {wave({2, 3, 2}, 0.6, 0.3, 2.0), probs({2, 3, 2}, 0.8, 0.5, 1)}, {0, 1},
                [](const std::vector<Tensor>& x) {
                  return F::cross_entropy(x[0], x[1], F::CrossEntropyFuncOptions(Reduction::None).label_smoothing(0.1));
                });
  expect_golden("ce_prob_1d_mean", {wave({4}, 0.6, 0.3), probs({4}, 0.8, 0.5, 0)}, {0, 1},
                [](const std::vector<Tensor>& x) { return F::cross_entropy(x[0], x[1]); });
}

TEST(LossGolden, NllLossWithClassWeight) {
  for (const auto& [name, r] : {kReductions[0], kReductions[2]}) {
    expect_golden(std::string("nll_weight_") + name, {wave({6, 4}, 0.35, 0.7), classes({6}, 4, 3), unit({4}, 0.5, 0.3)},
                  {0}, [r = r](const std::vector<Tensor>& x) {
                    return F::nll_loss(x[0], x[1], F::NLLLossFuncOptions(r).weight(x[2]).ignore_index(2));
                  });
  }
}

TEST(LossGolden, BinaryCrossEntropy) {
  for (const auto& [name, r] : kReductions) {
    expect_golden(std::string("bce_") + name, {unit({3, 4}, 0.7, 0.2), unit({3, 4}, 1.3, 0.9)}, {0, 1},
                  [r = r](const std::vector<Tensor>& x) { return F::binary_cross_entropy(x[0], x[1], r); });
  }
  expect_golden("bce_weight_sum", {unit({3, 4}, 0.7, 0.2), unit({3, 4}, 1.3, 0.9), unit({4}, 0.4, 0.4)}, {0, 1},
                [](const std::vector<Tensor>& x) {
                  return F::binary_cross_entropy(x[0], x[1], F::BinaryCrossEntropyFuncOptions(Reduction::Sum).weight(x[2]));
                });
  // Inputs exactly 0 and 1 (a saturated sigmoid): the loss clamped to 100, the gradient PyTorch's
  // finite (x - y) / max(x (1 - x), 1e-12), not NaN.
  expect_golden("bce_edges_none", {raw::tensor({0.0, 1.0, 1.0, 0.3, 0.0}, kFloat64), raw::tensor({0.0, 0.0, 1.0, 0.6, 1.0}, kFloat64)},
                {0}, [](const std::vector<Tensor>& x) { return F::binary_cross_entropy(x[0], x[1], Reduction::None); });
}

TEST(LossGolden, BinaryCrossEntropyWithLogits) {
  // wave(..., 0.0) starts with a logit of exactly 0, where log_sigmoid's gradient is 1/2.
  for (const auto& [name, r] : kReductions) {
    expect_golden(std::string("bcel_") + name, {wave({3, 4}, 0.9, 0.0, 4.0), unit({3, 4}, 1.3, 0.9)}, {0, 1},
                  [r = r](const std::vector<Tensor>& x) { return F::binary_cross_entropy_with_logits(x[0], x[1], r); });
  }
  Tensor pos_weight = colony::mul(unit({4}, 2.1, 0.3), 3.0).detach();
  expect_golden("bcel_pos_weight_weight_sum",
                {wave({3, 4}, 0.9, 0.0, 4.0), unit({3, 4}, 1.3, 0.9), unit({3, 1}, 0.4, 0.4), pos_weight}, {0, 1},
                [](const std::vector<Tensor>& x) {
                  return F::binary_cross_entropy_with_logits(
                      x[0], x[1], F::BinaryCrossEntropyWithLogitsFuncOptions(Reduction::Sum).weight(x[2]).pos_weight(x[3]));
                });
  // Logits up to +-30: exp(-|x|) never overflows.
  expect_golden("bcel_pos_weight_none", {wave({2, 3, 4}, 0.9, 0.0, 30.0), unit({2, 3, 4}, 1.3, 0.9), pos_weight}, {0, 1},
                [](const std::vector<Tensor>& x) {
                  return F::binary_cross_entropy_with_logits(
                      x[0], x[1], F::BinaryCrossEntropyWithLogitsFuncOptions(Reduction::None).pos_weight(x[2]));
                });
}

TEST(LossGolden, KlDiv) {
  Tensor log_input = colony::log(probs({3, 4}, 1.1, 0.6, 1)).detach();
  Tensor target = probs({3, 4}, 0.7, 0.1, 1);
  const NamedReduction all[] = {kReductions[0], kReductions[1], kReductions[2], {"batchmean", Reduction::BatchMean}};
  for (const auto& [name, r] : all) {
    expect_golden(std::string("kl_") + name, {log_input, target}, {0, 1},
                  [r = r](const std::vector<Tensor>& x) { return F::kl_div(x[0], x[1], F::KLDivFuncOptions(r)); });
  }
  // A zero target contributes 0 (xlogy(0, 0) = 0).
  expect_golden("kl_zero_target_sum", {log_input, with_entry(target, 6, 0.0)}, {0},
                [](const std::vector<Tensor>& x) { return F::kl_div(x[0], x[1], Reduction::Sum); });
  expect_golden("kl_log_target_batchmean", {log_input, colony::log(target).detach()}, {0, 1}, [](const std::vector<Tensor>& x) {
    return F::kl_div(x[0], x[1], F::KLDivFuncOptions(Reduction::BatchMean).log_target(true));
  });
  expect_golden("kl_broadcast_none", {log_input, probs({1, 4}, 0.5, 0.5, 1)}, {0, 1},
                [](const std::vector<Tensor>& x) { return F::kl_div(x[0], x[1], Reduction::None); });
}

TEST(LossGolden, Regression) {
  for (const auto& [name, r] : kReductions) {
    std::vector<Tensor> in = {wave({3, 5}, 0.7, 0.2, 2.0), wave({3, 5}, 1.1, 0.5, 2.0)};
    expect_golden(std::string("l1_") + name, in, {0, 1},
                  [r = r](const std::vector<Tensor>& x) { return F::l1_loss(x[0], x[1], r); });
    expect_golden(std::string("smooth_l1_") + name, in, {0, 1}, [r = r](const std::vector<Tensor>& x) {
      return F::smooth_l1_loss(x[0], x[1], F::SmoothL1LossFuncOptions(r).beta(0.8));
    });
    expect_golden(std::string("huber_") + name, in, {0, 1}, [r = r](const std::vector<Tensor>& x) {
      return F::huber_loss(x[0], x[1], F::HuberLossFuncOptions(r).delta(0.7));
    });
  }
  expect_golden("smooth_l1_beta0_sum", {wave({3, 5}, 0.7, 0.2, 2.0), wave({3, 5}, 1.1, 0.5, 2.0)}, {0, 1},
                [](const std::vector<Tensor>& x) {
                  return F::smooth_l1_loss(x[0], x[1], F::SmoothL1LossFuncOptions(Reduction::Sum).beta(0.0));
                });
}

TEST(LossGolden, CosineSimilarityAndEmbeddingLoss) {
  expect_golden("cos_sim_dim1", {wave({3, 5}, 0.7, 0.2), wave({3, 5}, 1.1, 0.5)}, {0, 1},
                [](const std::vector<Tensor>& x) { return F::cosine_similarity(x[0], x[1]); });
  expect_golden("cos_sim_broadcast_dim0", {wave({4, 3}, 0.7, 0.2), wave({1, 3}, 1.1, 0.5)}, {0, 1},
                [](const std::vector<Tensor>& x) { return F::cosine_similarity(x[0], x[1], F::CosineSimilarityFuncOptions().dim(0)); });
  // A row with a norm under eps: its norm is clamped to eps for the value while the gradient flows
  // through the unclamped norm, as PyTorch's (which clamps in place under no_grad).
  Tensor tiny = colony::mul(wave({2, 3}, 0.7, 0.2), raw::from_vector(std::vector<double>{1e-10, 1.0}, {2, 1}, TensorOptions(kFloat64))).detach();
  expect_golden("cos_sim_tiny_norm", {tiny, wave({2, 3}, 1.1, 0.5)}, {0, 1},
                [](const std::vector<Tensor>& x) { return F::cosine_similarity(x[0], x[1], F::CosineSimilarityFuncOptions().eps(1e-8)); });
  // Targets 1, -1, and 0 (which contributes nothing).
  Tensor t = raw::tensor({1.0, -1.0, 1.0, -1.0, 0.0}, kFloat64);
  for (const auto& [name, r] : {kReductions[0], kReductions[2]}) {
    expect_golden(std::string("cos_emb_") + name, {wave({5, 3}, 0.7, 0.2), wave({5, 3}, 1.1, 0.5), t}, {0, 1},
                  [r = r](const std::vector<Tensor>& x) {
                    return F::cosine_embedding_loss(x[0], x[1], x[2], F::CosineEmbeddingLossFuncOptions(r).margin(-0.3));
                  });
  }
  expect_golden("cos_emb_1d_sum", {wave({3}, 0.7, 0.2), wave({3}, 0.3, 0.5), raw::scalar_tensor(-1.0, TensorOptions(kFloat64))},
                {0, 1}, [](const std::vector<Tensor>& x) {
                  return F::cosine_embedding_loss(x[0], x[1], x[2], F::CosineEmbeddingLossFuncOptions(Reduction::Sum).margin(-0.5));
                });
  expect_golden("pairwise_p2", {wave({3, 4}, 0.7, 0.2), wave({3, 4}, 1.1, 0.5)}, {0, 1},
                [](const std::vector<Tensor>& x) { return F::pairwise_distance(x[0], x[1]); });
  expect_golden("pairwise_p1_keepdim", {wave({3, 4}, 0.7, 0.2), wave({1, 4}, 1.1, 0.5)}, {0, 1},
                [](const std::vector<Tensor>& x) {
                  return F::pairwise_distance(x[0], x[1], F::PairwiseDistanceFuncOptions().p(1.0).keepdim(true));
                });
}

// ---- finite differences ---------------------------------------------------------------------------

Tensor leaf(const Tensor& t) {
  Tensor x = raw::clone(t);
  x.requires_grad_(true);
  return x;
}

TEST(LossGradcheck, EveryComposedLoss) {
  using colony::testing::gradcheck;
  Tensor w = unit({4}, 0.5, 0.3);
  EXPECT_TRUE(gradcheck([&](const std::vector<Tensor>& x) {
    return F::cross_entropy(x[0], target5(), F::CrossEntropyFuncOptions().weight(w).label_smoothing(0.3));
  }, {leaf(wave({5, 4}, 0.7, 0.1, 2.0))}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& x) {
    return F::cross_entropy(x[0], x[1], F::CrossEntropyFuncOptions(Reduction::None).label_smoothing(0.2));
  }, {leaf(wave({3, 5}, 0.6, 0.3, 2.0)), leaf(probs({3, 5}, 0.8, 0.5, 1))}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& x) { return F::binary_cross_entropy(x[0], x[1], Reduction::Sum); },
                        {leaf(unit({3, 4}, 0.7, 0.2)), leaf(unit({3, 4}, 1.3, 0.9))}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& x) {
    return F::binary_cross_entropy_with_logits(x[0], x[1], F::BinaryCrossEntropyWithLogitsFuncOptions().pos_weight(x[2]));
  }, {leaf(wave({3, 4}, 0.9, 0.3, 4.0)), leaf(unit({3, 4}, 1.3, 0.9)), unit({4}, 2.1, 0.3)}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& x) { return F::kl_div(x[0], x[1], Reduction::BatchMean); },
                        {leaf(wave({3, 4}, 0.7, 0.2)), leaf(probs({3, 4}, 0.7, 0.1, 1))}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& x) {
    return F::smooth_l1_loss(x[0], x[1], F::SmoothL1LossFuncOptions(Reduction::None).beta(0.8));
  }, {leaf(wave({3, 5}, 0.7, 0.2, 2.0)), leaf(wave({3, 5}, 1.1, 0.5, 2.0))}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& x) {
    return F::huber_loss(x[0], x[1], F::HuberLossFuncOptions(Reduction::None).delta(0.7));
  }, {leaf(wave({3, 5}, 0.7, 0.2, 2.0)), leaf(wave({3, 5}, 1.1, 0.5, 2.0))}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& x) { return F::cosine_similarity(x[0], x[1]); },
                        {leaf(wave({3, 5}, 0.7, 0.2)), leaf(wave({1, 5}, 1.1, 0.5))}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& x) {
    return F::cosine_embedding_loss(x[0], x[1], raw::tensor({1.0, -1.0, -1.0}, kFloat64),
                                    F::CosineEmbeddingLossFuncOptions(Reduction::None).margin(-0.5));
  }, {leaf(wave({3, 3}, 0.7, 0.2)), leaf(wave({3, 3}, 1.1, 0.5))}));
}

// ---- paths and dtypes -------------------------------------------------------------------------------

TEST(Loss, UnweightedIndexTargetsKeepTheFusedKernel) {
  Tensor x = leaf(wave({5, 4}, 0.7, 0.1));
  EXPECT_EQ(F::cross_entropy(x, classes({5}, 4, 3)).grad_fn()->name(), "CrossEntropyLossBackward");
  EXPECT_EQ(F::nll_loss(x, classes({5}, 4, 3)).grad_fn()->name(), "NllLossBackward");
  // An all-ones weight is the unweighted loss, through the composed path.
  Tensor ones = raw::ones({4}, TensorOptions(kFloat64));
  Tensor t = target5();
  for (double eps : {0.0, 0.25}) {
    Tensor fused = F::cross_entropy(x, t, F::CrossEntropyFuncOptions().label_smoothing(eps));
    Tensor weighted = F::cross_entropy(x, t, F::CrossEntropyFuncOptions().label_smoothing(eps).weight(ones));
    EXPECT_NE(weighted.grad_fn()->name(), "CrossEntropyLossBackward");
    EXPECT_NEAR(fused.item<double>(), weighted.item<double>(), 1e-12);
  }
}

TEST(Loss, Float32InFloat32OutAndBFloat16UnderAutocast) {
  Tensor x = raw::to(wave({4, 5}, 0.7, 0.2), kCPU, kFloat32), y = raw::to(unit({4, 5}, 1.3, 0.9), kCPU, kFloat32);
  EXPECT_EQ(F::l1_loss(x, y).dtype(), kFloat32);
  EXPECT_EQ(F::binary_cross_entropy_with_logits(x, y).dtype(), kFloat32);
  Tensor xh = raw::to(x, kCPU, kBFloat16), yh = raw::to(y, kCPU, kBFloat16);
  EXPECT_EQ(F::l1_loss(xh, yh).dtype(), kBFloat16);  // no autocast: the inputs' dtype
  AutocastGuard amp(DeviceType::CPU, kBFloat16);
  EXPECT_EQ(F::l1_loss(xh, yh).dtype(), kFloat32);
  EXPECT_EQ(F::binary_cross_entropy(yh, yh).dtype(), kFloat32);  // on the CPU's float32 list
  EXPECT_EQ(F::cross_entropy(xh, raw::to(y, kCPU, kBFloat16), F::CrossEntropyFuncOptions()).dtype(), kFloat32);
  EXPECT_EQ(F::cross_entropy(xh, classes({4}, 5, 2), F::CrossEntropyFuncOptions().weight(raw::ones({5}))).dtype(), kFloat32);
}

TEST(Loss, BinaryCrossEntropyOfSaturatedFloat16IsFinite) {
  // A sigmoid saturated to exactly 1 in float16 with target 0: loss 100 (the clamped log), not NaN.
  Tensor x = raw::to(raw::tensor({1.0, 0.25, 0.0}), kCPU, kFloat16), y = raw::to(raw::tensor({0.0, 0.5, 0.0}), kCPU, kFloat16);
  x.requires_grad_(true);
  Tensor loss = F::binary_cross_entropy(x, y, Reduction::None);
  EXPECT_EQ(loss.dtype(), kFloat16);
  std::vector<double> v = values(loss);
  EXPECT_EQ(v[0], 100.0);
  EXPECT_NEAR(v[1], -0.5 * std::log(0.25) - 0.5 * std::log(0.75), 1e-3);
  EXPECT_EQ(v[2], 0.0);
  colony::sum(loss).backward();
  EXPECT_EQ(x.grad().dtype(), kFloat16);
  EXPECT_NEAR(values(x.grad())[1], (0.25 - 0.5) / (0.25 * 0.75), 1e-2);
}

// ---- refusals ---------------------------------------------------------------------------------------

TEST(Loss, EveryRefusalSaysWhatWasWrong) {
  Tensor x = wave({2, 3}, 0.7, 0.2), p = unit({2, 3}, 1.3, 0.9), t = classes({2}, 3, 1);
  EXPECT_TRUE(throws_with([&] { F::cross_entropy(x, t, F::CrossEntropyFuncOptions().weight(raw::ones({4}, TensorOptions(kFloat64)))); },
                          "cross_entropy: weight tensor should be defined either for all 3 classes or no classes but got weight tensor of shape: [4]"));
  EXPECT_TRUE(throws_with([&] { F::cross_entropy(x, t, F::CrossEntropyFuncOptions().weight(raw::ones({3}, TensorOptions(kInt64)))); },
                          "cross_entropy: expected a floating weight, got int64"));
  EXPECT_TRUE(throws_with([&] { F::nll_loss(x, t, F::NLLLossFuncOptions().weight(raw::ones({2, 3}, TensorOptions(kFloat64)))); },
                          "nll_loss: weight tensor should be defined either for all 3 classes"));
  EXPECT_TRUE(throws_with(
      [&] { F::cross_entropy(x, raw::tensor({0, 5}, kInt64), F::CrossEntropyFuncOptions().weight(raw::ones({3}, TensorOptions(kFloat64)))); },
      "cross_entropy: target 5 is out of bounds for 3 classes"));
  EXPECT_TRUE(throws_with([&] { F::cross_entropy(x, p, F::CrossEntropyFuncOptions().ignore_index(1)); },
                          "cross_entropy: ignore_index is not supported for floating point target"));
  EXPECT_TRUE(throws_with([&] { F::cross_entropy(x, raw::to(p, kCPU, kInt64)); },
                          "cross_entropy: expected floating point type for target with class probabilities, got int64"));
  EXPECT_TRUE(throws_with([&] { F::cross_entropy(x, t, F::CrossEntropyFuncOptions(Reduction::BatchMean)); },
                          "cross_entropy: Reduction::BatchMean (\"batchmean\") is kl_div's only"));
  EXPECT_TRUE(throws_with([&] { F::mse_loss(x, p, Reduction::BatchMean); }, "mse_loss: Reduction::BatchMean"));
  EXPECT_TRUE(throws_with([&] { F::l1_loss(x, wave({4, 3}, 1, 1)); },
                          "l1_loss: input [2, 3] and target [4, 3] must have the same shape"));
  EXPECT_TRUE(throws_with([&] { F::smooth_l1_loss(x, p, F::SmoothL1LossFuncOptions().beta(-1)); },
                          "smooth_l1_loss: beta must be >= 0"));
  EXPECT_TRUE(throws_with([&] { F::huber_loss(x, p, F::HuberLossFuncOptions().delta(0)); }, "huber_loss: delta must be > 0"));
  EXPECT_TRUE(throws_with([&] { F::binary_cross_entropy(x, p); }, "binary_cross_entropy: all elements of input should be between 0 and 1"));
  EXPECT_TRUE(throws_with([&] { F::binary_cross_entropy(p, unit({3}, 1, 1)); },
                          "binary_cross_entropy: target size [3] is different to the input size [2, 3]; they must be the same"));
  EXPECT_TRUE(throws_with([&] { F::binary_cross_entropy(p, p, F::BinaryCrossEntropyFuncOptions().weight(unit({2, 2}, 1, 1))); },
                          "binary_cross_entropy: weight [2, 2] must broadcast to the input's shape [2, 3]"));
  EXPECT_TRUE(throws_with([&] { F::binary_cross_entropy(p, raw::to(p, kCPU, kInt64)); },
                          "binary_cross_entropy: expected a floating target, got int64"));
  EXPECT_TRUE(throws_with([&] { F::binary_cross_entropy_with_logits(x, unit({3}, 1, 1)); },
                          "binary_cross_entropy_with_logits: target size [3] must be the same as input size [2, 3]"));
  EXPECT_TRUE(throws_with(
      [&] { F::binary_cross_entropy_with_logits(x, p, F::BinaryCrossEntropyWithLogitsFuncOptions().pos_weight(unit({4}, 1, 1))); },
      "binary_cross_entropy_with_logits: pos_weight [4] must broadcast to the input's shape [2, 3]"));
  EXPECT_TRUE(throws_with([&] { F::binary_cross_entropy_with_logits(x, p, F::BinaryCrossEntropyWithLogitsFuncOptions().weight(unit({2, 3, 1}, 1, 1))); },
                          "binary_cross_entropy_with_logits: weight [2, 3, 1] must broadcast to the input's shape [2, 3]"));
  EXPECT_TRUE(throws_with([&] { F::kl_div(x, unit({4, 3}, 1, 1)); }, "kl_div"));
  EXPECT_TRUE(throws_with([&] { F::kl_div(x, raw::to(p, kCPU, kInt64)); }, "kl_div: expected a floating target, got int64"));
  EXPECT_TRUE(throws_with([&] { F::cosine_similarity(x, unit({4, 3}, 1, 1)); }, "cosine_similarity"));
  EXPECT_TRUE(throws_with([&] { F::cosine_similarity(x, p, F::CosineSimilarityFuncOptions().dim(2)); },
                          "cosine_similarity: dim 2 out of range for a 2-D tensor"));
  EXPECT_TRUE(throws_with([&] { F::cosine_embedding_loss(x, p, raw::ones({2, 1})); },
                          "cosine_embedding_loss: 0D or 1D target tensor expected, multi-target not supported"));
  EXPECT_TRUE(throws_with([&] { F::cosine_embedding_loss(wave({3}, 1, 1), wave({3}, 1, 2), raw::ones({2})); },
                          "cosine_embedding_loss: 1D target tensor expects 2D input tensors, but found inputs with sizes [3] and [3]"));
  EXPECT_TRUE(throws_with([&] { F::cosine_embedding_loss(x, p, raw::ones({3})); },
                          "cosine_embedding_loss: target [3] must have one entry per row of the inputs [2, 3]"));
  EXPECT_TRUE(throws_with([&] { F::cosine_embedding_loss(x, wave({2, 4}, 1, 1), raw::ones({2})); },
                          "cosine_embedding_loss: x1 [2, 3] and x2 [2, 4] must have the same shape"));
  EXPECT_TRUE(throws_with([&] { F::pairwise_distance(raw::scalar_tensor(1.0), raw::scalar_tensor(2.0)); },
                          "pairwise_distance: expected inputs with at least one dim"));
  EXPECT_TRUE(throws_with([] { CrossEntropyLoss(CrossEntropyLossOptions().label_smoothing(1.5)); },
                          "CrossEntropyLoss: label_smoothing must be in [0, 1], got 1.5"));
  EXPECT_TRUE(throws_with([] { HuberLoss(HuberLossOptions().delta(-1)); }, "HuberLoss: delta must be > 0"));
  EXPECT_TRUE(throws_with([] { SmoothL1Loss(SmoothL1LossOptions().beta(-1)); }, "SmoothL1Loss: beta must be >= 0"));
}

// ---- modules ----------------------------------------------------------------------------------------

TEST(LossModule, ForwardIsTheFunctionWithTheOptions) {
  Tensor x = wave({5, 4}, 0.7, 0.1, 2.0), t = target5(), w = unit({4}, 0.5, 0.3);
  CrossEntropyLoss ce(CrossEntropyLossOptions().weight(w).label_smoothing(0.2).reduction(Reduction::Sum));
  EXPECT_TRUE(colony::testing::matches_values(ce.forward(x, t), colony::testing::loss_golden().at("ce_weight_smooth_sum.out"), 1e-10));
  NLLLoss nll(NLLLossOptions().weight(w).ignore_index(2));
  EXPECT_TRUE(colony::testing::matches_values(nll.forward(wave({6, 4}, 0.35, 0.7), classes({6}, 4, 3)),
                                              colony::testing::loss_golden().at("nll_weight_mean.out"), 1e-10));
  Tensor a = wave({3, 5}, 0.7, 0.2, 2.0), b = wave({3, 5}, 1.1, 0.5, 2.0);
  EXPECT_DOUBLE_EQ(MSELoss(Reduction::Sum).forward(a, b).item<double>(), F::mse_loss(a, b, Reduction::Sum).item<double>());
  EXPECT_DOUBLE_EQ(L1Loss().forward(a, b).item<double>(), colony::testing::loss_golden().at("l1_mean.out")[0]);
  EXPECT_DOUBLE_EQ(SmoothL1Loss(SmoothL1LossOptions().beta(0.8)).forward(a, b).item<double>(),
                   colony::testing::loss_golden().at("smooth_l1_mean.out")[0]);
  EXPECT_DOUBLE_EQ(HuberLoss(HuberLossOptions().delta(0.7)).forward(a, b).item<double>(),
                   colony::testing::loss_golden().at("huber_mean.out")[0]);
  EXPECT_TRUE(colony::testing::matches_values(BCELoss(BCELossOptions(Reduction::Sum).weight(unit({4}, 0.4, 0.4)))
                                                  .forward(unit({3, 4}, 0.7, 0.2), unit({3, 4}, 1.3, 0.9)),
                                              colony::testing::loss_golden().at("bce_weight_sum.out"), 1e-10));
  BCEWithLogitsLoss bcel(BCEWithLogitsLossOptions(Reduction::Sum).weight(unit({3, 1}, 0.4, 0.4))
                             .pos_weight(colony::mul(unit({4}, 2.1, 0.3), 3.0).detach()));
  EXPECT_TRUE(colony::testing::matches_values(bcel.forward(wave({3, 4}, 0.9, 0.0, 4.0), unit({3, 4}, 1.3, 0.9)),
                                              colony::testing::loss_golden().at("bcel_pos_weight_weight_sum.out"), 1e-10));
  KLDivLoss kl(KLDivLossOptions(Reduction::BatchMean).log_target(true));
  EXPECT_TRUE(colony::testing::matches_values(
      kl.forward(colony::log(probs({3, 4}, 1.1, 0.6, 1)), colony::log(probs({3, 4}, 0.7, 0.1, 1))),
      colony::testing::loss_golden().at("kl_log_target_batchmean.out"), 1e-10));
  CosineEmbeddingLoss cel(CosineEmbeddingLossOptions().margin(-0.3));
  EXPECT_TRUE(colony::testing::matches_values(
      cel.forward(wave({5, 3}, 0.7, 0.2), wave({5, 3}, 1.1, 0.5), raw::tensor({1.0, -1.0, 1.0, -1.0, 0.0}, kFloat64)),
      colony::testing::loss_golden().at("cos_emb_mean.out"), 1e-10));
  EXPECT_TRUE(colony::testing::matches_values(CosineSimilarity(CosineSimilarityOptions().dim(0)).forward(wave({4, 3}, 0.7, 0.2), wave({1, 3}, 1.1, 0.5)),
                                              colony::testing::loss_golden().at("cos_sim_broadcast_dim0.out"), 1e-10));
  EXPECT_TRUE(colony::testing::matches_values(PairwiseDistance().forward(wave({3, 4}, 0.7, 0.2), wave({3, 4}, 1.1, 0.5)),
                                              colony::testing::loss_golden().at("pairwise_p2.out"), 1e-10));
}

TEST(LossModule, WeightsAreBuffersThatMoveWithTheModule) {
  Tensor w = unit({4}, 0.5, 0.3);
  CrossEntropyLoss ce(CrossEntropyLossOptions().weight(w));
  ASSERT_EQ(ce.named_buffers().size(), 1u);
  EXPECT_EQ(ce.named_buffers()[0].first, "weight");
  EXPECT_EQ(ce.state_dict().size(), 1u);
  EXPECT_TRUE(ce.parameters().empty());
  EXPECT_TRUE(CrossEntropyLoss().named_buffers().empty());  // an unset weight is not listed, as PyTorch's None
  BCEWithLogitsLoss bcel(BCEWithLogitsLossOptions().pos_weight(unit({4}, 2.1, 0.3)));
  ASSERT_EQ(bcel.named_buffers().size(), 1u);
  EXPECT_EQ(bcel.named_buffers()[0].first, "pos_weight");
  BCEWithLogitsLoss both(BCEWithLogitsLossOptions().weight(unit({4}, 1, 1)).pos_weight(unit({4}, 2.1, 0.3)));
  ASSERT_EQ(both.named_buffers().size(), 2u);
  EXPECT_EQ(both.named_buffers()[0].first, "weight");
  EXPECT_EQ(both.named_buffers()[1].first, "pos_weight");
  EXPECT_EQ(NLLLoss(NLLLossOptions().weight(w)).named_buffers().size(), 1u);
  EXPECT_EQ(BCELoss(BCELossOptions().weight(w)).named_buffers().size(), 1u);
  // to(dtype) converts the buffer in place, and forward reads the converted one.
  ce.to(kFloat32);
  EXPECT_EQ(ce.weight.dtype(), kFloat32);
  EXPECT_EQ(ce.named_buffers()[0].second.dtype(), kFloat32);
  Tensor x = raw::to(wave({5, 4}, 0.7, 0.1, 2.0), kCPU, kFloat32);
  EXPECT_NEAR(ce.forward(x, target5()).item<double>(), colony::testing::loss_golden().at("ce_weight_mean.out")[0], 1e-5);
  // load_state_dict writes into the buffer forward reads.
  ce.load_state_dict({{"weight", raw::ones({4})}});
  EXPECT_NEAR(ce.forward(x, target5()).item<double>(), F::cross_entropy(x, target5()).item<double>(), 1e-6);
}

TEST(LossModule, PrintsAsPyTorch) {
  EXPECT_EQ(CrossEntropyLoss(CrossEntropyLossOptions().ignore_index(-1).label_smoothing(0.1)).repr(), "CrossEntropyLoss()");
  EXPECT_EQ(NLLLoss().repr(), "NLLLoss()");
  EXPECT_EQ(MSELoss().repr(), "MSELoss()");
  EXPECT_EQ(L1Loss().repr(), "L1Loss()");
  EXPECT_EQ(SmoothL1Loss().repr(), "SmoothL1Loss()");
  EXPECT_EQ(HuberLoss().repr(), "HuberLoss()");
  EXPECT_EQ(BCELoss().repr(), "BCELoss()");
  EXPECT_EQ(BCEWithLogitsLoss(BCEWithLogitsLossOptions().pos_weight(unit({3}, 1, 1))).repr(), "BCEWithLogitsLoss()");
  EXPECT_EQ(KLDivLoss().repr(), "KLDivLoss()");
  EXPECT_EQ(CosineEmbeddingLoss().repr(), "CosineEmbeddingLoss()");
  EXPECT_EQ(CosineSimilarity().repr(), "CosineSimilarity()");
  EXPECT_EQ(PairwiseDistance().repr(), "PairwiseDistance()");
}

TEST(LossModule, CalledThroughAnyModule) {
  Tensor x = wave({5, 4}, 0.7, 0.1, 2.0), w = unit({4}, 0.5, 0.3);
  AnyModule ce = std::make_shared<CrossEntropyLoss>(CrossEntropyLossOptions().weight(w));
  EXPECT_TRUE(colony::testing::matches_values(ce.forward(x, target5()), colony::testing::loss_golden().at("ce_weight_mean.out"), 1e-10));
  AnyModule cel = std::make_shared<CosineEmbeddingLoss>(CosineEmbeddingLossOptions().margin(-0.3));
  EXPECT_TRUE(colony::testing::matches_values(
      cel.forward(wave({5, 3}, 0.7, 0.2), wave({5, 3}, 1.1, 0.5), raw::tensor({1.0, -1.0, 1.0, -1.0, 0.0}, kFloat64)),
      colony::testing::loss_golden().at("cos_emb_mean.out"), 1e-10));
  EXPECT_TRUE(throws_with([&] { ce.forward(x); }, "takes 2 arguments, but 1 was given"));
}

// ---- CUDA ---------------------------------------------------------------------------------------------

// Each loss on cuda:0 against the CPU in float32: the value and the input's gradient (the modules'
// buffers moved by to(device)).
TEST(Loss, OnCudaMatchesTheCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  const Device dev = Device::cuda(0);
  auto f32 = [](const Tensor& t) { return raw::to(t, kCPU, t.dtype() == kInt64 ? kInt64 : kFloat32); };
  Tensor logits = f32(wave({5, 4}, 0.7, 0.1, 2.0)), t = target5(), p = f32(probs({5, 4}, 0.8, 0.5, 1));
  Tensor a = f32(wave({3, 5}, 0.7, 0.2, 2.0)), b = f32(wave({3, 5}, 1.1, 0.5, 2.0)), u = f32(unit({3, 5}, 0.7, 0.2));
  Tensor pm = f32(raw::tensor({1.0, -1.0, 0.0}, kFloat64));
  using Case = std::function<Tensor(const Tensor& x, Device d)>;
  auto on = [](const Tensor& v, Device d) { return raw::to(v, d, v.dtype()); };
  const std::vector<std::pair<std::string, std::pair<Tensor, Case>>> cases = {
      {"ce weighted module", {logits, [&](const Tensor& x, Device d) {
         CrossEntropyLoss m(CrossEntropyLossOptions().weight(f32(unit({4}, 0.5, 0.3))).label_smoothing(0.2));
         m.to(d);
         return m.forward(x, on(t, d));
       }}},
      {"ce probabilities", {logits, [&](const Tensor& x, Device d) { return F::cross_entropy(x, on(p, d)); }}},
      {"bce", {u, [&](const Tensor& x, Device d) { return F::binary_cross_entropy(x, on(f32(unit({3, 5}, 1.3, 0.9)), d)); }}},
      {"bce with logits", {a, [&](const Tensor& x, Device d) {
         BCEWithLogitsLoss m(BCEWithLogitsLossOptions().pos_weight(f32(unit({5}, 2.1, 0.3))));
         m.to(d);
         return m.forward(x, on(f32(unit({3, 5}, 1.3, 0.9)), d));
       }}},
      {"kl_div", {a, [&](const Tensor& x, Device d) { return F::kl_div(x, on(f32(probs({3, 5}, 0.8, 0.5, 1)), d), Reduction::BatchMean); }}},
      {"smooth_l1", {a, [&](const Tensor& x, Device d) { return F::smooth_l1_loss(x, on(b, d), F::SmoothL1LossFuncOptions().beta(0.8)); }}},
      {"huber", {a, [&](const Tensor& x, Device d) { return F::huber_loss(x, on(b, d), F::HuberLossFuncOptions().delta(0.7)); }}},
      {"l1", {a, [&](const Tensor& x, Device d) { return F::l1_loss(x, on(b, d)); }}},
      {"cosine_similarity", {a, [&](const Tensor& x, Device d) { return colony::sum(F::cosine_similarity(x, on(b, d))); }}},
      {"cosine_embedding", {a, [&](const Tensor& x, Device d) { return F::cosine_embedding_loss(x, on(b, d), on(pm, d)); }}},
  };
  for (const auto& [name, c] : cases) {
    SCOPED_TRACE(name);
    const auto& [input, run] = c;
    Tensor x_cpu = raw::clone(input), x_gpu = raw::to(input, dev, input.dtype());
    x_cpu.requires_grad_(true);
    x_gpu.requires_grad_(true);
    Tensor l_cpu = run(x_cpu, kCPU), l_gpu = run(x_gpu, dev);
    EXPECT_EQ(l_gpu.device(), dev);
    EXPECT_TRUE(colony::testing::all_close(raw::to(l_gpu, kCPU, kFloat32), l_cpu, 1e-4, 1e-5));
    l_cpu.backward();
    l_gpu.backward();
    EXPECT_TRUE(colony::testing::all_close(raw::to(x_gpu.grad(), kCPU, kFloat32), x_cpu.grad(), 1e-4, 1e-5));
  }
}

}  // namespace
}  // namespace colony::nn
