// The sink of the graph for a leaf tensor: adds the arriving gradient into leaf.grad() and then
// tells whoever listens (post-accumulate-grad hooks; DDP's readiness signal).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "autograd/engine/node.h"

namespace colony::autograd {

class AccumulateGrad : public Node {
 public:
  explicit AccumulateGrad(Tensor leaf);
  std::string name() const override { return "AccumulateGrad"; }
  // Runs the leaf's tensor hooks, accumulates, runs its post-accumulate hooks. Returns nothing.
  std::vector<Tensor> apply(std::vector<Tensor> grads) override;
  // Under create_graph the .grad() it writes keeps the gradient's graph (accumulate_into_grad).
  bool differentiable_backward() const override { return true; }
  // The leaf's tensor hooks applied to `grad` (also used by autograd::grad, which does not accumulate).
  Tensor run_leaf_hooks(Tensor grad) const;
  const Tensor& variable() const { return leaf_; }

 private:
  // The leaf is held strongly; the leaf holds this node weakly (AutogradMeta::grad_accumulator),
  // so the node lives exactly as long as some graph uses it.
  Tensor leaf_;
  std::mutex mu_;  // two threads may backward into one shared parameter
};

// The leaf's AccumulateGrad, created on first use and reused while any graph holds it.
std::shared_ptr<Node> grad_accumulator(const Tensor& leaf);

}  // namespace colony::autograd
