// nn::ParameterDict against libtorch's and torch.nn's: insertion order, the parameters seen by
// the enclosing module and an optimizer, pop, update keeping a key's place, printing, refusals.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "nn/linear.h"
#include "nn/parameter_dict.h"
#include "ops/raw_ops.h"
#include "tests/test_util.h"

namespace colony::nn {
namespace {

using colony::testing::throws_with;

Tensor param(const Shape& shape, DType dtype = kFloat32) {
  Tensor t = raw::zeros(shape, TensorOptions(dtype));
  t.requires_grad_(true);
  return t;
}

struct Model : Module {
  Model() {
    dict = register_module("dict", std::make_shared<ParameterDict>());
    fc = register_module("fc", std::make_shared<Linear>(2, 1));
  }
  std::shared_ptr<ParameterDict> dict;
  std::shared_ptr<Linear> fc;
};

TEST(ParameterDict, KeepsInsertionOrderAndIsSeenByTheEnclosingModule) {
  Model m;
  Tensor b = param({2, 3});
  m.dict->insert("b", b);
  m.dict->insert("a", param({4}, kFloat64));
  EXPECT_EQ(m.dict->keys(), (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(m.dict->size(), 2u);
  EXPECT_FALSE(m.dict->empty());
  EXPECT_TRUE(m.dict->contains("a"));
  EXPECT_FALSE(m.dict->contains("c"));
  EXPECT_EQ((*m.dict)["b"].impl(), b.impl());  // the same tensor, not a copy
  std::vector<std::string> names;
  for (const auto& [n, t] : m.named_parameters()) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"dict.b", "dict.a", "fc.weight", "fc.bias"}));
  EXPECT_EQ(m.parameters().size(), 4u);
  // A tensor that does not require grad stays so (libtorch's insert).
  Tensor frozen = raw::zeros({1});
  m.dict->insert("frozen", frozen);
  EXPECT_FALSE(m.dict->get("frozen").requires_grad());
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { m.dict->insert("a", param({1})); }, "\"a\" is already registered"));
}

TEST(ParameterDict, PopUpdateAndClear) {
  ParameterDict d({{"x", param({2})}, {"y", param({3})}});
  Tensor y = d.pop("y");
  EXPECT_EQ(y.shape(), (Shape{3}));
  EXPECT_EQ(d.keys(), (std::vector<std::string>{"x"}));
  EXPECT_TRUE(throws_with<std::out_of_range>([&] { d.pop("y"); }, "ParameterDict: no key \"y\"; keys [x]"));
  EXPECT_TRUE(throws_with<std::out_of_range>([&] { d.get("z"); }, "no key \"z\""));
  // An existing key keeps its place and takes the new tensor, of any shape; a new key is appended.
  d.insert("w", param({1}));
  d.update({{"x", param({5})}, {"v", param({6})}});
  EXPECT_EQ(d.keys(), (std::vector<std::string>{"x", "w", "v"}));
  EXPECT_EQ(d["x"].shape(), (Shape{5}));
  EXPECT_EQ(d.values().size(), 3u);
  d.clear();
  EXPECT_TRUE(d.empty());
  EXPECT_EQ(d.state_dict().size(), 0u);
}

// torch's repr: "(key): Parameter containing: [torch.FloatTensor of size 2x3]" lines.
TEST(ParameterDict, PrintsAsTorch) {
  ParameterDict d({{"a", param({4}, kFloat64)}, {"b", param({2, 3})}});
  EXPECT_EQ(d.repr(),
            "ParameterDict(\n"
            "    (a): Parameter containing: [torch.DoubleTensor of size 4]\n"
            "    (b): Parameter containing: [torch.FloatTensor of size 2x3]\n"
            ")");
  EXPECT_EQ(ParameterDict().repr(), "ParameterDict()");
}

}  // namespace
}  // namespace colony::nn
