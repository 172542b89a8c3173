#include "autograd/engine/accumulate_grad.h"

#include <stdexcept>

namespace colony::autograd {

AccumulateGrad::AccumulateGrad(Tensor leaf) : Node(kMaxSequenceNr), leaf_(std::move(leaf)) {
  outputs.push_back(TensorMeta::of(leaf_));
}

Tensor AccumulateGrad::run_leaf_hooks(Tensor grad) const {
  if (!AutogradMetaAccess::has(leaf_)) return grad;
  // Copy first: a hook may register or remove hooks while it runs.
  std::vector<std::pair<int, TensorHook>> hooks = AutogradMetaAccess::get(leaf_).hooks;
  for (auto& [id, hook] : hooks) {
    if (std::optional<Tensor> replaced = hook(grad)) grad = std::move(*replaced);
  }
  return grad;
}

std::vector<Tensor> AccumulateGrad::apply(std::vector<Tensor> grads) {
  Tensor grad = run_leaf_hooks(std::move(grads.at(0)));
  if (!grad.defined()) return {};
  std::vector<std::pair<int, PostAccumulateGradHook>> post;
  {
    std::lock_guard<std::mutex> lock(mu_);
    accumulate_into_grad(leaf_, std::move(grad), /*in_place=*/true);
    post = AutogradMetaAccess::get(leaf_).post_accumulate_hooks;
  }
  for (auto& [id, hook] : post) hook(leaf_);
  return {};
}

std::shared_ptr<Node> grad_accumulator(const Tensor& leaf) {
  static std::mutex creation;
  std::lock_guard<std::mutex> lock(creation);
  AutogradMeta& meta = AutogradMetaAccess::get(leaf);
  if (std::shared_ptr<Node> existing = meta.grad_accumulator.lock()) return existing;
  auto node = std::make_shared<AccumulateGrad>(leaf);
  meta.grad_accumulator = node;
  return node;
}

}  // namespace colony::autograd
