// The Tensor members that drive autograd: backward, detach, retain_grad and the hooks.
#include <algorithm>
#include <stdexcept>

#include "autograd/engine/engine.h"
#include "autograd/engine/node.h"
#include "autograd/ops.h"

namespace colony {

void Tensor::backward(const Tensor& gradient, std::optional<bool> retain_graph, bool create_graph) const {
  std::vector<Tensor> grads;
  if (gradient.defined()) grads.push_back(gradient);
  autograd::backward({*this}, grads, retain_graph, create_graph);
}

Tensor Tensor::detach() const { return colony::detach(*this); }

void Tensor::retain_grad() const {
  if (!requires_grad()) {
    throw std::logic_error("retain_grad: can't retain_grad on a tensor that has requires_grad=false");
  }
  if (is_leaf()) return;  // leaves keep their .grad() anyway
  AutogradMeta& meta = AutogradMetaAccess::get(*this);
  if (meta.retains_grad) return;
  meta.retains_grad = true;
  grad_fn()->add_retained_grad(static_cast<int>(output_nr()), impl_);
}

int Tensor::register_hook(TensorHook hook) const {
  if (!requires_grad()) {
    throw std::logic_error("register_hook: cannot register a hook on a tensor that doesn't require gradient");
  }
  AutogradMeta& meta = AutogradMetaAccess::get(*this);
  int id = meta.next_hook_id++;
  if (is_leaf()) {
    meta.hooks.emplace_back(id, std::move(hook));
  } else {
    // Kept on grad_fn so the hook runs even when this handle is gone by the time of backward.
    grad_fn()->add_tensor_hook(static_cast<int>(output_nr()), id, std::move(hook));
  }
  return id;
}

int Tensor::register_post_accumulate_grad_hook(PostAccumulateGradHook hook) const {
  if (!is_leaf()) {
    throw std::logic_error(
        "register_post_accumulate_grad_hook: post accumulate grad hooks cannot be registered on non-leaf tensors");
  }
  if (!requires_grad()) {
    throw std::logic_error(
        "register_post_accumulate_grad_hook: cannot register a hook on a tensor that doesn't require gradient");
  }
  AutogradMeta& meta = AutogradMetaAccess::get(*this);
  int id = meta.next_hook_id++;
  meta.post_accumulate_hooks.emplace_back(id, std::move(hook));
  return id;
}

void Tensor::remove_hook(int handle) const {
  if (!AutogradMetaAccess::has(*this)) return;
  AutogradMeta& meta = AutogradMetaAccess::get(*this);
  auto by_id = [handle](const auto& entry) { return entry.first == handle; };
  auto& hooks = meta.hooks;
  auto& post = meta.post_accumulate_hooks;
  hooks.erase(std::remove_if(hooks.begin(), hooks.end(), by_id), hooks.end());
  post.erase(std::remove_if(post.begin(), post.end(), by_id), post.end());
  if (grad_fn()) grad_fn()->remove_tensor_hook(static_cast<int>(output_nr()), handle);
}

}  // namespace colony
