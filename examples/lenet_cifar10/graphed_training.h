// --cuda_graph: the training step (zero_grad, forward, loss, backward, SGD step) captured once as a
// CUDA graph, on the first full batch, and replayed for every later one (tensor/cuda_graph.h).
#pragma once

#include <memory>
#include <optional>

#include "colony.h"
#include "examples/lenet_cifar10/amp_mode.h"

namespace lenet {

class GraphedTraining {
 public:
  GraphedTraining(colony::nn::Module& model, colony::optim::Optimizer& opt, colony::Device dev, const AmpMode& amp)
      : model_(model), opt_(opt), dev_(dev), amp_(amp) {}

  // One optimizer step on `batch` (a full batch: the graph's shapes are fixed); returns its loss,
  // still on the device.
  colony::Tensor run(const colony::data::Batch& batch) {
    if (!graphed_) {
      // The static inputs the graph reads; make_graphed_step's one warm-up call is this batch's
      // real step, and the capture after it runs nothing.
      x_ = colony::raw::clone(batch.data.to(dev_));
      y_ = colony::raw::clone(batch.target.to(dev_));
      graphed_ = colony::cuda::make_graphed_step([this] { step(); }, dev_, /*warmup=*/1);
      return warmup_loss_;
    }
    x_.copy_(batch.data);
    y_.copy_(batch.target);
    graphed_->replay();
    return loss_;  // the graph's output tensor, rewritten by each replay
  }

 private:
  void step() {
    opt_.zero_grad();
    {
      colony::AutocastGuard autocast(dev_.type, amp_.dtype, amp_.enabled);
      loss_ = colony::F::cross_entropy(model_.forward(x_), y_);
    }
    loss_.backward();
    opt_.step();
    if (!warmup_loss_.defined()) warmup_loss_ = loss_;
  }

  colony::nn::Module& model_;
  colony::optim::Optimizer& opt_;
  colony::Device dev_;
  AmpMode amp_;
  colony::Tensor x_, y_, loss_, warmup_loss_;
  std::optional<colony::cuda::GraphedStep> graphed_;
};

}  // namespace lenet
