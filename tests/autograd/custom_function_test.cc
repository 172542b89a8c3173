// Custom autograd Functions (autograd/custom_function.h): libtorch's Function<T> contract, its
// errors, and a finite-difference check of a user-written op.
#include "autograd/custom_function.h"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "ops/raw_ops.h"
#include "tests/autograd/gradcheck.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using autograd::AutogradContext;
using autograd::variable_list;
using testing::all_close;

TensorOptions grad_opts(DType dtype = kFloat64) { return TensorOptions(dtype).requires_grad(true); }

// libtorch's tutorial example: y = x * c, with a non-tensor argument.
struct MulConstant : autograd::Function<MulConstant> {
  static Tensor forward(AutogradContext* ctx, const Tensor& x, double c) {
    ctx->saved_data["c"] = c;
    return x * c;
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    return {g[0] * ctx->saved_data["c"].toDouble(), Tensor()};
  }
};

TEST(CustomFunction, ForwardAndBackwardAsWritten) {
  Tensor x = tensor({1.0, -2.0, 3.0}, grad_opts());
  Tensor y = MulConstant::apply(x, 5.0);
  EXPECT_TRUE(all_close(y, raw::tensor({5.0, -10.0, 15.0})));
  ASSERT_NE(y.grad_fn(), nullptr);
  EXPECT_EQ(y.grad_fn()->name().find("MulConstant") != std::string::npos, true) << y.grad_fn()->name();
  y.sum().backward();
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({5.0, 5.0, 5.0})));
}

// y = x * w + b with everything saved through save_for_backward, gradients only where needed.
struct Affine : autograd::Function<Affine> {
  static inline std::vector<bool> seen_needs;
  static Tensor forward(AutogradContext* ctx, const Tensor& x, const Tensor& w, const Tensor& b) {
    ctx->save_for_backward({x, w});
    return x * w + b;
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    variable_list saved = ctx->get_saved_variables();
    seen_needs = {ctx->needs_input_grad(0), ctx->needs_input_grad(1), ctx->needs_input_grad(2)};
    Tensor gx = ctx->needs_input_grad(0) ? g[0] * saved[1] : Tensor();
    Tensor gw = ctx->needs_input_grad(1) ? g[0] * saved[0] : Tensor();
    return {gx, gw, g[0]};
  }
};

TEST(CustomFunction, GradcheckOfAUserWrittenOp) {
  Tensor x = testing::input({4, 3}, -1, 1, 1), w = testing::input({4, 3}, -1, 1, 2), b = testing::input({4, 3}, -1, 1, 3);
  EXPECT_TRUE(testing::gradcheck([](const std::vector<Tensor>& in) { return Affine::apply(in[0], in[1], in[2]); },
                                 {x, w, b}));
}

TEST(CustomFunction, NeedsInputGradSaysWhichInputsWantOne) {
  Tensor x = tensor({1.0, 2.0}, grad_opts()), w = tensor({3.0, 4.0}), b = tensor({0.5, 0.5}, grad_opts());
  Affine::apply(x, w, b).sum().backward();
  EXPECT_EQ(Affine::seen_needs, (std::vector<bool>{true, false, true}));
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({3.0, 4.0})));
  EXPECT_FALSE(w.grad().defined());
}

struct GradModeProbe : autograd::Function<GradModeProbe> {
  static inline bool grad_mode_in_forward = true;
  static Tensor forward(AutogradContext*, const Tensor& x) {
    grad_mode_in_forward = GradMode::is_enabled();
    return x * 2.0;
  }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0] * 2.0}; }
};

TEST(CustomFunction, WithoutGradModeNothingIsRecordedAndForwardRunsWithoutGrad) {
  using Probe = GradModeProbe;
  Tensor x = tensor({1.0}, grad_opts());
  Tensor y = Probe::apply(x);
  EXPECT_FALSE(Probe::grad_mode_in_forward);  // its own ops record nothing
  EXPECT_TRUE(y.requires_grad());
  {
    NoGradGuard no_grad;
    Tensor z = Probe::apply(x);
    EXPECT_FALSE(z.requires_grad());
    EXPECT_EQ(z.grad_fn(), nullptr);
  }
  Tensor plain = tensor({1.0});
  EXPECT_FALSE(Probe::apply(plain).requires_grad());
}

TEST(CustomFunction, WrongNumberOfGradientsIsNamed) {
  struct TooFew : autograd::Function<TooFew> {
    static Tensor forward(AutogradContext*, const Tensor& x, double) { return x * 2.0; }
    static variable_list backward(AutogradContext*, variable_list g) { return {g[0]}; }
  };
  Tensor x = tensor({1.0}, grad_opts());
  try {
    TooFew::apply(x, 1.0).sum().backward();
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("returned an incorrect number of gradients (expected 2, got 1)"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("TooFew"), std::string::npos) << e.what();
  }
}

TEST(CustomFunction, ExtraUndefinedGradientsAreAccepted) {
  struct Extra : autograd::Function<Extra> {
    static Tensor forward(AutogradContext*, const Tensor& x) { return x * 3.0; }
    static variable_list backward(AutogradContext*, variable_list g) { return {g[0] * 3.0, Tensor(), Tensor()}; }
  };
  Tensor x = tensor({1.0, 2.0}, grad_opts());
  Extra::apply(x).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({3.0, 3.0})));
}

TEST(CustomFunction, AGradientForANonTensorArgumentIsRefused) {
  struct Bad : autograd::Function<Bad> {
    static Tensor forward(AutogradContext*, const Tensor& x, int64_t) { return x * 2.0; }
    static variable_list backward(AutogradContext*, variable_list g) { return {g[0] * 2.0, g[0]}; }
  };
  Tensor x = tensor({1.0}, grad_opts());
  try {
    Bad::apply(x, int64_t{4}).sum().backward();
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("at position 2, but the corresponding forward input was not a Variable"),
              std::string::npos)
        << e.what();
  }
}

// Saved tensors are checked for in-place writes, and freed after a backward without retain_graph.
struct Square : autograd::Function<Square> {
  static Tensor forward(AutogradContext* ctx, const Tensor& x) {
    ctx->save_for_backward({x});
    return x * x;
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    return {g[0] * 2.0 * ctx->get_saved_variables()[0]};
  }
};

TEST(CustomFunction, ASavedTensorWrittenInPlaceBeforeBackwardThrows) {
  Tensor leaf = tensor({1.0, 2.0}, grad_opts());
  Tensor x = leaf * 1.0;
  Tensor y = Square::apply(x);
  x.mul_(3.0);
  try {
    y.sum().backward();
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("modified by an inplace operation"), std::string::npos) << e.what();
  }
}

TEST(CustomFunction, SavedTensorsAreFreedWithoutRetainGraph) {
  Tensor x = tensor({1.0, 2.0}, grad_opts());
  Tensor y = Square::apply(x).sum();
  y.backward(Tensor(), /*retain_graph=*/true);
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({2.0, 4.0})));
  y.backward();
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({4.0, 8.0})));
  EXPECT_THROW(y.backward(), std::runtime_error);
}

TEST(CustomFunction, AnOutputSavedForBackwardIsUsable) {
  struct Exp : autograd::Function<Exp> {
    static Tensor forward(AutogradContext* ctx, const Tensor& x) {
      Tensor y = x.exp();
      ctx->save_for_backward({y});
      return y;
    }
    static variable_list backward(AutogradContext* ctx, variable_list g) { return {g[0] * ctx->get_saved_variables()[0]}; }
  };
  Tensor x = tensor({0.0, 1.0}, grad_opts());
  Exp::apply(x).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({1.0, std::exp(1.0)})));
}

// A sort-like op: values differentiable, indices not.
struct MaxWithIndex : autograd::Function<MaxWithIndex> {
  static inline bool index_grad_defined = false;
  static variable_list forward(AutogradContext* ctx, const Tensor& x) {
    Tensor index = x.argmax(0);
    Tensor value = x.max();
    ctx->mark_non_differentiable({index});
    ctx->save_for_backward({index});
    ctx->saved_data["n"] = x.numel();
    return {value, index};
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    index_grad_defined = g[1].defined();
    Tensor grad = raw::zeros({ctx->saved_data["n"].toInt()}, TensorOptions(g[0].dtype()));
    grad.index_put_({ctx->get_saved_variables()[0]}, g[0]);
    return {grad};
  }
};

TEST(CustomFunction, NonDifferentiableOutputsAndMaterializedGrads) {
  Tensor x = tensor({1.0, 7.0, 3.0}, grad_opts());
  variable_list out = MaxWithIndex::apply(x);
  EXPECT_TRUE(out[0].requires_grad());
  EXPECT_FALSE(out[1].requires_grad());
  EXPECT_EQ(out[1].item<int64_t>(), 1);
  out[0].backward();
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({0.0, 1.0, 0.0})));
  EXPECT_TRUE(MaxWithIndex::index_grad_defined);  // zeros, materialized
}

struct Split : autograd::Function<Split> {
  static inline std::vector<bool> defined;
  static variable_list forward(AutogradContext* ctx, const Tensor& x) {
    ctx->set_materialize_grads(false);
    return {x * 2.0, x * 3.0};
  }
  static variable_list backward(AutogradContext*, variable_list g) {
    defined = {g[0].defined(), g[1].defined()};
    return {g[0].defined() ? g[0] * 2.0 : g[1] * 3.0};
  }
};

TEST(CustomFunction, WithoutMaterializeGradsUnreachedOutputsGetUndefined) {
  Tensor x = tensor({1.0, 2.0}, grad_opts());
  Split::apply(x)[1].sum().backward();
  EXPECT_EQ(Split::defined, (std::vector<bool>{false, true}));
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({3.0, 3.0})));
}

TEST(CustomFunction, AnInputReturnedAsIsKeepsItsOwnHistory) {
  struct Identity : autograd::Function<Identity> {
    static Tensor forward(AutogradContext*, const Tensor& x) { return x; }
    static variable_list backward(AutogradContext*, variable_list g) { return {g[0] * 10.0}; }
  };
  Tensor x = tensor({1.0, 2.0}, grad_opts());
  Tensor y = Identity::apply(x);
  EXPECT_FALSE(y.is_same(x));
  EXPECT_EQ(y.data_ptr_raw(), x.data_ptr_raw());
  EXPECT_EQ(x.grad_fn(), nullptr);  // still a leaf
  y.sum().backward();
  EXPECT_TRUE(all_close(x.grad(), raw::tensor({10.0, 10.0})));
}

TEST(CustomFunction, TensorListsAndOptionalTensorsAreInputs) {
  struct SumAll : autograd::Function<SumAll> {
    static Tensor forward(AutogradContext*, const std::vector<Tensor>& xs, const std::optional<Tensor>& bias,
                          const std::optional<Tensor>& absent) {
      EXPECT_FALSE(absent.has_value());
      Tensor total = xs[0] + xs[1];
      return bias ? total + *bias : total;
    }
    static variable_list backward(AutogradContext*, variable_list g) { return {g[0], g[0] * 2.0, g[0] * 3.0, Tensor()}; }
  };
  Tensor a = tensor({1.0}, grad_opts()), b = tensor({2.0}, grad_opts()), c = tensor({3.0}, grad_opts());
  SumAll::apply(std::vector<Tensor>{a, b}, std::optional<Tensor>(c), std::optional<Tensor>()).backward();
  EXPECT_DOUBLE_EQ(a.grad().item<double>(), 1.0);
  EXPECT_DOUBLE_EQ(b.grad().item<double>(), 2.0);
  EXPECT_DOUBLE_EQ(c.grad().item<double>(), 3.0);
}

TEST(CustomFunction, WritingAnInputThatRequiresGradInPlaceWithoutMarkDirtyIsRefused) {
  struct Scale : autograd::Function<Scale> {
    static Tensor forward(AutogradContext*, const Tensor& x) {
      Tensor t = x;
      t.mul_(2.0);
      return t;
    }
    static variable_list backward(AutogradContext*, variable_list g) { return {g[0] * 2.0}; }
  };
  Tensor leaf = tensor({1.0}, grad_opts());
  Tensor x = leaf * 1.0;
  try {
    Scale::apply(x);
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("modified its input 0 in place"), std::string::npos) << e.what();
  }
  Tensor plain = tensor({1.0});
  EXPECT_DOUBLE_EQ(Scale::apply(plain).item<double>(), 2.0);  // nothing to record: allowed
}

// ctx->mark_dirty(), as libtorch's: the input written in place is the output, its version bumped, its
// history rebased onto the Function's node, so gradients flow as through a built-in in-place op.
struct ExpInPlace : autograd::Function<ExpInPlace> {
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    x.exp_();
    ctx->mark_dirty({x});
    ctx->save_for_backward({x});  // the output: exp of the old value
    return x;
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    return {g[0] * ctx->get_saved_variables()[0]};
  }
};

TEST(CustomFunction, MarkDirtyRebasesTheInputsHistory) {
  Tensor leaf = tensor({0.5, -1.0, 2.0}, grad_opts());
  Tensor x = leaf * 3.0;
  const uint32_t version = x.version();
  Tensor y = ExpInPlace::apply(x);
  EXPECT_TRUE(y.is_same(x));  // the input itself, as libtorch returns it
  EXPECT_GT(x.version(), version);
  ASSERT_NE(x.grad_fn(), nullptr);
  EXPECT_NE(x.grad_fn()->name().find("ExpInPlace"), std::string::npos) << x.grad_fn()->name();
  (x * x).sum().backward();
  // d/dleaf sum(exp(3 leaf)^2) = 6 exp(6 leaf), as the built-in exp_ gives.
  Tensor leaf2 = tensor({0.5, -1.0, 2.0}, grad_opts());
  Tensor x2 = leaf2 * 3.0;
  x2.exp_();
  (x2 * x2).sum().backward();
  EXPECT_TRUE(all_close(leaf.grad(), leaf2.grad(), 1e-12, 1e-12));
  EXPECT_TRUE(all_close(leaf.grad(), 6.0 * exp(leaf.detach() * 6.0), 1e-12, 1e-12));
}

TEST(CustomFunction, MarkDirtyOnAViewRebasesItsBase) {
  Tensor leaf = tensor({0.0, 1.0, 2.0, 3.0}, grad_opts());
  Tensor base = leaf * 1.0;
  Tensor view = base.narrow(0, 1, 2);
  ExpInPlace::apply(view);
  ASSERT_NE(base.grad_fn(), nullptr);
  EXPECT_EQ(base.grad_fn()->name(), "CopySlices");
  base.sum().backward();
  // Outside the view the gradient is 1, inside it exp(leaf).
  EXPECT_TRUE(all_close(leaf.grad(), tensor({1.0, std::exp(1.0), std::exp(2.0), 1.0}, TensorOptions(kFloat64)), 1e-12, 1e-12));
}

TEST(CustomFunction, MarkDirtyRefusals) {
  // A leaf that requires grad cannot be written in place (libtorch's check_inplace).
  Tensor leaf = tensor({1.0}, grad_opts());
  EXPECT_TRUE(testing::throws_with<std::runtime_error>(
      [&] { ExpInPlace::apply(leaf); }, "a leaf Variable that requires grad is being used in an in-place operation."));
  // What is marked dirty must be returned.
  struct Forgets : autograd::Function<Forgets> {
    static Tensor forward(AutogradContext* ctx, Tensor x) {
      x.mul_(2.0);
      ctx->mark_dirty({x});
      return x * 1.0;
    }
    static variable_list backward(AutogradContext*, variable_list g) { return {g[0] * 2.0}; }
  };
  Tensor x = leaf * 1.0;
  EXPECT_TRUE(testing::throws_with<std::invalid_argument>(
      [&] { Forgets::apply(x); }, "Some elements marked as dirty during the forward method were not returned as output."));
  // Nothing to record: the input comes back written, with no history.
  Tensor plain = tensor({0.0});
  EXPECT_DOUBLE_EQ(ExpInPlace::apply(plain).item<double>(), 1.0);
  EXPECT_EQ(plain.grad_fn(), nullptr);
}

TEST(CustomFunction, NeedsInputGradOutOfRangeThrows) {
  struct Probe : autograd::Function<Probe> {
    static Tensor forward(AutogradContext* ctx, const Tensor& x) {
      EXPECT_TRUE(ctx->needs_input_grad(0));
      EXPECT_THROW(ctx->needs_input_grad(1), std::out_of_range);
      return x * 1.0;
    }
    static variable_list backward(AutogradContext*, variable_list g) { return {g[0]}; }
  };
  Probe::apply(tensor({1.0}, grad_opts()));
}

TEST(IValue, AccessorsAreStrictAsC10s) {
  autograd::IValue i = 3, d = 2.5, b = true, s = "name", none;
  autograd::IValue shape = Shape{2, 3};
  EXPECT_EQ(i.toInt(), 3);
  EXPECT_DOUBLE_EQ(d.toDouble(), 2.5);
  EXPECT_TRUE(b.toBool());
  EXPECT_EQ(s.toStringRef(), "name");
  EXPECT_TRUE(none.isNone());
  EXPECT_EQ(shape.toIntVector(), (std::vector<int64_t>{2, 3}));
  try {
    i.toDouble();
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "Expected Double but got Int");
  }
  autograd::IValue t = tensor({1.0, 2.0});
  EXPECT_TRUE(t.isTensor());
  EXPECT_EQ(t.toTensor().numel(), 2);
  EXPECT_THROW(t.toInt(), std::runtime_error);
}

}  // namespace
}  // namespace colony
