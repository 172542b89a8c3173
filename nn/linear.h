// nn::Linear: y = x W^T + b, initialized like PyTorch (kaiming_uniform a=sqrt(5) weights,
// uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)) bias).
#pragma once

#include "nn/module.h"
#include "base/arg.h"
#include "base/int2.h"

namespace colony::nn {

struct LinearOptions {
  LinearOptions(int64_t in_features, int64_t out_features) : in_features_(in_features), out_features_(out_features) {}
  COLONY_ARG(int64_t, in_features);
  COLONY_ARG(int64_t, out_features);
  COLONY_ARG(bool, bias) = true;
};

class Linear : public Module {
  COLONY_CLONEABLE
 public:
  explicit Linear(const LinearOptions& options);
  Linear(int64_t in_features, int64_t out_features) : Linear(LinearOptions(in_features, out_features)) {}
  Tensor forward(const Tensor& input) override;
  void reset_parameters();
  std::string extra_repr() const override;

  LinearOptions options;
  Tensor weight;  // [out, in]
  Tensor bias;    // [out], undefined without bias
};

}  // namespace colony::nn
