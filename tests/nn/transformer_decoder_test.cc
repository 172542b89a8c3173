// nn::TransformerDecoderLayer, nn::TransformerDecoder and nn::Transformer against golden values
// from torch.nn's modules of those names with the same parameters (tests/nn/transformer_golden.py,
// beside this file; the closed forms are transformer_golden.h): the layer post-norm with ReLU, the
// target's causal mask and the memory's key padding, and pre-norm with GELU, batch first, a memory
// mask and the target's key padding; two copies with a final norm; the whole model (2 + 2 layers)
// in both norm orders. Their state dict keys against torch's lists, the causal-mask detection,
// gradients, PyTorch's parameter initialization, errors, and the model on CUDA against the CPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "nn/nn.h"
#include "nn/transformer_blocks.h"
#include "tensor/random.h"
#include "tests/nn/transformer_golden.h"
#include "tests/test_util.h"
#include "tests/tf32_guard.h"

namespace colony::nn {
namespace {

using colony::testing::all_close;
using colony::testing::matches_values;
using colony::testing::throws_with;
using colony::testing::values;
using golden::D;
using golden::FF;
using golden::H;
using golden::N;
using golden::S;
using golden::src;
using golden::T;
using golden::tgt;

// tests/nn/transformer_golden.py's output (its second part).
const std::vector<std::string> kDecoderLayerKeys = {"self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight", "self_attn.out_proj.bias", "multihead_attn.in_proj_weight", "multihead_attn.in_proj_bias", "multihead_attn.out_proj.weight", "multihead_attn.out_proj.bias", "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias", "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias", "norm3.weight", "norm3.bias"};
const std::vector<double> kDecoderPostReluOut = {0.315885672758, 0.2401754622, 0.290824169635, 0.183457887387, 0.262527098304, 0.574706053138, 0.382863235843, 0.429827620185, 0.311952767759, 0.284211221085, 0.280248054789, 0.185325777376, 0.285461133349, 0.588315112465, 0.368956473051, 0.352052872396, 0.315828489088, 0.261408736332, 0.277122629324, 0.180930015057, 0.263989103502, 0.5741636926, 0.363627697979, 0.432332851422, 0.331281000957, 0.259713538092, 0.262931869506, 0.192705853607, 0.261576713024, 0.559619922021, 0.354234542526, 0.535776135747, 0.330566936386, 0.24943575889, 0.267385740135, 0.193803808957, 0.259676650716, 0.560352890241, 0.360330920162, 0.537756876299, 0.306782093083, 0.283902198986, 0.27242461783, 0.189219276738, 0.280706969647, 0.599456194159, 0.377966378588, 0.346421663366, 0.30958905199, 0.280108902724, 0.276963024924, 0.182315043967, 0.277980349952, 0.588396159772, 0.368082469813, 0.358199399186, 0.325018445515, 0.258672918261, 0.273197551275, 0.185365760418, 0.262272129477, 0.563626780125, 0.358200562368, 0.490013505156};
const std::vector<double> kDecoderPreGeluBatchFirstOut = {1.25291742281, 0.987243917874, 1.69946855266, 0.834524668773, 1.81687792668, 0.450378668843, 1.57715593746, -0.0929603074906, -0.524545167111, -0.908586395293, -0.259047329276, -1.12138125949, -0.0962448823953, -1.3361682208, -0.0631931973905, -1.49591604491, 0.772012452713, 0.610334014259, 1.45216758318, 0.714242769075, 1.84039639736, 0.610860338527, 1.87911078159, 0.338958761744, 0.213256570733, -0.306981121741, 0.312851347265, -0.709351960171, 0.238290361795, -1.16849998444, -0.0140681456403, -1.60121137634, 0.706625243502, 0.210603028572, 0.809585664314, -0.221817139672, 0.681137942346, -0.768257978832, 0.322235063703, -1.33655634506, -0.477326466546, -0.647469922914, 0.190440757246, -0.479325566799, 0.717743391897, -0.372510454316, 1.03499432634, -0.311020535558, 1.2615779583, 0.844142842367, 1.53550912907, 0.543828025132, 1.49612810046, 0.0429905768551, 1.13345034634, -0.572405885379, -0.733213806056, -1.00192152247, -0.303032598527, -1.05731502529, 0.0367476673595, -1.11411602523, 0.239710873849, -1.13430490537};
const std::vector<double> kDecoderStackOut = {-0.0350485919273, -0.701944453125, -0.568060715422, -1.43690043888, -0.620870215036, 1.64683979667, 0.18839796774, 1.43723849807, -0.0404966979478, -0.646182713114, -0.618252174466, -1.43656501451, -0.630092400249, 1.64591938996, 0.196323353106, 1.43993862953, -0.0327400578929, -0.684337273374, -0.582354004015, -1.43854429358, -0.623179599107, 1.64222700729, 0.184474196783, 1.44556252128, -0.0223517282837, -0.63700228006, -0.650264962492, -1.41173567561, -0.623063553175, 1.58408508332, 0.122305710926, 1.56268727005, -0.0234353454387, -0.678790669787, -0.605757861023, -1.42074006511, -0.621406231181, 1.61033002621, 0.145050188772, 1.51312205556, -0.0406767288846, -0.641989003723, -0.623980566401, -1.43438728946, -0.630408987969, 1.64685565271, 0.194637693045, 1.44042499655, -0.0400040207998, -0.679724674785, -0.579023948529, -1.44489133279, -0.626833975328, 1.66756240093, 0.21440999087, 1.39371665404, -0.0273609026179, -0.645767096565, -0.633012520862, -1.42145786817, -0.623359102152, 1.60013647728, 0.140973487115, 1.53095895061};
const std::vector<std::string> kTransformerKeys = {"encoder.layers.0.self_attn.in_proj_weight", "encoder.layers.0.self_attn.in_proj_bias", "encoder.layers.0.self_attn.out_proj.weight", "encoder.layers.0.self_attn.out_proj.bias", "encoder.layers.0.linear1.weight", "encoder.layers.0.linear1.bias", "encoder.layers.0.linear2.weight", "encoder.layers.0.linear2.bias", "encoder.layers.0.norm1.weight", "encoder.layers.0.norm1.bias", "encoder.layers.0.norm2.weight", "encoder.layers.0.norm2.bias", "encoder.layers.1.self_attn.in_proj_weight", "encoder.layers.1.self_attn.in_proj_bias", "encoder.layers.1.self_attn.out_proj.weight", "encoder.layers.1.self_attn.out_proj.bias", "encoder.layers.1.linear1.weight", "encoder.layers.1.linear1.bias", "encoder.layers.1.linear2.weight", "encoder.layers.1.linear2.bias", "encoder.layers.1.norm1.weight", "encoder.layers.1.norm1.bias", "encoder.layers.1.norm2.weight", "encoder.layers.1.norm2.bias", "encoder.norm.weight", "encoder.norm.bias", "decoder.layers.0.self_attn.in_proj_weight", "decoder.layers.0.self_attn.in_proj_bias", "decoder.layers.0.self_attn.out_proj.weight", "decoder.layers.0.self_attn.out_proj.bias", "decoder.layers.0.multihead_attn.in_proj_weight", "decoder.layers.0.multihead_attn.in_proj_bias", "decoder.layers.0.multihead_attn.out_proj.weight", "decoder.layers.0.multihead_attn.out_proj.bias", "decoder.layers.0.linear1.weight", "decoder.layers.0.linear1.bias", "decoder.layers.0.linear2.weight", "decoder.layers.0.linear2.bias", "decoder.layers.0.norm1.weight", "decoder.layers.0.norm1.bias", "decoder.layers.0.norm2.weight", "decoder.layers.0.norm2.bias", "decoder.layers.0.norm3.weight", "decoder.layers.0.norm3.bias", "decoder.layers.1.self_attn.in_proj_weight", "decoder.layers.1.self_attn.in_proj_bias", "decoder.layers.1.self_attn.out_proj.weight", "decoder.layers.1.self_attn.out_proj.bias", "decoder.layers.1.multihead_attn.in_proj_weight", "decoder.layers.1.multihead_attn.in_proj_bias", "decoder.layers.1.multihead_attn.out_proj.weight", "decoder.layers.1.multihead_attn.out_proj.bias", "decoder.layers.1.linear1.weight", "decoder.layers.1.linear1.bias", "decoder.layers.1.linear2.weight", "decoder.layers.1.linear2.bias", "decoder.layers.1.norm1.weight", "decoder.layers.1.norm1.bias", "decoder.layers.1.norm2.weight", "decoder.layers.1.norm2.bias", "decoder.layers.1.norm3.weight", "decoder.layers.1.norm3.bias", "decoder.norm.weight", "decoder.norm.bias"};
const std::vector<double> kTransformerOut = {0.282490589666, 0.0424630153807, -0.0048713743129, -0.246301867826, -0.193944400265, 0.188102294517, -0.195340183066, -0.329604978044, 0.281497218206, 0.0378195656173, 0.00326333214704, -0.246872714354, -0.192623977873, 0.191062216306, -0.194211751593, -0.326918945669, 0.282091398556, 0.0422697276693, 0.000179457607602, -0.249691249816, -0.190577670504, 0.189766274536, -0.196396950388, -0.329174041041, 0.284204661819, 0.0443295124893, 0.000984929979852, -0.254531111726, -0.189090161532, 0.190208763554, -0.196302955185, -0.328346979195, 0.284281403338, 0.0455569656509, -0.00301286843165, -0.251841622871, -0.190999888115, 0.190022171732, -0.195819395795, -0.328313716637, 0.281637500242, 0.0391707698244, 0.000544384399774, -0.246308010582, -0.193349670502, 0.190102994155, -0.194443052372, -0.327745286114, 0.280629227339, 0.0383147771905, 0.00339504376176, -0.246702150764, -0.1924531414, 0.190859703971, -0.194658997366, -0.327488844789, 0.283770179431, 0.0436858297895, 0.00130612840681, -0.253624978583, -0.188968253307, 0.190449838829, -0.196428691857, -0.328380374452};
const std::vector<double> kTransformerSrcGrad = {-1.42957402845e-06, 5.12120892899e-05, -6.98250114191e-06, 2.99293607382e-05, 3.15045852321e-05, -0.000208668263012, 2.13968354326e-06, 8.90266990611e-05, -2.28731673962e-06, -4.24669954258e-05, 1.83181830686e-05, 2.42043238101e-06, -8.81022345848e-05, 0.000194578150609, 6.43703458062e-05, -0.000150289260239, 4.26302933939e-05, 0.000154190008062, -2.69810375549e-05, -7.34017933585e-05, -0.00012414251259, -0.000445913683587, 7.33458589295e-05, 0.000400339464886, 0, 0, 0, 0, 0, 0, 0, 0, 2.52865795223e-05, 8.30447647196e-05, -9.59321965027e-06, -4.61866688476e-05, -6.94466282926e-05, -0.000204965973921, 2.69184382346e-05, 0.000208812129797, -6.17561010928e-06, -4.18617705074e-05, 7.54096060924e-06, 1.55256351443e-05, 8.32217089013e-06, 9.78658911496e-05, 6.57766481008e-06, -9.52932689662e-05, 3.56200785402e-06, 6.28909414033e-05, -1.10350112187e-05, 8.51630498445e-06, -1.25046160376e-06, -0.000161902674364, -7.72152442645e-06, 0.000113347339413, -3.16402476539e-06, -2.69008332218e-05, 6.68363015393e-06, -1.86222844158e-07, -4.60138703495e-05, 0.000102725436288, 3.94040529735e-05, -7.17546934382e-05, 0, 0, 0, 0, 0, 0, 0, 0, -1.87406783536e-06, -5.01656600369e-05, 2.10497102475e-05, 6.39851792412e-06, -9.71858011234e-05, 0.000219291429747, 7.19643979216e-05, -0.000172133790159};
const std::vector<double> kTransformerTgtGrad = {0.00579074164857, -0.00665169800723, -0.00704136219056, -0.000154170187624, -0.00475381380546, 0.00279683150956, 0.00728894918164, -0.000833074524576, -0.011630521643, 0.00213178613084, 0.00867308012422, -0.000584554593616, 0.00183999557591, 0.00704085715138, -0.00143484406376, -0.00566774808624, 0.0254976448744, 0.0035613240858, -0.0125806270903, -0.00430266703961, -0.00146051777939, -0.0255014344374, 0.00400716980683, 0.014216518995, -0.00555396557788, 0.00024878237015, 0.000656374415005, 0.00285945848875, -0.0022156152579, 0.0109299278825, 0.0019065415075, -0.0107130649489, -0.00661806560008, 0.00431124153744, 0.00686821891841, -0.0023094574279, 0.00509290717237, -0.000600295327175, -0.00453467303952, -0.00248202767437, 0.0176793380551, -0.00223916155586, -0.0101318847916, -0.000433575069545, -0.00120264380966, -0.0105262871597, 0.00170099391395, 0.00596447690318, -0.0159428416201, -0.00220231374292, 0.00959867757166, 0.000173077722014, 9.09885860601e-05, 0.0145740515632, 0.00170811249428, -0.00987816467275, 0.00539390055765, 0.00211019286422, 0.00111250880261, -0.00372494816213, 0.00338603541449, -0.0136535973127, -0.00256594842059, 0.010636937387};
const std::vector<double> kTransformerEncoderInProjGrad = {-6.39623760049e-07, -6.0538918946e-07, -5.65105770204e-07, -5.19176000892e-07, -4.68058796596e-07, -4.12264903523e-07, -3.52351795812e-07, -2.88918105428e-07, 6.10455968507e-07, 5.61920608402e-07, 5.07770723324e-07, 4.48547361025e-07, 3.84842261765e-07, 3.17291945837e-07, 2.46571353669e-07, 1.73387102041e-07, -5.61213104172e-07, -4.99973058017e-07, -4.33737446335e-07, -3.63168073464e-07, -2.88970045251e-07, -2.11884723866e-07, -1.3268232036e-07, -5.21541989679e-08, 4.93514537051e-07, 4.21583706663e-07, 3.45440551236e-07, 2.65845868008e-07, 1.83594940744e-07, 9.95095935202e-08, 1.44299793317e-08, -7.07938144404e-08, -3.81790691627e-07, -9.31715439808e-07, -1.4723307953e-06, -1.99823510817e-06, -2.50417371637e-06, -2.98509144857e-06, -3.43618313375e-06, -3.85294161291e-06, 1.87638668707e-07, 6.00003644177e-07, 1.00637358157e-06, 1.4026881668e-06, 1.78498755553e-06, 2.14945193864e-06, 2.4924397085e-06, 2.81052384469e-06, 1.2683921997e-08, -2.48560504346e-07, -5.07321396292e-07, -7.61013300545e-07, -1.00710141146e-06, -1.24312689797e-06, -1.46673147144e-06, -1.67568094888e-06, -2.12589397183e-07, -1.11056640615e-07, -8.4142428045e-09, 9.43122273389e-08, 1.96096360882e-07, 2.95921164408e-07, 3.92789221478e-07, 4.85732658486e-07, 7.092111146e-08, 2.13623112714e-08, -2.84099340699e-08, -7.78983167411e-08, -1.26608365181e-07, -1.74053384687e-07, -2.19759320308e-07, -2.63269493444e-07, 3.01304822339e-07, 3.256280339e-07, 3.46697677786e-07, 3.64303233077e-07, 3.78268790887e-07, 3.88454811977e-07, 3.94759520992e-07, 3.97119923363e-07, -4.59766360594e-07, -4.59954173489e-07, -4.55546276322e-07, -4.46586711346e-07, -4.33164999573e-07, -4.15415246309e-07, -3.93514801222e-07, -3.67682486319e-07, 4.30990702151e-07, 4.08641186896e-07, 3.82208663981e-07, 3.51957238437e-07, 3.18189172508e-07, 2.81241865547e-07, 2.41484482831e-07, 1.99314266988e-07, -2.06352722816e-06, -1.98971162064e-06, -1.8960154723e-06, -1.78337496411e-06, -1.65291556279e-06, -1.50594077554e-06, -1.34391912586e-06, -1.16846948051e-06, 4.37057872605e-06, 4.29965391957e-06, 4.1857683924e-06, 4.03006005108e-06, 3.83408468189e-06, 3.59980040594e-06, 3.32954811427e-06, 3.02602807845e-06, -3.08809658396e-06, -3.02030490154e-06, -2.92233533093e-06, -2.79516675168e-06, -2.64006979021e-06, -2.45859412409e-06, -2.25255299818e-06, -2.02400510731e-06, 5.2906814164e-06, 5.23042769028e-06, 5.11791325962e-06, 4.95426233143e-06, 4.74111005168e-06, 4.48058616751e-06, 4.17529374743e-06, 3.82828317239e-06, 5.92674921747e-06, 6.44695848523e-06, 6.90275187488e-06, 7.28957524954e-06, 7.60356359792e-06, 7.84157965224e-06, 8.00124523475e-06, 8.08096501974e-06, 1.14696468021e-05, 1.22480271978e-05, 1.29040293543e-05, 1.34310987151e-05, 1.38239689772e-05, 1.40787147109e-05, 1.4192790581e-05, 1.41650567792e-05, 1.54601814986e-05, 1.63913828872e-05, 1.71588069962e-05, 1.77547859777e-05, 1.81733650066e-05, 1.84103617797e-05, 1.84634083035e-05, 1.83319745548e-05, 1.73582531563e-05, 1.83162417983e-05, 1.90912206067e-05, 1.96754462496e-05, 2.00630813374e-05, 2.02502527485e-05, 2.02350903279e-05, 2.00177455736e-05, 1.61554442368e-05, 1.66121284562e-05, 1.69028297793e-05, 1.70246436146e-05, 1.69763528385e-05, 1.67584399565e-05, 1.6373082282e-05, 1.58241301816e-05, 1.2504534249e-05, 1.25890406967e-05, 1.25477616111e-05, 1.23811094392e-05, 1.20907493144e-05, 1.16795824192e-05, 1.11517169971e-05, 1.05124273052e-05, 7.16119421215e-06, 6.86208533676e-06, 6.494412773e-06, 6.06185018357e-06, 5.56871959089e-06, 5.01994819284e-06, 4.42101913181e-06, 3.77791670901e-06, 8.48620133315e-07, 2.06378918007e-07, -4.3792436723e-07, -1.07785205695e-06, -1.7070102052e-06, -2.31911247175e-06, -2.90804293308e-06, -3.46791719069e-06};
const std::vector<double> kTransformerPreGeluBatchFirstOut = {0.376119744304, 0.175601163881, 0.504282566695, -0.0600704363342, 0.271989591341, -0.291749982959, -0.171305328121, -0.181455652941, 0.384278343885, 0.135868696665, 0.485659322247, -0.115484154444, 0.270182725879, -0.301577424018, -0.160428812711, -0.194438857711, 0.30871473234, 0.0912499809865, 0.477611776811, -0.0885721528022, 0.304403959409, -0.275700182841, -0.153780741364, -0.196917146056, 0.434238011599, 0.207374822597, 0.504941931457, -0.0799548711339, 0.239499797465, -0.307905327939, -0.177582072351, -0.182260225406, 0.441363854997, 0.226172043183, 0.510814754796, -0.0621851010023, 0.232702587158, -0.305565803341, -0.183286029188, -0.178445293734, 0.274790345197, 0.0381569433673, 0.438388684507, -0.125546855615, 0.307356783388, -0.268036899199, -0.14029255483, -0.214603375251, 0.414179223694, 0.207818000971, 0.511810802117, -0.0555565530772, 0.249931090065, -0.298621846786, -0.179713103478, -0.17815866545, 0.334833631369, 0.0873134256488, 0.463568166181, -0.12789652325, 0.289739510823, -0.289306273231, -0.149090377498, -0.204201099745};

std::vector<std::string> keys_of(const Module& m) {
  std::vector<std::string> keys;
  for (const auto& [name, t] : m.state_dict()) keys.push_back(name);
  return keys;
}

// The decoder layer with transformer_golden.py's parameters, dropout 0.1 (off in eval).
std::shared_ptr<TransformerDecoderLayer> golden_layer(TransformerDecoderLayerOptions o) {
  return golden::fill_closed_form(std::make_shared<TransformerDecoderLayer>(o.dim_feedforward(FF).dropout(0.1)));
}

// The 2 + 2 layer model with transformer_golden.py's parameters.
std::shared_ptr<Transformer> golden_model(TransformerOptions o) {
  return golden::fill_closed_form(
      std::make_shared<Transformer>(o.num_encoder_layers(2).num_decoder_layers(2).dim_feedforward(FF).dropout(0.1)));
}

Tensor causal_t() { return generate_square_subsequent_mask(T, kFloat64); }

// The target's causal mask with one entry below the diagonal masked as well.
Tensor almost_causal_t() {
  Tensor m = causal_t();
  NoGradGuard no_grad;
  m.narrow(0, T - 1, 1).narrow(1, 0, 1).fill_(-std::numeric_limits<double>::infinity());
  return m;
}

TEST(TransformerDecoderLayer, ChildrenAndStateDictKeysAsPyTorch) {
  TransformerDecoderLayer layer(TransformerDecoderLayerOptions(16, 4));
  EXPECT_EQ(keys_of(layer), kDecoderLayerKeys);
  std::vector<std::string> children;
  for (const auto& [name, m] : layer.named_children()) children.push_back(name);
  EXPECT_EQ(children, (std::vector<std::string>{"self_attn", "multihead_attn", "linear1", "dropout", "linear2", "norm1",
                                                "norm2", "norm3", "dropout1", "dropout2", "dropout3"}));
  EXPECT_EQ(layer.linear1->weight.sizes(), (Shape{2048, 16}));  // PyTorch's default dim_feedforward
  EXPECT_EQ(layer.dropout3->options.p(), 0.1);
  TransformerDecoderLayer bare(TransformerDecoderLayerOptions(16, 4).bias(false).layer_norm_eps(1e-3));
  for (const auto& key : keys_of(bare)) EXPECT_EQ(key.find("bias"), std::string::npos) << key;
  EXPECT_EQ(bare.norm3->options.eps(), 1e-3);
}

TEST(TransformerDecoderLayer, PostNormReluCausalWithMemoryPaddingMatchesPyTorch) {
  auto layer = golden_layer(TransformerDecoderLayerOptions(D, H));
  const Tensor mem_pad = golden::src_padding();
  EXPECT_TRUE(matches_values(layer->forward(tgt(), src(), causal_t(), std::nullopt, std::nullopt, mem_pad),
                             kDecoderPostReluOut));
  // With the hint the fused kernel's causal path replaces the mask, and a bool causal mask is the
  // same mask: one result.
  EXPECT_TRUE(matches_values(layer->forward(tgt(), src(), causal_t(), std::nullopt, std::nullopt, mem_pad, true),
                             kDecoderPostReluOut));
  EXPECT_TRUE(matches_values(layer->forward(tgt(), src(), raw::ones({T, T}, kBool).triu(1), std::nullopt,
                                            std::nullopt, mem_pad),
                             kDecoderPostReluOut));
  // Unbatched: each sequence alone gives its slice of the batched result (the padding of the
  // first sequence is its last memory position).
  Tensor one = layer->forward(tgt().select(1, 0), src().select(1, 0), causal_t(), std::nullopt, std::nullopt,
                              mem_pad.select(0, 0));
  EXPECT_TRUE(all_close(one, raw::from_vector(kDecoderPostReluOut, {T, N, D}).select(1, 0), 1e-10, 1e-10));
}

TEST(TransformerDecoderLayer, PreNormGeluBatchFirstWithMemoryMaskMatchesPyTorch) {
  auto layer = golden_layer(TransformerDecoderLayerOptions(D, H).activation("gelu").norm_first(true).batch_first(true));
  Tensor out = layer->forward(tgt().transpose(0, 1), src().transpose(0, 1), std::nullopt, golden::memory_mask(),
                              golden::tgt_padding());
  EXPECT_EQ(out.sizes(), (Shape{N, T, D}));
  EXPECT_TRUE(matches_values(out, kDecoderPreGeluBatchFirstOut));
}

TEST(TransformerDecoderLayer, AnyModuleTrainingAndGradients) {
  auto layer = golden_layer(TransformerDecoderLayerOptions(D, H));
  Tensor ref = layer->forward(tgt(), src());
  AnyModule any(layer);
  EXPECT_TRUE(all_close(any.forward(tgt(), src()), ref, 1e-12, 1e-12));
  // Training: dropout changes the output, and gradients reach every parameter and the memory.
  layer->train();
  Tensor memory = raw::clone(src());
  memory.requires_grad_(true);
  Tensor out = layer->forward(tgt(), memory, causal_t());
  EXPECT_FALSE(all_close(out, ref, 1e-6, 1e-6));
  sum(mul(out, out)).backward();
  for (const auto& [name, p] : layer->named_parameters()) EXPECT_TRUE(p.grad().defined()) << name;
  ASSERT_TRUE(memory.grad().defined());
  EXPECT_GT(raw::sum(raw::abs(memory.grad())).item(), 0.0);
}

TEST(TransformerDecoder, StackWithFinalNormMatchesPyTorch) {
  auto layer = golden_layer(TransformerDecoderLayerOptions(D, H));
  TransformerDecoder dec(*layer, 2, golden::final_norm());
  const Tensor mem_pad = golden::src_padding();
  // The causal mask detected, given with the hint, and spelled as a bool mask: one result.
  EXPECT_TRUE(matches_values(dec.forward(tgt(), src(), causal_t(), std::nullopt, std::nullopt, mem_pad),
                             kDecoderStackOut));
  EXPECT_TRUE(matches_values(dec.forward(tgt(), src(), causal_t(), std::nullopt, std::nullopt, mem_pad, true),
                             kDecoderStackOut));
  EXPECT_TRUE(matches_values(dec.forward(tgt(), src(), raw::ones({T, T}, kBool).triu(1), std::nullopt, std::nullopt,
                                         mem_pad),
                             kDecoderStackOut));
  // A mask one entry away from causal is applied as it is.
  EXPECT_FALSE(all_close(dec.forward(tgt(), src(), almost_causal_t(), std::nullopt, std::nullopt, mem_pad),
                         raw::from_vector(kDecoderStackOut, {T, N, D}), 1e-6, 1e-6));
}

TEST(TransformerDecoder, KeysAndCopiesAsTransformerEncoder) {
  TransformerDecoder dec(TransformerDecoderOptions(TransformerDecoderLayerOptions(16, 4).dim_feedforward(32), 2)
                             .norm(std::make_shared<LayerNorm>(LayerNormOptions({16}))));
  std::vector<std::string> expected;
  for (const char* layer : {"layers.0.", "layers.1."}) {
    for (const auto& key : kDecoderLayerKeys) expected.push_back(layer + key);
  }
  expected.push_back("norm.weight");
  expected.push_back("norm.bias");
  EXPECT_EQ(keys_of(dec), expected);
  // The layers start equal (copies of one), each with its own storage.
  auto& first = dec.layers->at<TransformerDecoderLayer>(0);
  auto& second = dec.layers->at<TransformerDecoderLayer>(1);
  EXPECT_TRUE(raw::equal(first.multihead_attn->in_proj_weight, second.multihead_attn->in_proj_weight));
  NoGradGuard no_grad;
  first.linear2->bias.fill_(7.0);
  EXPECT_FALSE(raw::equal(first.linear2->bias, second.linear2->bias));
  // PyTorch's form copies a given layer: its dtype and mode, not the layer itself.
  auto layer = golden_layer(TransformerDecoderLayerOptions(D, H));
  TransformerDecoder copied(*layer, 3);
  EXPECT_EQ(copied.layers->size(), 3u);
  EXPECT_EQ(copied.layers->at<TransformerDecoderLayer>(2).norm3->weight.dtype(), kFloat64);
  EXPECT_FALSE(copied.layers->at<TransformerDecoderLayer>(2).is_training());
  EXPECT_TRUE(raw::equal(copied.layers->at<TransformerDecoderLayer>(2).norm3->weight, layer->norm3->weight));
  EXPECT_EQ(copied.norm, nullptr);
}

TEST(TransformerDecoder, CausalDetectionTakesOnlyTheExactMaskOfTheTargetLength) {
  using transformer_blocks::detect_is_causal;
  const Tensor x = tgt();  // [T, N, D], T != N
  EXPECT_TRUE(detect_is_causal(causal_t(), std::nullopt, x, false));
  EXPECT_TRUE(detect_is_causal(raw::ones({T, T}, kBool).triu(1), std::nullopt, x, false));
  EXPECT_TRUE(detect_is_causal(causal_t(), std::nullopt, x.transpose(0, 1), true));  // [N, T, D]: length in dim 1
  EXPECT_TRUE(detect_is_causal(causal_t(), std::nullopt, x.select(1, 0), false));    // unbatched [T, D]
  EXPECT_FALSE(detect_is_causal(causal_t(), std::nullopt, x.transpose(0, 1), false));  // length N: another size
  EXPECT_FALSE(detect_is_causal(almost_causal_t(), std::nullopt, x, false));           // one entry off
  EXPECT_FALSE(detect_is_causal(golden::memory_mask().narrow(1, 0, T), std::nullopt, x, false));
  EXPECT_FALSE(detect_is_causal(std::nullopt, std::nullopt, x, false));
  // A hint is taken as given, either way (PyTorch's rule).
  EXPECT_FALSE(detect_is_causal(causal_t(), false, x, false));
  EXPECT_TRUE(detect_is_causal(almost_causal_t(), true, x, false));
}

TEST(Transformer, StateDictKeysAndOptionsAsPyTorch) {
  Transformer model(TransformerOptions(D, H, 2, 2).dim_feedforward(FF));
  EXPECT_EQ(keys_of(model), kTransformerKeys);
  // PyTorch's defaults: d_model 512, nhead 8, 6 + 6 layers, dim_feedforward 2048.
  const TransformerOptions defaults;
  EXPECT_EQ(defaults.d_model(), 512);
  EXPECT_EQ(defaults.nhead(), 8);
  EXPECT_EQ(defaults.num_encoder_layers(), 6);
  EXPECT_EQ(defaults.num_decoder_layers(), 6);
  EXPECT_EQ(defaults.dim_feedforward(), 2048);
  EXPECT_EQ(defaults.dropout(), 0.1);
  EXPECT_EQ(defaults.activation(), "relu");
  EXPECT_EQ(defaults.layer_norm_eps(), 1e-5);
  EXPECT_FALSE(defaults.batch_first() || defaults.norm_first() || !defaults.bias());
  // bias(false) reaches every Linear, attention and LayerNorm, as PyTorch's bias=False.
  Transformer bare(TransformerOptions(D, H, 1, 1).dim_feedforward(FF).bias(false));
  for (const auto& key : keys_of(bare)) EXPECT_EQ(key.find("bias"), std::string::npos) << key;
  // The static mask is the free function's.
  EXPECT_TRUE(raw::equal(Transformer::generate_square_subsequent_mask(T, kFloat64), causal_t()));
}

TEST(Transformer, ForwardMatchesPyTorch) {
  auto model = golden_model(TransformerOptions(D, H));
  const Tensor pad = golden::src_padding();
  Tensor out = model->forward(src(), tgt(), std::nullopt, causal_t(), std::nullopt, pad, std::nullopt, pad);
  EXPECT_EQ(out.sizes(), (Shape{T, N, D}));
  EXPECT_TRUE(matches_values(out, kTransformerOut));
  // AnyModule with the optional arguments left out: the model without masks.
  AnyModule any(model);
  EXPECT_TRUE(all_close(any.forward(src(), tgt()), model->forward(src(), tgt()), 1e-12, 1e-12));
}

TEST(Transformer, GradientsMatchPyTorch) {
  auto model = golden_model(TransformerOptions(D, H));
  Tensor x = raw::clone(src()), y = raw::clone(tgt());
  x.requires_grad_(true);
  y.requires_grad_(true);
  const Tensor pad = golden::src_padding();
  Tensor out = model->forward(x, y, std::nullopt, causal_t(), std::nullopt, pad, std::nullopt, pad);
  std::vector<double> w(out.numel());
  for (size_t i = 0; i < w.size(); ++i) w[i] = std::cos(0.29 * static_cast<double>(i));
  sum(mul(out, raw::from_vector(w, out.sizes()))).backward();
  // The source's gradient is exactly 0 at the padded positions: masked as keys in the encoder and
  // as memory in the decoder, nothing reads them.
  EXPECT_TRUE(matches_values(x.grad(), kTransformerSrcGrad, 1e-12));
  EXPECT_TRUE(matches_values(y.grad(), kTransformerTgtGrad, 1e-12));
  EXPECT_TRUE(matches_values(model->encoder->layers->at<TransformerEncoderLayer>(0).self_attn->in_proj_weight.grad(),
                             kTransformerEncoderInProjGrad, 1e-12));
}

TEST(Transformer, PreNormGeluBatchFirstMatchesPyTorch) {
  // Every option reaches both stacks' layers and final norms (norm_first, gelu, batch_first, eps).
  auto model = golden_model(
      TransformerOptions(D, H).activation("gelu").norm_first(true).batch_first(true).layer_norm_eps(1e-3));
  Tensor out = model->forward(src().transpose(0, 1), tgt().transpose(0, 1), std::nullopt, causal_t(),
                              golden::memory_mask());
  EXPECT_EQ(out.sizes(), (Shape{N, T, D}));
  EXPECT_TRUE(matches_values(out, kTransformerPreGeluBatchFirstOut));
}

TEST(Transformer, ParametersDrawnAsPyTorchDrawsThem) {
  manual_seed(7);
  Transformer model(TransformerOptions(D, H, 2, 2).dim_feedforward(FF));
  for (const auto& [name, p] : model.named_parameters()) {
    const std::vector<double> v = values(p);
    double largest = 0;
    for (double x : v) largest = std::max(largest, std::abs(x));
    if (p.dim() > 1) {
      // xavier_uniform_: U(-b, b), b = sqrt(6 / (fan_in + fan_out)), over Linear's narrower
      // U(-1/sqrt(fan_in), 1/sqrt(fan_in)) where a Linear drew it first.
      const double bound = std::sqrt(6.0 / static_cast<double>(p.size(0) + p.size(1)));
      EXPECT_LE(largest, bound) << name;
      if (name.find("linear") != std::string::npos || name.find("out_proj") != std::string::npos) {
        EXPECT_GT(largest, 1.0 / std::sqrt(static_cast<double>(p.size(1)))) << name;
      }
    } else if (name.find("in_proj_bias") != std::string::npos || name.find("out_proj.bias") != std::string::npos) {
      EXPECT_EQ(largest, 0.0) << name;  // MultiheadAttention's zero biases stay zero
    } else if (name.find("norm") != std::string::npos) {
      EXPECT_EQ(largest, name.find("weight") != std::string::npos ? 1.0 : 0.0) << name;
    }
  }
  // Each stack copied one layer, then the weights were drawn again, one by one: the layers'
  // weights differ while the biases they were copied with stay equal (as in PyTorch).
  for (auto* stack : {static_cast<Module*>(model.encoder.get()), static_cast<Module*>(model.decoder.get())}) {
    const NamedTensors params = stack->named_parameters();
    auto find = [&](const std::string& key) {
      for (const auto& [name, p] : params) {
        if (name == key) return p;
      }
      ADD_FAILURE() << "no " << key;
      return Tensor();
    };
    EXPECT_FALSE(raw::equal(find("layers.0.linear1.weight"), find("layers.1.linear1.weight")));
    EXPECT_TRUE(raw::equal(find("layers.0.linear1.bias"), find("layers.1.linear1.bias")));
  }
}

TEST(Transformer, GradientsReachEveryParameterAndBothInputs) {
  auto model = golden_model(TransformerOptions(D, H));
  model->train();
  Tensor x = raw::clone(src()), y = raw::clone(tgt());
  x.requires_grad_(true);
  y.requires_grad_(true);
  const Tensor pad = golden::src_padding();
  Tensor out = model->forward(x, y, std::nullopt, causal_t(), std::nullopt, pad, golden::tgt_padding(), pad);
  sum(mul(out, out)).backward();
  for (const auto& [name, p] : model->named_parameters()) {
    ASSERT_TRUE(p.grad().defined()) << name;
    EXPECT_GT(raw::sum(raw::abs(p.grad())).item(), 0.0) << name;
  }
  EXPECT_TRUE(x.grad().defined());
  EXPECT_TRUE(y.grad().defined());
}

TEST(TransformerDecoderLayer, BadOptionsAndInputsSayWhatWasExpected) {
  EXPECT_TRUE(throws_with([] { TransformerDecoderLayer(8, 3); },
                          "TransformerDecoderLayer: d_model must be divisible by nhead (each head takes d_model / "
                          "nhead features), got d_model 8 and nhead 3"));
  EXPECT_TRUE(throws_with([] { TransformerDecoderLayer(TransformerDecoderLayerOptions(8, 2).activation("tanh")); },
                          "activation must be \"relu\" or \"gelu\", got \"tanh\""));
  EXPECT_TRUE(throws_with([] { TransformerDecoderLayer(TransformerDecoderLayerOptions(8, 2).dim_feedforward(0)); },
                          "dim_feedforward must be positive, got 0"));
  EXPECT_TRUE(throws_with([] { TransformerDecoderLayer(0, 2); }, "d_model and nhead must be positive, got 0 and 2"));
  TransformerDecoderLayer layer(TransformerDecoderLayerOptions(8, 2).dim_feedforward(16));
  EXPECT_TRUE(throws_with([] { TransformerDecoder(TransformerDecoderLayer(8, 2), 0); },
                          "TransformerDecoder: num_layers must be positive, got 0"));
  EXPECT_TRUE(throws_with([&] { layer.forward(raw::zeros({4, 2, 2, 8}), raw::zeros({5, 2, 8})); },
                          "TransformerDecoderLayer: tgt must be [L, N, E] (batched) or [L, E] (unbatched) with E = "
                          "d_model = 8, got [4, 2, 2, 8]"));
  EXPECT_TRUE(throws_with([&] { layer.forward(raw::zeros({4, 2, 8}), raw::zeros({5, 2, 7})); },
                          "memory must be [L, N, E] (batched) or [L, E] (unbatched) with E = d_model = 8, got "
                          "[5, 2, 7]"));
  EXPECT_TRUE(throws_with([&] { layer.forward(raw::zeros({4, 2, 8}), raw::zeros({5, 8})); },
                          "tgt [4, 2, 8] and memory [5, 8] must both be batched (3-D) or both unbatched (2-D)"));
  EXPECT_TRUE(throws_with([&] { layer.forward(raw::zeros({4, 2, 8}), raw::zeros({5, 3, 8})); },
                          "tgt [4, 2, 8] and memory [5, 3, 8] must have one batch size (dim 1)"));
  EXPECT_TRUE(throws_with([&] { layer.forward(raw::zeros({4, 2, 8}), raw::zeros({5, 2, 8}), raw::zeros({5, 5})); },
                          "attn_mask must be [L, S] = [4, 4], got [5, 5]"));
  EXPECT_TRUE(throws_with([&] { layer.forward(raw::zeros({4, 2, 8}), raw::zeros({5, 2, 8}), std::nullopt,
                                              raw::zeros({4, 4})); },
                          "attn_mask must be [L, S] = [4, 5], got [4, 4]"));
}

TEST(Transformer, BadOptionsAndInputsSayWhatWasExpected) {
  EXPECT_TRUE(throws_with([] { Transformer(TransformerOptions(8, 3)); },
                          "Transformer: d_model must be divisible by nhead"));
  EXPECT_TRUE(throws_with([] { Transformer(TransformerOptions(8, 2, 1, 1).activation("silu")); },
                          "Transformer: activation must be \"relu\" or \"gelu\", got \"silu\""));
  EXPECT_TRUE(throws_with([] { Transformer(TransformerOptions(8, 2, 0, 1)); },
                          "TransformerEncoder: num_layers must be positive, got 0"));
  EXPECT_TRUE(throws_with([] { Transformer(TransformerOptions(8, 2, 1, 0)); },
                          "TransformerDecoder: num_layers must be positive, got 0"));
  Transformer model(TransformerOptions(8, 2, 1, 1).dim_feedforward(16));
  EXPECT_TRUE(throws_with([&] { model.forward(raw::zeros({5, 2, 8}), raw::zeros({4, 3, 8})); },
                          "Transformer: the batch sizes of src [5, 2, 8] and tgt [4, 3, 8] must be equal (dim 1)"));
  EXPECT_TRUE(throws_with([&] { model.forward(raw::zeros({5, 2, 8}), raw::zeros({4, 2, 6})); },
                          "Transformer: tgt must be [L, N, E] (batched) or [L, E] (unbatched) with E = d_model = 8, "
                          "got [4, 2, 6]"));
  EXPECT_TRUE(throws_with([&] { model.forward(raw::zeros({5, 2, 9}), raw::zeros({4, 2, 8})); },
                          "Transformer: src must be [L, N, E]"));
  EXPECT_TRUE(throws_with([&] { model.forward(raw::zeros({8}), raw::zeros({4, 2, 8})); },
                          "Transformer: src must be [L, N, E] (batched) or [L, E] (unbatched) with E = d_model = 8, "
                          "got [8]"));
  EXPECT_TRUE(throws_with([&] { model.forward(raw::zeros({5, 8}), raw::zeros({4, 2, 8})); },
                          "src [5, 8] and tgt [4, 2, 8] must both be batched (3-D) or both unbatched (2-D)"));
  Transformer bf(TransformerOptions(8, 2, 1, 1).dim_feedforward(16).batch_first(true));
  EXPECT_TRUE(throws_with([&] { bf.forward(raw::zeros({2, 5, 8}), raw::zeros({3, 4, 8})); },
                          "must be equal (dim 0, batch_first)"));
  EXPECT_TRUE(throws_with([&] { bf.forward(raw::zeros({2, 5, 8}), raw::zeros({2, 4, 7})); },
                          "tgt must be [N, L, E] (batched)"));
}

TEST(Transformer, CudaMatchesCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  const Device dev = Device::cuda(0);
  colony::testing::Tf32Guard tf32(false);
  auto cpu = golden_model(TransformerOptions(D, H).norm_first(true).activation("gelu"));
  cpu->to(kFloat32);
  auto gpu = std::make_shared<Transformer>(TransformerOptions(D, H, 2, 2).dim_feedforward(FF).norm_first(true)
                                               .activation("gelu"));
  gpu->load_state_dict(cpu->state_dict());
  gpu->to(dev);
  gpu->eval();
  EXPECT_EQ(gpu->decoder->layers->at<TransformerDecoderLayer>(1).multihead_attn->in_proj_weight.device(), dev);
  auto f32 = [](const Tensor& t) { return raw::to(t, kCPU, kFloat32); };
  auto on = [&](const Tensor& t) { return raw::to(t, dev, t.dtype()); };
  Tensor x = f32(src()), y = f32(tgt());
  const Tensor pad = golden::src_padding(), mask = f32(golden::memory_mask());
  // The target's causal mask, detected on the device too (is_causal_mask reads it back).
  Tensor ref = cpu->forward(x, y, std::nullopt, generate_square_subsequent_mask(T), mask, pad, std::nullopt, pad);
  Tensor out = gpu->forward(on(x), on(y), std::nullopt, on(generate_square_subsequent_mask(T)), on(mask), on(pad),
                            std::nullopt, on(pad));
  ASSERT_TRUE(out.is_cuda());
  EXPECT_TRUE(all_close(f32(out), ref, 1e-5, 1e-5));
  sum(mul(ref, ref)).backward();
  sum(mul(out, out)).backward();
  const NamedTensors cpu_params = cpu->named_parameters(), gpu_params = gpu->named_parameters();
  ASSERT_EQ(cpu_params.size(), gpu_params.size());
  for (size_t i = 0; i < cpu_params.size(); ++i) {
    ASSERT_TRUE(gpu_params[i].second.grad().defined()) << gpu_params[i].first;
    EXPECT_TRUE(gpu_params[i].second.grad().is_cuda()) << gpu_params[i].first;
    EXPECT_TRUE(all_close(f32(gpu_params[i].second.grad()), cpu_params[i].second.grad(), 1e-4, 1e-4))
        << "gradient of " << cpu_params[i].first;
  }
}

}  // namespace
}  // namespace colony::nn
