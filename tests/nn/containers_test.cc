#include "nn/containers.h"

#include <gtest/gtest.h>

#include <optional>
#include <tuple>

#include "autograd/ops.h"
#include "nn/nn.h"
#include "tests/nn/cuda_module_check.h"
#include "tests/test_util.h"

namespace colony::nn {
namespace {

using colony::testing::all_close;
using colony::testing::throws_with;

std::vector<std::string> names(const NamedTensors& v) {
  std::vector<std::string> out;
  for (const auto& [n, _] : v) out.push_back(n);
  return out;
}

TEST(Sequential, NamedChildrenNameTheParameters) {
  auto block = std::make_shared<Sequential>(std::initializer_list<NamedModule>{
      {"conv", std::make_shared<Conv2d>(Conv2dOptions(1, 2, 3).padding(1))},
      {"bn", std::make_shared<BatchNorm2d>(2)},
      {"relu", std::make_shared<ReLU>(ReLUOptions().inplace(true))}});
  EXPECT_EQ(names(block->named_parameters()),
            (std::vector<std::string>{"conv.weight", "conv.bias", "bn.weight", "bn.bias"}));
  EXPECT_EQ(block->forward(raw::ones({2, 1, 4, 4})).sizes(), (Shape{2, 2, 4, 4}));
  block->push_back("pool", std::make_shared<MaxPool2d>(2));
  EXPECT_EQ(block->size(), 4u);
  EXPECT_NE(block->repr().find("(pool): MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"),
            std::string::npos)
      << block->repr();
}

TEST(ModuleList, IndexesIteratesAndRegisters) {
  ModuleList list{std::make_shared<Linear>(3, 3), std::make_shared<Linear>(3, 2)};
  list.push_back(std::make_shared<ReLU>());
  EXPECT_EQ(list.size(), 3u);
  EXPECT_EQ(names(list.named_parameters()), (std::vector<std::string>{"0.weight", "0.bias", "1.weight", "1.bias"}));
  Tensor x = raw::ones({1, 3});
  for (const auto& m : list) x = m->forward(x);
  EXPECT_EQ(x.sizes(), (Shape{1, 2}));
  EXPECT_TRUE(throws_with([&] { list.forward(x); }, "ModuleList"));  // no forward of its own
}

// torch's ModuleList.__repr__ folds runs of modules that print alike (a transformer's stack of
// copies); Sequential does not. The strings are torch 2.15's.
TEST(ModuleList, PrintsRunsOfEqualModulesAsOneLine) {
  ModuleList list{std::make_shared<Linear>(2, 2), std::make_shared<Linear>(2, 2), std::make_shared<ReLU>(),
                  std::make_shared<Linear>(2, 2)};
  EXPECT_EQ(list.repr(),
            "ModuleList(\n"
            "  (0-1): 2 x Linear(in_features=2, out_features=2, bias=True)\n"
            "  (2): ReLU()\n"
            "  (3): Linear(in_features=2, out_features=2, bias=True)\n"
            ")");
  EXPECT_EQ(ModuleList().repr(), "ModuleList()");
  Sequential seq{std::make_shared<Linear>(2, 2), std::make_shared<Linear>(2, 2)};
  EXPECT_EQ(seq.repr(),
            "Sequential(\n"
            "  (0): Linear(in_features=2, out_features=2, bias=True)\n"
            "  (1): Linear(in_features=2, out_features=2, bias=True)\n"
            ")");
  // Nested inside a module, at its indentation.
  TransformerEncoder enc(TransformerEncoderLayer(TransformerEncoderLayerOptions(4, 2).dim_feedforward(8)), 3);
  const std::string r = enc.repr();
  EXPECT_NE(r.find("\n    (0-2): 3 x TransformerEncoderLayer(\n      (self_attn): MultiheadAttention("), std::string::npos) << r;
  EXPECT_EQ(r.find("(1): TransformerEncoderLayer"), std::string::npos) << r;
}

TEST(ModuleDict, LooksUpByNameAndSaysWhatItHolds) {
  ModuleDict heads{{"cls", std::make_shared<Linear>(4, 10)}, {"box", std::make_shared<Linear>(4, 4)}};
  EXPECT_EQ(heads.keys(), (std::vector<std::string>{"cls", "box"}));
  EXPECT_TRUE(heads.contains("box"));
  EXPECT_EQ(heads["box"]->forward(raw::ones({2, 4})).sizes(), (Shape{2, 4}));
  EXPECT_EQ(names(heads.named_parameters()), (std::vector<std::string>{"cls.weight", "cls.bias", "box.weight", "box.bias"}));
  EXPECT_TRUE(throws_with([&] { heads["mask"]; }, "no module named \"mask\"; it holds \"cls\", \"box\""));
  EXPECT_TRUE(throws_with([&] { heads.insert("cls", std::make_shared<ReLU>()); }, "already registered"));
}

// A small network of every layer kind, as one Sequential, on CUDA against the CPU: the parameters
// and buffers of the children move with the container, and gradients reach each of them.
TEST(Sequential, ForwardAndBackwardOnCudaMatchTheCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  auto make = [] {
    return std::make_shared<Sequential>(std::initializer_list<std::shared_ptr<Module>>{
        std::make_shared<Conv2d>(Conv2dOptions(3, 4, 3).padding(1)), std::make_shared<BatchNorm2d>(4),
        std::make_shared<ReLU>(), std::make_shared<MaxPool2d>(2), std::make_shared<Conv2d>(Conv2dOptions(4, 6, 3)),
        std::make_shared<AvgPool2d>(AvgPool2dOptions(2).stride(1)), std::make_shared<AdaptiveAvgPool2d>(2),
        std::make_shared<Dropout>(DropoutOptions(0.0)), std::make_shared<Flatten>(), std::make_shared<Linear>(24, 10)});
  };
  Generator gen(30);
  Tensor x = raw::randn({4, 3, 12, 12}, TensorOptions(kFloat32), &gen);
  colony::testing::expect_cuda_module_matches_cpu(make, x);
}

// Modules whose forward is not Tensor(const Tensor&): a masked block and a cell with state.
struct MaskedBlock : Module {
  explicit MaskedBlock(int64_t d) {
    fc = register_module("fc", std::make_shared<Linear>(d, d));
    bn = register_module("bn", std::make_shared<BatchNorm2d>(d));  // buffers, and a mode
  }
  Tensor forward(const Tensor& x, const Tensor& mask) { return fc->forward(x) * mask; }
  std::string extra_repr() const override { return "masked"; }
  std::shared_ptr<Linear> fc;
  std::shared_ptr<BatchNorm2d> bn;
};

using State = std::tuple<Tensor, Tensor>;

struct Cell : Module {
  Cell() { fc = register_module("fc", std::make_shared<Linear>(2, 2)); }
  State forward(const State& state) { return {fc->forward(std::get<0>(state)), std::get<1>(state) + 1.0}; }
  std::shared_ptr<Linear> fc;
};

// One Tensor in and something else out: a forward(const Tensor&) would have to return Tensor (it
// overrides Module's), so this one takes its Tensor by value.
struct StartState : Module {
  State forward(Tensor x) { return {x, raw::zeros({1})}; }
};

struct TakeHidden : Module {
  Tensor forward(const State& state) { return std::get<0>(state); }
};

TEST(Sequential, TheFirstModuleMayTakeSeveralInputs) {
  auto block = std::make_shared<MaskedBlock>(3);
  auto head = std::make_shared<Linear>(3, 2);
  Sequential seq{block, std::make_shared<ReLU>(), head};
  Tensor x = raw::ones({4, 3}), mask = raw::ones({4, 3});
  raw::narrow(mask, 0, 0, 2).fill_(0.0);
  EXPECT_TRUE(all_close(seq.forward(x, mask), head->forward(colony::relu(block->forward(x, mask)))));
  // A single Tensor does not fit the first module: the error says which module and what it takes.
  EXPECT_TRUE(throws_with<ForwardArgumentError>(
      [&] { seq.forward(x); },
      "Sequential module (0): MaskedBlock::forward(const Tensor&, const Tensor&) -> Tensor takes 2 arguments, "
      "but 1 was given"));
}

TEST(Sequential, PassesAnyValueFromModuleToModule) {
  auto cell = std::make_shared<Cell>();
  Sequential seq{std::make_shared<StartState>(), cell, cell, std::make_shared<TakeHidden>()};  // one cell, twice
  Tensor x = raw::ones({1, 2});
  EXPECT_TRUE(all_close(seq.forward(x), cell->fc->forward(cell->fc->forward(x))));
  Sequential stateful{std::make_shared<StartState>(), cell};  // returns the state
  State out = stateful.forward<State>(x);
  EXPECT_EQ(colony::testing::values(std::get<1>(out)), (std::vector<double>{1.0}));
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { stateful.forward(x); },
                                                 "returned std::tuple<Tensor, Tensor>, not Tensor: call "
                                                 "forward<std::tuple<Tensor, Tensor>>(...)"));
  // A module that does not take the previous output: the error names it.
  seq.push_back("again", cell);
  EXPECT_TRUE(throws_with<ForwardArgumentError>(
      [&] { seq.forward(x); },
      "Sequential module (again): Cell::forward(const std::tuple<Tensor, Tensor>&) -> std::tuple<Tensor, Tensor>: "
      "argument 1 must be std::tuple<Tensor, Tensor>, not Tensor"));
  // The named modules keep one parameter set for the shared cell.
  EXPECT_EQ(names(seq.named_parameters()), (std::vector<std::string>{"1.fc.weight", "1.fc.bias"}));
}

TEST(Sequential, AnEmptySequentialReturnsItsInput) {
  Sequential seq;
  Tensor x = raw::ones({2});
  EXPECT_TRUE(seq.forward(x).is_same(x));
  EXPECT_TRUE(throws_with<ForwardArgumentError>([&] { seq.forward(x, x); }, "Sequential is empty"));
}

TEST(Sequential, NestedSequentialsAndEveryConstructor) {
  auto inner = std::make_shared<Sequential>(std::make_shared<Linear>(2, 2), std::make_shared<ReLU>());
  Sequential named({{"inner", inner}, {"head", std::make_shared<Linear>(2, 1)}});
  EXPECT_EQ(names(named.named_parameters()),
            (std::vector<std::string>{"inner.0.weight", "inner.0.bias", "head.weight", "head.bias"}));
  EXPECT_EQ(named.forward(raw::ones({3, 2})).sizes(), (Shape{3, 1}));
  Sequential old_style(std::initializer_list<std::shared_ptr<Module>>{std::make_shared<ReLU>()});
  Sequential old_named(std::initializer_list<NamedModule>{{"relu", std::make_shared<ReLU>()}});
  Sequential from_vector(std::vector<NamedModule>{{"relu", std::make_shared<ReLU>()}});
  EXPECT_EQ(old_style.size() + old_named.size() + from_vector.size(), 3u);
}

TEST(ModuleList, HoldsModulesOfAnySignatureForEverythingAModuleDoes) {
  ModuleList blocks{std::make_shared<MaskedBlock>(3), std::make_shared<MaskedBlock>(3)};
  blocks.push_back(std::make_shared<Linear>(3, 1));
  Tensor x = raw::ones({2, 3}), mask = raw::ones({2, 3});
  for (size_t i = 0; i < 2; ++i) x = blocks.any(i).forward(x, mask);
  x = blocks.any(2).forward(x);
  EXPECT_EQ(x.sizes(), (Shape{2, 1}));

  EXPECT_EQ(names(blocks.named_parameters()),
            (std::vector<std::string>{"0.fc.weight", "0.fc.bias", "0.bn.weight", "0.bn.bias", "1.fc.weight",
                                      "1.fc.bias", "1.bn.weight", "1.bn.bias", "2.weight", "2.bias"}));
  EXPECT_EQ(blocks.state_dict().size(), 16u);  // + running_mean, running_var, num_batches_tracked twice
  blocks.eval();
  EXPECT_FALSE(blocks.at<MaskedBlock>(1).bn->is_training());
  blocks.to(kFloat64);
  EXPECT_EQ(blocks.at<MaskedBlock>(0).fc->weight.dtype(), kFloat64);
  std::string r = blocks.repr();
  // Two equal blocks fold into one line, as torch's ModuleList prints them.
  EXPECT_NE(r.find("(0-1): 2 x MaskedBlock(masked\n    (fc): Linear(in_features=3, out_features=3, bias=True)"),
            std::string::npos)
      << r;

  // Saved and loaded by name, like any module.
  ModuleList copy{std::make_shared<MaskedBlock>(3), std::make_shared<MaskedBlock>(3), std::make_shared<Linear>(3, 1)};
  copy.to(kFloat64);
  std::string path = ::testing::TempDir() + "/blocks.safetensors";
  save(blocks, path);
  load(copy, path);
  EXPECT_TRUE(raw::equal(copy.at<MaskedBlock>(1).fc->weight, blocks.at<MaskedBlock>(1).fc->weight));
}

TEST(ModuleList, TypedAccessNamesBothTypesOnAMismatch) {
  auto fc = std::make_shared<Linear>(3, 2);
  ModuleList list{fc, std::make_shared<ReLU>()};
  EXPECT_EQ(list.ptr<Linear>(0), fc);
  EXPECT_EQ(&list.at<Linear>(0), fc.get());
  EXPECT_EQ(list.ptr(1)->name(), "ReLU");
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { list.ptr<Linear>(1); }, "ModuleList[1] is a ReLU, not a Linear"));
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { list.at<Conv2d>(0); }, "ModuleList[0] is a Linear, not a Conv2d"));
  EXPECT_TRUE(throws_with<std::out_of_range>([&] { list[2]; }, "ModuleList index 2 is out of range: it holds 2 modules"));
  EXPECT_TRUE(throws_with<std::out_of_range>([&] { list.any(5); }, "index 5 is out of range"));
  Sequential seq{fc};
  EXPECT_EQ(seq.ptr<Linear>(0)->weight.sizes(), (Shape{2, 3}));
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { seq.ptr<ReLU>(0); }, "Sequential[0] is a Linear, not a ReLU"));
}

TEST(ModuleDict, HoldsModulesOfAnySignatureWithTypedAccess) {
  ModuleDict heads{{"masked", std::make_shared<MaskedBlock>(4)}, {"box", std::make_shared<Linear>(4, 4)}};
  Tensor x = raw::ones({2, 4});
  EXPECT_EQ(heads.any("masked").forward(x, x).sizes(), (Shape{2, 4}));
  EXPECT_EQ(heads.ptr<Linear>("box")->weight.sizes(), (Shape{4, 4}));
  EXPECT_EQ(heads.at<MaskedBlock>("masked").fc->weight.sizes(), (Shape{4, 4}));
  EXPECT_TRUE(throws_with<std::invalid_argument>([&] { heads.ptr<Linear>("masked"); },
                                                 "ModuleDict[\"masked\"] is a MaskedBlock, not a Linear"));
  EXPECT_TRUE(throws_with<std::out_of_range>([&] { heads.any("cls"); }, "no module named \"cls\""));
}

}  // namespace
}  // namespace colony::nn
