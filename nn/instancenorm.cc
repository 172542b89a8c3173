#include "nn/instancenorm.h"

#include <stdexcept>
#include <string>

#include "autograd/ops.h"
#include "nn/functional.h"
#include "nn/init.h"
#include "nn/repr.h"
#include "ops/raw_ops.h"
#include "tensor/grad_mode.h"

namespace colony::nn {

InstanceNormBase::InstanceNormBase(const InstanceNormOptions& o, const char* name, int64_t spatial_dims)
    : options(o), name_(name), spatial_dims_(spatial_dims) {
  if (o.num_features() <= 0) {
    throw std::invalid_argument(std::string(name) + ": num_features must be positive, got " +
                                std::to_string(o.num_features()));
  }
  if (o.affine()) {
    weight = register_parameter("weight", raw::empty({o.num_features()}));
    if (o.bias()) bias = register_parameter("bias", raw::empty({o.num_features()}));
  }
  if (o.track_running_stats()) {
    running_mean = register_buffer("running_mean", raw::zeros({o.num_features()}));
    running_var = register_buffer("running_var", raw::ones({o.num_features()}));
    num_batches_tracked = register_buffer("num_batches_tracked", raw::zeros({}, kInt64));
  }
  reset_parameters();
}

void InstanceNormBase::reset_running_stats() {
  if (!options.track_running_stats()) return;
  NoGradGuard g;
  init::zeros_(running_mean);
  init::ones_(running_var);
  init::zeros_(num_batches_tracked);
}

void InstanceNormBase::reset_parameters() {
  reset_running_stats();
  if (weight.defined()) init::ones_(weight);
  if (bias.defined()) init::zeros_(bias);
}

Tensor InstanceNormBase::forward(const Tensor& input) {
  const int64_t unbatched = spatial_dims_ + 1;
  if (input.dim() != unbatched && input.dim() != unbatched + 1) {
    throw std::invalid_argument(std::string(name_) + ": expected " + std::to_string(unbatched) + "-D (unbatched) or " +
                                std::to_string(unbatched + 1) + "-D input, got " + shape_str(input.sizes()));
  }
  const int64_t feature_dim = input.dim() - unbatched;
  // torch refuses a channel count other than num_features only where it matters (affine or running
  // statistics, which are [num_features]); without either it normalizes whatever comes.
  if (input.size(feature_dim) != options.num_features() && (options.affine() || options.track_running_stats())) {
    throw std::invalid_argument(std::string(name_) + ": expected input's size at dim=" + std::to_string(feature_dim) +
                                " to match num_features (" + std::to_string(options.num_features()) + "), got " +
                                shape_str(input.sizes()));
  }
  const Tensor x = input.dim() == unbatched ? unsqueeze(input, 0) : input;
  const Tensor y = functional::instance_norm(x, functional::InstanceNormFuncOptions()
                                                    .running_mean(running_mean)
                                                    .running_var(running_var)
                                                    .weight(weight)
                                                    .bias(bias)
                                                    .use_input_stats(is_training() || !options.track_running_stats())
                                                    .momentum(options.momentum())
                                                    .eps(options.eps()));
  return input.dim() == unbatched ? squeeze(y, 0) : y;
}

std::string InstanceNormBase::extra_repr() const {
  return std::to_string(options.num_features()) + ", eps=" + repr::py_float(options.eps()) +
         ", momentum=" + repr::py_float(options.momentum()) + ", affine=" + repr::py_bool(options.affine()) +
         ", bias=" + repr::py_bool(bias.defined()) +
         ", track_running_stats=" + repr::py_bool(options.track_running_stats());
}

}  // namespace colony::nn
