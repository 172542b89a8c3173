// Module::clone(): a deep copy (libtorch's module->clone(), Python's copy.deepcopy) of every kind of
// module: new tensors with the same values, flags and mode; the copy's own members used by its
// forward; sharing kept; changing the copy leaves the original.
#include <gtest/gtest.h>

#include <functional>
#include <typeinfo>

#include "autograd/ops.h"
#include "nn/nn.h"
#include "tensor/grad_mode.h"
#include "tests/test_util.h"

namespace colony::nn {
namespace {

using colony::testing::throws_with;

NamedTensors all_state(Module& m) {
  NamedTensors out = m.named_parameters();
  for (auto& b : m.named_buffers()) out.push_back(b);
  return out;
}

// Checks that `copy` is a deep copy of `original`, then changes every tensor of the copy and checks
// that the original's values (and, given `input`, its forward) are as before while the copy's
// forward sees the change.
void expect_deep_copy(const std::shared_ptr<Module>& original, const std::shared_ptr<Module>& copy,
                      const Tensor& input = Tensor()) {
  SCOPED_TRACE(original->name());
  ASSERT_NE(copy, nullptr);
  EXPECT_NE(copy.get(), original.get());
  EXPECT_EQ(typeid(*copy), typeid(*original));
  EXPECT_EQ(copy->repr(), original->repr());
  auto om = original->named_modules(), cm = copy->named_modules();
  ASSERT_EQ(om.size(), cm.size());
  for (size_t i = 0; i < om.size(); ++i) {
    EXPECT_EQ(om[i].first, cm[i].first);
    EXPECT_NE(om[i].second.get(), cm[i].second.get());
    EXPECT_EQ(om[i].second->is_training(), cm[i].second->is_training()) << om[i].first;
  }
  NamedTensors o = all_state(*original), c = all_state(*copy);
  ASSERT_EQ(o.size(), c.size());
  std::vector<Tensor> before;
  for (size_t i = 0; i < o.size(); ++i) {
    EXPECT_EQ(o[i].first, c[i].first);
    EXPECT_NE(o[i].second.impl(), c[i].second.impl()) << o[i].first;
    EXPECT_NE(o[i].second.storage().get(), c[i].second.storage().get()) << o[i].first;
    EXPECT_EQ(o[i].second.dtype(), c[i].second.dtype()) << o[i].first;
    EXPECT_EQ(o[i].second.requires_grad(), c[i].second.requires_grad()) << o[i].first;
    EXPECT_FALSE(c[i].second.grad().defined()) << o[i].first;
    EXPECT_TRUE(raw::equal(o[i].second, c[i].second)) << o[i].first;
    before.push_back(raw::clone(o[i].second));
  }
  Tensor out_before;
  if (input.defined()) {
    original->eval();
    copy->eval();
    colony::NoGradGuard no_grad;
    out_before = original->forward(input);
    EXPECT_TRUE(raw::equal(copy->forward(input), out_before));
  }
  {
    colony::NoGradGuard no_grad;
    for (auto& [n, t] : c)
      if (is_floating(t.dtype())) raw::fill_(t, 0.375);
  }
  for (size_t i = 0; i < o.size(); ++i) EXPECT_TRUE(raw::equal(o[i].second, before[i])) << o[i].first;
  if (input.defined()) {
    colony::NoGradGuard no_grad;
    EXPECT_TRUE(raw::equal(original->forward(input), out_before));
    bool has_float_state = false;
    for (auto& [n, t] : c) has_float_state |= is_floating(t.dtype());
    if (has_float_state) {
      EXPECT_FALSE(raw::equal(copy->forward(input), out_before));
    }
  }
}

void check(const std::shared_ptr<Module>& m, const Tensor& input = Tensor()) { expect_deep_copy(m, m->clone(), input); }

TEST(ModuleClone, LayersWithParametersAndBuffers) {
  manual_seed(0);
  Tensor x4 = raw::randn({2, 3, 6, 6});
  check(std::make_shared<Linear>(6, 4), raw::randn({2, 6}));
  check(std::make_shared<Linear>(LinearOptions(6, 4).bias(false)), raw::randn({2, 6}));
  check(std::make_shared<Conv2d>(Conv2dOptions(3, 5, 3).padding(1)), x4);
  check(std::make_shared<ConvTranspose2d>(ConvTranspose2dOptions(3, 2, 2)), x4);
  check(std::make_shared<Conv1d>(Conv1dOptions(3, 2, 3)), raw::randn({2, 3, 7}));
  auto bn = std::make_shared<BatchNorm2d>(3);
  bn->forward(x4);  // running statistics and num_batches_tracked move
  check(bn, x4);
  check(std::make_shared<LayerNorm>(LayerNormOptions({6})), raw::randn({2, 6}));
  check(std::make_shared<GroupNorm>(GroupNormOptions(1, 3)), x4);
  check(std::make_shared<InstanceNorm2d>(InstanceNorm2dOptions(3).affine(true).track_running_stats(true)), x4);
  check(std::make_shared<Embedding>(10, 4), raw::arange(5, TensorOptions().dtype(kInt64)));
  check(std::make_shared<PReLU>(), raw::randn({2, 6}));
  check(std::make_shared<RNNCell>(4, 3), raw::randn({2, 4}));
  check(std::make_shared<TransformerEncoderLayer>(TransformerEncoderLayerOptions(8, 2).dropout(0.0)));
  auto encoder = std::make_shared<TransformerEncoder>(
      TransformerEncoderLayer(TransformerEncoderLayerOptions(8, 2).dropout(0.0)), 2,
      std::make_shared<LayerNorm>(LayerNormOptions({8})));
  auto encoder_copy = clone(encoder);
  Tensor src = raw::randn({3, 2, 8});
  Tensor before = encoder->forward(src);
  EXPECT_TRUE(raw::equal(encoder_copy->forward(src), before));
  expect_deep_copy(encoder, encoder_copy);  // changes the copy
  EXPECT_TRUE(raw::equal(encoder->forward(src), before));
  EXPECT_FALSE(raw::equal(encoder_copy->forward(src), before));
  check(std::make_shared<LSTM>(LSTMOptions(4, 3).num_layers(2)));
  check(std::make_shared<GRU>(4, 3));
  check(std::make_shared<MultiheadAttention>(8, 2));
  check(std::make_shared<Bilinear>(3, 4, 2));
  check(std::make_shared<Transformer>(TransformerOptions(8, 2, 1, 1).dim_feedforward(16)));
}

TEST(ModuleClone, LayersWithoutParametersKeepTheirOptions) {
  Tensor x4 = raw::randn({1, 2, 4, 4});
  check(std::make_shared<ReLU>(), x4);
  check(std::make_shared<GELU>(GELUOptions().approximate("tanh")), x4);
  check(std::make_shared<Tanh>(), x4);
  check(std::make_shared<Softmax>(1), x4);
  check(std::make_shared<LeakyReLU>(LeakyReLUOptions().negative_slope(0.3)), x4);
  check(std::make_shared<Dropout>(0.3));
  check(std::make_shared<MaxPool2d>(2), x4);
  check(std::make_shared<Flatten>(), x4);
  check(std::make_shared<Identity>(), x4);
  check(std::make_shared<ZeroPad2d>(ZeroPad2dOptions({1, 1, 2, 0})), x4);
  check(std::make_shared<ConstantPad1d>(ConstantPad1dOptions({1, 2}, 3.5)), raw::randn({1, 2, 4}));
  check(std::make_shared<UpsamplingNearest2d>(UpsamplingOptions().scale_factor(2.0)), x4);
  check(std::make_shared<CrossEntropyLoss>());
}

TEST(ModuleClone, ContainersCloneEachModuleAndKeepSharing) {
  auto shared = std::make_shared<Linear>(4, 4);
  auto seq = std::make_shared<Sequential>(shared, std::make_shared<ReLU>(), shared);
  seq->eval();
  auto copy = std::dynamic_pointer_cast<Sequential>(seq->clone());
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->ptr(0).get(), copy->ptr(2).get());  // one module in the copy too, as deepcopy's memo
  EXPECT_NE(copy->ptr(0).get(), shared.get());
  EXPECT_FALSE(copy->is_training());
  expect_deep_copy(seq, copy, raw::randn({2, 4}));
  EXPECT_NE(copy->ptr<Linear>(0), nullptr);  // typed access still works

  auto list = std::make_shared<ModuleList>();
  list->push_back(std::make_shared<Linear>(2, 3));
  list->push_back(std::make_shared<Conv2d>(Conv2dOptions(1, 1, 1)));
  check(list);
  auto dict = std::make_shared<ModuleDict>(std::initializer_list<NamedAnyModule>{{"fc", std::make_shared<Linear>(2, 2)}});
  check(dict);
  auto plist = std::make_shared<ParameterList>(std::vector<Tensor>{raw::ones({2}).requires_grad_(true), raw::zeros({3})});
  check(plist);
  EXPECT_FALSE(plist->clone()->named_parameters()[1].second.requires_grad());
  auto pdict = std::make_shared<ParameterDict>();
  pdict->insert("a", raw::ones({2}).requires_grad_(true));
  check(pdict);
}

// A model as a user writes it, made cloneable as in libtorch.
struct Tied : Cloneable<Tied> {
  Tied() {
    emb = register_module("emb", std::make_shared<Embedding>(6, 4));
    head = register_module("head", std::make_shared<Linear>(LinearOptions(4, 6).bias(false)));
    head->weight = head->replace_parameter("weight", emb->weight);  // weight tying
    block = register_module("block", std::make_shared<Sequential>(std::make_shared<Linear>(4, 4), std::make_shared<GELU>()));
    scale = register_parameter("scale", raw::ones({4}));
    register_buffer("steps", raw::zeros({}, kInt64));
    register_buffer("cache", raw::zeros({2}), /*persistent=*/false);
  }
  Tensor forward(const Tensor& ids) override { return head->forward(block->forward(emb->forward(ids)) * scale); }
  std::shared_ptr<Embedding> emb;
  std::shared_ptr<Linear> head;
  std::shared_ptr<Sequential> block;
  Tensor scale;
};

TEST(ModuleClone, UserModelKeepsTiesFlagsDtypeAndTheGenerator) {
  manual_seed(5);
  auto model = std::make_shared<Tied>();
  model->block->ptr<Linear>(0)->weight.requires_grad_(false);  // frozen
  model->to(kFloat64);
  Tensor ids = raw::arange(4, TensorOptions().dtype(kInt64));
  model->forward(ids).sum().backward();  // gradients exist; the copy has none
  const uint64_t offset = default_generator().offset();
  std::shared_ptr<Tied> copy = clone(model);
  EXPECT_EQ(default_generator().offset(), offset);  // the clone drew nothing, as deepcopy
  ASSERT_NE(copy, nullptr);
  EXPECT_TRUE(copy->head->weight.is_same(copy->emb->weight));
  EXPECT_EQ(copy->emb->weight.dtype(), kFloat64);
  EXPECT_FALSE(copy->block->ptr<Linear>(0)->weight.requires_grad());
  EXPECT_EQ(copy->state_dict().size(), model->state_dict().size());  // "cache" stays non-persistent
  EXPECT_EQ(copy->named_buffers().size(), 2u);
  expect_deep_copy(model, copy, ids);
  // The copy trains on its own.
  copy->train();
  copy->forward(ids).sum().backward();
  EXPECT_TRUE(copy->scale.grad().defined());
}

struct NotCloneable : Module {
  NotCloneable() { fc = register_module("fc", std::make_shared<Linear>(2, 2)); }
  std::shared_ptr<Linear> fc;
};

struct Derived : Linear {
  Derived() : Linear(2, 2) {}
};

struct Replaced : Cloneable<Replaced> {
  Replaced() { fc = register_module("fc", std::make_shared<Linear>(4, 3)); }
  std::shared_ptr<Linear> fc;
};

TEST(ModuleClone, RefusesWhatItCannotBuild) {
  EXPECT_TRUE(throws_with<std::logic_error>([] { std::make_shared<NotCloneable>()->clone(); },
                                            "NotCloneable has no clone(): derive the class from nn::Cloneable<NotCloneable>"));
  EXPECT_TRUE(throws_with<std::logic_error>([] { std::make_shared<Derived>()->clone(); },
                                            "clone(): Derived derives from Linear without a clone of its own"));
  auto r = std::make_shared<Replaced>();
  r->fc = r->register_module("fc", std::make_shared<Linear>(4, 7));  // a new head, after construction
  EXPECT_TRUE(throws_with<std::logic_error>(
      [&] { r->clone(); }, "\"weight\" has shape [7, 4] in the original, [3, 4] in the new one"));
}

}  // namespace
}  // namespace colony::nn
