// F::embedding_bag and nn::EmbeddingBag (nn/embedding_bag.h, kernels/common/embedding_bag.h): every
// case of embedding_bag_golden.h (torch's outputs and the gradients of the weight and
// per_sample_weights, written by embedding_bag_golden.py: each mode with offsets, padding_idx,
// fixed-length 2-D bags, include_last_offset, empty bags, per_sample_weights, ties, float64 and
// float32); float64 gradchecks; a weight gradient that is the same at 1 and 2 threads; the module,
// from_pretrained and printing; every refusal with torch's message; the cases on CUDA (`_CUDA`).
#include "nn/embedding_bag.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "kernels/cpu/parallel.h"
#include "nn/nn.h"
#include "tests/autograd/gradcheck.h"
#include "tests/golden_check.h"
#include "tests/nn/embedding_bag_golden.h"

namespace colony::nn {
namespace {

using colony::testing::gradcheck;
using colony::testing::input;
using colony::testing::throws_with;
using colony::testing::values;
using In = const std::vector<Tensor>&;
namespace golden = colony::testing::golden;

Tensor longs(const std::vector<int64_t>& v, const Shape& shape) {
  return raw::from_vector<int64_t>(v, shape, TensorOptions(kInt64));
}

bool has(const std::string& name, const std::string& part) { return name.find(part) != std::string::npos; }

EmbeddingBagMode mode_of(const std::string& name) {
  return has(name, "sum") ? EmbeddingBagMode::Sum : has(name, "max") ? EmbeddingBagMode::Max : EmbeddingBagMode::Mean;
}

// Colony's call for each case of embedding_bag_golden.py: the options its name says; inputs are
// (weight, indices[, offsets][, per_sample_weights]).
std::map<std::string, golden::Op> calls() {
  std::map<std::string, golden::Op> t;
  for (const golden::Case& c : testing::embedding_bag_golden::kCases) {
    const std::string name = c.name;
    F::EmbeddingBagFuncOptions o;
    o.mode(mode_of(name));
    if (has(name, "padding_") && !has(name, "weighted")) o.padding_idx(3);
    if (has(name, "fixed_bags")) o.padding_idx(-2);
    if (has(name, "weighted_padding")) o.padding_idx(0);
    o.include_last_offset(has(name, "last_offset"));
    const bool two_d = has(name, "fixed_bags") || has(name, "weighted_padding");
    const bool weighted = has(name, "weighted");
    t[name] = [o, two_d, weighted](In x, Device) {
      F::EmbeddingBagFuncOptions opts = o;
      if (!two_d) opts.offsets(x[2]);
      if (weighted) opts.per_sample_weights(x[two_d ? 2 : 3]);
      return F::embedding_bag(x[1], x[0], opts);
    };
  }
  return t;
}

TEST(EmbeddingBagGolden, EveryCaseAsTorch) {
  ASSERT_GE(testing::embedding_bag_golden::kCases.size(), 30u);
  for (const golden::Case& c : testing::embedding_bag_golden::kCases) EXPECT_TRUE(golden::matches(c, calls(), kCPU));
}

TEST(EmbeddingBagGradcheck, Float64EachModeAndWeights) {
  const Tensor idx = longs({1, 2, 0, 3, 3, 1, 4}, {7}), off = longs({0, 2, 2, 4}, {4});
  for (EmbeddingBagMode m : {EmbeddingBagMode::Sum, EmbeddingBagMode::Mean, EmbeddingBagMode::Max}) {
    EXPECT_TRUE(gradcheck([&](In x) { return F::embedding_bag(idx, x[0], F::EmbeddingBagFuncOptions().offsets(off).mode(m).padding_idx(1)); },
                          {input({5, 3})}));
  }
  EXPECT_TRUE(gradcheck(
      [&](In x) {
        return F::embedding_bag(idx, x[0], F::EmbeddingBagFuncOptions().offsets(off).mode(EmbeddingBagMode::Sum).per_sample_weights(x[1]));
      },
      {input({5, 3}), input({7}, -1, 1, 9)}));
}

TEST(EmbeddingBag, WeightGradientIsTheSameAtEveryThreadCount) {
  Generator gen(3);
  Tensor ids = raw::to(raw::mul(raw::rand({4000}, TensorOptions(kFloat32), &gen), 50.0), kCPU, kInt64);
  Tensor offsets = raw::to(raw::arange(0, 4000, 10), kCPU, kInt64);
  Tensor w = raw::randn({50, 16});
  Tensor g = raw::randn({400, 16});
  auto grad_at = [&](int threads) {
    kernels::cpu::set_num_threads(threads);
    Tensor leaf = raw::clone(w);
    leaf.requires_grad_(true);
    Tensor out = F::embedding_bag(ids, leaf, F::EmbeddingBagFuncOptions().offsets(offsets).mode(EmbeddingBagMode::Mean));
    sum(mul(out, g)).backward();
    return values(leaf.grad());
  };
  const int before = kernels::cpu::num_threads();
  const std::vector<double> one = grad_at(1);
  const std::vector<double> two = grad_at(2);
  kernels::cpu::set_num_threads(before);
  EXPECT_EQ(one, two);
}

TEST(EmbeddingBag, ModuleFromPretrainedAndPrinting) {
  EmbeddingBag bag(EmbeddingBagOptions(6, 4).mode(EmbeddingBagMode::Sum).padding_idx(-1));
  EXPECT_EQ(*bag.options.padding_idx(), 5);
  EXPECT_EQ(values(raw::select(bag.weight, 0, 5)), std::vector<double>(4, 0.0));  // the padding row zeroed
  EXPECT_EQ(bag.repr(), "EmbeddingBag(6, 4, mode='sum', padding_idx=5)");
  EXPECT_EQ(EmbeddingBag(4, 3).repr(), "EmbeddingBag(4, 3, mode='mean')");
  const Tensor idx = longs({0, 5, 2, 2}, {4}), off = longs({0, 1}, {2});
  Tensor out = bag.forward(idx, off);
  EXPECT_EQ(values(out), values(F::embedding_bag(idx, bag.weight, F::EmbeddingBagFuncOptions().offsets(off).mode(EmbeddingBagMode::Sum).padding_idx(5))));
  sum(out).backward();
  EXPECT_EQ(values(raw::select(bag.weight.grad(), 0, 5)), std::vector<double>(4, 0.0));
  EXPECT_EQ(values(raw::select(bag.weight.grad(), 0, 2)), std::vector<double>(4, 2.0));
  // from_pretrained: the table itself (no copy), frozen by default.
  Tensor table = raw::arange(0, 12, 1, TensorOptions(kFloat64));
  table = raw::reshape(table, {4, 3});
  auto frozen = EmbeddingBag::from_pretrained(table, EmbeddingBagFromPretrainedOptions().mode(EmbeddingBagMode::Max));
  EXPECT_FALSE(frozen->weight.requires_grad());
  EXPECT_EQ(frozen->weight.data_ptr_raw(), table.data_ptr_raw());
  EXPECT_EQ(values(frozen->forward(longs({1, 3, 0, 2}, {2, 2}))), (std::vector<double>{9, 10, 11, 6, 7, 8}));
  EXPECT_TRUE(EmbeddingBag::from_pretrained(table, EmbeddingBagFromPretrainedOptions().freeze(false))->weight.requires_grad());
}

TEST(EmbeddingBag, EveryRefusalSaysWhatWasWrong) {
  Tensor w = raw::randn({4, 3});
  const Tensor idx = longs({1, 2, 0, 3, 3, 1}, {6});
  auto bag = [&](const Tensor& i, F::EmbeddingBagFuncOptions o) { return F::embedding_bag(i, w, o); };
  EXPECT_TRUE(throws_with([&] { bag(idx, F::EmbeddingBagFuncOptions().offsets(longs({1, 2}, {2}))); },
                          "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0. However, got 1"));
  EXPECT_TRUE(throws_with([&] { bag(idx, F::EmbeddingBagFuncOptions().offsets(longs({0, 7}, {2}))); },
                          "offsets[-1] can not be greater than input's length 6 but got offsets[-1] of 7"));
  EXPECT_TRUE(throws_with([&] { bag(idx, F::EmbeddingBagFuncOptions().offsets(longs({0, 4, 2}, {3}))); },
                          "offsets must be ascending, but offsets[2] = 2 < offsets[1] = 4"));
  EXPECT_TRUE(throws_with([&] { bag(idx, {}); }, "offsets has to be a 1D Tensor but got None"));
  EXPECT_TRUE(throws_with([&] { bag(idx, F::EmbeddingBagFuncOptions().offsets(longs({0, 2}, {1, 2}))); }, "offsets has to be a 1D Tensor"));
  EXPECT_TRUE(throws_with([&] { bag(longs({1, 2}, {1, 2}), F::EmbeddingBagFuncOptions().offsets(longs({0}, {1}))); },
                          "if input is 2D, then offsets has to be None"));
  EXPECT_TRUE(throws_with([&] { bag(longs({1}, {1, 1, 1}), {}); }, "input has to be 1D or 2D Tensor, but got Tensor of dimension 3"));
  EXPECT_TRUE(throws_with([&] { bag(idx, F::EmbeddingBagFuncOptions().offsets(longs({0, 2}, {2})).per_sample_weights(raw::ones({6}))); },
                          "per_sample_weights is only supported for mode='sum' (got mode='mean')"));
  EXPECT_TRUE(throws_with([&] { bag(idx, F::EmbeddingBagFuncOptions().offsets(longs({0, 2}, {2})).mode(EmbeddingBagMode::Sum).per_sample_weights(raw::ones({5}))); },
                          "If per_sample_weights ([5]) is not None, then it must have the same shape as the input ([6])"));
  EXPECT_TRUE(throws_with([&] { bag(idx, F::EmbeddingBagFuncOptions().offsets(longs({0, 2}, {2})).mode(EmbeddingBagMode::Sum).per_sample_weights(raw::ones({6}, TensorOptions(kFloat64)))); },
                          "to have the same type as tensor for argument #1 'per_sample_weights'"));
  EXPECT_TRUE(throws_with([&] { bag(longs({1, 9}, {2}), F::EmbeddingBagFuncOptions().offsets(longs({0}, {1}))); },
                          "Index 1 of input takes value 9 which is not in the valid range [0, 4)"));
  EXPECT_TRUE(throws_with([&] { bag(raw::ones({2}), F::EmbeddingBagFuncOptions().offsets(longs({0}, {1}))); },
                          "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int"));
  EXPECT_TRUE(throws_with([&] { bag(idx, F::EmbeddingBagFuncOptions().offsets(longs({0, 2}, {2})).padding_idx(4)); },
                          "padding_idx must be within the number of embeddings, -4 through 3, but got 4"));
  EXPECT_TRUE(throws_with([&] { bag(idx, F::EmbeddingBagFuncOptions().offsets(longs({0, 2}, {2})).sparse(true)); },
                          "sparse=true (a sparse gradient for the weight) is not supported"));
  EXPECT_TRUE(throws_with([&] { EmbeddingBag(EmbeddingBagOptions(4, 3).sparse(true)); }, "sparse=true"));
  EXPECT_TRUE(throws_with([&] { bag(idx, F::EmbeddingBagFuncOptions().offsets(longs({}, {0})).include_last_offset(true)); },
                          "include_last_offset needs at least one offset"));
  // torch's edge forms: no bags at all.
  EXPECT_EQ(bag(idx, F::EmbeddingBagFuncOptions().offsets(longs({0}, {1})).include_last_offset(true)).sizes(), (Shape{0, 3}));
  EXPECT_EQ(bag(idx, F::EmbeddingBagFuncOptions().offsets(longs({}, {0}))).sizes(), (Shape{0, 3}));
}

TEST(EmbeddingBag, OnCudaMatchesTorch_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  for (const golden::Case& c : testing::embedding_bag_golden::kCases) {
    EXPECT_TRUE(golden::matches(c, calls(), Device::cuda(0)));
  }
}

}  // namespace
}  // namespace colony::nn
