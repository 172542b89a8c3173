// The little math the engine itself does on gradients (summing two that meet at one input, casting
// one to its input's dtype, copying one into a leaf's .grad()), recorded when a backward with
// create_graph builds the gradients' own graph; and the mark a node that cannot be differentiated
// twice leaves on its results. Under no-grad each is the plain raw op.
#pragma once

#include <string>
#include <vector>

#include "autograd/engine/node.h"
#include "tensor/tensor.h"

namespace colony::autograd {

// a + b for two gradients of one shape (AddBackward0 when either has history).
Tensor add_recorded(const Tensor& a, const Tensor& b);
// g cast to `dtype` on `device` (ToCopyBackward0, casting the gradient back, when g has history).
Tensor cast_recorded(const Tensor& g, Device device, DType dtype);
// A copy of g with its own storage (CloneBackward0 when g has history).
Tensor clone_recorded(const Tensor& g);

// `grad`, computed without history by `node_name` during a backward with create_graph, as a tensor
// whose history is one node that throws when a gradient reaches it: PyTorch's answer for a
// derivative it does not implement, so a second derivative is never silently zero. `depends_on`:
// the edges of what grad is a function of (the node's forward inputs, the incoming gradients), so
// that an autograd::grad towards any of them runs the node, and throws.
Tensor without_double_backward(const std::string& node_name, const Tensor& grad, const std::vector<Edge>& depends_on);

}  // namespace colony::autograd
