// Packed sequences (nn/packed_sequence.h) and RNN, LSTM, GRU on them (forward_with_packed_input)
// against torch (tests/nn/rnn_packed_golden.py, float64): the packing and unpacking with their
// gradient; each layer's packed output, its padded output, h_n, c_n and the gradients of the padded
// input, the initial states and every parameter, for 1-2 layers, one or two directions,
// batch_first, unsorted lengths (enforce_sorted=false) and proj_size; float64 gradchecks; the
// dense path as the packed one with equal lengths; the errors; CUDA against the CPU (_CUDA).
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "autograd/autocast.h"
#include "autograd/autograd.h"
#include "nn/nn.h"
#include "tests/autograd/gradcheck.h"
#include "tests/nn/cuda_module_check.h"
#include "tests/nn/rnn_golden_check.h"
#include "tests/nn/rnn_packed_golden.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using namespace nn;
using namespace nn::utils::rnn;
namespace g = nn::rnn_packed_golden;
using testing::all_close;
using testing::throws_with;
using testing::values;
using testing::rnn_golden::append_flat_state;
using testing::rnn_golden::expect_golden;
using testing::rnn_golden::fill;
using testing::rnn_golden::seq;
using testing::rnn_golden::state;
using testing::rnn_golden::vec;

std::vector<double> ints(const std::vector<int64_t>& v) { return std::vector<double>(v.begin(), v.end()); }

Tensor lengths_tensor(const std::vector<int64_t>& v) {
  return raw::from_vector<int64_t>(v, {static_cast<int64_t>(v.size())});
}

// ---- packing and unpacking ----

TEST(PackedSequence, PackAndPadMatchTorch) {
  Tensor x = seq({g::N, g::T - 1, 2});
  PackedSequence p = pack_padded_sequence(x, lengths_tensor({2, 4, 1}), /*batch_first=*/true, /*enforce_sorted=*/false);
  EXPECT_TRUE(all_close(p.data().reshape({-1}), vec(g::utils_data), 1e-14, 0));  // 15 digits
  EXPECT_EQ(p.batch_sizes().dtype(), kInt64);
  EXPECT_TRUE(p.batch_sizes().is_cpu());
  EXPECT_EQ(values(p.batch_sizes()), ints(g::utils_batch_sizes));
  EXPECT_EQ(values(p.sorted_indices()), ints(g::utils_sorted_indices));
  EXPECT_EQ(values(p.unsorted_indices()), ints(g::utils_unsorted_indices));
  auto [padded, lengths] = pad_packed_sequence(p, /*batch_first=*/false, -1.5, g::T + 1);
  EXPECT_EQ(padded.sizes(), (Shape{g::T + 1, g::N, 2}));
  EXPECT_TRUE(all_close(padded.reshape({-1}), vec(g::utils_padded), 1e-14, 0));
  EXPECT_EQ(lengths.dtype(), kInt64);
  EXPECT_EQ(values(lengths), ints(g::utils_lengths));
  // The gradient flows through both: back to the valid elements, zero at the padding.
  sum(mul(padded, testing::rnn_golden::closed(padded.sizes(), 0.23, 0))).backward();
  EXPECT_TRUE(all_close(x.grad().reshape({-1}), vec(g::utils_grad_input), 1e-12, 1e-14));
}

TEST(PackedSequence, SortedInputKeepsNoIndices) {
  Tensor x = raw::arange(0, 6, 1, TensorOptions(kFloat64)).reshape({3, 2});  // [T, B]: no feature dims
  PackedSequence p = pack_padded_sequence(x, std::vector<int64_t>{3, 1});
  EXPECT_FALSE(p.sorted_indices().defined());
  EXPECT_FALSE(p.unsorted_indices().defined());
  EXPECT_EQ(values(p.data()), (std::vector<double>{0, 1, 2, 4}));
  EXPECT_EQ(values(p.batch_sizes()), (std::vector<double>{2, 1, 1}));
  auto [padded, lengths] = pad_packed_sequence(p, /*batch_first=*/true);
  EXPECT_EQ(values(padded), (std::vector<double>{0, 2, 4, 1, 0, 0}));
  EXPECT_EQ(values(lengths), (std::vector<double>{3, 1}));
}

TEST(PackedSequence, PackSequenceAndUnpackRoundTrip) {
  Tensor a = seq({2, 3}), b = seq({4, 3}), c = seq({1, 3});
  PackedSequence p = pack_sequence({a, b, c}, /*enforce_sorted=*/false);
  EXPECT_EQ(values(p.batch_sizes()), (std::vector<double>{3, 2, 1, 1}));
  EXPECT_EQ(values(p.sorted_indices()), (std::vector<double>{1, 0, 2}));
  EXPECT_EQ(values(invert_permutation(p.sorted_indices())), (std::vector<double>{1, 0, 2}));
  const std::vector<Tensor> back = unpack_sequence(p);
  ASSERT_EQ(back.size(), 3u);
  const std::vector<Tensor> originals = {a, b, c};
  for (size_t i = 0; i < back.size(); ++i) EXPECT_TRUE(all_close(back[i], originals[i], 0, 0)) << i;
  sum(mul(back[1], back[1])).backward();  // d/db of |b|^2 = 2b; a and c untouched
  EXPECT_TRUE(all_close(b.grad(), raw::mul(b, 2.0), 0, 0));
  EXPECT_EQ(values(a.grad()), std::vector<double>(6, 0.0));

  Tensor padded = pad_sequence({a, b, c}, /*batch_first=*/true);
  const std::vector<Tensor> cut = unpad_sequence(padded, lengths_tensor({2, 4, 1}), /*batch_first=*/true);
  for (size_t i = 0; i < cut.size(); ++i) EXPECT_TRUE(all_close(cut[i], originals[i], 0, 0)) << i;
  const std::vector<Tensor> cut_t = unpad_sequence(padded.transpose(0, 1), std::vector<int64_t>{2, 4, 1});
  for (size_t i = 0; i < cut_t.size(); ++i) EXPECT_TRUE(all_close(cut_t[i], originals[i], 0, 0)) << i;
}

TEST(PackedSequence, RefusalsAsTorch) {
  Tensor x = raw::zeros({4, 3, 2}, TensorOptions(kFloat32));
  EXPECT_TRUE(throws_with(
      [&] {
        pack_padded_sequence(x, std::vector<int64_t>{2, 3, 1});
      },
      "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True"));
  EXPECT_TRUE(throws_with(
      [&] {
        pack_padded_sequence(x, std::vector<int64_t>{3, 2, 0});
      },
      "Length of all samples has to be greater than 0, but found an element in 'lengths' that is <= 0"));
  EXPECT_TRUE(throws_with(
      [&] {
        pack_padded_sequence(x, std::vector<int64_t>{3, 0, 2}, false, false);
      },
      "Length of all samples has to be greater than 0"));
  EXPECT_TRUE(throws_with(
      [&] {
        pack_padded_sequence(x, std::vector<int64_t>{3, 2});
      },
      "Expected `len(lengths)` to be equal to batch_size, but got 2 (batch_size=3)"));
  EXPECT_TRUE(throws_with(
      [&] {
        pack_padded_sequence(x, lengths_tensor({3, 2, 1}).reshape({1, 3}));
      },
      "'lengths' argument should be a 1D CPU int64 tensor, but got 2D cpu int64 tensor"));
  EXPECT_TRUE(throws_with(
      [&] {
        pack_padded_sequence(raw::zeros({0, 3, 2}, TensorOptions(kFloat32)), std::vector<int64_t>{1, 1, 1});
      },
      "Cannot pack empty tensors."));
  EXPECT_TRUE(throws_with(
      [&] {
        pack_padded_sequence(x, std::vector<int64_t>{5, 2, 1});
      },
      "a length of 5 is more than the input's 4 time steps"));
  PackedSequence p = pack_padded_sequence(x, std::vector<int64_t>{3, 2, 1});
  EXPECT_TRUE(throws_with([&] { pad_packed_sequence(p, false, 0.0, 2); },
                          "Expected total_length to be at least the length of the longest sequence in input, but got "
                          "total_length=2 and max sequence length being 3"));
  EXPECT_TRUE(throws_with([] { pack_sequence({}); }, "received an empty list of sequences"));
  EXPECT_TRUE(throws_with(
      [] {
        unpad_sequence(raw::zeros({4, 2}, TensorOptions(kFloat32)), std::vector<int64_t>{5, 1});
      },
      "length 5 of sequence 0 is outside [0, 4]"));
  LSTM lstm(2, 3);
  EXPECT_TRUE(throws_with(
      [&] {
        lstm.forward_with_packed_input(p, std::make_tuple(raw::zeros({1, 2, 3}, TensorOptions(kFloat32)),
                                                          raw::zeros({1, 2, 3}, TensorOptions(kFloat32))));
      },
      "Expected h0 size (1, 3, 3) (num_layers * num_directions, batch, 3), got [1, 2, 3]"));
  GRU gru(5, 3);
  EXPECT_TRUE(throws_with([&] { gru.forward_with_packed_input(p); },
                          "input.size(-1) must be equal to input_size. Expected 5, got 2"));
  EXPECT_TRUE(throws_with(
      [&] {
        gru.forward_with_packed_input(
            PackedSequence(raw::zeros({6, 1, 5}, TensorOptions(kFloat32)), lengths_tensor({3, 2, 1})));
      },
      "input must have 2 dimensions, got 3"));
  EXPECT_TRUE(throws_with(
      [&] {
        gru.forward_with_packed_input(
            PackedSequence(raw::zeros({5, 5}, TensorOptions(kFloat32)), lengths_tensor({3, 2, 1})));
      },
      "batch_sizes add up to 6 rows but its data has 5"));
}

TEST(PackedSequence, LengthsOnCudaAreRefused_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  Tensor x = raw::zeros({4, 3, 2}, TensorOptions(kFloat32).device(Device::cuda(0)));
  EXPECT_TRUE(throws_with(
      [&] {
        pack_padded_sequence(x, raw::to(lengths_tensor({3, 2, 1}), Device::cuda(0), kInt64));
      },
      "'lengths' argument should be a 1D CPU int64 tensor, but got 1D cuda:0 int64 tensor"));
}

// ---- the layers on packed input, against torch ----

// The outputs of rnn_packed_golden.py: the packed output's data, the padded output, h_n (, c_n).
template <typename M, typename Options>
void check_packed(const Options& options, const std::vector<int64_t>& lengths, bool batch_first, bool with_state,
                  int64_t h_size, const std::vector<std::vector<double>>& outs_g,
                  const std::vector<std::vector<double>>& grads_g, const std::vector<double>& params_g,
                  const std::vector<std::string>& keys) {
  auto m = std::make_shared<M>(options);
  fill(*m);
  const int64_t layers = options.num_layers() * (options.bidirectional() ? 2 : 1);
  Tensor x = seq(batch_first ? Shape{g::N, g::T, g::I} : Shape{g::T, g::N, g::I});
  bool sorted = true;
  for (size_t i = 1; i < lengths.size(); ++i) sorted = sorted && lengths[i] <= lengths[i - 1];
  PackedSequence packed = pack_padded_sequence(x, lengths_tensor(lengths), batch_first, /*enforce_sorted=*/sorted);
  Tensor h0 = state({layers, g::N, h_size}, 0), c0 = state({layers, g::N, g::H}, 1);
  std::vector<Tensor> inputs = {x}, outs;
  PackedSequence out;
  if constexpr (std::is_same_v<M, LSTM>) {
    auto [o, hc] = with_state ? m->forward_with_packed_input(packed, std::make_tuple(h0, c0))
                              : m->forward_with_packed_input(packed);
    out = o;
    outs = {std::get<0>(hc), std::get<1>(hc)};
    if (with_state) inputs.insert(inputs.end(), {h0, c0});
  } else {
    auto [o, h] = with_state ? m->forward_with_packed_input(packed, h0) : m->forward_with_packed_input(packed);
    out = o;
    outs = {h};
    if (with_state) inputs.push_back(h0);
  }
  EXPECT_EQ(values(out.batch_sizes()), values(packed.batch_sizes()));
  Tensor padded = std::get<0>(pad_packed_sequence(out, batch_first));
  outs.insert(outs.begin(), {out.data(), padded});
  expect_golden(*m, outs, outs_g, inputs, grads_g, params_g, keys);
}

#define PACKED_LSTM_GOLDEN(prefix)                                          \
  {g::prefix##_out0, g::prefix##_out1, g::prefix##_out2, g::prefix##_out3}, \
      {g::prefix##_grad_input, g::prefix##_grad_h0, g::prefix##_grad_c0}, g::prefix##_grad_params, g::prefix##_keys
#define PACKED_GOLDEN(prefix)                                                                            \
  {g::prefix##_out0, g::prefix##_out1, g::prefix##_out2}, {g::prefix##_grad_input, g::prefix##_grad_h0}, \
      g::prefix##_grad_params, g::prefix##_keys
#define PACKED_NO_STATE_GOLDEN(prefix, outs) outs, {g::prefix##_grad_input}, g::prefix##_grad_params, g::prefix##_keys

TEST(RnnPackedGolden, LstmTwoLayersBidirectionalUnsortedMatchesTorch) {
  check_packed<LSTM>(LSTMOptions(g::I, g::H).num_layers(g::L).bidirectional(true), g::unsorted_lengths, false, true,
                     g::H, PACKED_LSTM_GOLDEN(lstm));
}
TEST(RnnPackedGolden, LstmProjectionBatchFirstMatchesTorch) {
  check_packed<LSTM>(LSTMOptions(g::I, g::H).num_layers(g::L).bidirectional(true).batch_first(true).proj_size(g::P),
                     g::unsorted_lengths, true, true, g::P, PACKED_LSTM_GOLDEN(lstm_proj_bf));
}
TEST(RnnPackedGolden, LstmOneLayerSortedZeroStateMatchesTorch) {
  check_packed<LSTM>(LSTMOptions(g::I, g::H), g::sorted_lengths, false, false, g::H,
                     PACKED_NO_STATE_GOLDEN(
                         lstm_sorted, (std::vector<std::vector<double>>{g::lstm_sorted_out0, g::lstm_sorted_out1,
                                                                        g::lstm_sorted_out2, g::lstm_sorted_out3})));
}
TEST(RnnPackedGolden, GruTwoLayersBidirectionalBatchFirstMatchesTorch) {
  check_packed<GRU>(GRUOptions(g::I, g::H).num_layers(g::L).bidirectional(true).batch_first(true), g::unsorted_lengths,
                    true, true, g::H, PACKED_GOLDEN(gru_bf));
}
TEST(RnnPackedGolden, GruOneLayerSortedZeroStateMatchesTorch) {
  check_packed<GRU>(
      GRUOptions(g::I, g::H), g::sorted_lengths, false, false, g::H,
      PACKED_NO_STATE_GOLDEN(
          gru_sorted, (std::vector<std::vector<double>>{g::gru_sorted_out0, g::gru_sorted_out1, g::gru_sorted_out2})));
}
TEST(RnnPackedGolden, RnnReluTwoLayersBidirectionalUnsortedMatchesTorch) {
  check_packed<RNN>(RNNOptions(g::I, g::H).num_layers(g::L).bidirectional(true).nonlinearity(RNNNonlinearity::ReLU),
                    g::unsorted_lengths, false, true, g::H, PACKED_GOLDEN(rnn_relu));
}
TEST(RnnPackedGolden, RnnTanhSortedMatchesTorch) {
  check_packed<RNN>(RNNOptions(g::I, g::H).num_layers(g::L).bidirectional(true), g::sorted_lengths, false, true, g::H,
                    PACKED_GOLDEN(rnn_tanh_sorted));
}

// ---- gradchecks, equal lengths, dropout ----

TEST(RnnPacked, GradcheckThroughPackingAndBothDirections) {
  // float64, unsorted lengths: the padded input and the initial states, through pack, two
  // bidirectional layers and pad.
  const std::vector<int64_t> lengths = {2, 3, 1};
  auto lstm = std::make_shared<LSTM>(LSTMOptions(2, 2).num_layers(2).bidirectional(true).proj_size(1));
  auto gru = std::make_shared<GRU>(GRUOptions(2, 2).bidirectional(true).batch_first(true));
  lstm->to(kFloat64);
  gru->to(kFloat64);
  Tensor x = testing::input({3, 3, 2}, -1, 1, 1), h0 = testing::input({4, 3, 1}, -1, 1, 2);
  Tensor c0 = testing::input({4, 3, 2}, -1, 1, 3), g0 = testing::input({2, 3, 2}, -1, 1, 4);
  EXPECT_TRUE(testing::gradcheck_multi(
      [&](const std::vector<Tensor>& v) {
        auto [out, hc] = lstm->forward_with_packed_input(pack_padded_sequence(v[0], lengths, false, false),
                                                         std::make_tuple(v[1], v[2]));
        return std::vector<Tensor>{std::get<0>(pad_packed_sequence(out)), std::get<0>(hc), std::get<1>(hc)};
      },
      {x, h0, c0}));
  EXPECT_TRUE(testing::gradcheck_multi(
      [&](const std::vector<Tensor>& v) {
        auto [out, h] = gru->forward_with_packed_input(pack_padded_sequence(v[0], lengths, true, false), v[1]);
        return std::vector<Tensor>{std::get<0>(pad_packed_sequence(out, true)), h};
      },
      {x, g0}));
}

TEST(RnnPacked, EqualLengthsGiveTheDenseResult) {
  manual_seed(4);
  LSTM lstm(LSTMOptions(3, 4).num_layers(2).bidirectional(true));
  Tensor x = raw::randn({5, 2, 3}, TensorOptions(kFloat32));
  auto [dense, dense_hc] = lstm.forward(x);
  auto [packed, packed_hc] = lstm.forward_with_packed_input(pack_padded_sequence(x, std::vector<int64_t>{5, 5}));
  EXPECT_TRUE(all_close(std::get<0>(pad_packed_sequence(packed)), dense, 1e-6, 1e-7));
  EXPECT_TRUE(all_close(std::get<0>(packed_hc), std::get<0>(dense_hc), 1e-6, 1e-7));
  EXPECT_TRUE(all_close(std::get<1>(packed_hc), std::get<1>(dense_hc), 1e-6, 1e-7));
}

TEST(RnnPacked, EachSequenceRunsAsIfAlone) {
  // Sequence b of a packed batch gives what the dense layer gives for it alone, cut to its length.
  manual_seed(6);
  GRU gru(GRUOptions(3, 4).num_layers(2).bidirectional(true));
  const std::vector<int64_t> lengths = {2, 5, 3};
  Tensor x = raw::randn({5, 3, 3}, TensorOptions(kFloat32));
  auto [out, h_n] = gru.forward_with_packed_input(pack_padded_sequence(x, lengths, false, false));
  Tensor padded = std::get<0>(pad_packed_sequence(out));
  for (int64_t b = 0; b < 3; ++b) {
    SCOPED_TRACE(b);
    Tensor alone = raw::narrow(raw::select(x, 1, b), 0, 0, lengths[b]);  // [L_b, 3], unbatched
    auto [ref, ref_h] = gru.forward(alone);
    EXPECT_TRUE(all_close(raw::narrow(raw::select(padded, 1, b), 0, 0, lengths[b]), ref, 1e-6, 1e-7));
    EXPECT_TRUE(all_close(raw::select(h_n, 1, b), ref_h, 1e-6, 1e-7));
    EXPECT_EQ(values(raw::narrow(raw::select(padded, 1, b), 0, lengths[b], 5 - lengths[b])),
              std::vector<double>((5 - lengths[b]) * 8, 0.0));
  }
}

TEST(RnnPacked, DropoutActsBetweenLayersOnThePackedRows) {
  manual_seed(8);
  auto with = std::make_shared<LSTM>(LSTMOptions(3, 5).num_layers(2).dropout(1.0));
  Tensor x = raw::randn({4, 2, 3}, TensorOptions(kFloat32));
  PackedSequence p = pack_padded_sequence(x, std::vector<int64_t>{4, 2});
  // p = 1 while training: the second layer sees zeros, as a one-layer LSTM of its weights does.
  auto [out, hc] = with->forward_with_packed_input(p);
  auto second = std::make_shared<LSTM>(LSTMOptions(5, 5));
  NamedTensors sd;
  for (const auto& [name, t] : with->state_dict()) {
    if (name.size() > 3 && name.substr(name.size() - 3) == "_l1")
      sd.emplace_back(name.substr(0, name.size() - 1) + "0", t);
  }
  second->load_state_dict(sd);
  PackedSequence zeros_in(raw::zeros({6, 5}, TensorOptions(kFloat32)), p.batch_sizes());
  EXPECT_TRUE(all_close(out.data(), std::get<0>(second->forward_with_packed_input(zeros_in)).data(), 1e-6, 1e-7));
  with->eval();
  auto [eval_out, eval_hc] = with->forward_with_packed_input(p);
  EXPECT_FALSE(all_close(eval_out.data(), out.data(), 1e-6, 1e-7));
}

TEST(RnnPacked, AutocastRunsTheLowerPrecisionWithFloat32Gradients) {
  // bfloat16 under autocast, both directions, unsorted lengths and given states (the reverse
  // direction joins rows of c0 to its running float32 c).
  manual_seed(5);
  LSTM lstm(LSTMOptions(3, 4).num_layers(2).bidirectional(true));
  Tensor x = raw::randn({5, 3, 3}, TensorOptions(kFloat32));
  Tensor h0 = raw::randn({4, 3, 4}, TensorOptions(kFloat32)), c0 = raw::randn({4, 3, 4}, TensorOptions(kFloat32));
  const std::vector<int64_t> lengths = {2, 5, 3};
  auto [ref, ref_hc] =
      lstm.forward_with_packed_input(pack_padded_sequence(x, lengths, false, false), std::make_tuple(h0, c0));
  PackedSequence out;
  Tensor hn, cn;
  {
    AutocastGuard amp(DeviceType::CPU, kBFloat16);
    auto [o, hc] =
        lstm.forward_with_packed_input(pack_padded_sequence(x, lengths, false, false), std::make_tuple(h0, c0));
    out = o;
    std::tie(hn, cn) = hc;
  }
  EXPECT_EQ(out.data().dtype(), kBFloat16);
  EXPECT_EQ(hn.dtype(), kBFloat16);
  EXPECT_EQ(cn.dtype(), kBFloat16);
  EXPECT_TRUE(all_close(raw::to(out.data(), kCPU, kFloat32), ref.data(), 0.03, 0.02));
  EXPECT_TRUE(all_close(raw::to(cn, kCPU, kFloat32), std::get<1>(ref_hc), 0.03, 0.02));
  sum(to(out.data(), kCPU, kFloat32)).backward();
  for (const auto& [name, p] : lstm.named_parameters()) {
    ASSERT_TRUE(p.grad().defined()) << name;
    EXPECT_EQ(p.grad().dtype(), kFloat32) << name;
  }
}

// ---- CUDA against the CPU ----

// Packs the input ([T, N, *], fixed unsorted lengths), runs the layer, and returns the padded
// output and the final states as one tensor for cuda_module_check.
template <typename M>
struct PackedFlat : Module {
  explicit PackedFlat(std::shared_ptr<M> m) : inner(register_module("inner", m)) {}
  Tensor forward(const Tensor& x) override {
    auto result =
        inner->forward_with_packed_input(pack_padded_sequence(x, std::vector<int64_t>{3, 6, 4}, false, false));
    std::vector<Tensor> parts = {std::get<0>(pad_packed_sequence(std::get<0>(result))).reshape({-1})};
    append_flat_state(parts, std::get<1>(result));
    return cat(parts, 0);
  }
  std::shared_ptr<M> inner;
};

TEST(RnnPacked, ForwardAndBackwardOnCudaMatchTheCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  Generator gen(9);
  Tensor x = raw::randn({6, 3, 5}, TensorOptions(kFloat32), &gen);
  testing::expect_cuda_module_matches_cpu(
      [] {
        return std::make_shared<PackedFlat<LSTM>>(
            std::make_shared<LSTM>(LSTMOptions(5, 8).num_layers(2).bidirectional(true).proj_size(4)));
      },
      x);
  testing::expect_cuda_module_matches_cpu(
      [] {
        return std::make_shared<PackedFlat<GRU>>(
            std::make_shared<GRU>(GRUOptions(5, 8).num_layers(2).bidirectional(true)));
      },
      x);
  testing::expect_cuda_module_matches_cpu(
      [] { return std::make_shared<PackedFlat<RNN>>(std::make_shared<RNN>(RNNOptions(5, 8).bidirectional(true))); }, x);
  // The packing itself on the device: indices follow the data, batch_sizes stay on the CPU.
  PackedSequence p =
      pack_padded_sequence(raw::to(x, Device::cuda(0), kFloat32), std::vector<int64_t>{3, 6, 4}, false, false);
  EXPECT_TRUE(p.is_cuda());
  EXPECT_TRUE(p.sorted_indices().is_cuda());
  EXPECT_TRUE(p.batch_sizes().is_cpu());
  EXPECT_TRUE(
      all_close(p.to(kCPU).data(), pack_padded_sequence(x, std::vector<int64_t>{3, 6, 4}, false, false).data(), 0, 0));
}

}  // namespace
}  // namespace colony
