// The autocast policy table (COLONY_FOR_EACH_AUTOCAST_OP, autograd/autocast.h), walked row by row:
// every row needs a case here, and each case checks the op's output dtype and its values under
// both 16-bit dtypes:
//  - LowerPrecision rows get float32 inputs and must return the guard's dtype, with the values of
//    the float32 op on the inputs rounded to that dtype (within the rounding of the 16-bit output);
//  - Float32 rows get 16-bit inputs and must equal the float32 op on the widened inputs, to float32
//    rounding: a softmax computed in bfloat16 and cast back would be off by ~1e-3 and fail.
// batch_norm is a Float32 row whose output returns to the input's dtype (cuDNN's mixed precision);
// binary_cross_entropy is a Float32 row on the CPU and refused under CUDA autocast.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "autograd/autocast.h"
#include "autograd/autograd.h"
#include "autograd/nn_ops.h"
#include "nn/activation.h"
#include "nn/functional.h"
#include "nn/rnn.h"
#include "nn/rnn_cell_math.h"
#include "runtime/cuda.h"
#include "tensor/random.h"
#include "tests/test_util.h"
#include "tests/tf32_guard.h"

namespace colony {
namespace {

using autocast::CastPolicy;
using testing::all_close;

// Runs the op on its inputs; the inputs come in the dtype the row's check chose.
using Case = std::function<Tensor(const std::vector<Tensor>&)>;

struct OpCase {
  std::vector<Shape> shapes;
  Case run;
  bool positive = false;  // inputs drawn from (0.5, 1.5), for log, rsqrt, pow, reciprocal
  bool unit = false;      // inputs drawn from (0.05, 0.95): probabilities, for binary_cross_entropy
};

// +1 / -1 pair labels for cosine_embedding_loss.
Tensor pair_labels(const Tensor& like) {
  return raw::to(raw::tensor({1.0, -1.0, -1.0, 1.0}), like.device(), kFloat32);
}

// Each row's classes up to the first -1, for multilabel_margin_loss on [4, 5].
Tensor multilabel_targets(const Tensor& like) {
  std::vector<int64_t> v = {0, 3, -1, 0, 0, 4, -1, 1, 1, 1, 2, 1, 0, -1, 3, 1, 2, 3, 4, 0};
  return raw::to(raw::from_vector(v, {4, 5}), like.device(), kInt64);
}

Tensor target_classes(const Tensor& like) {
  std::vector<int64_t> v = {0, 3, 1, 2};
  return raw::to(raw::from_vector(v, {4}), like.device(), kInt64);
}

// A one-layer recurrent module (input 5, hidden 4) with x[1..4] as its parameters, run on x[0];
// its output.
template <typename M>
Tensor recurrent(const std::vector<Tensor>& x, int64_t gates, bool relu = false) {
  std::shared_ptr<M> m;
  if constexpr (std::is_same_v<M, nn::RNN>) {
    m = std::make_shared<M>(nn::RNNOptions(5, 4).nonlinearity(relu ? nn::RNNNonlinearity::ReLU : nn::RNNNonlinearity::Tanh));
  } else {
    m = std::make_shared<M>(5, 4);
  }
  EXPECT_EQ(x[1].size(0), gates * 4);
  m->to(x[0].device());
  m->load_state_dict({{"weight_ih_l0", x[1]}, {"weight_hh_l0", x[2]}, {"bias_ih_l0", x[3]}, {"bias_hh_l0", x[4]}});
  return std::get<0>(m->forward(x[0]));
}

std::map<std::string, OpCase> cases() {
  raw::CrossEntropyOptions ce, nll;
  nll.log_probs = true;
  return {
      {"mm", {{{4, 6}, {6, 5}}, [](const std::vector<Tensor>& x) { return mm(x[0], x[1]); }}},
      {"bmm", {{{2, 4, 6}, {2, 6, 3}}, [](const std::vector<Tensor>& x) { return bmm(x[0], x[1]); }}},
      {"matmul", {{{2, 4, 6}, {6, 3}}, [](const std::vector<Tensor>& x) { return matmul(x[0], x[1]); }}},
      {"linear", {{{3, 6}, {5, 6}, {5}}, [](const std::vector<Tensor>& x) { return linear(x[0], x[1], x[2]); }}},
      {"conv2d", {{{2, 3, 6, 6}, {4, 3, 3, 3}, {4}}, [](const std::vector<Tensor>& x) { return conv2d(x[0], x[1], x[2]); }}},
      // Without a bias: the bias is added after the kernel, in the 16-bit dtype on CUDA (as PyTorch's
      // cuDNN path), a second rounding this check's 2 ulps do not allow for.
      {"conv_transpose2d",
       {{{2, 3, 4, 5}, {3, 2, 3, 3}}, [](const std::vector<Tensor>& x) { return conv_transpose2d(x[0], x[1], Tensor(), 2); }}},
      {"scaled_dot_product_attention",
       {{{2, 5, 8}, {2, 6, 8}, {2, 6, 4}},
        [](const std::vector<Tensor>& x) { return scaled_dot_product_attention(x[0], x[1], x[2]); }}},
      // The recurrent cells (inputs x, h (and c), w_ih, w_hh, b_ih, b_hh) and layers (input and a
      // layer's four parameters, loaded into a one-layer module: its weights are then the rounded
      // inputs the reference sees). Every cell's output is rounded once (the gate math is float32).
      // The layers get one time step: over more, each step's h is rounded before the next product
      // (as cuDNN's 16-bit RNNs round it), which no single rounding of the output bounds.
      {"rnn_tanh_cell",
       {{{3, 5}, {3, 4}, {4, 5}, {4, 4}, {4}, {4}},
        [](const std::vector<Tensor>& x) { return F::rnn_tanh_cell(x[0], x[1], x[2], x[3], x[4], x[5]); }}},
      {"rnn_relu_cell",
       {{{3, 5}, {3, 4}, {4, 5}, {4, 4}, {4}, {4}},
        [](const std::vector<Tensor>& x) { return F::rnn_relu_cell(x[0], x[1], x[2], x[3], x[4], x[5]); }}},
      {"lstm_cell",
       {{{3, 5}, {3, 4}, {3, 4}, {16, 5}, {16, 4}, {16}, {16}},
        [](const std::vector<Tensor>& x) { return std::get<0>(F::lstm_cell(x[0], x[1], x[2], x[3], x[4], x[5], x[6])); }}},
      {"gru_cell",
       {{{3, 5}, {3, 4}, {12, 5}, {12, 4}, {12}, {12}},
        [](const std::vector<Tensor>& x) { return F::gru_cell(x[0], x[1], x[2], x[3], x[4], x[5]); }}},
      {"rnn_tanh", {{{1, 3, 5}, {4, 5}, {4, 4}, {4}, {4}}, [](const std::vector<Tensor>& x) { return recurrent<nn::RNN>(x, 1); }}},
      {"rnn_relu", {{{1, 3, 5}, {4, 5}, {4, 4}, {4}, {4}}, [](const std::vector<Tensor>& x) { return recurrent<nn::RNN>(x, 1, true); }}},
      {"lstm", {{{1, 3, 5}, {16, 5}, {16, 4}, {16}, {16}}, [](const std::vector<Tensor>& x) { return recurrent<nn::LSTM>(x, 4); }}},
      {"gru", {{{1, 3, 5}, {12, 5}, {12, 4}, {12}, {12}}, [](const std::vector<Tensor>& x) { return recurrent<nn::GRU>(x, 3); }}},
      // The add-and-multiply ops (autograd/compose_math.cc), beta and alpha 1 so the added input
      // adds one rounding at most.
      {"addmm", {{{4, 5}, {4, 6}, {6, 5}}, [](const std::vector<Tensor>& x) { return addmm(x[0], x[1], x[2]); }}},
      {"addmv", {{{4}, {4, 6}, {6}}, [](const std::vector<Tensor>& x) { return addmv(x[0], x[1], x[2]); }}},
      {"addr", {{{4, 5}, {4}, {5}}, [](const std::vector<Tensor>& x) { return addr(x[0], x[1], x[2]); }}},
      {"baddbmm", {{{2, 4, 5}, {2, 4, 6}, {2, 6, 5}}, [](const std::vector<Tensor>& x) { return baddbmm(x[0], x[1], x[2]); }}},
      {"addbmm", {{{4, 5}, {2, 4, 6}, {2, 6, 5}}, [](const std::vector<Tensor>& x) { return addbmm(x[0], x[1], x[2]); }}},
      {"cdist", {{{2, 4, 6}, {3, 6}}, [](const std::vector<Tensor>& x) { return cdist(x[0], x[1]); }}},
      {"pdist", {{{5, 6}}, [](const std::vector<Tensor>& x) { return pdist(x[0], 1.5); }}},
      {"softmax", {{{4, 7}}, [](const std::vector<Tensor>& x) { return softmax(x[0], 1); }}},
      {"log_softmax", {{{4, 7}}, [](const std::vector<Tensor>& x) { return log_softmax(x[0], 1); }}},
      {"cross_entropy",
       {{{4, 5}}, [ce](const std::vector<Tensor>& x) { return colony::cross_entropy_loss(x[0], target_classes(x[0]), ce); }}},
      {"nll_loss", {{{4, 5}}, [nll](const std::vector<Tensor>& x) { return colony::cross_entropy_loss(x[0], target_classes(x[0]), nll); }}},
      {"mse_loss", {{{4, 5}, {4, 5}}, [](const std::vector<Tensor>& x) { return mse_loss(x[0], x[1]); }}},
      // The losses of nn/functional_loss.cc, through F::.
      {"l1_loss", {{{4, 5}, {4, 5}}, [](const std::vector<Tensor>& x) { return F::l1_loss(x[0], x[1]); }}},
      {"smooth_l1_loss", {{{4, 5}, {4, 5}}, [](const std::vector<Tensor>& x) { return F::smooth_l1_loss(x[0], x[1]); }}},
      {"huber_loss",
       {{{4, 5}, {4, 5}},
        [](const std::vector<Tensor>& x) { return F::huber_loss(x[0], x[1], F::HuberLossFuncOptions().delta(0.5)); }}},
      {"binary_cross_entropy",
       {{{4, 5}, {4, 5}}, [](const std::vector<Tensor>& x) { return F::binary_cross_entropy(x[0], x[1]); }, false, true}},
      {"binary_cross_entropy_with_logits",
       {{{4, 5}, {4, 5}, {5}},
        [](const std::vector<Tensor>& x) {
          return F::binary_cross_entropy_with_logits(x[0], x[1], F::BinaryCrossEntropyWithLogitsFuncOptions().pos_weight(x[2]));
        }}},
      {"kl_div", {{{4, 5}, {4, 5}}, [](const std::vector<Tensor>& x) { return F::kl_div(x[0], x[1]); }, true}},
      {"cosine_similarity", {{{4, 5}, {4, 5}}, [](const std::vector<Tensor>& x) { return F::cosine_similarity(x[0], x[1]); }}},
      {"cosine_embedding_loss",
       {{{4, 5}, {4, 5}},
        [](const std::vector<Tensor>& x) { return F::cosine_embedding_loss(x[0], x[1], pair_labels(x[0])); }}},
      {"batch_norm",
       {{{4, 3, 2, 2}, {3}, {3}},
        [](const std::vector<Tensor>& x) { return batch_norm(x[0], x[1], x[2], Tensor(), Tensor(), /*training=*/true); }}},
      // Statistics and output in float32 (PyTorch's CUDA list); weight and bias widened with the input.
      {"layer_norm",
       {{{4, 3, 8}, {8}, {8}}, [](const std::vector<Tensor>& x) { return layer_norm(x[0], {8}, x[1], x[2]); }}},
      {"group_norm",
       {{{2, 6, 3, 2}, {6}, {6}}, [](const std::vector<Tensor>& x) { return group_norm(x[0], 3, x[1], x[2]); }}},
      {"rms_norm", {{{4, 3, 8}, {8}}, [](const std::vector<Tensor>& x) { return rms_norm(x[0], {8}, x[1]); }}},
      {"sum", {{{5, 9}}, [](const std::vector<Tensor>& x) { return sum(x[0], {1}); }}},
      {"mean", {{{5, 9}}, [](const std::vector<Tensor>& x) { return mean(x[0]); }}},
      {"var", {{{5, 9}}, [](const std::vector<Tensor>& x) { return var(x[0], {1}); }}},
      {"exp", {{{3, 4}}, [](const std::vector<Tensor>& x) { return exp(x[0]); }}},
      {"log", {{{3, 4}}, [](const std::vector<Tensor>& x) { return log(x[0]); }, true}},
      {"log1p", {{{3, 4}}, [](const std::vector<Tensor>& x) { return log1p(x[0]); }, true}},
      {"expm1", {{{3, 4}}, [](const std::vector<Tensor>& x) { return expm1(x[0]); }}},
      {"pow", {{{3, 4}, {3, 4}}, [](const std::vector<Tensor>& x) { return pow(x[0], x[1]); }, true}},
      {"reciprocal", {{{3, 4}}, [](const std::vector<Tensor>& x) { return reciprocal(x[0]); }, true}},
      {"rsqrt", {{{3, 4}}, [](const std::vector<Tensor>& x) { return rsqrt(x[0]); }, true}},
      {"softplus", {{{3, 4}}, [](const std::vector<Tensor>& x) { return softplus(x[0]); }}},
      {"interpolate",
       {{{2, 3, 4, 5}},
        [](const std::vector<Tensor>& x) {
          return F::interpolate(x[0], F::InterpolateFuncOptions().scale_factor({2.0}).mode("bilinear"));
        }}},
      {"tan", {{{3, 4}}, [](const std::vector<Tensor>& x) { return tan(x[0]); }}},
      {"asin", {{{3, 4}}, [](const std::vector<Tensor>& x) { return asin(x[0]); }, false, true}},
      {"acos", {{{3, 4}}, [](const std::vector<Tensor>& x) { return acos(x[0]); }, false, true}},
      {"sinh", {{{3, 4}}, [](const std::vector<Tensor>& x) { return sinh(x[0]); }}},
      {"cosh", {{{3, 4}}, [](const std::vector<Tensor>& x) { return cosh(x[0]); }}},
      {"log2", {{{3, 4}}, [](const std::vector<Tensor>& x) { return log2(x[0]); }, true}},
      {"log10", {{{3, 4}}, [](const std::vector<Tensor>& x) { return log10(x[0]); }, true}},
      {"erfinv", {{{3, 4}}, [](const std::vector<Tensor>& x) { return erfinv(x[0]); }, false, true}},
      {"cumsum", {{{3, 40}}, [](const std::vector<Tensor>& x) { return cumsum(x[0], 1); }}},
      // The margin and likelihood losses (nn/functional_loss_margin.cc), through F::.
      {"margin_ranking_loss",
       {{{4}, {4}}, [](const std::vector<Tensor>& x) { return F::margin_ranking_loss(x[0], x[1], pair_labels(x[0])); }}},
      {"hinge_embedding_loss",
       {{{4}}, [](const std::vector<Tensor>& x) { return F::hinge_embedding_loss(x[0], pair_labels(x[0])); }}},
      {"soft_margin_loss", {{{4}}, [](const std::vector<Tensor>& x) { return F::soft_margin_loss(x[0], pair_labels(x[0])); }}},
      {"multi_margin_loss",
       {{{4, 5}}, [](const std::vector<Tensor>& x) { return F::multi_margin_loss(x[0], target_classes(x[0])); }}},
      {"multilabel_margin_loss",
       {{{4, 5}},
        [](const std::vector<Tensor>& x) {
          return F::multilabel_margin_loss(x[0], multilabel_targets(x[0]));
        }}},
      {"triplet_margin_loss",
       {{{4, 5}, {4, 5}, {4, 5}}, [](const std::vector<Tensor>& x) { return F::triplet_margin_loss(x[0], x[1], x[2]); }}},
      {"poisson_nll_loss", {{{4, 5}, {4, 5}}, [](const std::vector<Tensor>& x) { return F::poisson_nll_loss(x[0], x[1]); }}},
      {"cumprod", {{{3, 40}}, [](const std::vector<Tensor>& x) { return cumprod(x[0], 1); }, true}},
      // The linalg rows (autograd/linalg.h); eigenvectors and singular vectors enter through
      // sign-free results; cholesky gets positive 1 x 1 matrices, positive-definite in any dtype.
      {"linalg_inv", {{{2, 3, 3}}, [](const std::vector<Tensor>& x) { return linalg::inv(x[0]); }}},
      {"linalg_solve", {{{3, 3}, {3, 2}}, [](const std::vector<Tensor>& x) { return linalg::solve(x[0], x[1]); }}},
      {"linalg_cholesky", {{{3, 1, 1}}, [](const std::vector<Tensor>& x) { return linalg::cholesky(x[0]); }, true}},
      {"linalg_qr", {{{4, 3}}, [](const std::vector<Tensor>& x) { return std::get<1>(linalg::qr(x[0])); }}},
      {"linalg_eigh", {{{4, 4}}, [](const std::vector<Tensor>& x) { return std::get<0>(linalg::eigh(x[0])); }}},
      {"linalg_eigvalsh", {{{4, 4}}, [](const std::vector<Tensor>& x) { return linalg::eigvalsh(x[0]); }}},
      {"linalg_svd", {{{4, 3}}, [](const std::vector<Tensor>& x) { return std::get<1>(linalg::svd(x[0])); }}},
      {"linalg_svdvals", {{{4, 3}}, [](const std::vector<Tensor>& x) { return linalg::svdvals(x[0]); }}},
      {"linalg_vector_norm", {{{3, 4}}, [](const std::vector<Tensor>& x) { return linalg::vector_norm(x[0]); }}},
      {"linalg_matrix_norm", {{{3, 4}}, [](const std::vector<Tensor>& x) { return linalg::matrix_norm(x[0], "nuc"); }}},
      // log_probs [T = 5, N = 2, C = 4] as drawn (the kernel needs no normalized rows).
      {"ctc_loss",
       {{{5, 2, 4}},
        [](const std::vector<Tensor>& x) {
          const std::vector<int64_t> targets = {1, 2, 3, 3};
          return F::ctc_loss(x[0], raw::from_vector(targets, {2, 2}), std::vector<int64_t>{5, 4},
                             std::vector<int64_t>{2, 2});
        }}},
      {"grid_sampler",
       {{{2, 3, 4, 5}, {2, 3, 2, 2}},
        [](const std::vector<Tensor>& x) { return F::grid_sample(x[0], x[1], F::GridSampleFuncOptions()); }}},
      {"conv3d",
       {{{2, 3, 4, 5, 5}, {4, 3, 3, 3, 3}, {4}},
        [](const std::vector<Tensor>& x) { return conv3d(x[0], x[1], x[2], 1, 1); }}},
      // Without a bias, as conv_transpose2d's case (the bias is added after the kernel on CUDA).
      {"conv_transpose3d",
       {{{2, 3, 3, 4, 4}, {3, 2, 3, 3, 3}},
        [](const std::vector<Tensor>& x) { return conv_transpose3d(x[0], x[1], Tensor(), 2); }}},
      {"avg_pool3d",
       {{{1, 2, 4, 4, 5}},
        [](const std::vector<Tensor>& x) { return F::avg_pool3d(x[0], F::AvgPool3dFuncOptions(3).stride(1).padding(1)); }}},
      {"adaptive_max_pool3d",
       {{{1, 2, 4, 4, 5}}, [](const std::vector<Tensor>& x) { return F::adaptive_max_pool3d(x[0], Int3(2, 3, 2)); }}},
      // Input and samples in (0.05, 0.95), the samples' range.
      {"fractional_max_pool2d",
       {{{1, 2, 7, 8}, {1, 2, 2}},
        [](const std::vector<Tensor>& x) {
          return F::fractional_max_pool2d(
              x[0], F::FractionalMaxPool2dFuncOptions(2).output_size(Int2(3, 4))._random_samples(x[1]));
        },
        false,
        true}},
      {"fractional_max_pool3d",
       {{{1, 2, 5, 7, 6}, {1, 2, 3}},
        [](const std::vector<Tensor>& x) {
          return F::fractional_max_pool3d(
              x[0], F::FractionalMaxPool3dFuncOptions(2).output_size(Int3(2, 3, 3))._random_samples(x[1]));
        },
        false,
        true}},
      {"dist", {{{3, 4}, {4}}, [](const std::vector<Tensor>& x) { return x[0].dist(x[1], 3.0); }}},
      {"renorm", {{{3, 4}}, [](const std::vector<Tensor>& x) { return renorm(x[0], 2.0, 0, 0.5); }}},
      {"nuclear_norm", {{{3, 4}}, [](const std::vector<Tensor>& x) { return nuclear_norm(x[0]); }}},
      {"prelu", {{{2, 3, 4}, {3}}, [](const std::vector<Tensor>& x) { return F::prelu(x[0], x[1]); }}},
  };
}

std::vector<std::pair<autocast::Op, std::string>> table_rows() {
  std::vector<std::pair<autocast::Op, std::string>> rows;
#define COLONY_ROW(name, policy) rows.emplace_back(autocast::Op::name, #name);
  COLONY_FOR_EACH_AUTOCAST_OP(COLONY_ROW)
#undef COLONY_ROW
  return rows;
}

std::vector<Tensor> inputs(const OpCase& c, Device device, uint64_t seed) {
  std::vector<Tensor> xs;
  for (const Shape& s : c.shapes) {
    Generator gen(seed++);
    Tensor t = c.positive ? raw::add(raw::rand(s, TensorOptions(kFloat32), &gen), 0.5)
               : c.unit   ? raw::add(raw::mul(raw::rand(s, TensorOptions(kFloat32), &gen), 0.9), 0.05)
                          : raw::randn(s, TensorOptions(kFloat32), &gen);
    xs.push_back(raw::to(t, device, kFloat32));
  }
  return xs;
}

std::vector<Tensor> in_dtype(const std::vector<Tensor>& xs, DType dtype) {
  std::vector<Tensor> out;
  for (const Tensor& x : xs) out.push_back(raw::to(x, x.device(), dtype));
  return out;
}

Tensor on_host_f32(const Tensor& t) { return raw::to(t, kCPU, kFloat32); }

void check_every_row(Device device) {
  const auto all = cases();
  uint64_t seed = 100;
  for (const auto& [op, name] : table_rows()) {
    SCOPED_TRACE(name);
    auto it = all.find(name);
    ASSERT_NE(it, all.end()) << "the autocast table has a row \"" << name << "\" that this test has no case for";
    EXPECT_STREQ(autocast::op_name(op), name.c_str());
    const OpCase& c = it->second;
    const std::vector<Tensor> xs = inputs(c, device, seed);
    seed += 10;
    for (DType low : {kBFloat16, kFloat16}) {
      SCOPED_TRACE(dtype_name(low));
      if (name == "binary_cross_entropy" && device.is_cuda()) {
        // Refused under CUDA autocast, as PyTorch refuses it, pointing at the logits form.
        AutocastGuard amp(device.type, low);
        EXPECT_TRUE(testing::throws_with([&] { c.run(in_dtype(xs, low)); }, "binary_cross_entropy_with_logits"));
        continue;
      }
      // The inputs rounded to `low`, so the float32 reference sees the same values the op does.
      const std::vector<Tensor> rounded = in_dtype(in_dtype(xs, low), kFloat32);
      const Tensor reference = c.run(rounded);  // autocast off: float32 throughout
      ASSERT_EQ(reference.dtype(), kFloat32);
      if (autocast::policy(op) == CastPolicy::LowerPrecision) {
        Tensor out;
        {
          AutocastGuard amp(device.type, low);
          out = c.run(rounded);
        }
        EXPECT_EQ(out.dtype(), low);
        // One rounding of the output, plus the order of a float32 accumulation: 2 ulps of `low`.
        const double ulp = low == kBFloat16 ? 1.0 / 128 : 1.0 / 1024;
        EXPECT_TRUE(all_close(on_host_f32(out), on_host_f32(raw::to(reference, device, low)), 2 * ulp, 1e-3));
      } else {
        Tensor out;
        {
          AutocastGuard amp(device.type, low);
          out = c.run(in_dtype(xs, low));
        }
        if (name == "batch_norm") {
          EXPECT_EQ(out.dtype(), low);
          EXPECT_TRUE(all_close(on_host_f32(out), on_host_f32(raw::to(reference, device, low)), 0, 0));
        } else {
          EXPECT_EQ(out.dtype(), kFloat32);
          EXPECT_TRUE(all_close(on_host_f32(out), on_host_f32(reference), 1e-6, 1e-6));
        }
      }
    }
  }
}

TEST(AutocastPolicy, EveryRowHoldsOnTheCpu) { check_every_row(kCPU); }

TEST(AutocastPolicy, EveryRowHoldsOnCuda_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  testing::Tf32Guard exact(false);  // TF32 would round the float32 references' products to 10 bits
  check_every_row(Device::cuda(0));
}

TEST(AutocastPolicy, OpsOutsideTheTableKeepTheirInputsDtype) {
  AutocastGuard amp(DeviceType::CPU, kBFloat16);
  Generator gen(7);
  Tensor h = raw::to(raw::randn({4, 5}, TensorOptions(kFloat32), &gen), kCPU, kBFloat16);
  EXPECT_EQ(relu(h).dtype(), kBFloat16);
  EXPECT_EQ(gelu(h).dtype(), kBFloat16);
  EXPECT_EQ(silu(h).dtype(), kBFloat16);
  EXPECT_EQ(tanh(h).dtype(), kBFloat16);
  // The activations outside torch's lists (softplus is in its CUDA float32 list, so a row here).
  for (const Tensor& y : {leaky_relu(h), elu(h), mish(h), hardswish(h), hardsigmoid(h), hardtanh(h), log_sigmoid(h)}) {
    EXPECT_EQ(y.dtype(), kBFloat16);
  }
  EXPECT_EQ(mul(h, h).dtype(), kBFloat16);
  Tensor f = raw::randn({4, 5}, TensorOptions(kFloat32), &gen);
  EXPECT_EQ(relu(f).dtype(), kFloat32);
  EXPECT_EQ(add(h, f).dtype(), kFloat32);  // mixed dtypes promote, as outside autocast
}

}  // namespace
}  // namespace colony
