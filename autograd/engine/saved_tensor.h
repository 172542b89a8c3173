// A tensor kept for backward, with the storage version it had when saved, so a gradient is never
// computed from data that an in-place write has changed since.
#pragma once

#include <memory>
#include <string>

#include "autograd/engine/node.h"

#include "tensor/tensor.h"

namespace colony::autograd {

class SavedTensor {
 public:
  SavedTensor() = default;
  // `is_output`: the tensor is an output of the node that saves it. Such a tensor is saved without
  // its autograd metadata, because tensor -> grad_fn -> saved tensor would be a reference cycle;
  // the node is remembered weakly instead (now if `t` already has it as grad_fn, else through
  // bind_output once the op has recorded it), as PyTorch's SavedVariable does.
  explicit SavedTensor(const Tensor& t, bool is_output = false);

  // The saved tensor. Throws when the node was released (backward ran without retain_graph) or
  // when the tensor was modified in place after it was saved. With grad mode on (a backward with
  // create_graph) a saved output comes back with its node as grad_fn again, so a gradient computed
  // from it is differentiable through it.
  Tensor unpack() const;
  // For a saved output: whether it was saved from `t` (the handle the op made, before recording).
  bool saved_from(const Tensor& t) const;
  // For a saved output: the node whose output `output_nr` it is.
  void bind_output(const std::shared_ptr<Node>& node, int64_t output_nr);
  // Drops the data; copies of this SavedTensor share the state and see the release.
  void release();
  bool defined() const { return state_ != nullptr; }
  // The name of the node that saved it, used in error messages.
  void set_owner(const std::string& node_name);

 private:
  struct State {
    Tensor tensor;
    uint32_t version = 0;
    bool released = false;
    std::string owner;
    // Saved outputs only: the handle saved from (identity, never dereferenced) and the node that
    // produced it, to restore the history on unpack under create_graph.
    const void* source = nullptr;
    std::weak_ptr<Node> grad_fn;
    int64_t output_nr = 0;
  };
  std::shared_ptr<State> state_;
};

// The message for a backward through freed saved tensors (shared with the engine).
extern const char* const kFreedGraphMessage;

}  // namespace colony::autograd
