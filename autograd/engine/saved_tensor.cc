#include "autograd/engine/saved_tensor.h"

#include <stdexcept>

#include "ops/raw_ops.h"

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
  return t;
}

void SavedTensor::release() {
  if (!state_) return;
  state_->tensor = Tensor();
  state_->released = true;
}

}  // namespace colony::autograd
