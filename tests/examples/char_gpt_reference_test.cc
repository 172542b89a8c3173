// The character-level GPT of examples/char_gpt against PyTorch, as llm.c's test_gpt2 checks GPT-2:
// tests/examples/make_char_gpt_reference.py builds the same model in PyTorch (2 layers, 4 heads,
// width 64, block 32, vocabulary 65, float32) and writes char_gpt_reference.safetensors: the initial
// weights, one batch, its logits, loss and every parameter's gradient, and the losses of 10 training
// steps (AdamW with nanoGPT's groups, clipped to norm 1). Colony, in float32, must reproduce the
// logits and every gradient to 1e-5 of the tensor's largest magnitude and the losses to 1e-5
// relative: this checks Embedding, LayerNorm, the fused attention, GELU, the tied head,
// cross-entropy, clipping and AdamW's groups together, as char_gpt's training step uses them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>

#include "colony.h"
#include "examples/char_gpt/gpt.h"
#include "examples/char_gpt/train_step.h"

namespace {

using namespace colony;

constexpr double kTolerance = 1e-5;

char_gpt::GPTConfig config() {
  char_gpt::GPTConfig c;
  c.vocab_size = 65;
  c.block_size = 32;
  c.n_layer = 2;
  c.n_head = 4;
  c.n_embd = 64;
  return c;
}

class CharGptReference : public ::testing::Test {
 protected:
  void SetUp() override {
    for (auto& [name, t] : io::load_safetensors("tests/examples/char_gpt_reference.safetensors").tensors)
      ref_[name] = t;
    // The weights are PyTorch's state_dict under its names (bfloat16, exact in float32): loading
    // them strictly also checks that Colony's parameter names are nanoGPT's.
    io::NamedTensors weights;
    for (auto& [name, t] : ref_)
      if (name.rfind("param.", 0) == 0) weights.emplace_back(name.substr(6), t.to(kFloat32));
    ASSERT_FALSE(weights.empty()) << "the reference file holds no param.* tensors";
    model_->load_state_dict(weights);
  }

  const Tensor& ref(const std::string& name) const {
    auto it = ref_.find(name);
    if (it == ref_.end()) throw std::runtime_error("char_gpt_reference.safetensors has no tensor " + name);
    return it->second;
  }

  // max |actual - expected| over the tensor, relative to max |expected|.
  static double relative_error(const Tensor& actual, const Tensor& expected) {
    return (actual.to(kFloat64) - expected.to(kFloat64)).abs().max().item<double>() /
           expected.to(kFloat64).abs().max().item<double>();
  }

  std::map<std::string, Tensor> ref_;
  std::shared_ptr<char_gpt::GPT> model_ = std::make_shared<char_gpt::GPT>(config());
};

TEST_F(CharGptReference, LogitsLossAndEveryGradientMatchPyTorch) {
  Tensor logits = model_->forward(ref("x"));
  ASSERT_TRUE(logits.sizes() == ref("logits").sizes());
  EXPECT_LE(relative_error(logits, ref("logits")), kTolerance);
  Tensor loss = char_gpt::lm_loss(logits, ref("y"));
  EXPECT_NEAR(loss.item<double>(), ref("loss").item<double>(), kTolerance * ref("loss").item<double>());
  loss.backward();

  // Every parameter once (the tied head is the token embedding, which PyTorch lists alone), and
  // every gradient the file holds checked.
  std::set<std::string> checked;
  std::string worst;
  double worst_error = 0;
  for (auto& [name, p] : model_->named_parameters()) {
    if (p.is_same(model_->wte->weight) && name != "transformer.wte.weight") continue;
    ASSERT_TRUE(p.grad().defined()) << name << " has no gradient";
    const double error = relative_error(p.grad(), ref("grad." + name));
    EXPECT_LE(error, kTolerance) << name;
    if (error >= worst_error) worst_error = error, worst = name;
    checked.insert(name);
  }
  // The margin, for whoever changes a kernel: on 2026-12-05 (AMX CPU, -c opt) the logits were off by
  // 3.6e-7 and the worst gradient (transformer.h.0.ln_2.weight) by 5.2e-7, 20 times inside 1e-5.
  std::printf("logits error %.2e; worst gradient %s, error %.2e\n", relative_error(logits, ref("logits")),
              worst.c_str(), worst_error);
  for (auto& [name, t] : ref_) {
    if (name.rfind("grad.", 0) == 0) {
      EXPECT_EQ(checked.count(name.substr(5)), 1u) << name << " was not checked";
    }
  }
  EXPECT_EQ(checked.size(), 2 + 12 * 2 + 2u);  // wte and wpe, 12 per block, ln_f's two
}

// char_gpt's own training step (train_step.h) on the file's batch, 10 times.
TEST_F(CharGptReference, TenTrainingStepsMatchPyTorchsLosses) {
  dist::DistributedDataParallel ddp(model_);  // no process group: it runs the model
  optim::AdamW opt(char_gpt::adamw_groups(model_->parameters(), 0.1), optim::AdamWOptions(1e-3).betas({0.9, 0.99}));
  optim::GradScaler scaler(optim::GradScalerOptions().enabled(false));
  char_gpt::TrainStep step(*model_, ddp, opt, scaler, nullptr, char_gpt::StepConfig{});
  const Tensor& losses = ref("losses");
  ASSERT_EQ(losses.numel(), 10);
  for (int64_t i = 0; i < losses.numel(); ++i) {
    const double expected = losses.select(0, i).item<double>();
    EXPECT_NEAR(step([&](int) { return data::TokenBatch{ref("x"), ref("y")}; }), expected, kTolerance * expected)
        << "step " << i;
  }
}

// The tied head is the token embedding: one parameter, listed once.
TEST(CharGptModel, HeadIsTiedToTheTokenEmbedding) {
  char_gpt::GPT model(config());
  EXPECT_TRUE(model.lm_head->weight.is_same(model.wte->weight));
  int64_t listed = 0;
  for (const Tensor& p : model.parameters()) listed += p.is_same(model.wte->weight);
  EXPECT_EQ(listed, 1);
}

}  // namespace
