#include "nn/linear.h"

#include <cmath>
#include <stdexcept>

#include "nn/functional.h"
#include "nn/init.h"
#include "ops/raw_ops.h"

namespace colony::nn {

Linear::Linear(const LinearOptions& o) : options(o) {
  if (o.in_features() <= 0 || o.out_features() <= 0) {
    throw std::invalid_argument("Linear: in_features and out_features must be positive, got " +
                                std::to_string(o.in_features()) + " and " + std::to_string(o.out_features()));
  }
  weight = register_parameter("weight", raw::empty({o.out_features(), o.in_features()}));
  if (o.bias()) bias = register_parameter("bias", raw::empty({o.out_features()}));
  reset_parameters();
}

void Linear::reset_parameters() {
  // PyTorch's Linear.reset_parameters: bound = 1/sqrt(fan_in) for both, through kaiming a=sqrt(5).
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    double bound = 1.0 / std::sqrt(static_cast<double>(options.in_features()));
    init::uniform_(bias, -bound, bound);
  }
}

Tensor Linear::forward(const Tensor& input) { return functional::linear(input, weight, bias); }

std::string Linear::extra_repr() const {
  return "in_features=" + std::to_string(options.in_features()) + ", out_features=" + std::to_string(options.out_features()) +
         ", bias=" + (options.bias() ? "True" : "False");
}

}  // namespace colony::nn
