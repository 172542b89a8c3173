#include "nn/module.h"

#include <gtest/gtest.h>

#include "autograd/ops.h"
#include "nn/nn.h"
#include "tests/test_util.h"

namespace colony::nn {
namespace {

using colony::testing::throws_with;

class Block : public Module {
 public:
  Block() {
    fc = register_module("fc", std::make_shared<Linear>(4, 3));
    scale = register_parameter("scale", raw::ones({3}));
    steps = register_buffer("steps", raw::zeros({}, kInt64));
  }
  Tensor forward(const Tensor& x) override { return fc->forward(x) * scale; }
  std::shared_ptr<Linear> fc;
  Tensor scale, steps;
};

class Net : public Module {
 public:
  Net() {
    a = register_module("a", std::make_shared<Block>());
    b = register_module("b", std::make_shared<Block>());
  }
  Tensor forward(const Tensor& x) override { return a->forward(x) + b->forward(x); }
  std::shared_ptr<Block> a, b;
};

std::vector<std::string> names(const NamedTensors& v) {
  std::vector<std::string> out;
  for (auto& [n, _] : v) out.push_back(n);
  return out;
}

// PyTorch's order: a module's own parameters, then its children's, recursively.
TEST(Module, NamedParametersInRegistrationOrder) {
  Net net;
  EXPECT_EQ(names(net.named_parameters()),
            (std::vector<std::string>{"a.scale", "a.fc.weight", "a.fc.bias", "b.scale", "b.fc.weight", "b.fc.bias"}));
  EXPECT_EQ(names(net.named_parameters(false)), std::vector<std::string>{});
  EXPECT_EQ(names(net.named_buffers()), (std::vector<std::string>{"a.steps", "b.steps"}));
  EXPECT_EQ(names(net.state_dict()),
            (std::vector<std::string>{"a.scale", "a.steps", "a.fc.weight", "a.fc.bias", "b.scale", "b.steps",
                                      "b.fc.weight", "b.fc.bias"}));
  EXPECT_EQ(net.children().size(), 2u);
  EXPECT_EQ(net.parameters().size(), 6u);
  for (auto& p : net.parameters()) EXPECT_TRUE(p.requires_grad());
  EXPECT_FALSE(net.buffers()[0].requires_grad());
}

// parameters() and buffers() walk the tree without building names: the same tensors, in the same
// order, as the named lists, and a parameter two submodules share (a tied weight) once.
TEST(Module, UnnamedListsMatchTheNamedOnes) {
  Net net;
  Module tied;
  auto first = tied.register_module("first", std::make_shared<Block>());
  auto second = tied.register_module("second", std::make_shared<Block>());
  second->register_parameter("shared", first->scale);
  for (const Module* m : {static_cast<const Module*>(&net), static_cast<const Module*>(&tied)}) {
    for (bool recurse : {true, false}) {
      const NamedTensors named = m->named_parameters(recurse);
      const std::vector<Tensor> plain = m->parameters(recurse);
      ASSERT_EQ(plain.size(), named.size());
      for (size_t i = 0; i < plain.size(); ++i) EXPECT_EQ(plain[i].impl(), named[i].second.impl()) << i;
      const NamedTensors named_buffers = m->named_buffers(recurse);
      const std::vector<Tensor> buffers = m->buffers(recurse);
      ASSERT_EQ(buffers.size(), named_buffers.size());
      for (size_t i = 0; i < buffers.size(); ++i) EXPECT_EQ(buffers[i].impl(), named_buffers[i].second.impl()) << i;
    }
  }
  EXPECT_EQ(tied.parameters().size(), 6u);  // first's 3, second's 3; "second.shared" is first.scale
}

TEST(Module, RegisterReturnsTheStoredHandle) {
  Net net;
  // The member and the registered parameter are one TensorImpl: updating one updates the other.
  EXPECT_TRUE(net.a->scale.is_same(net.named_parameters()[0].second));
}

// torch's checks and messages: a name of another kind is refused, as are "" and dotted names.
TEST(Module, RegistrationErrors) {
  Block b;
  EXPECT_TRUE(throws_with([&] { b.register_parameter("steps", raw::ones({1})); }, "attribute 'steps' already exists"));
  EXPECT_TRUE(throws_with([&] { b.register_parameter("fc", raw::ones({1})); }, "attribute 'fc' already exists"));
  EXPECT_TRUE(throws_with([&] { b.register_buffer("scale", raw::ones({1})); }, "attribute 'scale' already exists"));
  EXPECT_TRUE(throws_with([&] { b.register_module("scale", std::make_shared<ReLU>()); }, "attribute 'scale' already exists"));
  EXPECT_TRUE(throws_with([&] { b.register_buffer("x.y", raw::ones({1})); }, "buffer name can't contain \".\""));
  EXPECT_TRUE(throws_with([&] { b.register_parameter("", raw::ones({1})); }, "parameter name can't be empty string \"\""));
  EXPECT_TRUE(throws_with([&] { b.register_module("a.b", std::make_shared<ReLU>()); }, "module name can't contain \".\", got: a.b"));
}

// Registering a name of the same kind again replaces it in its place (torch's register_parameter,
// register_buffer and add_module; libtorch refuses, "Parameter 'scale' already defined").
TEST(Module, ReRegisteringReplacesInPlace) {
  Block b;
  Tensor old_scale = b.scale;
  b.scale = b.register_parameter("scale", raw::full({3}, 2.0));
  auto names = [](const NamedTensors& v) {
    std::vector<std::string> out;
    for (const auto& [n, _] : v) out.push_back(n);
    return out;
  };
  EXPECT_EQ(names(b.named_parameters()), (std::vector<std::string>{"scale", "fc.weight", "fc.bias"}));
  EXPECT_TRUE(b.named_parameters()[0].second.is_same(b.scale));
  EXPECT_FALSE(b.scale.is_same(old_scale));
  EXPECT_TRUE(b.scale.requires_grad());
  // A buffer: replaced, and made non-persistent when asked.
  b.register_buffer("steps", raw::ones({}, kInt64), /*persistent=*/false);
  EXPECT_EQ(b.named_buffers().size(), 1u);
  EXPECT_EQ(b.state_dict().size(), 3u);
  // A submodule: a new head in the old one's place (fine-tuning).
  auto old_fc = b.fc;
  b.fc = b.register_module("fc", std::make_shared<Linear>(4, 7));
  EXPECT_EQ(b.children().size(), 1u);
  EXPECT_EQ(b.children()[0].get(), b.fc.get());
  EXPECT_EQ(b.named_parameters()[1].second.sizes(), (Shape{7, 4}));
}

TEST(Module, TrainEvalRecurses) {
  Net net;
  net.eval();
  EXPECT_FALSE(net.is_training());
  EXPECT_FALSE(net.a->fc->is_training());
  net.train();
  EXPECT_TRUE(net.b->fc->is_training());
}

TEST(Module, ToDtypeKeepsHandlesAndIntegerBuffers) {
  Net net;
  Tensor w = net.a->fc->weight;
  net.to(kFloat64);
  EXPECT_EQ(w.dtype(), kFloat64);  // the user's handle sees the conversion
  EXPECT_EQ(net.a->steps.dtype(), kInt64);
  EXPECT_TRUE(w.requires_grad());
}

TEST(Module, ZeroGrad) {
  Net net;
  Tensor y = net.forward(raw::ones({2, 4})).sum();
  y.backward();
  ASSERT_TRUE(net.a->scale.grad().defined());
  net.zero_grad(false);
  EXPECT_EQ(net.a->scale.grad().sum().item<double>(), 0.0);
  net.zero_grad();
  EXPECT_FALSE(net.a->scale.grad().defined());
}

TEST(Module, StateDictRoundTripAndStrictErrors) {
  manual_seed(1);
  Net src;
  manual_seed(2);
  Net dst;
  EXPECT_FALSE(raw::equal(src.a->fc->weight, dst.a->fc->weight));
  dst.load_state_dict(src.state_dict());
  EXPECT_TRUE(raw::equal(src.a->fc->weight, dst.a->fc->weight));

  NamedTensors bad;
  for (auto& [n, t] : src.state_dict()) {
    if (n == "a.fc.weight") continue;                          // missing
    bad.emplace_back(n, n == "a.scale" ? raw::ones({7}) : t);  // a.scale with the wrong shape
  }
  bad.emplace_back("extra.weight", raw::ones({1}));            // unexpected
  try {
    dst.load_state_dict(bad);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("Missing key(s): \"a.fc.weight\""), std::string::npos) << msg;
    EXPECT_NE(msg.find("Unexpected key(s): \"extra.weight\""), std::string::npos) << msg;
    EXPECT_NE(msg.find("a.scale: checkpoint [7], model [3]"), std::string::npos) << msg;
  }
  for (auto& [n, t] : bad)
    if (n == "a.scale") t = raw::ones({3});
  dst.load_state_dict(bad, /*strict=*/false);  // non-strict tolerates missing/unexpected keys
}

TEST(Module, BaseForwardNamesTheModule) {
  class NoForward : public Module {};
  NoForward m;
  EXPECT_TRUE(throws_with([&] { m.forward(raw::ones({1})); }, "NoForward has no forward(const Tensor&)"));
}

TEST(Module, SaveLoadSafetensors) {
  manual_seed(3);
  Net a;
  manual_seed(4);
  Net b;
  std::string path = ::testing::TempDir() + "/net.safetensors";
  save(a, path);
  load(b, path);
  EXPECT_TRUE(raw::equal(a.b->fc->bias, b.b->fc->bias));
  Block other;
  EXPECT_TRUE(throws_with([&] { load(other, path); }, path + ": Error(s) in loading state_dict for Block"));
}

TEST(Module, SequentialAndRepr) {
  auto seq = std::make_shared<Sequential>(std::initializer_list<std::shared_ptr<Module>>{
      std::make_shared<Linear>(4, 8), std::make_shared<ReLU>(), std::make_shared<Linear>(8, 2)});
  EXPECT_EQ(names(seq->named_parameters()), (std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"}));
  EXPECT_EQ(seq->forward(raw::ones({5, 4})).sizes(), (Shape{5, 2}));
  std::string r = seq->repr();
  EXPECT_NE(r.find("(0): Linear(in_features=4, out_features=8, bias=True)"), std::string::npos) << r;
  EXPECT_NE(r.find("(1): ReLU()"), std::string::npos) << r;
}

TEST(Module, NonPersistentBuffersStayOutOfTheStateDict) {
  struct WithCache : Module {
    WithCache() {
      kept = register_buffer("kept", raw::zeros({2}));
      cache = register_buffer("cache", raw::ones({3}), /*persistent=*/false);
    }
    Tensor kept, cache;
  } m;
  EXPECT_EQ(names(m.named_buffers()), (std::vector<std::string>{"kept", "cache"}));
  EXPECT_EQ(names(m.state_dict()), (std::vector<std::string>{"kept"}));
  m.load_state_dict({{"kept", raw::ones({2})}});  // strict: the cache is not expected
}

TEST(Module, SaveAndLoadTakeTheModuleHandle) {
  auto a = std::make_shared<Block>(), b = std::make_shared<Block>();
  std::string path = ::testing::TempDir() + "/handle.safetensors";
  save(a, path);
  load(b, path);
  EXPECT_TRUE(raw::equal(a->fc->weight, b->fc->weight));
}

TEST(Module, AsGivesTheModuleAsItsTypeOrNull) {
  auto fc = std::make_shared<Linear>(2, 3);
  std::shared_ptr<Module> m = fc;
  EXPECT_EQ(m->as<Linear>(), fc.get());
  EXPECT_EQ(m->as<ReLU>(), nullptr);
  const Module& c = *m;
  EXPECT_EQ(c.as<Linear>()->weight.sizes(), (Shape{3, 2}));
}

TEST(Module, ApplyVisitsChildrenFirstAndModulesListsAll) {
  auto inner = std::make_shared<Sequential>();
  inner->push_back(std::make_shared<Linear>(4, 3));
  inner->push_back(std::make_shared<ReLU>());
  auto outer = std::make_shared<Sequential>();
  outer->push_back(std::make_shared<Linear>(5, 4));
  outer->push_back(inner);
  // PyTorch's Module.apply order: each child's subtree, then the module itself.
  std::vector<std::string> order;
  outer->apply([&](Module& m) { order.push_back(m.name()); });
  EXPECT_EQ(order, (std::vector<std::string>{"Linear", "Linear", "ReLU", "Sequential", "Sequential"}));
  // Custom initialization through apply reaches every Linear.
  outer->apply([](Module& m) {
    if (auto* l = m.as<Linear>()) init::constant_(l->weight, 0.5);
  });
  for (const auto& [name, p] : outer->named_parameters()) {
    if (name.find("weight") != std::string::npos) {
      for (double x : testing::values(p)) EXPECT_EQ(x, 0.5) << name;
    }
  }
  const auto all = outer->modules();
  ASSERT_EQ(all.size(), 5u);
  EXPECT_EQ(all[0].get(), outer.get());
  EXPECT_EQ(all[2].get(), inner.get());
}

// A layer registered twice (a shared block) is one module, as PyTorch's memo makes it: listed once by
// children(), named_modules() and modules() under its first name, so a count over modules() counts
// its parameters once; state_dict() keeps both names.
TEST(Module, SharedModuleIsListedOnce) {
  struct Twice : Module {
    Twice() {
      a = register_module("a", std::make_shared<Linear>(3, 3));
      register_module("b", a);
      register_module("c", std::make_shared<Sequential>(a, std::make_shared<ReLU>()));
    }
    std::shared_ptr<Linear> a;
  };
  auto m = std::make_shared<Twice>();
  std::vector<std::string> names;
  for (const auto& [n, _] : m->named_modules()) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"", "a", "c", "c.1"}));
  EXPECT_EQ(m->modules().size(), 4u);
  ASSERT_EQ(m->named_children().size(), 2u);
  EXPECT_EQ(m->named_children()[1].first, "c");
  EXPECT_EQ(m->children().size(), 2u);
  int64_t linear_params = 0;
  for (const auto& mod : m->modules())
    if (auto* l = mod->as<Linear>()) linear_params += l->weight.numel() + l->bias.numel();
  EXPECT_EQ(linear_params, 12);
  EXPECT_EQ(m->state_dict().size(), 6u);  // a.*, b.*, c.0.*
  int applied = 0;
  m->apply([&](Module& mod) { applied += mod.as<Linear>() != nullptr; });
  EXPECT_EQ(applied, 2);  // once through "a", once inside "c" (PyTorch's apply walks children())
}

// A non-strict load says what it left out, as PyTorch's _IncompatibleKeys; a strict one that
// succeeds leaves nothing out.
TEST(Module, NonStrictLoadReturnsTheKeysItLeftOut) {
  auto src = std::make_shared<Linear>(3, 2);
  auto dst = std::make_shared<Linear>(3, 2);
  NamedTensors state = {{"weight", src->weight}, {"extra", raw::ones({1})}};
  Module::IncompatibleKeys keys = dst->load_state_dict(state, /*strict=*/false);
  EXPECT_EQ(keys.missing_keys, std::vector<std::string>{"bias"});
  EXPECT_EQ(keys.unexpected_keys, std::vector<std::string>{"extra"});
  EXPECT_TRUE(raw::equal(dst->weight, src->weight));
  keys = dst->load_state_dict(src->state_dict());
  EXPECT_TRUE(keys.missing_keys.empty());
  EXPECT_TRUE(keys.unexpected_keys.empty());
  const std::string path = ::testing::TempDir() + "/non_strict_keys.safetensors";
  save(src, path);
  auto no_bias = std::make_shared<Linear>(LinearOptions(3, 2).bias(false));
  keys = load(no_bias, path, /*strict=*/false);
  EXPECT_TRUE(keys.missing_keys.empty());
  EXPECT_EQ(keys.unexpected_keys, std::vector<std::string>{"bias"});
}

TEST(Module, RequiresGradFreezesEveryParameter) {
  auto model = std::make_shared<Sequential>();
  model->push_back(std::make_shared<Linear>(3, 2));
  model->push_back(std::make_shared<BatchNorm2d>(2));
  model->requires_grad_(false);
  for (const auto& [name, p] : model->named_parameters()) EXPECT_FALSE(p.requires_grad()) << name;
  for (const auto& [name, b] : model->named_buffers()) EXPECT_FALSE(b.requires_grad()) << name;
  model->requires_grad_();
  for (const auto& [name, p] : model->named_parameters()) EXPECT_TRUE(p.requires_grad()) << name;
  for (const auto& [name, b] : model->named_buffers()) EXPECT_FALSE(b.requires_grad()) << name;
}

}  // namespace
}  // namespace colony::nn
