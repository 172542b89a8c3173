#include "nn/batchnorm.h"

#include "nn/repr.h"

#include <stdexcept>
#include <string>

#include "nn/functional.h"
#include "nn/init.h"
#include "tensor/grad_mode.h"
#include "ops/raw_ops.h"

namespace colony::nn {

BatchNormBase::BatchNormBase(const BatchNormOptions& o, const char* name) : options(o), name_(name) {
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

void BatchNormBase::reset_running_stats() {
  if (!options.track_running_stats()) return;
  NoGradGuard g;
  init::zeros_(running_mean);
  init::ones_(running_var);
  init::zeros_(num_batches_tracked);
}

void BatchNormBase::reset_parameters() {
  reset_running_stats();
  if (weight.defined()) init::ones_(weight);
  if (bias.defined()) init::zeros_(bias);
}

Tensor BatchNormBase::forward(const Tensor& input) {
  check_input_dim(input);
  if (input.size(1) != options.num_features()) {
    throw std::invalid_argument(std::string(name_) + ": expected " + std::to_string(options.num_features()) +
                                " channels, got input " + shape_str(input.sizes()));
  }
  bool use_batch_stats = is_training() || !options.track_running_stats();
  double factor = options.momentum().value_or(0.0);
  if (is_training() && options.track_running_stats()) {
    NoGradGuard g;
    raw::binary_(raw::BinaryOp::Add, num_batches_tracked, 1.0);
    // momentum=None: the cumulative average, as torch (which reads the count back the same way).
    if (!options.momentum()) factor = 1.0 / raw::to(num_batches_tracked, kCPU, kFloat64).item<double>();
  }
  // Only in training mode: in eval with track_running_stats=False torch normalizes with this
  // process's batch alone (SyncBatchNorm's need_sync is false there).
  if (sync && is_training()) {
    return sync->forward(input, running_mean, running_var, weight, bias, factor, options.eps());
  }
  return functional::batch_norm(input, running_mean, running_var, weight, bias, use_batch_stats, factor,
                                options.eps());
}

std::string BatchNormBase::extra_repr() const {
  return std::to_string(options.num_features()) + ", eps=" + repr::py_float(options.eps()) +
         ", momentum=" + (options.momentum() ? repr::py_float(*options.momentum()) : std::string("None")) +
         ", affine=" + repr::py_bool(options.affine()) +
         ", bias=" + repr::py_bool(bias.defined()) +
         ", track_running_stats=" + repr::py_bool(options.track_running_stats());
}

void BatchNorm1d::check_input_dim(const Tensor& input) const {
  if (input.dim() != 2 && input.dim() != 3) {
    throw std::invalid_argument("BatchNorm1d: expected 2-D (N,C) or 3-D (N,C,L) input, got " +
                                shape_str(input.sizes()));
  }
}

void BatchNorm2d::check_input_dim(const Tensor& input) const {
  if (input.dim() != 4) {
    throw std::invalid_argument("BatchNorm2d: expected 4-D input (N,C,H,W), got " + shape_str(input.sizes()));
  }
}

// torch's words: "expected 5D input (got 4D input)".
void BatchNorm3d::check_input_dim(const Tensor& input) const {
  if (input.dim() != 5) {
    throw std::invalid_argument("BatchNorm3d: expected 5D input (got " + std::to_string(input.dim()) + "D input)");
  }
}

}  // namespace colony::nn
