#include "autograd/engine/node.h"

#include <algorithm>
#include <atomic>

#include "autograd/engine/graph_math.h"
#include "ops/raw_ops.h"
#include "tensor/grad_mode.h"

namespace colony::autograd {

uint64_t next_sequence_nr() {
  static std::atomic<uint64_t> counter{0};
  return counter.fetch_add(1, std::memory_order_relaxed);
}

Node::Node() : sequence_nr_(next_sequence_nr()) {}
Node::~Node() = default;

void Node::add_tensor_hook(int output_nr, int id, TensorHook hook) {
  hooks_.push_back({output_nr, id, std::move(hook)});
}

bool Node::remove_tensor_hook(int output_nr, int id) {
  auto it = std::find_if(hooks_.begin(), hooks_.end(),
                         [&](const HookEntry& h) { return h.output_nr == output_nr && h.id == id; });
  if (it == hooks_.end()) return false;
  hooks_.erase(it);
  return true;
}

void Node::add_retained_grad(int output_nr, std::weak_ptr<TensorImpl> tensor) {
  retained_.emplace_back(output_nr, std::move(tensor));
}

Tensor Node::run_tensor_hooks(int output_nr, Tensor grad) {
  // Copy first: a hook may register or remove hooks while it runs.
  std::vector<HookEntry> hooks = hooks_;
  for (const HookEntry& h : hooks) {
    if (h.output_nr != output_nr) continue;
    if (std::optional<Tensor> replaced = h.hook(grad)) grad = std::move(*replaced);
  }
  // retain_grad runs after the user's hooks so .grad() shows what flows on (PyTorch >= 2.0).
  for (auto& [nr, weak] : retained_) {
    if (nr != output_nr || !grad.defined()) continue;
    if (std::shared_ptr<TensorImpl> impl = weak.lock()) {
      Tensor t(impl);
      accumulate_into_grad(t, grad, /*in_place=*/false);
    }
  }
  return grad;
}

bool exclusively_owned(const Tensor& g) {
  const Storage& s = g.storage();
  return g.impl_ptr().use_count() == 1 && s.use_count() == 1 && g.is_contiguous() &&
         g.storage_offset() == 0 && static_cast<size_t>(g.nbytes()) == s->nbytes() && !g.requires_grad();
}

void accumulate_into_grad(Tensor& t, Tensor grad, bool in_place) {
  Tensor current = t.grad();
  if (GradMode::is_enabled() && (grad.requires_grad() || (current.defined() && current.requires_grad()))) {
    // create_graph: .grad() keeps the gradient's graph, in a tensor of its own (PyTorch's clone),
    // and a later gradient is added out of place so the earlier graph stays intact.
    t.set_grad(current.defined() ? add_recorded(current, grad) : clone_recorded(grad));
    return;
  }
  if (!current.defined()) {
    t.set_grad(exclusively_owned(grad) ? std::move(grad) : raw::clone(grad));
  } else if (in_place) {
    raw::binary_(raw::BinaryOp::Add, current, grad);
  } else {
    t.set_grad(raw::add(current, grad));
  }
}

}  // namespace colony::autograd
