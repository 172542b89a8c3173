// nn::BatchNorm1d, BatchNorm2d and BatchNorm3d: normalize each channel with the batch statistics while
// training (updating the running estimates, kept as buffers) and with the running estimates in
// eval mode. One implementation (BatchNormBase) over the batch_norm kernel, which takes [N, C, *];
// they differ in the input ranks they accept, as torch's. A module whose `sync` is set takes its
// training statistics over a process group instead (dist::SyncBatchNorm and
// dist::convert_sync_batchnorm, distributed/sync_batch_norm.h).
#pragma once

#include <memory>
#include <optional>

#include "nn/module.h"
#include "base/arg.h"
#include "base/int2.h"

namespace colony::nn {

// What a batch norm module's training forward calls instead of functional::batch_norm: the
// statistics of the batch of every rank of a process group (distributed/sync_batch_norm.h). An
// interface here because nn cannot depend on distributed/. The arguments are functional::batch_norm's
// in training mode; `momentum` is the factor for this step (momentum=None's cumulative one included).
class BatchNormSync {
 public:
  virtual ~BatchNormSync() = default;
  virtual Tensor forward(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                         const Tensor& weight, const Tensor& bias, double momentum, double eps) = 0;
};

struct BatchNormOptions {
  BatchNormOptions(int64_t num_features) : num_features_(num_features) {}  // NOLINT
  COLONY_ARG(int64_t, num_features);
  COLONY_ARG(double, eps) = 1e-5;
  // nullopt: the running statistics are the cumulative average of every batch's (torch's
  // momentum=None: the factor is 1 / num_batches_tracked).
  COLONY_ARG(std::optional<double>, momentum) = 0.1;
  COLONY_ARG(bool, affine) = true;
  COLONY_ARG(bool, track_running_stats) = true;
  // With affine, a learnable bias as well as the weight (torch's bias=, new in 2.x).
  COLONY_ARG(bool, bias) = true;
};
using BatchNorm1dOptions = BatchNormOptions;
using BatchNorm2dOptions = BatchNormOptions;
using BatchNorm3dOptions = BatchNormOptions;

class BatchNormBase : public Module {
 public:
  Tensor forward(const Tensor& input) override;
  void reset_parameters();
  void reset_running_stats();
  std::string extra_repr() const override;

  BatchNormOptions options;
  Tensor weight, bias;                                    // [C] (affine; bias: and options.bias)
  Tensor running_mean, running_var, num_batches_tracked;  // buffers (track_running_stats)
  // Set: training-mode statistics come from it (dist::convert_sync_batchnorm sets it). Evaluation
  // mode never uses it.
  std::shared_ptr<BatchNormSync> sync;

 protected:
  BatchNormBase(const BatchNormOptions& options, const char* name);
  // Throws unless the input's rank is one the module takes.
  virtual void check_input_dim(const Tensor& input) const = 0;
  const char* name_;
};

// Input [N, C] or [N, C, L].
class BatchNorm1d : public BatchNormBase {
  COLONY_CLONEABLE
 public:
  explicit BatchNorm1d(const BatchNorm1dOptions& options) : BatchNormBase(options, "BatchNorm1d") {}

 protected:
  void check_input_dim(const Tensor& input) const override;
};

// Input [N, C, H, W].
class BatchNorm2d : public BatchNormBase {
  COLONY_CLONEABLE
 public:
  explicit BatchNorm2d(const BatchNorm2dOptions& options) : BatchNormBase(options, "BatchNorm2d") {}

 protected:
  void check_input_dim(const Tensor& input) const override;
};

// Input [N, C, D, H, W].
class BatchNorm3d : public BatchNormBase {
  COLONY_CLONEABLE
 public:
  explicit BatchNorm3d(const BatchNorm3dOptions& options) : BatchNormBase(options, "BatchNorm3d") {}

 protected:
  void check_input_dim(const Tensor& input) const override;
};

}  // namespace colony::nn
