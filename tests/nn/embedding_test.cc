// nn/embedding.h: F::embedding and nn::Embedding (lookup for any index shape, PyTorch's init, the
// padding row, backward sums that do not depend on the thread count, index errors, autocast), and
// weight tying of an Embedding with a Linear head (Module::replace_parameter): one parameter, one
// gradient, one tensor on disk, the tie kept through save and load. Embedding::from_pretrained.
#include "nn/embedding.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "autograd/autocast.h"
#include "autograd/autograd.h"
#include "nn/linear.h"
#include "nn/safetensors.h"
#include "nn/serialize.h"
#include "tensor/grad_mode.h"
#include "tensor/random.h"
#include "tensor/threads.h"
#include "tests/nn/cuda_module_check.h"
#include "tests/test_util.h"

namespace colony {
namespace {

namespace F = nn::functional;
using testing::all_close;
using testing::throws_with;

Tensor indices(const std::vector<int64_t>& v, const Shape& shape, DType dtype = kInt64) {
  return raw::to(raw::from_vector(v, shape), kCPU, dtype);
}

TEST(Embedding, LooksUpRowsForAnyIndexShape) {
  Tensor w = raw::reshape(raw::arange(0, 12, 1, kFloat32), {4, 3});  // row r = [3r, 3r + 1, 3r + 2]
  Tensor out = F::embedding(indices({2, 0, 3, 3, 1, 2}, {2, 3}), w);
  EXPECT_EQ(out.sizes(), (Shape{2, 3, 3}));
  std::vector<double> expected;
  for (int64_t r : {2, 0, 3, 3, 1, 2})
    for (int64_t c = 0; c < 3; ++c) expected.push_back(3.0 * r + c);
  EXPECT_EQ(testing::values(out), expected);
  Tensor from32 = F::embedding(indices({2, 0, 3, 3, 1, 2}, {2, 3}, kInt32), w);
  EXPECT_TRUE(all_close(from32, out, 0, 0));
  Tensor scalar = F::embedding(raw::reshape(indices({1}, {1}), {}), w);
  EXPECT_EQ(scalar.sizes(), (Shape{3}));
  EXPECT_EQ(testing::values(scalar), (std::vector<double>{3, 4, 5}));
}

TEST(Embedding, InitIsStandardNormalWithThePaddingRowZero) {
  manual_seed(5);
  nn::Embedding emb(nn::EmbeddingOptions(1000, 64).padding_idx(-1));
  EXPECT_EQ(*emb.options.padding_idx(), 999);
  ASSERT_EQ(emb.named_parameters().size(), 1u);
  EXPECT_EQ(emb.named_parameters()[0].first, "weight");
  EXPECT_EQ(emb.weight.sizes(), (Shape{1000, 64}));
  std::vector<double> v = testing::values(emb.weight);
  double mean = 0, sq = 0;
  for (size_t i = 0; i < 999 * 64; ++i) mean += v[i];
  mean /= 999 * 64;
  for (size_t i = 0; i < 999 * 64; ++i) sq += (v[i] - mean) * (v[i] - mean);
  // 63936 draws: the sample mean's standard error is 0.004, the standard deviation's 0.003.
  EXPECT_NEAR(mean, 0.0, 0.02);
  EXPECT_NEAR(std::sqrt(sq / (999 * 64)), 1.0, 0.02);
  for (size_t i = 999 * 64; i < v.size(); ++i) EXPECT_EQ(v[i], 0.0);
  EXPECT_EQ(emb.repr(), "Embedding(1000, 64, padding_idx=999)");
  EXPECT_EQ(nn::Embedding(10, 4).repr(), "Embedding(10, 4)");
}

TEST(Embedding, BackwardSumsTheRowsOfEachIndexAndSkipsPadding) {
  Generator gen(3);
  nn::Embedding emb(nn::EmbeddingOptions(6, 5).padding_idx(2));
  const std::vector<int64_t> idx = {4, 2, 4, 0, 2, 4, 5, 0};
  Tensor out = emb.forward(indices(idx, {2, 4}));
  Tensor g = raw::randn({2, 4, 5}, TensorOptions(kFloat32), &gen);
  sum(mul(out, g)).backward();
  std::vector<double> gv = testing::values(g), expected(6 * 5, 0.0);
  for (size_t j = 0; j < idx.size(); ++j)
    if (idx[j] != 2)
      for (int c = 0; c < 5; ++c) expected[idx[j] * 5 + c] += gv[j * 5 + c];
  EXPECT_TRUE(all_close(emb.weight.grad(), raw::reshape(raw::from_vector(expected, {30}), {6, 5}), 1e-6, 1e-6));
}

TEST(Embedding, BackwardDoesNotDependOnTheThreadCount) {
  const int before = get_num_threads();
  Generator gen(4);
  Tensor w = raw::randn({50, 384}, TensorOptions(kFloat32), &gen);
  Tensor idx = raw::to(raw::mul(raw::rand({4000}, TensorOptions(kFloat32), &gen), 49.99), kCPU, kInt64);
  Tensor g = raw::randn({4000, 384}, TensorOptions(kFloat32), &gen);
  std::vector<std::vector<double>> runs;
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    Tensor wi = raw::clone(w);
    wi.requires_grad_(true);
    sum(mul(embedding(idx, wi), g)).backward();
    runs.push_back(testing::values(wi.grad()));
  }
  set_num_threads(before);
  EXPECT_EQ(runs[1], runs[0]);
  EXPECT_EQ(runs[2], runs[0]);
}

TEST(Embedding, BadIndicesAndOptionsSayWhatWasExpected) {
  nn::Embedding emb(10, 4);
  EXPECT_TRUE(throws_with<std::out_of_range>([&] { emb.forward(indices({3, 10, 1}, {3})); },
                                             "embedding: index 10 (at flat position 1 of indices [3]) is out of "
                                             "range: expected 0 <= index < num_embeddings = 10"));
  EXPECT_TRUE(throws_with<std::out_of_range>([&] { emb.forward(indices({-1}, {1})); }, "index -1"));
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { emb.forward(raw::zeros({2}, kFloat32)); },
                                                 "expected int64 or int32 indices, got float32"));
  EXPECT_TRUE(throws_with<std::invalid_argument>([] { nn::Embedding(nn::EmbeddingOptions(10, 4).padding_idx(10)); },
                                                 "padding_idx 10 must be within [-10, 10)"));
  EXPECT_TRUE(throws_with<std::invalid_argument>([] { nn::Embedding(0, 4); }, "must be positive"));
}

TEST(Embedding, FromPretrainedUsesTheTableItselfFrozenOrNot) {
  Tensor table = raw::reshape(raw::arange(0, 12, 1, kFloat64), {4, 3});
  // No initialization is drawn: the global generator's stream is as without the call.
  manual_seed(3);
  const std::vector<double> undisturbed = testing::values(randn({4}));
  manual_seed(3);
  auto frozen = nn::Embedding::from_pretrained(table);
  EXPECT_EQ(testing::values(randn({4})), undisturbed);
  EXPECT_EQ(frozen->options.num_embeddings(), 4);
  EXPECT_EQ(frozen->options.embedding_dim(), 3);
  EXPECT_EQ(frozen->weight.dtype(), kFloat64);
  EXPECT_FALSE(frozen->weight.requires_grad());
  EXPECT_TRUE(testing::matches_values(frozen->forward(indices({2}, {1})), {6, 7, 8}));
  // The same storage, as PyTorch's Parameter(embeddings): a write to the table shows in the module.
  Tensor row = raw::select(table, 0, 2);
  raw::fill_(row, -1.0);
  EXPECT_TRUE(testing::matches_values(frozen->forward(indices({2}, {1})), {-1, -1, -1}));
  EXPECT_FALSE(table.requires_grad());  // the caller's handle is not made a parameter

  // Trainable with a padding row that keeps its values (not zeroed) and gets no gradient.
  auto trained = nn::Embedding::from_pretrained(table, /*freeze=*/false, /*padding_idx=*/-1);
  EXPECT_TRUE(trained->weight.requires_grad());
  EXPECT_EQ(*trained->options.padding_idx(), 3);
  EXPECT_TRUE(testing::matches_values(trained->forward(indices({3}, {1})), {9, 10, 11}));
  trained->forward(indices({0, 3, 0}, {3})).sum().backward();
  EXPECT_TRUE(testing::matches_values(trained->weight.grad(), {2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(trained->parameters().size(), 1u);

  EXPECT_TRUE(throws_with<std::invalid_argument>([] { nn::Embedding::from_pretrained(raw::zeros({4})); },
                                                 "embeddings must be a 2-D tensor [num_embeddings, embedding_dim], got [4]"));
  EXPECT_TRUE(throws_with<std::invalid_argument>([] { nn::Embedding::from_pretrained(raw::zeros({4, 2}, kInt64)); },
                                                 "embeddings must be floating, got int64"));
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { nn::Embedding::from_pretrained(table, true, 4); },
                                                 "padding_idx 4 must be within [-4, 4)"));
}

TEST(Embedding, AutocastLeavesItsOutputInTheWeightsDtype) {
  nn::Embedding emb(8, 4);
  AutocastGuard amp(DeviceType::CPU, kBFloat16);
  EXPECT_EQ(emb.forward(indices({1, 2}, {2})).dtype(), kFloat32);
}

// A GPT's token embedding and output head sharing one [vocab, dim] table.
struct TiedLm : nn::Module {
  TiedLm(int64_t vocab, int64_t dim) {
    emb = register_module("emb", std::make_shared<nn::Embedding>(vocab, dim));
    head = register_module("head", std::make_shared<nn::Linear>(nn::LinearOptions(dim, vocab).bias(false)));
    head->weight = head->replace_parameter("weight", emb->weight);
  }
  Tensor forward(const Tensor& idx) override { return head->forward(emb->forward(idx)); }
  std::shared_ptr<nn::Embedding> emb;
  std::shared_ptr<nn::Linear> head;
};

TEST(WeightTying, OneParameterReceivesBothGradients) {
  manual_seed(6);
  TiedLm lm(7, 5);
  ASSERT_EQ(lm.parameters().size(), 1u);
  EXPECT_EQ(lm.named_parameters()[0].first, "emb.weight");
  auto sd = lm.state_dict();
  ASSERT_EQ(sd.size(), 2u);
  EXPECT_EQ(sd[1].first, "head.weight");
  EXPECT_TRUE(sd[0].second.is_same(sd[1].second));

  Tensor idx = indices({1, 3, 3, 6}, {4});
  Generator gen(7);
  Tensor g = raw::randn({4, 7}, TensorOptions(kFloat32), &gen);
  sum(mul(lm.forward(idx), g)).backward();
  // The same computation with two separate copies of the table: the tied gradient is their sum.
  Tensor a = raw::clone(lm.emb->weight.detach()), b = raw::clone(lm.emb->weight.detach());
  a.requires_grad_(true);
  b.requires_grad_(true);
  sum(mul(linear(embedding(idx, a), b), g)).backward();
  EXPECT_TRUE(all_close(lm.emb->weight.grad(), raw::add(a.grad(), b.grad()), 1e-6, 1e-6));

  // An optimizer step on parameters() moves both modules.
  {
    NoGradGuard no_grad;
    for (Tensor& p : lm.parameters()) p.sub_(raw::mul(p.grad(), 0.5));
  }
  EXPECT_TRUE(lm.head->weight.is_same(lm.emb->weight));
  EXPECT_TRUE(all_close(lm.head->weight, raw::sub(a.detach(), raw::mul(raw::add(a.grad(), b.grad()), 0.5)), 1e-6, 1e-6));
}

TEST(WeightTying, SaveStoresTheTableOnceAndLoadKeepsTheTie) {
  manual_seed(8);
  TiedLm lm(9, 4);
  const std::string path = ::testing::TempDir() + "/tied_lm.safetensors";
  nn::save(lm, path);
  io::SafetensorsContents c = io::load_safetensors(path);
  ASSERT_EQ(c.tensors.size(), 1u);
  EXPECT_EQ(c.tensors[0].first, "emb.weight");

  manual_seed(9);
  TiedLm fresh(9, 4);
  ASSERT_FALSE(all_close(fresh.emb->weight, lm.emb->weight, 0, 0));
  nn::load(fresh, path);
  EXPECT_TRUE(all_close(fresh.emb->weight, lm.emb->weight, 0, 0));
  EXPECT_TRUE(fresh.head->weight.is_same(fresh.emb->weight));
  Tensor idx = indices({0, 8}, {2});
  EXPECT_TRUE(all_close(fresh.forward(idx), lm.forward(idx), 0, 0));

  // A checkpoint holding the table under the alias only (or under both names) loads too.
  TiedLm other(9, 4);
  other.load_state_dict({{"head.weight", lm.emb->weight}});
  EXPECT_TRUE(all_close(other.emb->weight, lm.emb->weight, 0, 0));
  other.load_state_dict(lm.state_dict());
  // Missing under every name is still an error, naming the first.
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { other.load_state_dict({}); }, "Missing key(s): \"emb.weight\""));
}

TEST(WeightTying, ReplaceParameterChecksNameAndShape) {
  nn::Linear head(4, 9);
  nn::Embedding emb(8, 4);
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { head.replace_parameter("weight", emb.weight); },
                                                 "\"weight\" of Linear has shape [9, 4], the new tensor [8, 4]"));
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { head.replace_parameter("scale", emb.weight); },
                                                 "Linear has no parameter \"scale\""));
}

TEST(Embedding, ModuleMatchesTheCpuOnCuda_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  const Device dev = Device::cuda(0);
  nn::Embedding cpu(nn::EmbeddingOptions(50, 96).padding_idx(3));
  nn::Embedding gpu(nn::EmbeddingOptions(50, 96).padding_idx(3));
  gpu.load_state_dict(cpu.state_dict());
  gpu.to(dev);
  Generator gen(10);
  Tensor idx = raw::to(raw::mul(raw::rand({2000}, TensorOptions(kFloat32), &gen), 49.99), kCPU, kInt64);
  Tensor g = raw::randn({2000, 96}, TensorOptions(kFloat32), &gen);
  Tensor oc = cpu.forward(idx), og = gpu.forward(raw::to(idx, dev, kInt64));
  EXPECT_TRUE(all_close(raw::to(og, kCPU, kFloat32), oc, 0, 0));
  sum(mul(oc, g)).backward();
  sum(mul(og, raw::to(g, dev, kFloat32))).backward();
  EXPECT_TRUE(all_close(raw::to(gpu.weight.grad(), kCPU, kFloat32), cpu.weight.grad(), 1e-5, 1e-4));
}

}  // namespace
}  // namespace colony
