// nn::TransformerEncoderLayer against golden values from torch.nn.TransformerEncoderLayer with
// the same parameters (tests/nn/transformer_golden.py, beside this file): post-norm with ReLU and a
// key padding mask, pre-norm with GELU and the causal mask; its state dict keys, dropout in
// training, AnyModule, and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "autograd/autograd.h"
#include "nn/nn.h"
#include "tests/test_util.h"

namespace colony::nn {
namespace {

using colony::testing::all_close;
using colony::testing::matches_values;
using colony::testing::throws_with;
using colony::testing::values;

constexpr int64_t D = 8, H = 2, FF = 16, S = 5, N = 2;

// tests/nn/transformer_golden.py's output.
// self_attn.in_proj_weight, self_attn.in_proj_bias, self_attn.out_proj.weight, self_attn.out_proj.bias, linear1.weight, linear1.bias, linear2.weight, linear2.bias, norm1.weight, norm1.bias, norm2.weight, norm2.bias
const std::vector<double> kPostReluOut = {-0.123330386657, -0.101308255663, 0.162050077527, 0.310549038112, 0.166569810318, 0.277870138472, -0.269734629667, -0.0396188423146, -0.110689627569, -0.100755632795, 0.167692399176, 0.312453198833, 0.156657549346, 0.288386375869, -0.266591480661, -0.0139759011072, 0.00949438291844, 0.00869995123667, 0.228518776525, 0.317412108842, 0.108346169638, 0.527436179532, -0.210197423824, 0.240112780619, 0.0970589701979, 0.11160622045, 0.24947047324, 0.314177516025, 0.137060337936, 0.639797460175, -0.126007425429, 0.331247678, 0.0461936462605, 0.0573183816801, 0.241520442426, 0.316265130863, 0.123627030095, 0.597997440032, -0.176383170792, 0.266027724034, -0.0226722168631, -0.00243889124025, 0.215006985794, 0.316938314828, 0.121884699533, 0.511004410614, -0.254160129154, 0.172928814995, -0.0715337463026, -0.0602505535657, 0.188704391697, 0.316432237117, 0.140065529392, 0.399833353499, -0.281872495584, 0.0542146848129, -0.0984173094543, -0.092496795076, 0.176696510539, 0.314418431329, 0.153475957968, 0.328419618389, -0.269500902, -0.00999761904901, -0.124575773527, -0.101287199453, 0.161268253285, 0.310288133174, 0.166509153293, 0.275669045137, -0.270223311226, -0.0383067746274, -0.0999218925674, -0.0954119997968, 0.173315212385, 0.313869799367, 0.148899843862, 0.309364960628, -0.268181713319, 0.00834420471413};
const std::vector<double> kPreGeluCausalOut = {0.529878455065, 0.345801148751, 0.73952105844, 0.280270089055, 0.8822002198, 0.239914585482, 1.00138820793, 0.284332491052, 1.11725517857, 0.891545054287, 1.2458484903, 0.71050335287, 1.27979742569, 0.528331850308, 1.26035769316, 0.408418970412, 1.16995236891, 0.890460913343, 1.1755456131, 0.579042164871, 1.0742561358, 0.251437088828, 0.905659581108, -0.0244792373855, 0.652509353632, 0.328250347944, 0.572392360879, -0.0709092467723, 0.400679078968, -0.470277680751, 0.176998321503, -0.798279391397, -0.120705140971, -0.447797151711, -0.204944905267, -0.83214325791, -0.346796542194, -1.18144349705, -0.503645720953, -1.42369491752, -0.681513039149, -0.969130728853, -0.682707130788, -1.2521774199, -0.709047992433, -1.46481788117, -0.713769289674, -1.53730602077, -0.690102972156, -0.916764774112, -0.558764819829, -1.06000606946, -0.447145256267, -1.1271285228, -0.309709964254, -1.05400109294, -0.14326430066, -0.318960073013, 0.0817892233047, -0.376994481628, 0.265544254119, -0.38238194503, 0.450382611266, -0.274842578884, 0.632697324463, 0.450776425365, 0.844034404996, 0.366639297413, 0.983243392402, 0.303796329714, 1.09212580145, 0.322796758574, 1.16047074338, 0.931361151431, 1.27365097903, 0.728918384824, 1.28927322696, 0.522013216067, 1.24796099012, 0.374819063561};

// Every parameter p (state dict order), element i: 0.3 * cos(0.37 * i + p), as the script fills them.
std::shared_ptr<TransformerEncoderLayer> golden_layer(TransformerEncoderLayerOptions o) {
  auto layer = std::make_shared<TransformerEncoderLayer>(o.dim_feedforward(FF).dropout(0.1));
  layer->to(kFloat64);
  NoGradGuard no_grad;
  int p = 0;
  for (auto& [name, t] : layer->state_dict()) {
    std::vector<double> v(t.numel());
    for (size_t i = 0; i < v.size(); ++i) v[i] = 0.3 * std::cos(0.37 * static_cast<double>(i) + p);
    t.copy_(raw::from_vector(v, t.sizes()));
    ++p;
  }
  layer->eval();
  return layer;
}

Tensor src() {
  std::vector<double> v(S * N * D);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.1 * static_cast<double>(i) + 0.3);
  return raw::from_vector(v, {S, N, D});
}

TEST(TransformerEncoderLayer, StateDictKeysAsPyTorch) {
  TransformerEncoderLayer layer(TransformerEncoderLayerOptions(16, 4));
  std::vector<std::string> keys;
  for (const auto& [name, t] : layer.state_dict()) keys.push_back(name);
  EXPECT_EQ(keys, (std::vector<std::string>{"self_attn.in_proj_weight", "self_attn.in_proj_bias",
                                            "self_attn.out_proj.weight", "self_attn.out_proj.bias", "linear1.weight",
                                            "linear1.bias", "linear2.weight", "linear2.bias", "norm1.weight",
                                            "norm1.bias", "norm2.weight", "norm2.bias"}));
  EXPECT_EQ(layer.linear1->weight.sizes(), (Shape{2048, 16}));
}

TEST(TransformerEncoderLayer, PostNormReluWithPaddingMatchesPyTorch) {
  auto layer = golden_layer(TransformerEncoderLayerOptions(D, H));
  std::vector<double> pad = {0, 0, 0, 0, 1, 0, 1, 0, 0, 0};
  Tensor kpm = raw::to(raw::from_vector(pad, {N, S}), kCPU, kBool);
  EXPECT_TRUE(matches_values(layer->forward(src(), std::nullopt, kpm), kPostReluOut));
}

TEST(TransformerEncoderLayer, PreNormGeluCausalMatchesPyTorch) {
  auto layer = golden_layer(TransformerEncoderLayerOptions(D, H).activation("gelu").norm_first(true));
  std::vector<double> m(S * S);
  for (int64_t i = 0; i < S; ++i) {
    for (int64_t j = 0; j < S; ++j) m[i * S + j] = j > i ? -std::numeric_limits<double>::infinity() : 0.0;
  }
  Tensor causal = raw::from_vector(m, {S, S});
  EXPECT_TRUE(matches_values(layer->forward(src(), causal, std::nullopt, true), kPreGeluCausalOut));
  // Without the hint the mask itself is applied: the same values.
  EXPECT_TRUE(matches_values(layer->forward(src(), causal), kPreGeluCausalOut));
}

TEST(TransformerEncoderLayer, BatchFirstAnyModuleAndTraining) {
  auto layer = golden_layer(TransformerEncoderLayerOptions(D, H));
  auto bf = golden_layer(TransformerEncoderLayerOptions(D, H).batch_first(true));
  Tensor ref = layer->forward(src());
  EXPECT_TRUE(all_close(bf->forward(src().transpose(0, 1)).transpose(0, 1), ref, 1e-12, 1e-12));
  AnyModule any(layer);
  EXPECT_TRUE(all_close(any.forward(src()), ref, 1e-12, 1e-12));
  // Training: dropout changes the output and gradients reach every parameter.
  layer->train();
  Tensor out = layer->forward(src());
  EXPECT_FALSE(all_close(out, ref, 1e-6, 1e-6));
  sum(mul(out, out)).backward();
  for (const auto& [name, p] : layer->named_parameters()) EXPECT_TRUE(p.grad().defined()) << name;
}

TEST(TransformerEncoderLayer, BadOptionsSayWhatWasExpected) {
  EXPECT_TRUE(throws_with([] { TransformerEncoderLayer(TransformerEncoderLayerOptions(8, 2).activation("tanh")); },
                          "\"relu\" or \"gelu\""));
  EXPECT_TRUE(throws_with([] { TransformerEncoderLayer(8, 3); }, "divisible by num_heads"));
}

}  // namespace
}  // namespace colony::nn
