// nn::TransformerEncoderLayer against golden values from torch.nn.TransformerEncoderLayer with
// the same parameters (tests/nn/transformer_golden.py, beside this file): post-norm with ReLU and a
// key padding mask, pre-norm with GELU and the causal mask; its state dict keys, dropout in
// training, AnyModule, and errors. nn::TransformerEncoder likewise against
// torch.nn.TransformerEncoder: two copies of those layers, with a final norm and without.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "autograd/autograd.h"
#include "nn/nn.h"
#include "tests/nn/transformer_golden.h"
#include "tests/test_util.h"

namespace colony::nn {
namespace {

using colony::testing::all_close;
using colony::testing::matches_values;
using colony::testing::throws_with;
using colony::testing::values;

using golden::D;
using golden::H;
using golden::FF;
using golden::N;
using golden::S;
using golden::src;

// tests/nn/transformer_golden.py's output.
// self_attn.in_proj_weight, self_attn.in_proj_bias, self_attn.out_proj.weight, self_attn.out_proj.bias, linear1.weight, linear1.bias, linear2.weight, linear2.bias, norm1.weight, norm1.bias, norm2.weight, norm2.bias
const std::vector<double> kPostReluOut = {-0.123330386657, -0.101308255663, 0.162050077527, 0.310549038112, 0.166569810318, 0.277870138472, -0.269734629667, -0.0396188423146, -0.110689627569, -0.100755632795, 0.167692399176, 0.312453198833, 0.156657549346, 0.288386375869, -0.266591480661, -0.0139759011072, 0.00949438291844, 0.00869995123667, 0.228518776525, 0.317412108842, 0.108346169638, 0.527436179532, -0.210197423824, 0.240112780619, 0.0970589701979, 0.11160622045, 0.24947047324, 0.314177516025, 0.137060337936, 0.639797460175, -0.126007425429, 0.331247678, 0.0461936462605, 0.0573183816801, 0.241520442426, 0.316265130863, 0.123627030095, 0.597997440032, -0.176383170792, 0.266027724034, -0.0226722168631, -0.00243889124025, 0.215006985794, 0.316938314828, 0.121884699533, 0.511004410614, -0.254160129154, 0.172928814995, -0.0715337463026, -0.0602505535657, 0.188704391697, 0.316432237117, 0.140065529392, 0.399833353499, -0.281872495584, 0.0542146848129, -0.0984173094543, -0.092496795076, 0.176696510539, 0.314418431329, 0.153475957968, 0.328419618389, -0.269500902, -0.00999761904901, -0.124575773527, -0.101287199453, 0.161268253285, 0.310288133174, 0.166509153293, 0.275669045137, -0.270223311226, -0.0383067746274, -0.0999218925674, -0.0954119997968, 0.173315212385, 0.313869799367, 0.148899843862, 0.309364960628, -0.268181713319, 0.00834420471413};
const std::vector<double> kPreGeluCausalOut = {0.529878455065, 0.345801148751, 0.73952105844, 0.280270089055, 0.8822002198, 0.239914585482, 1.00138820793, 0.284332491052, 1.11725517857, 0.891545054287, 1.2458484903, 0.71050335287, 1.27979742569, 0.528331850308, 1.26035769316, 0.408418970412, 1.16995236891, 0.890460913343, 1.1755456131, 0.579042164871, 1.0742561358, 0.251437088828, 0.905659581108, -0.0244792373855, 0.652509353632, 0.328250347944, 0.572392360879, -0.0709092467723, 0.400679078968, -0.470277680751, 0.176998321503, -0.798279391397, -0.120705140971, -0.447797151711, -0.204944905267, -0.83214325791, -0.346796542194, -1.18144349705, -0.503645720953, -1.42369491752, -0.681513039149, -0.969130728853, -0.682707130788, -1.2521774199, -0.709047992433, -1.46481788117, -0.713769289674, -1.53730602077, -0.690102972156, -0.916764774112, -0.558764819829, -1.06000606946, -0.447145256267, -1.1271285228, -0.309709964254, -1.05400109294, -0.14326430066, -0.318960073013, 0.0817892233047, -0.376994481628, 0.265544254119, -0.38238194503, 0.450382611266, -0.274842578884, 0.632697324463, 0.450776425365, 0.844034404996, 0.366639297413, 0.983243392402, 0.303796329714, 1.09212580145, 0.322796758574, 1.16047074338, 0.931361151431, 1.27365097903, 0.728918384824, 1.28927322696, 0.522013216067, 1.24796099012, 0.374819063561};
// layers.0.self_attn.in_proj_weight, layers.0.self_attn.in_proj_bias, layers.0.self_attn.out_proj.weight, layers.0.self_attn.out_proj.bias, layers.0.linear1.weight, layers.0.linear1.bias, layers.0.linear2.weight, layers.0.linear2.bias, layers.0.norm1.weight, layers.0.norm1.bias, layers.0.norm2.weight, layers.0.norm2.bias, layers.1.self_attn.in_proj_weight, layers.1.self_attn.in_proj_bias, layers.1.self_attn.out_proj.weight, layers.1.self_attn.out_proj.bias, layers.1.linear1.weight, layers.1.linear1.bias, layers.1.linear2.weight, layers.1.linear2.bias, layers.1.norm1.weight, layers.1.norm1.bias, layers.1.norm2.weight, layers.1.norm2.bias, norm.weight, norm.bias
const std::vector<double> kEncoderPostReluPaddingOut = {-1.18337179168, -1.70474785771, 0.66260958591, 0.841397225841, -0.627968338222, 0.781436404064, -0.0934500616974, 1.38760460233, -1.17564410055, -1.74129459384, 0.699977794236, 0.881956199026, -0.582454722446, 0.784543679005, -0.127690963411, 1.31756955897, -1.19547882235, -1.83319860637, 1.05150134012, 1.48239477436, 0.242616404912, -0.12280770895, -0.00212934722543, 0.43526739683, -1.14032019744, -1.5638204994, 1.02758177606, 1.66863844633, 0.538875149056, -0.356142650699, -0.222241925172, 0.114121838142, -1.18416730357, -1.70144445308, 1.03215397445, 1.55503596143, 0.379420000412, -0.369020700983, -0.0261726368933, 0.395113836642, -1.24834858543, -1.84499705577, 0.976171013427, 1.34872646894, -0.0211175205573, -0.141612434577, 0.201968870041, 0.81974378861, -1.23490400428, -1.85111871318, 0.827470938936, 1.0714458925, -0.398703491183, 0.276992160444, 0.160086581951, 1.23591442405, -1.18886989214, -1.77236394615, 0.728552472972, 0.918217939636, -0.541450115393, 0.606357670602, -0.0541715348558, 1.37833983398, -1.18422122637, -1.70352862661, 0.662181049335, 0.84139747164, -0.629946290113, 0.791550322381, -0.094369201587, 1.37909631951, -1.18460670825, -1.7840102866, 0.740519434725, 0.931601223046, -0.535223773022, 0.71286401524, -0.0968252339201, 1.27353216373};
const std::vector<double> kEncoderPreGeluCausalOut = {0.754188468345, 0.319755041686, 1.03523394434, 0.0306420851677, 1.18487799421, -0.206598825203, 1.28595686768, -0.268467481732, 1.333930277, 0.872189058994, 1.55772441787, 0.475504111458, 1.61514504151, 0.0949046781194, 1.58086593485, -0.143750841325, 1.38707211101, 0.878578000573, 1.5020634313, 0.365829043669, 1.43086737746, -0.15641825311, 1.24257684122, -0.559211778644, 0.868073255651, 0.321795644392, 0.9070866181, -0.278120549869, 0.771447668592, -0.875671797534, 0.528663722117, -1.33770524457, 0.0990228346526, -0.454187729389, 0.127186608282, -1.04150428272, 0.0157122179549, -1.58945210248, -0.16280939523, -1.96349451991, -0.459758901983, -0.979351673617, -0.36162695781, -1.47921583688, -0.365006503362, -1.89577143282, -0.388898594535, -2.09456087947, -0.465069748808, -0.935741350109, -0.254586483491, -1.30681974549, -0.131953471792, -1.5780372139, -0.0124589984472, -1.61944743563, 0.0792363998762, -0.344043085575, 0.377037337733, -0.634890111344, 0.569964378207, -0.843852873491, 0.740605193039, -0.845189337244, 0.852919107579, 0.425777562247, 1.14271625457, 0.116272394636, 1.29496004195, -0.146175562198, 1.38929866687, -0.23717807785, 1.37719871791, 0.913151097849, 1.58738249499, 0.498123710203, 1.6271588265, 0.0940649794581, 1.56992649875, -0.172753691297};

// The layer with tests/nn/transformer_golden.py's parameters (transformer_golden.h), dropout 0.1.
std::shared_ptr<TransformerEncoderLayer> golden_layer(TransformerEncoderLayerOptions o) {
  return golden::fill_closed_form(std::make_shared<TransformerEncoderLayer>(o.dim_feedforward(FF).dropout(0.1)));
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
  EXPECT_TRUE(matches_values(layer->forward(src(), std::nullopt, golden::src_padding()), kPostReluOut));
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

Tensor causal_mask() { return generate_square_subsequent_mask(S, kFloat64); }

TEST(TransformerEncoderLayer, SquareSubsequentMaskAndItsDetection) {
  // PyTorch: [[0, -inf, -inf], [0, 0, -inf], [0, 0, 0]].
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(matches_values(generate_square_subsequent_mask(3), {0, -inf, -inf, 0, 0, -inf, 0, 0, 0}));
  EXPECT_EQ(generate_square_subsequent_mask(3).dtype(), kFloat32);
  EXPECT_TRUE(is_causal_mask(causal_mask(), S));
  EXPECT_TRUE(is_causal_mask(raw::ones({S, S}, kBool).triu(1), S));
  EXPECT_FALSE(is_causal_mask(causal_mask(), S + 1));          // another length
  EXPECT_FALSE(is_causal_mask(raw::ones({S, S}, kBool).triu(2), S));  // one diagonal short
  EXPECT_FALSE(is_causal_mask(raw::ones({S, S}, kBool).triu(0), S));  // the diagonal masked too
  Tensor almost = causal_mask();
  almost.narrow(0, S - 1, 1).narrow(1, 0, 1).fill_(-1.0);
  EXPECT_FALSE(is_causal_mask(almost, S));
  EXPECT_FALSE(is_causal_mask(raw::zeros({N, S, S}, kFloat64), S));  // 3-D masks are never the hint
  EXPECT_TRUE(throws_with([] { generate_square_subsequent_mask(3, kInt64); }, "must be floating"));
  EXPECT_TRUE(throws_with([] { generate_square_subsequent_mask(-1); }, "sz must be >= 0"));
}

TEST(TransformerEncoder, StateDictKeysAndLayersAsPyTorch) {
  TransformerEncoder enc(TransformerEncoderOptions(TransformerEncoderLayerOptions(16, 4).dim_feedforward(32), 2)
                             .norm(std::make_shared<LayerNorm>(LayerNormOptions({16}))));
  std::vector<std::string> keys;
  for (const auto& [name, t] : enc.state_dict()) keys.push_back(name);
  ASSERT_EQ(keys.size(), 2 * 12 + 2u);
  EXPECT_EQ(keys.front(), "layers.0.self_attn.in_proj_weight");
  EXPECT_EQ(keys[12], "layers.1.self_attn.in_proj_weight");
  EXPECT_EQ(keys[23], "layers.1.norm2.bias");
  EXPECT_EQ(keys[24], "norm.weight");
  EXPECT_EQ(keys[25], "norm.bias");
  EXPECT_EQ(enc.layers->size(), 2u);
  EXPECT_EQ(enc.layers->at<TransformerEncoderLayer>(1).linear1->weight.sizes(), (Shape{32, 16}));
  // Made from options, the layers start equal, as libtorch's clone and PyTorch's deepcopy make them.
  EXPECT_TRUE(raw::equal(enc.layers->at<TransformerEncoderLayer>(0).linear1->weight,
                         enc.layers->at<TransformerEncoderLayer>(1).linear1->weight));
}

TEST(TransformerEncoder, CopiesTheLayerNotShareIt) {
  auto layer = golden_layer(TransformerEncoderLayerOptions(D, H));
  layer->linear1->weight.requires_grad_(false);  // a frozen parameter stays frozen in the copies
  TransformerEncoder enc(*layer, 2);
  auto& first = enc.layers->at<TransformerEncoderLayer>(0);
  auto& second = enc.layers->at<TransformerEncoderLayer>(1);
  EXPECT_EQ(first.linear2->weight.dtype(), kFloat64);
  EXPECT_FALSE(first.is_training());
  EXPECT_FALSE(second.linear1->weight.requires_grad());
  EXPECT_TRUE(second.linear2->weight.requires_grad());
  const NamedTensors source = layer->state_dict();
  for (const auto* copy : {&first, &second}) {
    const NamedTensors copied = copy->state_dict();
    ASSERT_EQ(copied.size(), source.size());
    for (size_t i = 0; i < source.size(); ++i) {
      EXPECT_EQ(copied[i].first, source[i].first);
      EXPECT_TRUE(raw::equal(copied[i].second, source[i].second)) << source[i].first;
    }
  }
  // Each copy has its own storage: writing one changes neither the source nor the other copy.
  NoGradGuard no_grad;
  first.linear2->bias.fill_(7.0);
  EXPECT_FALSE(raw::equal(first.linear2->bias, second.linear2->bias));
  EXPECT_FALSE(raw::equal(first.linear2->bias, layer->linear2->bias));
  EXPECT_EQ(enc.parameters().size(), 2 * layer->parameters().size());
}

TEST(TransformerEncoder, CopyingTheLayerDrawsNothing) {
  // PyTorch's stack deep-copies its layer, which draws nothing: only the layer's own
  // initialization comes from the generator.
  manual_seed(5);
  auto layer = std::make_shared<TransformerEncoderLayer>(TransformerEncoderLayerOptions(D, H).dim_feedforward(32));
  const uint64_t after_layer = default_generator().offset();
  TransformerEncoder enc(*layer, 3);
  EXPECT_EQ(default_generator().offset(), after_layer);
  // The copies' values are the layer's (they were not left uninitialized).
  for (int64_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(raw::equal(enc.layers->at<TransformerEncoderLayer>(i).self_attn->in_proj_weight,
                           layer->self_attn->in_proj_weight));
    EXPECT_TRUE(raw::equal(enc.layers->at<TransformerEncoderLayer>(i).norm1->weight, layer->norm1->weight));
  }
}

TEST(TransformerEncoder, PostNormReluWithPaddingAndFinalNormMatchesPyTorch) {
  auto layer = golden_layer(TransformerEncoderLayerOptions(D, H));
  TransformerEncoder enc(*layer, 2, golden::final_norm());
  EXPECT_TRUE(matches_values(enc.forward(src(), std::nullopt, golden::src_padding()), kEncoderPostReluPaddingOut));
}

TEST(TransformerEncoder, PreNormGeluCausalMatchesPyTorchWithOrWithoutTheHint) {
  auto layer = golden_layer(TransformerEncoderLayerOptions(D, H).activation("gelu").norm_first(true));
  TransformerEncoder enc(*layer, 2);
  // The causal mask detected (the layers' fused causal path), given with the hint, spelled as a
  // bool mask, and batch first: one result.
  EXPECT_TRUE(matches_values(enc.forward(src(), causal_mask()), kEncoderPreGeluCausalOut));
  EXPECT_TRUE(matches_values(enc.forward(src(), causal_mask(), std::nullopt, true), kEncoderPreGeluCausalOut));
  EXPECT_TRUE(matches_values(enc.forward(src(), raw::ones({S, S}, kBool).triu(1)), kEncoderPreGeluCausalOut));
  auto bf_layer = golden_layer(TransformerEncoderLayerOptions(D, H).activation("gelu").norm_first(true).batch_first(true));
  TransformerEncoder bf(*bf_layer, 2);
  EXPECT_TRUE(all_close(bf.forward(src().transpose(0, 1), causal_mask()).transpose(0, 1),
                        raw::from_vector(kEncoderPreGeluCausalOut, {S, N, D}), 1e-10, 1e-10));
  // A mask one entry away from causal is applied as it is, not taken for the causal mask.
  Tensor almost = causal_mask();
  {
    NoGradGuard no_grad;
    almost.narrow(0, S - 1, 1).narrow(1, 0, 1).fill_(-std::numeric_limits<double>::infinity());
  }
  EXPECT_FALSE(all_close(enc.forward(src(), almost), raw::from_vector(kEncoderPreGeluCausalOut, {S, N, D}), 1e-6, 1e-6));
}

TEST(TransformerEncoder, GradientsReachEveryLayerSeparately) {
  auto layer = golden_layer(TransformerEncoderLayerOptions(D, H).norm_first(true));
  TransformerEncoder enc(*layer, 2, golden::final_norm());
  Tensor out = enc.forward(src(), causal_mask());
  sum(mul(out, out)).backward();
  for (const auto& [name, p] : enc.named_parameters()) EXPECT_TRUE(p.grad().defined()) << name;
  // The layers start equal but see different inputs, so their gradients differ.
  EXPECT_FALSE(all_close(enc.layers->at<TransformerEncoderLayer>(0).linear1->weight.grad(),
                         enc.layers->at<TransformerEncoderLayer>(1).linear1->weight.grad(), 1e-6, 1e-6));
  EXPECT_FALSE(layer->linear1->weight.grad().defined());  // the source layer is not part of the model
}

TEST(TransformerEncoder, BadArgumentsSayWhatWasExpected) {
  TransformerEncoderLayer layer(8, 2);
  EXPECT_TRUE(throws_with([&] { TransformerEncoder(layer, 0); }, "num_layers must be positive, got 0"));
  TransformerEncoder enc(layer, 1);
  EXPECT_TRUE(throws_with([&] { enc.forward(raw::zeros({4, 2, 8}), raw::zeros({3, 3})); }, "attn_mask must be [L, S]"));
  EXPECT_TRUE(throws_with([&] { enc.forward(raw::zeros({4, 2, 7})); },
                          "TransformerEncoderLayer: src must be [L, N, E] (batched) or [L, E] (unbatched) with E = "
                          "d_model = 8, got [4, 2, 7]"));
  EXPECT_TRUE(throws_with([&] { enc.forward(raw::zeros({8})); }, "src must be [L, N, E]"));
}

TEST(TransformerEncoder, CudaMatchesCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  const Device dev(DeviceType::CUDA, 0);
  auto layer = golden_layer(TransformerEncoderLayerOptions(D, H).activation("gelu").norm_first(true));
  layer->to(kFloat32);
  auto norm = golden::final_norm();
  norm->to(kFloat32);
  TransformerEncoder cpu(*layer, 2, norm);
  layer->to(dev);
  auto gpu_norm = golden::final_norm();
  gpu_norm->to(dev, kFloat32);
  TransformerEncoder gpu(*layer, 2, gpu_norm);
  EXPECT_EQ(gpu.layers->at<TransformerEncoderLayer>(1).linear1->weight.device(), dev);
  Tensor x = raw::to(src(), kCPU, kFloat32);
  // The causal mask on the device: detected there too (is_causal_mask reads it back).
  Tensor ref = cpu.forward(x, generate_square_subsequent_mask(S));
  Tensor out = gpu.forward(raw::to(x, dev, kFloat32), generate_square_subsequent_mask(S, TensorOptions(kFloat32).device(dev)));
  EXPECT_TRUE(all_close(raw::to(out, kCPU, kFloat32), ref, 1e-5, 1e-5));
}

TEST(TransformerEncoderLayer, BadOptionsSayWhatWasExpected) {
  EXPECT_TRUE(throws_with([] { TransformerEncoderLayer(TransformerEncoderLayerOptions(8, 2).activation("tanh")); },
                          "\"relu\" or \"gelu\""));
  EXPECT_TRUE(throws_with([] { TransformerEncoderLayer(8, 3); }, "d_model must be divisible by nhead"));
}

}  // namespace
}  // namespace colony::nn
