// The node most ops record: a closure computing the input gradients (a tape of closures, as in
// flashlight), plus the tensors it saved. Op files build one with record().
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "autograd/engine/node.h"
#include "autograd/engine/saved_tensor.h"
#include "tensor/grad_mode.h"

namespace colony::autograd {

// grads: one per forward output. needs_input_grad[i]: whether input i wants a gradient (so a
// closure can skip work; what it returns for an input that needs none is ignored).
// Returns one gradient per forward input; undefined = no gradient.
using BackwardFn =
    std::function<std::vector<Tensor>(const std::vector<Tensor>& grads, const std::vector<bool>& needs_input_grad)>;

// What a closure is written with. Raw: raw ops, whose results carry no history, so a backward with
// create_graph cannot differentiate them again (the engine makes a second backward through them
// throw). Differentiable: the differentiable ops of autograd/ops.h, which record nothing while grad
// mode is off (an ordinary backward) and record the gradients' own graph under create_graph.
enum class Backward { Raw, Differentiable };

class FunctionNode : public Node {
 public:
  FunctionNode(std::string name, BackwardFn fn, std::vector<SavedTensor> saved, Backward kind = Backward::Raw);
  std::string name() const override { return name_; }
  std::vector<Tensor> apply(std::vector<Tensor> grads) override;
  void release_saved() override;
  bool differentiable_backward() const override { return kind_ == Backward::Differentiable; }
  // Gives each saved output (SavedTensor(out, /*is_output=*/true)) its place among `outputs`, the
  // handles the op made, before attach() wires them.
  void bind_saved_outputs(const std::vector<Tensor>& outputs);

 private:
  std::string name_;
  BackwardFn fn_;
  std::vector<SavedTensor> saved_;
  Backward kind_;
};

// Whether `t` is defined and requires grad; a view whose base was written in place since first
// derives its history again (autograd/engine/view_tracking.h).
bool requires_grad_safe(const Tensor& t);

// Whether an op on these inputs records a node: grad mode is on and some input requires grad.
template <typename... Ts>
bool needs_grad(const Ts&... inputs) {
  return GradMode::is_enabled() && (requires_grad_safe(inputs) || ...);
}
bool needs_grad(const std::vector<Tensor>& inputs);

// The edge a gradient for `t` travels: its grad_fn, its leaf's AccumulateGrad, or none.
Edge gradient_edge(const Tensor& t);

// Makes a FunctionNode the grad_fn of `outputs` (output i gets output_nr i) with one edge per input.
// An output that is the same TensorImpl as an input is replaced by an alias first, so the input's
// history is never overwritten.
// `kind` says what `fn` is written with (Backward above).
void record(const std::string& name, const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs,
            std::vector<SavedTensor> saved, BackwardFn fn, Backward kind = Backward::Raw);
void record(const std::string& name, const std::vector<Tensor>& inputs, Tensor& output,
            std::vector<SavedTensor> saved, BackwardFn fn, Backward kind = Backward::Raw);

// Sets `node` as the grad_fn of `outputs` and wires its edges; for nodes other than FunctionNode.
void attach(const std::shared_ptr<Node>& node, const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs);

}  // namespace colony::autograd
