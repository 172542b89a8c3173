// Runs the backward graph: counts how many gradients each node waits for, runs ready nodes
// highest sequence number first, sums gradients that meet at one input, runs tensor hooks, and
// finishes with the callbacks queued during the pass.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "autograd/engine/node.h"
#include "tensor/tensor.h"

namespace colony::autograd {

// Accumulates d(sum_i <tensors[i], grad_tensors[i]>)/d(leaf) into every reachable leaf's .grad().
// grad_tensors may be empty (or hold undefined entries) for one-element tensors, which get ones.
// Without retain_graph (which defaults to create_graph, as PyTorch's) the saved tensors of every
// node run are freed. create_graph: the pass runs with grad mode on and records the graph of the
// gradients themselves, so .grad() can be differentiated again (a gradient penalty, a Hessian-vector
// product); a node whose backward is not differentiable leaves a mark that throws when a second
// backward reaches it (autograd/README.md lists the ops that are).
void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors = {},
              std::optional<bool> retain_graph = std::nullopt, bool create_graph = false);

// The gradients of `outputs` with respect to `inputs`, returned rather than accumulated into
// .grad() (torch.autograd.grad, its arguments in libtorch's order). Only the part of the graph
// between them runs. An input the outputs do not depend on is an error unless allow_unused, which
// returns an undefined tensor. create_graph and retain_graph as for backward().
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {}, std::optional<bool> retain_graph = std::nullopt,
                         bool create_graph = false, bool allow_unused = false);

// For activation checkpointing (autograd/checkpoint.h): back-propagates `grads` (one per output,
// each defined, the outputs requiring grad) through the graph above the nodes `stop_at` selects,
// and runs none of those. Returns, for each edge into such a node that a gradient reached, the
// gradient summed there as that node's input buffer would hold it, before any of its hooks. Runs
// under no-grad, or with create_graph under grad mode, recording the gradients' graph (a fused op's
// composite, autograd/composite_backward.h); without create_graph the nodes that run release what
// they saved. Callbacks queued by hooks that run belong to the enclosing backward pass, as the
// nodes' would without checkpointing.
struct BoundaryGradient {
  Edge edge;
  Tensor grad;
};
std::vector<BoundaryGradient> backward_to_boundary(const std::vector<Tensor>& outputs, std::vector<Tensor> grads,
                                                   const std::function<bool(const Node&)>& stop_at,
                                                   bool create_graph = false);

class Engine {
 public:
  // Runs `callback` once every node of the current backward pass has run, before backward()
  // returns (DDP waits for its all-reduces here). Callable only during backward, e.g. from a hook;
  // callbacks run in the order they were queued, and may queue more.
  static void queue_callback(std::function<void()> callback);
  // Whether a backward pass is running on this thread.
  static bool is_running();
};

}  // namespace colony::autograd
