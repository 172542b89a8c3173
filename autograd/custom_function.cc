#include "autograd/custom_function.h"

#include <stdexcept>

#include "autograd/engine/function_node.h"
#include "autograd/engine/view_tracking.h"
#include "autograd/op_util.h"
#include "ops/raw_ops.h"

namespace colony::autograd {

void AutogradContext::save_for_backward(variable_list to_save) {
  to_save_ = std::move(to_save);
  save_called_ = true;
}

variable_list AutogradContext::get_saved_variables() const {
  // Still in forward, or the node records nothing: the tensors as given.
  if (saved_.empty()) return to_save_;
  variable_list out;
  out.reserve(saved_.size());
  for (size_t i = 0; i < saved_.size(); ++i) out.push_back(saved_defined_[i] ? saved_[i].unpack() : Tensor());
  return out;
}

void AutogradContext::mark_non_differentiable(const variable_list& outputs) {
  non_differentiable_.insert(non_differentiable_.end(), outputs.begin(), outputs.end());
}

void AutogradContext::mark_dirty(const variable_list& inputs) {
  dirty_.insert(dirty_.end(), inputs.begin(), inputs.end());
}

bool AutogradContext::needs_input_grad(size_t index) const {
  if (node_ == nullptr || index >= node_->num_inputs()) {
    throw std::out_of_range("needs_input_grad: index " + std::to_string(index) + " out of range for " +
                            std::to_string(node_ == nullptr ? 0 : node_->num_inputs()) + " tensor inputs");
  }
  return node_->executable() && node_->next_edges[index].valid();
}

CustomFunctionNode::CustomFunctionNode(std::string name, Backward backward)
    : name_(std::move(name)), backward_(backward) {
  ctx_.node_ = this;
}

void CustomFunctionNode::begin(std::vector<bool> is_variable_input, variable_list inputs) {
  is_variable_input_ = std::move(is_variable_input);
  inputs_ = std::move(inputs);
  executable_ = needs_grad(inputs_);
  next_edges.clear();
  next_edges.reserve(inputs_.size());
  versions_.clear();
  for (const Tensor& in : inputs_) {
    next_edges.push_back(executable_ ? gradient_edge(in) : Edge{});
    versions_.push_back(in.defined() ? in.version() : 0);
  }
}

void CustomFunctionNode::finish(variable_list& outputs) {
  auto listed = [](const variable_list& list, const Tensor& t) {
    for (const Tensor& x : list) {
      if (x.defined() && t.is_same(x)) return true;
    }
    return false;
  };
  if (executable_) {
    for (size_t i = 0; i < inputs_.size(); ++i) {
      if (inputs_[i].defined() && inputs_[i].requires_grad() && inputs_[i].version() != versions_[i] &&
          !listed(ctx_.dirty_, inputs_[i])) {
        throw std::invalid_argument(name_ + ": forward modified its input " + std::to_string(i) +
                                    " in place, and that input requires grad: pass it to ctx->mark_dirty() and "
                                    "return it, or return a new tensor");
      }
    }
  }
  for (const Tensor& d : ctx_.dirty_) {
    if (d.defined() && !listed(outputs, d)) {
      throw std::invalid_argument(name_ +
                                  ": Some elements marked as dirty during the forward method were not returned as "
                                  "output. The inputs that are modified inplace must all be outputs of the Function.");
    }
  }
  auto is_input = [this](const Tensor& t) {
    for (const Tensor& in : inputs_) {
      if (in.defined() && t.is_same(in)) return true;
    }
    return false;
  };
  auto non_differentiable = [this](const Tensor& t) {
    for (const Tensor& nd : ctx_.non_differentiable_) {
      if (nd.defined() && t.is_same(nd)) return true;
    }
    return false;
  };
  undefined_output_.assign(outputs.size(), false);
  Node::outputs.clear();
  for (size_t i = 0; i < outputs.size(); ++i) {
    Tensor& out = outputs[i];
    if (!out.defined()) {
      undefined_output_[i] = true;
      Node::outputs.push_back(TensorMeta{});
      continue;
    }
    const bool differentiable = !non_differentiable(out);
    if (differentiable && listed(ctx_.dirty_, out) && is_input(out)) {
      // Modified in place: the input itself is the output, its history rebased onto this node.
      Node::outputs.push_back(TensorMeta::of(out));
      if (executable_) {
        detail::check_inplace_allowed(out, name_.c_str());
        detail::rebase_history(out, Edge{shared_from_this(), static_cast<int>(i)});
      }
      continue;
    }
    // An input handed back keeps its own history: the output is a new handle to the same data.
    if (is_input(out) || (executable_ && differentiable && out.grad_fn() != nullptr)) out = raw::alias(out);
    Node::outputs.push_back(TensorMeta::of(out));
    if (executable_ && differentiable) {
      AutogradMeta& meta = AutogradMetaAccess::get(out);
      meta.grad_fn = shared_from_this();
      meta.output_nr = static_cast<int64_t>(i);
    }
  }
  if (executable_ && ctx_.save_called_) {
    for (const Tensor& t : ctx_.to_save_) {
      bool is_output = false;
      for (const Tensor& out : outputs) is_output = is_output || (out.defined() && t.defined() && t.is_same(out));
      ctx_.saved_defined_.push_back(t.defined());
      ctx_.saved_.push_back(t.defined() ? SavedTensor(t, is_output) : SavedTensor());
      if (t.defined()) ctx_.saved_.back().set_owner(name_);
    }
    ctx_.to_save_.clear();
  }
  inputs_.clear();  // the node must not keep its inputs alive
}

std::vector<Tensor> CustomFunctionNode::apply(std::vector<Tensor> grads) {
  for (size_t i = 0; i < grads.size(); ++i) {
    if (undefined_output_[i]) grads[i] = Tensor();
  }
  std::lock_guard<std::mutex> lock(mutex_);
  variable_list out = backward_(&ctx_, std::move(grads));
  const size_t expected = is_variable_input_.size();
  if (out.size() > expected) {
    bool extra_undefined = true;
    for (size_t i = expected; i < out.size(); ++i) extra_undefined = extra_undefined && !out[i].defined();
    if (extra_undefined) out.resize(expected);
  }
  if (out.size() != expected) {
    throw std::runtime_error("function " + name_ + " returned an incorrect number of gradients (expected " +
                             std::to_string(expected) + ", got " + std::to_string(out.size()) + ")");
  }
  variable_list result;
  result.reserve(next_edges.size());
  for (size_t i = 0; i < out.size(); ++i) {
    if (is_variable_input_[i]) {
      result.push_back(std::move(out[i]));
    } else if (out[i].defined()) {
      throw std::runtime_error("function " + name_ + " returned a gradient different than an undefined tensor at position " +
                               std::to_string(i + 1) + ", but the corresponding forward input was not a Variable");
    }
  }
  return result;
}

void CustomFunctionNode::release_saved() {
  for (SavedTensor& s : ctx_.saved_) s.release();
}

}  // namespace colony::autograd
