// A tensor kept for backward, with the storage version it had when saved, so a gradient is never
// computed from data that an in-place write has changed since.
#pragma once

#include <memory>
#include <string>

#include "tensor/tensor.h"

namespace colony::autograd {

class SavedTensor {
 public:
  SavedTensor() = default;
  // `is_output`: the tensor is an output of the node that saves it. Such a tensor is saved without
  // its autograd metadata, because tensor -> grad_fn -> saved tensor would be a reference cycle.
  explicit SavedTensor(const Tensor& t, bool is_output = false);

  // The saved tensor. Throws when the node was released (backward ran without retain_graph) or
  // when the tensor was modified in place after it was saved.
  Tensor unpack() const;
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
  };
  std::shared_ptr<State> state_;
};

// The message for a backward through freed saved tensors (shared with the engine).
extern const char* const kFreedGraphMessage;

}  // namespace colony::autograd
