// A fused op made differentiable twice by naming its composite.
//
// A fused kernel's backward (layer_norm's, cross_entropy's, attention's) is one kernel, not a graph
// of differentiable ops, so a backward with create_graph cannot differentiate it again. Rather than
// a hand-written second derivative for each such op (torch's layer_norm_double_backward,
// batchnorm_double_backward, ...), the op names its composite: the same forward written with the
// differentiable ops of autograd/ops.h. An ordinary backward (grad mode off) runs the fused
// backward unchanged; under create_graph the node recomputes the composite from its saved inputs and
// back-propagates through it with create_graph, so the gradients it returns have history to any
// order. The math is stated once (the composite is the forward's definition); the cost, one more
// unfused forward and backward, is paid by create_graph passes only.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "autograd/engine/function_node.h"

namespace colony::autograd::detail {

// The op's forward from differentiable ops: one tensor per input of the node, in the node's order;
// one per output. Every tensor it uses that is not one of `inputs` must not require grad.
using Composite = std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs)>;

// The gradients for the node's inputs (undefined where !needs[i]) of the composite at `inputs`
// seeded with `grads`, recorded (grad mode on): the partial derivatives with respect to each input,
// not through one input into another.
std::vector<Tensor> differentiate_composite(const Composite& composite, const std::vector<Tensor>& inputs,
                                            const std::vector<Tensor>& grads, const std::vector<bool>& needs);

// record() for a fused op: `fused` is the ordinary backward (raw kernels), `composite` the forward
// it is differentiated through under create_graph. Saves the inputs for the composite; `fused`
// unpacks only what `saved` holds for it, so an input it does not read may change in place before
// an ordinary backward, as it may in PyTorch.
void record_fused(const std::string& name, const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs,
                  std::vector<SavedTensor> saved, BackwardFn fused, Composite composite);
void record_fused(const std::string& name, const std::vector<Tensor>& inputs, Tensor& output,
                  std::vector<SavedTensor> saved, BackwardFn fused, Composite composite);

}  // namespace colony::autograd::detail
