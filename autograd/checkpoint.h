// Activation checkpointing (torch.utils.checkpoint.checkpoint(fn, *args, use_reentrant=False)):
// trade compute for memory. The forward of `fn` keeps none of its activations; the backward runs
// `fn` again, with the random state (dropout masks) and autocast state of the forward, and
// back-propagates through that recomputed graph.
//
//   for (auto& block : blocks)   // a transformer's blocks: one block's activations live at a time
//     x = autograd::checkpoint([&](const Tensor& h) { return block->forward(h); }, x);
//
// How (one node per call, as the reentrant variant, but with every edge of the non-reentrant one):
//  - Forward: fn runs with grad mode on, on detached copies of the inputs, in an autocast cast
//    cache of its own (autocast::CacheScope). The graph it records names every tensor requiring
//    grad that fn read: the inputs, and what fn reached by itself (parameters, tensors its closure
//    captured). One CheckpointNode replaces that graph as the outputs' grad_fn, with an edge per
//    input and one per such tensor, and the graph is dropped with everything it saved. Only the
//    inputs are kept (as saved tensors: an in-place write into one before backward is reported).
//    fn does not run under no-grad, as torch's does, because some ops take another path without
//    grad (matmul is raw::matmul then, bmm-composed with it: autograd/linalg.cc), so a no-grad
//    forward would not give the bits the recomputation and an unrolled run give; and because the
//    recorded graph finds the parameters with no tracing in every op. The cost: while fn runs,
//    its own activations are alive (one region's, not the model's).
//  - Backward: the forward's generator state is set (preserve_rng_state; the one default
//    generator serves CPU and CUDA draws), fn runs again with grad on fresh detached inputs, and
//    the incoming gradients (zeros for outputs that got none) are back-propagated through the
//    recomputed graph down to its boundary (backward_to_boundary, autograd/engine/engine.h): the
//    detached inputs' and parameters' AccumulateGrad nodes and the nodes made before fn ran, none
//    of which runs. What arrives there leaves the CheckpointNode by the matching edge, and the
//    generator is put back where it was.
//  - Parameters are thus accumulated by the outer pass, once, with their contributions from
//    inside and outside fn summed in the engine's buffer first: hooks and post-accumulate hooks
//    (DDP's readiness) run once per backward, as without checkpointing. That is why not the
//    reentrant design (a nested backward writing .grad itself runs a parameter's AccumulateGrad
//    and its hooks once per checkpoint plus once outside); and why not saved-tensor hooks (the
//    non-reentrant design): Colony's closures keep some tensors by value (MulBackward keeps the
//    dropout mask, autograd/binary.cc), which such hooks would not see.
//  - Gradients equal the unrolled computation's bit for bit, except (equal up to rounding) where a
//    tensor's gradient has two or more contributions from inside fn and one or more from outside
//    (the inside ones are summed first), and under autocast for a weight the enclosing region cast
//    before fn (fn casts it again: checkpoint_test's UnderAutocastAWeightCastBeforeFnIsCastAgainInside).
//
// With grad mode off, fn simply runs. When nothing fn reads requires grad the outputs need none
// (no warning); when only parameters do (an input of token ids), they still get their gradients,
// as with torch's use_reentrant=False. autograd::grad works through the node (under create_graph
// a second backward through its gradients throws); backward twice needs retain_graph, and
// recomputes each time. fn must compute the same graph each time it runs (the same ops on the same tensors requiring grad); a recomputation
// that reaches a tensor the forward did not, or gives other outputs, is an error naming it.
#pragma once

#include <functional>
#include <vector>

#include "tensor/tensor.h"

namespace colony::autograd {

using CheckpointFunction = std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs)>;

// fn's outputs (at least one tensor), computed without keeping fn's activations for backward.
// Inputs may be any tensors (undefined ones pass through as undefined).
std::vector<Tensor> checkpoint(const CheckpointFunction& fn, const std::vector<Tensor>& inputs,
                               bool preserve_rng_state = true);
// One tensor in, one out.
Tensor checkpoint(const std::function<Tensor(const Tensor&)>& fn, const Tensor& input,
                  bool preserve_rng_state = true);

}  // namespace colony::autograd
