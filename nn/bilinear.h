// nn::Bilinear and F::bilinear (torch.nn.Bilinear, torch.nn.functional.bilinear):
// y[..., o] = sum_ij x1[..., i] W[o, i, j] x2[..., j] + b[o].
#pragma once

#include "base/arg.h"
#include "nn/module.h"

namespace colony::nn {
namespace functional {

// input1 [*, in1], input2 [*, in2] with the same batch dims (no broadcasting, as torch), weight
// [out, in1, in2], bias [out] or undefined; the result is [*, out]. torch's checks and messages.
// Composed of one matrix product (input1 against the weight as [in1, out * in2]), a product with
// input2 and a sum, so it is differentiable in all four. Operands of mixed dtypes are computed in
// the widest, under autocast too (torch's CUDA autocast "promote" list has bilinear: never lowered);
// torch refuses mixed dtypes outside autocast.
Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight, const Tensor& bias = Tensor());

}  // namespace functional

struct BilinearOptions {
  BilinearOptions(int64_t in1_features, int64_t in2_features, int64_t out_features)
      : in1_features_(in1_features), in2_features_(in2_features), out_features_(out_features) {}
  COLONY_ARG(int64_t, in1_features);
  COLONY_ARG(int64_t, in2_features);
  COLONY_ARG(int64_t, out_features);
  COLONY_ARG(bool, bias) = true;
};

// weight [out, in1, in2] and bias [out], both uniform(-1/sqrt(in1), 1/sqrt(in1)) as torch's
// reset_parameters; forward(input1, input2). "Bilinear(in1_features=3, in2_features=4,
// out_features=5, bias=True)".
class Bilinear : public Module {
  COLONY_CLONEABLE
 public:
  explicit Bilinear(const BilinearOptions& options);
  Bilinear(int64_t in1_features, int64_t in2_features, int64_t out_features)
      : Bilinear(BilinearOptions(in1_features, in2_features, out_features)) {}
  Tensor forward(const Tensor& input1, const Tensor& input2);
  void reset_parameters();
  std::string extra_repr() const override;

  BilinearOptions options;
  Tensor weight;  // [out, in1, in2]
  Tensor bias;    // [out], undefined without bias
};

}  // namespace colony::nn
