// The backward graph: a Node turns the gradients of its forward outputs into the gradients of its
// forward inputs and names, through its edges, the nodes that consume those.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tensor/tensor.h"

namespace colony::autograd {

struct Node;

// Where a gradient goes: input `input_nr` of `fn` (the forward output `input_nr` of the op that
// `fn` differentiates). An edge with no fn marks an input that needs no gradient.
struct Edge {
  std::shared_ptr<Node> fn;
  int input_nr = 0;
  bool valid() const { return fn != nullptr; }
};

// Shape, dtype and device of one forward output: lets the engine check the gradients it routes and
// fill in zeros for outputs that received none.
struct TensorMeta {
  Shape shape;
  DType dtype = DType::Float32;
  Device device;
  static TensorMeta of(const Tensor& t) { return {t.sizes(), t.dtype(), t.device()}; }
};

// Creation order of nodes, shared by all threads. The engine runs the highest ready number first,
// which walks the graph in reverse forward order like PyTorch.
uint64_t next_sequence_nr();
// AccumulateGrad nodes take this number so a leaf's gradient is written as soon as it is complete
// (DDP starts its all-reduce from that moment).
constexpr uint64_t kMaxSequenceNr = UINT64_MAX;

struct Node : std::enable_shared_from_this<Node> {
  Node();
  explicit Node(uint64_t sequence_nr) : sequence_nr_(sequence_nr) {}
  virtual ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  virtual std::string name() const = 0;
  // grads[i] is the gradient of forward output i (never undefined when the engine calls this:
  // outputs that received nothing get zeros, unless materializes_grads() says otherwise). Returns
  // one gradient per next edge; undefined means "no gradient" (zero) for that input.
  virtual std::vector<Tensor> apply(std::vector<Tensor> grads) = 0;
  // Frees what the node saved for backward (retain_graph=false); a later apply that needs it throws.
  virtual void release_saved() {}
  // false: apply gets undefined tensors, not zeros, for the outputs that received no gradient (a
  // custom Function after ctx->set_materialize_grads(false)).
  virtual bool materializes_grads() const { return true; }
  // Whether apply, run with grad mode on (a backward with create_graph), records the graph of the
  // gradients it returns, so they can be differentiated again. The engine runs a node that says no
  // under no-grad and marks its results so that a backward through them throws
  // (autograd/engine/graph_math.h), rather than silently treating them as constants.
  virtual bool differentiable_backward() const { return false; }

  uint64_t sequence_nr() const { return sequence_nr_; }
  size_t num_outputs() const { return outputs.size(); }

  std::vector<Edge> next_edges;    // one per forward input
  std::vector<TensorMeta> outputs;  // one per forward output

  // ---- hooks of the non-leaf tensors this node produced ----
  // They live on the node rather than on the tensor so they survive the tensor handle going out of
  // scope before backward (as in PyTorch, where they are pre-hooks of grad_fn).
  void add_tensor_hook(int output_nr, int id, TensorHook hook);
  bool remove_tensor_hook(int output_nr, int id);
  // retain_grad(): after the hooks, the gradient of output `output_nr` is accumulated into that
  // tensor's .grad(), if the tensor is still alive.
  void add_retained_grad(int output_nr, std::weak_ptr<TensorImpl> tensor);
  // Runs the hooks on the gradient of output `output_nr`, then fills retained grads.
  Tensor run_tensor_hooks(int output_nr, Tensor grad);
  bool has_tensor_hooks() const { return !hooks_.empty() || !retained_.empty(); }

 private:
  struct HookEntry {
    int output_nr;
    int id;
    TensorHook hook;
  };
  uint64_t sequence_nr_;
  std::vector<HookEntry> hooks_;
  std::vector<std::pair<int, std::weak_ptr<TensorImpl>>> retained_;
};

// Accumulates `grad` into `t`'s .grad(): the first gradient is stored without aliasing anything the
// caller may still hold (stolen only when nothing else refers to it), later ones are added.
// `in_place` selects an in-place add for later gradients (leaves) or a fresh sum (retain_grad,
// whose .grad the user may have kept from an earlier backward, as PyTorch does).
void accumulate_into_grad(Tensor& t, Tensor grad, bool in_place);

// True when no other handle or view can observe `g` (one handle, its storage whole and its own, no
// history), so storing it as .grad() aliases nothing and adding into it in place changes nothing
// anyone else sees.
bool exclusively_owned(const Tensor& g);

}  // namespace colony::autograd
