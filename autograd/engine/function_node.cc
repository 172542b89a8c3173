#include "autograd/engine/function_node.h"

#include <stdexcept>

#include "autograd/engine/accumulate_grad.h"
#include "autograd/engine/view_tracking.h"
#include "ops/raw_ops.h"

namespace colony::autograd {

FunctionNode::FunctionNode(std::string name, BackwardFn fn, std::vector<SavedTensor> saved, Backward kind)
    : name_(std::move(name)), fn_(std::move(fn)), saved_(std::move(saved)), kind_(kind) {
  for (SavedTensor& s : saved_) s.set_owner(name_);
}

void FunctionNode::bind_saved_outputs(const std::vector<Tensor>& outputs) {
  for (SavedTensor& s : saved_) {
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (s.saved_from(outputs[i])) s.bind_output(shared_from_this(), static_cast<int64_t>(i));
    }
  }
}

std::vector<Tensor> FunctionNode::apply(std::vector<Tensor> grads) {
  std::vector<bool> needs(next_edges.size());
  for (size_t i = 0; i < next_edges.size(); ++i) needs[i] = next_edges[i].valid();
  std::vector<Tensor> result = fn_(grads, needs);
  if (result.size() != next_edges.size()) {
    throw std::logic_error(name_ + " returned " + std::to_string(result.size()) + " gradients for " +
                           std::to_string(next_edges.size()) + " inputs");
  }
  for (size_t i = 0; i < result.size(); ++i) {
    if (!needs[i]) result[i] = Tensor();
  }
  return result;
}

void FunctionNode::release_saved() {
  for (SavedTensor& s : saved_) s.release();
}

bool requires_grad_safe(const Tensor& t) {
  if (!t.defined()) return false;
  refresh_view(t);
  return t.requires_grad();
}

bool needs_grad(const std::vector<Tensor>& inputs) {
  if (!GradMode::is_enabled()) return false;
  for (const Tensor& t : inputs) {
    if (requires_grad_safe(t)) return true;
  }
  return false;
}

Edge gradient_edge(const Tensor& t) {
  if (!requires_grad_safe(t)) return {};
  if (const std::shared_ptr<Node>& fn = t.grad_fn()) return {fn, static_cast<int>(t.output_nr())};
  return {grad_accumulator(t), 0};
}

void attach(const std::shared_ptr<Node>& node, const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) {
  node->next_edges.reserve(inputs.size());
  for (const Tensor& in : inputs) node->next_edges.push_back(gradient_edge(in));
  node->outputs.reserve(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    Tensor& out = outputs[i];
    bool shared = out.grad_fn() != nullptr;
    for (const Tensor& in : inputs) shared = shared || out.is_same(in);
    if (shared) out = raw::alias(out);
    AutogradMeta& meta = AutogradMetaAccess::get(out);
    meta.grad_fn = node;
    meta.output_nr = static_cast<int64_t>(i);
    node->outputs.push_back(TensorMeta::of(out));
  }
}

void record(const std::string& name, const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs,
            std::vector<SavedTensor> saved, BackwardFn fn, Backward kind) {
  auto node = std::make_shared<FunctionNode>(name, std::move(fn), std::move(saved), kind);
  node->bind_saved_outputs(outputs);
  attach(node, inputs, outputs);
}

void record(const std::string& name, const std::vector<Tensor>& inputs, Tensor& output,
            std::vector<SavedTensor> saved, BackwardFn fn, Backward kind) {
  std::vector<Tensor> outputs;
  outputs.push_back(std::move(output));
  record(name, inputs, outputs, std::move(saved), std::move(fn), kind);
  output = std::move(outputs[0]);
}

}  // namespace colony::autograd
