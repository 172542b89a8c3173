// Activation checkpointing (autograd/checkpoint.h): outputs and every gradient equal, bit for bit,
// to the same computation without checkpointing (dropout included: the random state is replayed),
// the activations are not kept, and misuse is reported.
#include <functional>
#include <memory>
#include <vector>

#include "autograd/autograd.h"
#include "nn/nn.h"
#include "runtime/allocator.h"
#include "tensor/random.h"
#include "tests/test_util.h"

namespace colony {
namespace {

namespace F = nn::functional;
using testing::all_close;
using testing::throws_with;

::testing::AssertionResult bit_equal(const Tensor& a, const Tensor& b) { return all_close(a, b, 0.0, 0.0); }

struct Mlp : nn::Module {
  Mlp() {
    fc1 = register_module("fc1", std::make_shared<nn::Linear>(16, 32));
    drop = register_module("drop", std::make_shared<nn::Dropout>(0.3));
    fc2 = register_module("fc2", std::make_shared<nn::Linear>(32, 8));
  }
  Tensor forward(const Tensor& x) { return fc2->forward(drop->forward(F::gelu(fc1->forward(x)))); }
  std::shared_ptr<nn::Linear> fc1, fc2;
  std::shared_ptr<nn::Dropout> drop;
};

// One training step's results: the output, the input's gradient, every parameter's gradient, and
// where the random stream stands after backward.
struct Step {
  Tensor out, x_grad;
  std::vector<Tensor> param_grads;
  uint64_t rng_offset = 0;
};

// Runs forward(x) on a fresh leaf holding `x`, from seed 7, and back-propagates a fixed weighting
// of the output (so every output element's gradient differs).
Step run(nn::Module& model, const Tensor& x_value, const std::function<Tensor(const Tensor&)>& forward) {
  model.zero_grad();
  manual_seed(7);
  Tensor x = x_value.detach();
  x.requires_grad_(true);
  Step s;
  s.out = forward(x);
  Tensor weights = raw::rand(s.out.sizes(), TensorOptions(s.out.dtype()));
  (s.out * weights).sum().backward();
  s.x_grad = x.grad();
  for (const Tensor& p : model.parameters()) s.param_grads.push_back(p.grad());
  s.rng_offset = default_generator().offset();
  return s;
}

::testing::AssertionResult same_step(const Step& a, const Step& b) {
  if (auto r = bit_equal(a.out, b.out); !r) return r << " (output)";
  if (auto r = bit_equal(a.x_grad, b.x_grad); !r) return r << " (input's gradient)";
  if (a.param_grads.size() != b.param_grads.size()) return ::testing::AssertionFailure() << "parameter counts differ";
  for (size_t i = 0; i < a.param_grads.size(); ++i) {
    if (!a.param_grads[i].defined() || !b.param_grads[i].defined())
      return ::testing::AssertionFailure() << "parameter " << i << " has no gradient";
    if (auto r = bit_equal(a.param_grads[i], b.param_grads[i]); !r) return r << " (parameter " << i << ")";
  }
  if (a.rng_offset != b.rng_offset)
    return ::testing::AssertionFailure() << "random streams end at " << a.rng_offset << " and " << b.rng_offset;
  return ::testing::AssertionSuccess();
}

TEST(Checkpoint, MlpWithDropoutMatchesUnrolledBitForBit) {
  manual_seed(1);
  Mlp mlp;
  Tensor x = raw::randn({5, 16});
  Step plain = run(mlp, x, [&](const Tensor& in) { return mlp.forward(in); });
  Step ckpt = run(mlp, x, [&](const Tensor& in) {
    return autograd::checkpoint([&](const Tensor& h) { return mlp.forward(h); }, in);
  });
  EXPECT_TRUE(same_step(plain, ckpt));
}

TEST(Checkpoint, WithoutTheRngReplayTheDropoutMasksDiffer) {
  manual_seed(1);
  Mlp mlp;
  Tensor x = raw::randn({5, 16});
  Step plain = run(mlp, x, [&](const Tensor& in) { return mlp.forward(in); });
  Step ckpt = run(mlp, x, [&](const Tensor& in) {
    return autograd::checkpoint([&](const Tensor& h) { return mlp.forward(h); }, in, /*preserve_rng_state=*/false);
  });
  EXPECT_TRUE(bit_equal(plain.out, ckpt.out));  // the forward itself is the same
  EXPECT_FALSE(bit_equal(plain.x_grad, ckpt.x_grad));
  EXPECT_FALSE(bit_equal(plain.param_grads[0], ckpt.param_grads[0]));
}

nn::TransformerEncoderLayerOptions block_options() {
  return nn::TransformerEncoderLayerOptions(32, 4)
      .dim_feedforward(64)
      .dropout(0.2)
      .activation("gelu")
      .batch_first(true)
      .norm_first(true);
}

TEST(Checkpoint, TransformerBlockWithDropoutMatchesUnrolledBitForBit) {
  manual_seed(2);
  nn::TransformerEncoderLayer block(block_options());
  block.train();
  Tensor x = raw::randn({3, 10, 32});
  Tensor mask = nn::generate_square_subsequent_mask(10);
  Step plain = run(block, x, [&](const Tensor& in) { return block.forward(in, mask, std::nullopt, true); });
  Step ckpt = run(block, x, [&](const Tensor& in) {
    return autograd::checkpoint([&](const Tensor& h) { return block.forward(h, mask, std::nullopt, true); }, in);
  });
  EXPECT_TRUE(same_step(plain, ckpt));
  Step unreplayed = run(block, x, [&](const Tensor& in) {
    return autograd::checkpoint([&](const Tensor& h) { return block.forward(h, mask, std::nullopt, true); }, in,
                                /*preserve_rng_state=*/false);
  });
  EXPECT_FALSE(bit_equal(plain.x_grad, unreplayed.x_grad));
}

TEST(Checkpoint, StackOfEncoderLayersMatchesUnrolledBitForBit) {
  manual_seed(3);
  nn::TransformerEncoder stack(nn::TransformerEncoderOptions(block_options(), 3));
  stack.train();
  Tensor x = raw::randn({2, 12, 32});
  auto layer = [&](size_t i, const Tensor& h) { return stack.layers->at<nn::TransformerEncoderLayer>(i).forward(h); };
  Step plain = run(stack, x, [&](const Tensor& in) {
    Tensor h = in;
    for (size_t i = 0; i < stack.layers->size(); ++i) h = layer(i, h);
    return h;
  });
  Step ckpt = run(stack, x, [&](const Tensor& in) {
    Tensor h = in;
    for (size_t i = 0; i < stack.layers->size(); ++i) {
      h = nn::utils::checkpoint([&, i](const Tensor& t) { return layer(i, t); }, h);
    }
    return h;
  });
  EXPECT_TRUE(same_step(plain, ckpt));
}

TEST(Checkpoint, NestedCheckpointsMatchUnrolledBitForBit) {
  manual_seed(4);
  struct Pair : nn::Module {
    Pair() {
      inner = register_module("inner", std::make_shared<Mlp>());
      outer = register_module("outer", std::make_shared<Mlp>());
    }
    std::shared_ptr<Mlp> inner, outer;
  } pair;
  Tensor x = raw::randn({4, 16});
  auto body = [&](const Tensor& in, bool nested) {
    auto inner_fn = [&](const Tensor& h) { return pair.inner->forward(h); };
    Tensor a = pair.outer->forward(in);  // [4, 8]
    Tensor b = nested ? autograd::checkpoint(inner_fn, in) : inner_fn(in);
    return F::dropout(a * b, 0.25, true);
  };
  Step plain = run(pair, x, [&](const Tensor& in) { return body(in, false); });
  Step ckpt = run(pair, x, [&](const Tensor& in) {
    return autograd::checkpoint([&](const Tensor& h) { return body(h, true); }, in);
  });
  EXPECT_TRUE(same_step(plain, ckpt));
}

TEST(Checkpoint, ParameterUsedInsideAndOutsideAccumulatesOnce) {
  manual_seed(5);
  nn::Linear lin(8, 8);
  Tensor x = raw::randn({3, 8});
  int hook_calls = 0;
  lin.weight.register_post_accumulate_grad_hook([&](Tensor&) { ++hook_calls; });
  auto inside = [&](const Tensor& h) { return F::gelu(lin.forward(h)); };
  auto outside = [&](const Tensor& h) { return matmul(h, lin.weight) + lin.bias; };  // the weight again, outside
  Step plain = run(lin, x, [&](const Tensor& in) { return outside(inside(in)); });
  EXPECT_EQ(hook_calls, 1);
  hook_calls = 0;
  Step ckpt = run(lin, x, [&](const Tensor& in) { return outside(autograd::checkpoint(inside, in)); });
  EXPECT_EQ(hook_calls, 1);  // DDP's readiness signal: once per backward, with the whole gradient
  EXPECT_TRUE(same_step(plain, ckpt));
}

TEST(Checkpoint, SeveralInputsAndOutputsAndAnOutputWithoutGradient) {
  manual_seed(6);
  nn::Linear lin(6, 6);
  Tensor a0 = raw::randn({2, 6}), b0 = raw::randn({2, 6});
  Tensor scale = raw::randn({6});  // needs no gradient
  auto fn = [&](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{lin.forward(in[0]) * in[1], in[0].detach() * 2.0, in[1] * in[2]};
  };
  auto step = [&](bool ckpt, bool use_second) {
    lin.zero_grad();
    Tensor a = a0.detach(), b = b0.detach();
    a.requires_grad_(true);
    b.requires_grad_(true);
    std::vector<Tensor> out = ckpt ? autograd::checkpoint(fn, {a, b, scale}) : fn({a, b, scale});
    EXPECT_TRUE(out[0].requires_grad());
    EXPECT_FALSE(out[1].requires_grad());
    EXPECT_TRUE(out[2].requires_grad());
    Tensor loss = out[0].sum();
    if (use_second) loss = loss + (out[2] * out[2]).sum();  // otherwise output 2 gets no gradient: zeros
    loss.backward();
    return std::vector<Tensor>{a.grad(), b.grad(), lin.weight.grad(), lin.bias.grad()};
  };
  for (bool use_second : {true, false}) {
    std::vector<Tensor> plain = step(false, use_second), ckpt = step(true, use_second);
    for (size_t i = 0; i < plain.size(); ++i) EXPECT_TRUE(bit_equal(plain[i], ckpt[i])) << i << " " << use_second;
  }
}

TEST(Checkpoint, AutogradGradThroughCheckpoint) {
  manual_seed(8);
  Mlp mlp;
  Tensor x = randn({3, 16}, TensorOptions().requires_grad(true));
  manual_seed(9);
  Tensor plain = autograd::grad({mlp.forward(x).sum()}, {x, mlp.fc1->weight})[0];
  manual_seed(9);
  std::vector<Tensor> ckpt = autograd::grad(
      {autograd::checkpoint([&](const Tensor& h) { return mlp.forward(h); }, x).sum()}, {x, mlp.fc1->weight});
  EXPECT_TRUE(bit_equal(plain, ckpt[0]));
  EXPECT_FALSE(mlp.fc1->weight.grad().defined());  // grad() accumulates nothing, through the node neither
}

TEST(Checkpoint, UnderAutocastMatchesUnrolledBitForBit) {
  manual_seed(10);
  Mlp mlp;
  Tensor x = raw::randn({4, 16});
  auto amp = [&](const std::function<Tensor(const Tensor&)>& f) {
    return [f](const Tensor& in) {
      AutocastGuard guard(DeviceType::CPU, kBFloat16);
      return f(in).to(kFloat32);
    };
  };
  Step plain = run(mlp, x, amp([&](const Tensor& in) { return mlp.forward(in); }));
  Step ckpt = run(mlp, x, amp([&](const Tensor& in) {
    return autograd::checkpoint([&](const Tensor& h) { return mlp.forward(h); }, in);
  }));
  EXPECT_EQ(ckpt.out.dtype(), kFloat32);
  EXPECT_TRUE(same_step(plain, ckpt));
}

TEST(Checkpoint, UnderAutocastAWeightCastBeforeFnIsCastAgainInside) {
  // The enclosing region's cast of the weight, made before fn, is not fn's: fn casts afresh in a
  // cast cache of its own (autocast::CacheScope) at the forward as at the recomputation, so the
  // weight's gradient is the two casts' (each rounded from bfloat16 alone) rather than one cast's.
  manual_seed(13);
  nn::Linear lin(8, 8);
  Tensor x = raw::randn({4, 8});
  auto step = [&](bool ckpt) {
    AutocastGuard guard(DeviceType::CPU, kBFloat16);
    Tensor h = lin.forward(x);  // caches the weight's bfloat16 copy
    auto inside = [&](const Tensor& t) { return lin.forward(t); };
    return ckpt ? autograd::checkpoint(inside, h) : inside(h);
  };
  Step plain = run(lin, x, [&](const Tensor&) { return step(false).to(kFloat32); });
  Step ckpt = run(lin, x, [&](const Tensor&) { return step(true).to(kFloat32); });
  EXPECT_TRUE(bit_equal(plain.out, ckpt.out));
  EXPECT_TRUE(all_close(plain.param_grads[0], ckpt.param_grads[0], 1e-2, 1e-2));
  EXPECT_TRUE(all_close(plain.param_grads[1], ckpt.param_grads[1], 1e-2, 1e-2));  // the bias: cast alike
}

TEST(Checkpoint, TheActivationsAreNotKept) {
  manual_seed(11);
  nn::TransformerEncoder stack(nn::TransformerEncoderOptions(block_options(), 4));
  stack.train();
  const Tensor x_value = raw::randn({4, 32, 32});
  const int64_t output_bytes = x_value.numel() * 4;
  // Bytes of tensors alive once the forward is done: the graph's saved tensors, and the output.
  auto held_after_forward = [&](bool ckpt) {
    Tensor x = x_value.detach();
    x.requires_grad_(true);
    const int64_t before = cpu_allocator()->stats().bytes_in_use;
    Tensor h = x;
    for (size_t i = 0; i < stack.layers->size(); ++i) {
      auto layer = [&, i](const Tensor& t) { return stack.layers->at<nn::TransformerEncoderLayer>(i).forward(t); };
      h = ckpt ? autograd::checkpoint(layer, h) : layer(h);
    }
    const int64_t held = cpu_allocator()->stats().bytes_in_use - before;
    h.sum().backward();
    return held;
  };
  const int64_t plain = held_after_forward(false), ckpt = held_after_forward(true);
  // Checkpointed: each layer's output (the next one's saved input), nothing else.
  EXPECT_LE(ckpt, 4 * output_bytes) << "plain " << plain;
  EXPECT_GT(plain, 10 * ckpt);
}

TEST(Checkpoint, WithGradModeOffItSimplyRuns) {
  Tensor x = randn({3}, TensorOptions().requires_grad(true));
  NoGradGuard no_grad;
  Tensor y = autograd::checkpoint([](const Tensor& h) { return h * 2.0; }, x);
  EXPECT_FALSE(y.requires_grad());
}

TEST(Checkpoint, NothingRequiringGradGivesOutputsThatNeedNone) {
  Tensor x = raw::randn({3});
  Tensor y = autograd::checkpoint([](const Tensor& h) { return exp(h); }, x);
  EXPECT_FALSE(y.requires_grad());
  EXPECT_TRUE(bit_equal(y, raw::exp(x)));
}

TEST(Checkpoint, ParametersGetGradientsWhenNoInputRequiresGrad) {
  manual_seed(12);
  nn::Embedding emb(10, 6);
  Tensor ids = raw::tensor({1.0, 4.0, 4.0, 9.0}).to(kInt64);
  auto fn = [&](const Tensor& i) { return tanh(emb.forward(i)); };
  (fn(ids) * 3.0).sum().backward();
  Tensor plain = emb.weight.grad().clone();
  emb.zero_grad();
  Tensor y = autograd::checkpoint(fn, ids);
  EXPECT_TRUE(y.requires_grad());  // as torch's use_reentrant=False
  (y * 3.0).sum().backward();
  EXPECT_TRUE(bit_equal(plain, emb.weight.grad()));
}

TEST(Checkpoint, FnReturningNothingIsAnError) {
  Tensor x = randn({3}, TensorOptions().requires_grad(true));
  EXPECT_TRUE(throws_with<std::invalid_argument>(
      [&] { autograd::checkpoint([](const std::vector<Tensor>&) { return std::vector<Tensor>{}; }, {x}); },
      "fn returned no tensors"));
}

TEST(Checkpoint, InputWrittenInPlaceBeforeBackwardIsReported) {
  Tensor x = randn({3}, TensorOptions().requires_grad(true));
  Tensor h = x * 1.0;
  Tensor y = autograd::checkpoint([](const Tensor& t) { return exp(t); }, h);
  h.mul_(2.0);
  EXPECT_TRUE(throws_with<std::runtime_error>([&] { y.sum().backward(); }, "CheckpointBackward"));
}

TEST(Checkpoint, BackwardTwiceNeedsRetainGraph) {
  Tensor x = randn({3}, TensorOptions().requires_grad(true));
  Tensor y = autograd::checkpoint([](const Tensor& t) { return exp(t); }, x).sum();
  y.backward(Tensor(), /*retain_graph=*/true);
  y.backward();
  EXPECT_TRUE(bit_equal(x.grad(), raw::mul(raw::exp(x), 2.0)));
  EXPECT_TRUE(throws_with<std::runtime_error>([&] { y.backward(); }, "backward through the graph a second time"));
}

TEST(Checkpoint, ARecomputationThatReadsOtherTensorsIsAnError) {
  Tensor x = randn({3}, TensorOptions().requires_grad(true));
  Tensor w1 = randn({3}, TensorOptions().requires_grad(true));
  Tensor w2 = randn({3}, TensorOptions().requires_grad(true));
  int calls = 0;
  Tensor y = autograd::checkpoint([&](const Tensor& t) { return t * (calls++ == 0 ? w1 : w2); }, x);
  EXPECT_TRUE(throws_with<std::runtime_error>([&] { y.sum().backward(); }, "which the forward did not use"));
}

}  // namespace
}  // namespace colony
