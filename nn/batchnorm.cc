#include "nn/batchnorm.h"

#include "nn/repr.h"

#include <stdexcept>

#include "nn/functional.h"
#include "nn/init.h"
#include "tensor/grad_mode.h"
#include "ops/raw_ops.h"

namespace colony::nn {

BatchNorm2d::BatchNorm2d(const BatchNorm2dOptions& o) : options(o) {
  if (o.num_features() <= 0) throw std::invalid_argument("BatchNorm2d: num_features must be positive");
  if (o.affine()) {
    weight = register_parameter("weight", raw::empty({o.num_features()}));
    bias = register_parameter("bias", raw::empty({o.num_features()}));
  }
  if (o.track_running_stats()) {
    running_mean = register_buffer("running_mean", raw::zeros({o.num_features()}));
    running_var = register_buffer("running_var", raw::ones({o.num_features()}));
    num_batches_tracked = register_buffer("num_batches_tracked", raw::zeros({}, kInt64));
  }
  reset_parameters();
}

void BatchNorm2d::reset_parameters() {
  if (weight.defined()) init::ones_(weight);
  if (bias.defined()) init::zeros_(bias);
}

Tensor BatchNorm2d::forward(const Tensor& input) {
  if (input.dim() != 4) {
    throw std::invalid_argument("BatchNorm2d: expected 4-D input (N,C,H,W), got " + shape_str(input.sizes()));
  }
  if (input.size(1) != options.num_features()) {
    throw std::invalid_argument("BatchNorm2d: expected " + std::to_string(options.num_features()) + " channels, got input " +
                                shape_str(input.sizes()));
  }
  bool use_batch_stats = is_training() || !options.track_running_stats();
  if (is_training() && options.track_running_stats()) {
    NoGradGuard g;
    raw::binary_(raw::BinaryOp::Add, num_batches_tracked, 1.0);
  }
  return functional::batch_norm(input, running_mean, running_var, weight, bias, use_batch_stats, options.momentum(),
                                options.eps());
}

std::string BatchNorm2d::extra_repr() const {
  return std::to_string(options.num_features()) + ", eps=" + repr::py_float(options.eps()) +
         ", momentum=" + repr::py_float(options.momentum()) + ", affine=" + repr::py_bool(options.affine()) +
         ", track_running_stats=" + repr::py_bool(options.track_running_stats());
}

}  // namespace colony::nn
