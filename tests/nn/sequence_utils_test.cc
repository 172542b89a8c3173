// nn::utils::rnn::pad_sequence, parameters_to_vector and vector_to_parameters (nn/sequence_utils.h):
// values as torch gives them (written out below), gradients, and the refusals.
#include "nn/sequence_utils.h"

#include <gtest/gtest.h>

#include <vector>

#include "autograd/autograd.h"
#include "nn/nn.h"
#include "tests/test_util.h"

namespace colony::nn::utils {
namespace {

using colony::testing::throws_with;
using colony::testing::values;

Tensor seq(std::vector<double> v, Shape shape) { return raw::from_vector(v, shape, TensorOptions(kFloat64)); }

// torch.nn.utils.rnn.pad_sequence([a, b, c], ...) with a = [1, 2], b = [3, 4, 5], c = [6] as rows
// of width 1 after unsqueeze: time-major by default.
TEST(PadSequence, MatchesTorch) {
  Tensor a = seq({1, 2}, {2}), b = seq({3, 4, 5}, {3}), c = seq({6}, {1});
  Tensor t = rnn::pad_sequence({a, b, c});
  EXPECT_EQ(t.sizes(), (Shape{3, 3}));
  EXPECT_EQ(values(t), (std::vector<double>{1, 3, 6, 2, 4, 0, 0, 5, 0}));
  Tensor bf = rnn::pad_sequence({a, b, c}, /*batch_first=*/true, -1.0);
  EXPECT_EQ(values(bf), (std::vector<double>{1, 2, -1, 3, 4, 5, 6, -1, -1}));
  Tensor left = rnn::pad_sequence({a, b, c}, true, 0.0, "left");
  EXPECT_EQ(values(left), (std::vector<double>{0, 1, 2, 3, 4, 5, 0, 0, 6}));
  // Trailing dims are kept: [L, 2] rows.
  Tensor m = rnn::pad_sequence({seq({1, 2, 3, 4}, {2, 2}), seq({5, 6}, {1, 2})}, true);
  EXPECT_EQ(m.sizes(), (Shape{2, 2, 2}));
  EXPECT_EQ(values(m), (std::vector<double>{1, 2, 3, 4, 5, 6, 0, 0}));
  // Integer token ids pad with an integer value.
  Tensor ids = rnn::pad_sequence({raw::from_vector<int64_t>({7, 8}, {2}), raw::from_vector<int64_t>({9}, {1})}, true, 3);
  EXPECT_EQ(ids.dtype(), kInt64);
  EXPECT_EQ(values(ids), (std::vector<double>{7, 8, 9, 3}));
}

TEST(PadSequence, GradientReachesEachSequence) {
  Tensor a = seq({1, 2}, {2}), b = seq({3, 4, 5}, {3});
  a.requires_grad_(true);
  b.requires_grad_(true);
  Tensor t = rnn::pad_sequence({a, b}, true, 0.0, "left");  // [[0, 1, 2], [3, 4, 5]]
  colony::sum(colony::mul(t, seq({10, 20, 30, 40, 50, 60}, {2, 3}))).backward();
  EXPECT_EQ(values(a.grad()), (std::vector<double>{20, 30}));
  EXPECT_EQ(values(b.grad()), (std::vector<double>{40, 50, 60}));
}

TEST(PadSequence, Refusals) {
  EXPECT_TRUE(throws_with([] { rnn::pad_sequence({}); }, "received an empty list of sequences"));
  EXPECT_TRUE(throws_with([] { rnn::pad_sequence({seq({1, 2}, {1, 2}), seq({1, 2, 3}, {1, 3})}); },
                          "sequence 1 has shape [1, 3]; every sequence must be [L, 2], as sequence 0"));
  EXPECT_TRUE(throws_with([] { rnn::pad_sequence({seq({1}, {1}), raw::from_vector<int64_t>({1}, {1})}); },
                          "sequence 1 is int64 on cpu, sequence 0 float64 on cpu; they must match"));
  EXPECT_TRUE(throws_with([] { rnn::pad_sequence({raw::scalar_tensor(1.0)}); }, "0-dim tensor"));
  EXPECT_TRUE(throws_with([] { rnn::pad_sequence({seq({1}, {1})}, true, 0.0, "middle"); }, "padding_side must be"));
}

TEST(ParameterVector, RoundTripsAModelsParameters) {
  Linear lin(LinearOptions(3, 2));
  const std::vector<Tensor> params = lin.parameters();
  Tensor flat = parameters_to_vector(params);
  EXPECT_EQ(flat.sizes(), (Shape{8}));  // weight [2, 3] then bias [2], in order
  std::vector<double> expected = values(lin.weight);
  for (double v : values(lin.bias)) expected.push_back(v);
  EXPECT_EQ(values(flat), expected);

  Tensor replacement = raw::arange(0, 8, 1, TensorOptions(kFloat32));
  vector_to_parameters(replacement, params);
  EXPECT_EQ(values(lin.weight), (std::vector<double>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(values(lin.bias), (std::vector<double>{6, 7}));
  EXPECT_FALSE(lin.weight.grad_fn());  // copied outside autograd
  EXPECT_TRUE(lin.weight.requires_grad());

  EXPECT_TRUE(throws_with([&] { vector_to_parameters(raw::zeros({7}, kFloat32), params); },
                          "expected a 1-D vector of 8 elements (the parameters' total size), got shape [7]"));
  EXPECT_TRUE(throws_with([] { parameters_to_vector({}); }, "no parameters given"));
}

// parameters_to_vector is differentiable: a gradient on the vector reaches each parameter.
TEST(ParameterVector, Differentiable) {
  Tensor w = seq({1, 2, 3, 4}, {2, 2}), b = seq({5}, {1});
  w.requires_grad_(true);
  b.requires_grad_(true);
  colony::sum(colony::mul(parameters_to_vector({w, b}), seq({1, 2, 3, 4, 5}, {5}))).backward();
  EXPECT_EQ(values(w.grad()), (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(values(b.grad()), (std::vector<double>{5}));
}

}  // namespace
}  // namespace colony::nn::utils
