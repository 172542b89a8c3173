#include "autograd/composite_backward.h"

#include <unordered_set>
#include <utility>

#include "autograd/autocast.h"
#include "autograd/engine/engine.h"

namespace colony::autograd::detail {

std::vector<Tensor> differentiate_composite(const Composite& composite, const std::vector<Tensor>& inputs,
                                            const std::vector<Tensor>& grads, const std::vector<bool>& needs) {
  std::vector<Tensor> result(inputs.size());
  std::vector<Tensor> outputs;
  {
    // The backward computes in the dtypes the forward left, as record_differentiable's closures do.
    AutocastGuard cpu(DeviceType::CPU, /*enabled=*/false), cuda(DeviceType::CUDA, /*enabled=*/false);
    outputs = composite(inputs);
  }
  std::vector<Tensor> roots, seeds;
  for (size_t k = 0; k < outputs.size() && k < grads.size(); ++k) {
    if (grads[k].defined() && requires_grad_safe(outputs[k])) {
      roots.push_back(outputs[k]);
      seeds.push_back(grads[k]);
    }
  }
  // The back-propagation stops at the inputs' own nodes, so each gradient is the partial derivative
  // for that input (autograd::grad would add the paths through one input into another), and it
  // looks no further up the graph than the composite.
  std::vector<Edge> edges(inputs.size());
  std::unordered_set<const Node*> stops;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!requires_grad_safe(inputs[i])) continue;
    edges[i] = gradient_edge(inputs[i]);
    stops.insert(edges[i].fn.get());
  }
  if (roots.empty() || stops.empty()) return result;
  for (BoundaryGradient& b : backward_to_boundary(roots, std::move(seeds),
                                                  [&stops](const Node& n) { return stops.count(&n) > 0; },
                                                  /*create_graph=*/true)) {
    // An input passed twice (attention's q = k = v) has one edge: its summed gradient goes to the
    // first slot that wants it, which the engine adds up with the others' undefined ones.
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (needs[i] && !result[i].defined() && edges[i].fn == b.edge.fn && edges[i].input_nr == b.edge.input_nr) {
        result[i] = std::move(b.grad);
        break;
      }
    }
  }
  return result;
}

namespace {

BackwardFn fused_or_composite(const std::vector<Tensor>& inputs, BackwardFn fused, Composite composite,
                              std::vector<SavedTensor>& saved) {
  std::vector<SavedTensor> saved_inputs;
  for (const Tensor& t : inputs) saved_inputs.emplace_back(t);
  for (const SavedTensor& s : saved_inputs) saved.push_back(s);  // released with the node's others
  return [fused = std::move(fused), composite = std::move(composite), saved_inputs](
             const std::vector<Tensor>& grads, const std::vector<bool>& needs) -> std::vector<Tensor> {
    if (!GradMode::is_enabled()) return fused(grads, needs);
    std::vector<Tensor> xs;
    for (const SavedTensor& s : saved_inputs) xs.push_back(s.unpack());
    return differentiate_composite(composite, xs, grads, needs);
  };
}

}  // namespace

void record_fused(const std::string& name, const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs,
                  std::vector<SavedTensor> saved, BackwardFn fused, Composite composite) {
  BackwardFn fn = fused_or_composite(inputs, std::move(fused), std::move(composite), saved);
  record(name, inputs, outputs, std::move(saved), std::move(fn), Backward::Differentiable);
}

void record_fused(const std::string& name, const std::vector<Tensor>& inputs, Tensor& output,
                  std::vector<SavedTensor> saved, BackwardFn fused, Composite composite) {
  BackwardFn fn = fused_or_composite(inputs, std::move(fused), std::move(composite), saved);
  record(name, inputs, output, std::move(saved), std::move(fn), Backward::Differentiable);
}

}  // namespace colony::autograd::detail
