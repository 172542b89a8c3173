#include "autograd/engine/saved_tensor.h"

#include <stdexcept>

#include "ops/raw_ops.h"
#include "tensor/grad_mode.h"

namespace colony::autograd {

const char* const kFreedGraphMessage =
    "Trying to backward through the graph a second time (or directly access saved tensors after they "
    "have already been freed). Saved intermediate values of the graph are freed when you call "
    "backward() or autograd::grad(). Specify retain_graph=true if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward.";

SavedTensor::SavedTensor(const Tensor& t, bool is_output) {
  if (!t.defined()) return;
  state_ = std::make_shared<State>();
  state_->tensor = is_output ? raw::alias(t) : t;
  state_->version = t.version();
  if (is_output) {
    state_->source = t.impl_ptr().get();
    if (t.grad_fn()) bind_output(t.grad_fn(), t.output_nr());
  }
}

bool SavedTensor::saved_from(const Tensor& t) const {
  return state_ && state_->source != nullptr && state_->source == t.impl_ptr().get();
}

void SavedTensor::bind_output(const std::shared_ptr<Node>& node, int64_t output_nr) {
  if (!state_) return;
  state_->grad_fn = node;
  state_->output_nr = output_nr;
}

void SavedTensor::set_owner(const std::string& node_name) {
  if (state_) state_->owner = node_name;
}

Tensor SavedTensor::unpack() const {
  if (!state_) return Tensor();
  if (state_->released) throw std::runtime_error(kFreedGraphMessage);
  const Tensor& t = state_->tensor;
  if (t.version() != state_->version) {
    std::string msg =
        "one of the variables needed for gradient computation has been modified by an inplace operation: [" +
        std::string(dtype_name(t.dtype())) + " " + shape_str(t.sizes()) + "] is at version " +
        std::to_string(t.version()) + "; expected version " + std::to_string(state_->version) + " instead.";
    if (!state_->owner.empty()) msg += " It was saved by " + state_->owner + ".";
    throw std::runtime_error(msg);
  }
  if (GradMode::is_enabled()) {
    if (std::shared_ptr<Node> node = state_->grad_fn.lock()) {
      Tensor restored = raw::alias(t);
      AutogradMeta& meta = AutogradMetaAccess::get(restored);
      meta.grad_fn = std::move(node);
      meta.output_nr = state_->output_nr;
      return restored;
    }
  }
  return t;
}

void SavedTensor::release() {
  if (!state_) return;
  state_->tensor = Tensor();
  state_->released = true;
}

}  // namespace colony::autograd
