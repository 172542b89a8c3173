// nn::RNN, LSTM, GRU and the cells against torch (tests/nn/rnn_golden.py, float64): outputs, h_n,
// c_n and the gradients of the input, the initial states and every parameter, with every
// parameter of both filled by one closed form through the state dict (so torch's names, shapes
// and order are what loads); state dict keys; gradchecks of the cells; the initialization; the
// dropout between layers; autocast; the errors; CUDA against the CPU (_CUDA, skipped without one).
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "autograd/autocast.h"
#include "autograd/autograd.h"
#include "nn/nn.h"
#include "tests/autograd/gradcheck.h"
#include "tests/nn/cuda_module_check.h"
#include "tests/nn/rnn_golden.h"
#include "tests/nn/rnn_golden_check.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using namespace nn;
namespace g = nn::rnn_golden;
using testing::all_close;
using testing::throws_with;
using testing::rnn_golden::append_flat_state;
using testing::rnn_golden::expect_golden;
using testing::rnn_golden::fill;
using testing::rnn_golden::seq;
using testing::rnn_golden::state;

Shape input_shape(bool batched, bool batch_first) {
  if (!batched) return {g::T, g::I};
  return batch_first ? Shape{g::N, g::T, g::I} : Shape{g::T, g::N, g::I};
}

Shape state_shape(bool batched, int64_t size) { return batched ? Shape{2 * g::L, g::N, size} : Shape{2 * g::L, size}; }

#define LSTM_GOLDEN(prefix) \
  {g::prefix##_out0, g::prefix##_out1, g::prefix##_out2}, {g::prefix##_grad_input, g::prefix##_grad_h0, g::prefix##_grad_c0}, \
      g::prefix##_grad_params, g::prefix##_keys
#define GRU_GOLDEN(prefix) \
  {g::prefix##_out0, g::prefix##_out1}, {g::prefix##_grad_input, g::prefix##_grad_h0}, g::prefix##_grad_params, g::prefix##_keys

void check_lstm(bool batch_first, bool batched, int64_t proj, const std::vector<std::vector<double>>& outs_g,
                const std::vector<std::vector<double>>& grads_g, const std::vector<double>& params_g,
                const std::vector<std::string>& keys) {
  auto m = std::make_shared<LSTM>(
      LSTMOptions(g::I, g::H).num_layers(g::L).bidirectional(true).batch_first(batch_first).proj_size(proj));
  fill(*m);
  Tensor x = seq(input_shape(batched, batch_first));
  Tensor h0 = state(state_shape(batched, proj ? proj : g::H), 0), c0 = state(state_shape(batched, g::H), 1);
  auto [out, hc] = m->forward(x, std::make_tuple(h0, c0));
  auto [hn, cn] = hc;
  expect_golden(*m, {out, hn, cn}, outs_g, {x, h0, c0}, grads_g, params_g, keys);
}

template <typename M, typename Options>
void check_single_state(const Options& options, bool batch_first, bool batched,
                        const std::vector<std::vector<double>>& outs_g, const std::vector<std::vector<double>>& grads_g,
                        const std::vector<double>& params_g, const std::vector<std::string>& keys) {
  auto m = std::make_shared<M>(options);
  fill(*m);
  Tensor x = seq(input_shape(batched, batch_first)), h0 = state(state_shape(batched, g::H), 0);
  auto [out, hn] = m->forward(x, h0);
  expect_golden(*m, {out, hn}, outs_g, {x, h0}, grads_g, params_g, keys);
}

TEST(RnnGolden, LstmTwoLayersBidirectionalMatchesTorch) { check_lstm(false, true, 0, LSTM_GOLDEN(lstm)); }
TEST(RnnGolden, LstmBatchFirstMatchesTorch) { check_lstm(true, true, 0, LSTM_GOLDEN(lstm_bf)); }
TEST(RnnGolden, LstmUnbatchedMatchesTorch) { check_lstm(false, false, 0, LSTM_GOLDEN(lstm_unbatched)); }
TEST(RnnGolden, LstmWithProjectionMatchesTorch) { check_lstm(true, true, g::P, LSTM_GOLDEN(lstm_proj)); }

GRUOptions gru_options(bool batch_first) {
  return GRUOptions(g::I, g::H).num_layers(g::L).bidirectional(true).batch_first(batch_first);
}
RNNOptions rnn_options(bool batch_first) {
  return RNNOptions(g::I, g::H).num_layers(g::L).bidirectional(true).batch_first(batch_first);
}

TEST(RnnGolden, GruMatchesTorch) { check_single_state<GRU>(gru_options(false), false, true, GRU_GOLDEN(gru)); }
TEST(RnnGolden, GruBatchFirstMatchesTorch) { check_single_state<GRU>(gru_options(true), true, true, GRU_GOLDEN(gru_bf)); }
TEST(RnnGolden, GruUnbatchedMatchesTorch) {
  check_single_state<GRU>(gru_options(false), false, false, GRU_GOLDEN(gru_unbatched));
}
TEST(RnnGolden, RnnTanhBatchFirstMatchesTorch) {
  check_single_state<RNN>(rnn_options(true), true, true, GRU_GOLDEN(rnn_tanh));
}
TEST(RnnGolden, RnnReluMatchesTorch) {
  check_single_state<RNN>(rnn_options(false).nonlinearity(RNNNonlinearity::ReLU), false, true, GRU_GOLDEN(rnn_relu));
}
TEST(RnnGolden, RnnUnbatchedMatchesTorch) {
  check_single_state<RNN>(rnn_options(false), false, false, GRU_GOLDEN(rnn_unbatched));
}

template <typename Cell>
void check_cell(std::shared_ptr<Cell> m, bool batched, const std::vector<std::vector<double>>& outs_g,
                const std::vector<std::vector<double>>& grads_g, const std::vector<double>& params_g,
                const std::vector<std::string>& keys) {
  fill(*m);
  Tensor x = seq(batched ? Shape{g::N, g::I} : Shape{g::I});
  Tensor h = state(batched ? Shape{g::N, g::H} : Shape{g::H}, 0);
  if constexpr (std::is_same_v<Cell, LSTMCell>) {
    Tensor c = state(batched ? Shape{g::N, g::H} : Shape{g::H}, 1);
    auto [hy, cy] = m->forward(x, std::make_tuple(h, c));
    expect_golden(*m, {hy, cy}, outs_g, {x, h, c}, grads_g, params_g, keys);
  } else {
    expect_golden(*m, {m->forward(x, h)}, outs_g, {x, h}, grads_g, params_g, keys);
  }
}

#define LSTM_CELL_GOLDEN(prefix) \
  {g::prefix##_out0, g::prefix##_out1}, {g::prefix##_grad_input, g::prefix##_grad_h0, g::prefix##_grad_c0}, \
      g::prefix##_grad_params, g::prefix##_keys
#define CELL_GOLDEN(prefix) {g::prefix##_out0}, {g::prefix##_grad_input, g::prefix##_grad_h0}, g::prefix##_grad_params, g::prefix##_keys

TEST(RnnGolden, CellsMatchTorch) {
  check_cell(std::make_shared<RNNCell>(g::I, g::H), true, CELL_GOLDEN(rnn_cell));
  check_cell(std::make_shared<RNNCell>(RNNCellOptions(g::I, g::H).nonlinearity(RNNNonlinearity::ReLU)), true,
             CELL_GOLDEN(rnn_relu_cell));
  check_cell(std::make_shared<LSTMCell>(g::I, g::H), true, LSTM_CELL_GOLDEN(lstm_cell));
  check_cell(std::make_shared<LSTMCell>(LSTMCellOptions(g::I, g::H).bias(false)), true, LSTM_CELL_GOLDEN(lstm_cell_nobias));
  check_cell(std::make_shared<GRUCell>(g::I, g::H), true, CELL_GOLDEN(gru_cell));
  check_cell(std::make_shared<GRUCell>(g::I, g::H), false, CELL_GOLDEN(gru_cell_unbatched));
}

// ---- gradchecks of the cell math (every input: x, h, c and the four weights) ----

TEST(RnnCells, GradcheckEachCell) {
  const int64_t n = 2, in = 3, h = 2;
  Tensor x = testing::input({n, in}, -1, 1, 1), hx = testing::input({n, h}, -1, 1, 2), cx = testing::input({n, h}, -1, 1, 3);
  for (int64_t gates : {1, 4, 3}) {
    SCOPED_TRACE(gates);
    Tensor w_ih = testing::input({gates * h, in}, -1, 1, 4), w_hh = testing::input({gates * h, h}, -1, 1, 5);
    Tensor b_ih = testing::input({gates * h}, -1, 1, 6), b_hh = testing::input({gates * h}, -1, 1, 7);
    if (gates == 1) {
      EXPECT_TRUE(testing::gradcheck(
          [](const std::vector<Tensor>& v) { return F::rnn_tanh_cell(v[0], v[1], v[2], v[3], v[4], v[5]); },
          {x, hx, w_ih, w_hh, b_ih, b_hh}));
      EXPECT_TRUE(testing::gradcheck(
          [](const std::vector<Tensor>& v) { return F::rnn_relu_cell(v[0], v[1], v[2], v[3], v[4], v[5]); },
          {x, hx, w_ih, w_hh, b_ih, b_hh}));
    } else if (gates == 4) {
      EXPECT_TRUE(testing::gradcheck_multi(
          [](const std::vector<Tensor>& v) {
            auto [hy, cy] = F::lstm_cell(v[0], v[1], v[2], v[3], v[4], v[5], v[6]);
            return std::vector<Tensor>{hy, cy};
          },
          {x, hx, cx, w_ih, w_hh, b_ih, b_hh}));
    } else {
      EXPECT_TRUE(testing::gradcheck(
          [](const std::vector<Tensor>& v) { return F::gru_cell(v[0], v[1], v[2], v[3], v[4], v[5]); },
          {x, hx, w_ih, w_hh, b_ih, b_hh}));
    }
  }
}

// Without bias: the layer (packed rows, the fused cell) gives the output and weight gradients of a
// loop of the functional cell, whose products are one linear per step.
TEST(RnnCells, LayerWithoutBiasMatchesTheCellLoop) {
  manual_seed(12);
  GRU gru(GRUOptions(3, 4).bias(false));
  gru.to(kFloat64);
  Tensor x = raw::randn({5, 2, 3}, TensorOptions(kFloat64));
  Tensor g = raw::randn({5, 2, 4}, TensorOptions(kFloat64));
  Tensor out = std::get<0>(gru.forward(x));
  sum(mul(out, g)).backward();
  Tensor w_ih = raw::clone(gru.named_parameters()[0].second), w_hh = raw::clone(gru.named_parameters()[1].second);
  w_ih.requires_grad_(true);
  w_hh.requires_grad_(true);
  Tensor h = raw::zeros({2, 4}, TensorOptions(kFloat64));
  std::vector<Tensor> hs;
  for (int64_t t = 0; t < 5; ++t) hs.push_back(h = F::gru_cell(x.select(0, t), h, w_ih, w_hh));
  Tensor ref = stack(hs, 0);
  sum(mul(ref, g)).backward();
  EXPECT_TRUE(all_close(out, ref, 1e-12, 1e-14));
  EXPECT_TRUE(all_close(gru.named_parameters()[0].second.grad(), w_ih.grad(), 1e-12, 1e-14));
  EXPECT_TRUE(all_close(gru.named_parameters()[1].second.grad(), w_hh.grad(), 1e-12, 1e-14));
}

// ---- initialization ----

TEST(RnnInit, EveryParameterIsUniformWithinOneOverSqrtHidden) {
  manual_seed(3);
  LSTM lstm(LSTMOptions(16, 64).num_layers(2).bidirectional(true));
  const double bound = 1.0 / 8.0;
  ASSERT_EQ(lstm.parameters().size(), 16u);
  for (const auto& [name, p] : lstm.named_parameters()) {
    SCOPED_TRACE(name);
    std::vector<double> v = testing::values(p);
    double lo = 1, hi = -1, mean = 0, sq = 0;
    for (double x : v) lo = std::min(lo, x), hi = std::max(hi, x), mean += x, sq += x * x;
    mean /= v.size();
    const double var = sq / v.size() - mean * mean;
    EXPECT_GE(lo, -bound);
    EXPECT_LE(hi, bound);
    // uniform(-b, b): mean 0, variance b^2 / 3; the bounds are 5 standard errors of the estimates.
    const double se_mean = bound / std::sqrt(3.0 * v.size());
    EXPECT_LT(std::abs(mean), 5 * se_mean);
    EXPECT_NEAR(var, bound * bound / 3, 5 * bound * bound * 0.3 / std::sqrt(static_cast<double>(v.size())));
    // The draws cover the range (a bias initialized to zeros, or a narrower bound, would not).
    EXPECT_LT(lo, -0.8 * bound);
    EXPECT_GT(hi, 0.8 * bound);
  }
  GRUCell cell(5, 100);
  for (const auto& [name, p] : cell.named_parameters()) {
    const std::vector<double> v = testing::values(p);
    EXPECT_LE(*std::max_element(v.begin(), v.end()), 0.1) << name;
    EXPECT_GT(*std::max_element(v.begin(), v.end()), 0.08) << name;
  }
}

// ---- dropout between layers ----

TEST(RnnDropout, DropsBetweenLayersOnlyWhileTraining) {
  manual_seed(11);
  auto with = std::make_shared<LSTM>(LSTMOptions(3, 5).num_layers(2).dropout(1.0));
  auto without = std::make_shared<LSTM>(LSTMOptions(3, 5).num_layers(2));
  without->load_state_dict(with->state_dict());
  Tensor x = raw::randn({4, 2, 3}, TensorOptions(kFloat32));
  // eval: no dropout, so the two agree.
  with->eval();
  EXPECT_TRUE(all_close(std::get<0>(with->forward(x)), std::get<0>(without->forward(x)), 0, 0));
  // Training with p = 1: the second layer sees zeros, so its output is that of a one-layer LSTM with
  // the second layer's weights on a zero input (and the first layer's state is untouched).
  with->train();
  auto [out, hc] = with->forward(x);
  auto second = std::make_shared<LSTM>(LSTMOptions(5, 5));
  NamedTensors sd;
  for (const auto& [name, t] : with->state_dict()) {
    if (name.size() > 3 && name.substr(name.size() - 3) == "_l1") sd.emplace_back(name.substr(0, name.size() - 1) + "0", t);
  }
  second->load_state_dict(sd);
  EXPECT_TRUE(all_close(out, std::get<0>(second->forward(raw::zeros({4, 2, 5}, TensorOptions(kFloat32)))), 1e-6, 1e-7));
  auto [h_eval, c_eval] = std::get<1>(without->forward(x));
  EXPECT_TRUE(all_close(std::get<0>(hc).select(0, 0), h_eval.select(0, 0), 1e-6, 1e-7)) << "layer 0 is not dropped";
  // p = 0.5 while training: masks differ from call to call; the last layer's output is not dropped.
  auto half = std::make_shared<LSTM>(LSTMOptions(3, 5).num_layers(2).dropout(0.5));
  half->load_state_dict(with->state_dict());
  Tensor a = std::get<0>(half->forward(x)), b = std::get<0>(half->forward(x));
  EXPECT_FALSE(all_close(a, b, 0, 0));
  half->eval();
  EXPECT_TRUE(all_close(std::get<0>(half->forward(x)), std::get<0>(without->forward(x)), 0, 0));
}

TEST(RnnDropout, OneLayerWithDropoutWarnsAsTorchDoes) {
  ::testing::internal::CaptureStderr();
  GRU gru(GRUOptions(3, 4).dropout(0.5));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("non-zero dropout expects num_layers greater than 1, but got dropout=0.5 and num_layers=1"),
            std::string::npos)
      << err;
  ::testing::internal::CaptureStderr();
  GRU two(GRUOptions(3, 4).dropout(0.5).num_layers(2));
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

// ---- printing, errors ----

TEST(RnnModules, PrintAsTorch) {
  EXPECT_EQ(LSTM(LSTMOptions(3, 4).num_layers(2).batch_first(true).bidirectional(true)).repr(),
            "LSTM(3, 4, num_layers=2, batch_first=True, bidirectional=True)");
  EXPECT_EQ(LSTM(LSTMOptions(3, 4).num_layers(2).dropout(0.5).proj_size(2)).repr(),
            "LSTM(3, 4, proj_size=2, num_layers=2, dropout=0.5)");
  EXPECT_EQ(RNN(RNNOptions(3, 4).nonlinearity(RNNNonlinearity::ReLU).bias(false)).repr(), "RNN(3, 4, bias=False)");
  EXPECT_EQ(GRU(3, 4).repr(), "GRU(3, 4)");
  EXPECT_EQ(RNNCell(RNNCellOptions(3, 4).bias(false).nonlinearity(RNNNonlinearity::ReLU)).repr(),
            "RNNCell(3, 4, bias=False, nonlinearity=relu)");
  EXPECT_EQ(LSTMCell(3, 4).repr(), "LSTMCell(3, 4)");
}

TEST(RnnModules, ErrorsSayWhatWasExpected) {
  LSTM lstm(LSTMOptions(3, 4).num_layers(2));
  Tensor x = raw::zeros({5, 2, 3}, TensorOptions(kFloat32));
  EXPECT_TRUE(throws_with([&] { lstm.forward(raw::zeros({5, 2, 6}, TensorOptions(kFloat32))); },
                          "input.size(-1) must be equal to input_size. Expected 3, got 6"));
  EXPECT_TRUE(throws_with([&] { lstm.forward(raw::zeros({1, 5, 2, 3}, TensorOptions(kFloat32))); },
                          "Expected input to be 2D or 3D, got 4D instead"));
  Tensor h_bad = raw::zeros({1, 2, 4}, TensorOptions(kFloat32)), c = raw::zeros({2, 2, 4}, TensorOptions(kFloat32));
  EXPECT_TRUE(throws_with([&] { lstm.forward(x, std::make_tuple(h_bad, c)); }, "Expected h0 size (2, 2, 4)"));
  EXPECT_TRUE(throws_with([&] { lstm.forward(x, std::make_tuple(c, h_bad)); }, "Expected c0 size (2, 2, 4)"));
  EXPECT_TRUE(throws_with([&] { lstm.forward(raw::zeros({5, 3}, TensorOptions(kFloat32)), std::make_tuple(c, c)); },
                          "For unbatched 2-D input, h0 should also be 2-D but got 3-D tensor"));
  GRU gru(3, 4);
  EXPECT_TRUE(throws_with([&] { gru.forward(x, raw::zeros({1, 3, 4}, TensorOptions(kFloat32))); },
                          "Expected hx size (1, 2, 4)"));
  EXPECT_TRUE(throws_with([&] { LSTM(LSTMOptions(3, 4).proj_size(4)); }, "proj_size has to be smaller than hidden_size"));
  EXPECT_TRUE(throws_with([&] { RNN(RNNOptions(3, 4).dropout(1.5)); }, "dropout should be a number in range [0, 1]"));
  EXPECT_TRUE(throws_with([&] { RNN(RNNOptions(3, 0)); }, "must be positive"));
  LSTMCell cell(3, 4);
  EXPECT_TRUE(throws_with([&] { cell.forward(raw::zeros({2, 5}, TensorOptions(kFloat32))); },
                          "input has inconsistent input_size: got 5 expected 3"));
  GRUCell gcell(3, 4);
  EXPECT_TRUE(throws_with([&] { gcell.forward(raw::zeros({2, 3}, TensorOptions(kFloat32)), raw::zeros({3, 4}, TensorOptions(kFloat32))); },
                          "hx must be [2, 4]"));
}

// ---- autocast ----

TEST(RnnAutocast, LayersAndCellsRunInTheLowerPrecisionWithFloat32Gradients) {
  manual_seed(5);
  LSTM lstm(LSTMOptions(3, 4).num_layers(2).bidirectional(true));
  Tensor x = raw::randn({5, 2, 3}, TensorOptions(kFloat32));
  auto [ref, ref_hc] = lstm.forward(x);
  Tensor out, hn, cn;
  {
    AutocastGuard amp(DeviceType::CPU, kBFloat16);
    auto [o, hc] = lstm.forward(x);
    out = o;
    std::tie(hn, cn) = hc;
  }
  EXPECT_EQ(out.dtype(), kBFloat16);
  EXPECT_EQ(hn.dtype(), kBFloat16);
  EXPECT_EQ(cn.dtype(), kBFloat16);
  // bfloat16 products through two layers: a few bfloat16 ulps of the float32 run.
  EXPECT_TRUE(all_close(raw::to(out, kCPU, kFloat32), ref, 0.03, 0.01));
  sum(to(out, kCPU, kFloat32)).backward();
  for (const auto& [name, p] : lstm.named_parameters()) {
    ASSERT_TRUE(p.grad().defined()) << name;
    EXPECT_EQ(p.grad().dtype(), kFloat32) << name;
  }
  GRUCell cell(3, 4);
  AutocastGuard amp(DeviceType::CPU, kFloat16);
  EXPECT_EQ(cell.forward(raw::randn({2, 3}, TensorOptions(kFloat32))).dtype(), kFloat16);
}

// ---- CUDA against the CPU ----

// The output and the final state as one tensor, so cuda_module_check's one-tensor forward sees both.
template <typename M>
struct Flat : Module {
  explicit Flat(std::shared_ptr<M> m) : inner(register_module("inner", m)) {}
  Tensor forward(const Tensor& x) override {
    auto result = inner->forward(x);
    std::vector<Tensor> parts = {std::get<0>(result).reshape({-1})};
    append_flat_state(parts, std::get<1>(result));
    return cat(parts, 0);
  }
  std::shared_ptr<M> inner;
};

TEST(RnnModules, ForwardAndBackwardOnCudaMatchTheCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  Generator gen(9);
  Tensor x = raw::randn({6, 3, 5}, TensorOptions(kFloat32), &gen);
  testing::expect_cuda_module_matches_cpu(
      [] { return std::make_shared<Flat<LSTM>>(std::make_shared<LSTM>(LSTMOptions(5, 8).num_layers(2).bidirectional(true).proj_size(4))); }, x);
  testing::expect_cuda_module_matches_cpu(
      [] { return std::make_shared<Flat<GRU>>(std::make_shared<GRU>(GRUOptions(5, 8).num_layers(2).batch_first(true))); }, x);
  testing::expect_cuda_module_matches_cpu(
      [] { return std::make_shared<Flat<RNN>>(std::make_shared<RNN>(RNNOptions(5, 8).bidirectional(true))); }, x);
}

}  // namespace
}  // namespace colony
