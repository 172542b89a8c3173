// --cuda_graph: the training step (zero_grad, forward through DDP, GradScaler's scaled backward with
// DDP's bucket all-reduces, the SGD step and the scale's update) captured once as a CUDA graph and
// replayed for every later full batch (ops/cuda_graph.h).
#pragma once

#include <memory>
#include <optional>

#include "colony.h"
#include "examples/lenet_cifar10/amp_mode.h"

namespace lenet {

class GraphedTraining {
 public:
  // `model` is what the eager loop trains (the DDP wrapper: its bucket all-reduces are captured
  // too, on NCCL); `scaler` is the loop's (disabled unless --amp fp16).
  GraphedTraining(colony::nn::Module& model, colony::optim::Optimizer& opt, colony::optim::GradScaler& scaler,
                  colony::Device dev, const AmpMode& amp)
      : model_(model), opt_(opt), scaler_(scaler), dev_(dev), amp_(amp) {}

  // One optimizer step on `batch` (a full batch: the graph's shapes are fixed); returns its loss,
  // still on the device. The first batch runs eagerly; the second is make_graphed_step's warm-up
  // call (a real step) followed by the capture (which runs nothing); every later one is a replay.
  // Two eager iterations before the capture are what DDP needs: its buckets are rebuilt in the
  // second.
  colony::Tensor run(const colony::data::Batch& batch) {
    if (!x_.defined()) {
      // The static inputs the graph reads.
      x_ = colony::raw::clone(batch.data.to(dev_));
      y_ = colony::raw::clone(batch.target.to(dev_));
      step();
      return loss_;
    }
    x_.copy_(batch.data);
    y_.copy_(batch.target);
    if (!graphed_) {
      Tensor warmup_loss;
      graphed_ = colony::cuda::make_graphed_step(
          [this, &warmup_loss] {
            step();
            if (!warmup_loss.defined()) warmup_loss = loss_;
          },
          dev_, /*warmup=*/1);
      return warmup_loss;
    }
    graphed_->replay();
    return loss_;  // the graph's output tensor, rewritten by each replay
  }

 private:
  using Tensor = colony::Tensor;

  void step() {
    opt_.zero_grad();
    {
      colony::AutocastGuard autocast(dev_.type, amp_.dtype, amp_.enabled);
      loss_ = colony::F::cross_entropy(model_.forward(x_), y_);
    }
    scaler_.scale(loss_).backward();
    scaler_.step(opt_);  // captured: the skip on overflow is decided on the device
    scaler_.update();
  }

  colony::nn::Module& model_;
  colony::optim::Optimizer& opt_;
  colony::optim::GradScaler& scaler_;
  colony::Device dev_;
  AmpMode amp_;
  Tensor x_, y_, loss_;
  std::optional<colony::cuda::GraphedStep> graphed_;
};

}  // namespace lenet
