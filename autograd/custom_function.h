// Custom autograd Functions, as libtorch writes them (torch::autograd::Function<T>): an op whose
// forward and backward the user writes, usable anywhere a built-in op is.
//
//   struct MulConstant : autograd::Function<MulConstant> {
//     static Tensor forward(autograd::AutogradContext* ctx, const Tensor& x, double c) {
//       ctx->saved_data["c"] = c;
//       return x * c;
//     }
//     static autograd::variable_list backward(autograd::AutogradContext* ctx, autograd::variable_list g) {
//       return {g[0] * ctx->saved_data["c"].toDouble(), Tensor()};  // one per forward argument
//     }
//   };
//   Tensor y = MulConstant::apply(x, 5.0);
//
// What apply does, in libtorch's order:
//   1. The forward's arguments are read for tensors: a Tensor, a std::optional<Tensor> holding one,
//      and each element of a std::vector<Tensor> are the node's inputs; anything else is not.
//   2. forward runs with grad mode off, so its own ops record nothing.
//   3. If grad mode is on and an input requires grad, the outputs get the node as grad_fn (an
//      output that is one of the inputs is first replaced by a new handle to it, so the input's own
//      history stays), except the outputs passed to ctx->mark_non_differentiable(). An input the
//      forward wrote in place and passed to ctx->mark_dirty() is returned itself, its history
//      rebased onto the node as a built-in in-place op rebases it (through its base when it is a
//      view); it must be one of the outputs and must not be a leaf that requires grad. Then the
//      tensors passed to ctx->save_for_backward() are saved with their versions, so a backward
//      after an in-place write to one of them throws, as every built-in op does.
//   4. backward gets one gradient per forward output (zeros for an output that received none,
//      unless ctx->set_materialize_grads(false): then undefined) and returns one per forward
//      ARGUMENT, tensors or not; those of non-tensor arguments must be undefined. Returning more is
//      accepted when the extra ones are undefined. Its ops record nothing, except in a backward
//      with create_graph, where they record as in PyTorch: a backward written with differentiable
//      ops makes the Function differentiable twice (tests/autograd/double_backward_test.cc).
//
// Differences from libtorch, on purpose or not yet built:
//   - A forward that writes an input that requires grad in place without ctx->mark_dirty() is
//     refused ("... modified its input 0 in place ..."), where libtorch gives a wrong gradient.
//   - A view marked dirty may be any output of the Function (libtorch wants it the only one).
//   - forward returns a Tensor or a variable_list (libtorch also takes a tuple of tensors).
//   - No forward-mode AD (jvp) and no tracing.
//   - The node's name is the class's name without Colony's namespaces (type_name), libtorch's the
//     demangled name.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "autograd/engine/node.h"
#include "autograd/engine/saved_tensor.h"
#include "autograd/ivalue.h"
#include "base/type_name.h"
#include "tensor/grad_mode.h"
#include "tensor/tensor.h"

namespace colony::autograd {

using variable_list = std::vector<Tensor>;

class CustomFunctionNode;

// What forward hands to backward (libtorch's AutogradContext).
struct AutogradContext {
  // Anything but tensors that are inputs or outputs (those go through save_for_backward, which
  // checks they were not modified before backward).
  std::unordered_map<std::string, IValue> saved_data;

  // Call once in forward, with inputs, outputs or other tensors (undefined ones allowed).
  void save_for_backward(variable_list to_save);
  // In backward: the saved tensors, in the order given. Throws after the graph was freed
  // (backward without retain_graph) or when one was modified in place since.
  variable_list get_saved_variables() const;
  // Outputs that get no gradient (indices, masks): they do not require grad, and backward gets
  // zeros (or undefined) in their place.
  void mark_non_differentiable(const variable_list& outputs);
  // Inputs the forward modified in place (libtorch's mark_dirty); call in forward, and return them.
  void mark_dirty(const variable_list& inputs);
  // false: backward gets undefined tensors for the outputs that received no gradient.
  void set_materialize_grads(bool value) { materialize_grads_ = value; }
  // Whether tensor input `index` (counting the tensors among forward's arguments, as the node's
  // inputs) needs a gradient; valid in forward and backward.
  bool needs_input_grad(size_t index) const;

 private:
  friend class CustomFunctionNode;
  const CustomFunctionNode* node_ = nullptr;
  variable_list to_save_;
  bool save_called_ = false;
  std::vector<SavedTensor> saved_;
  std::vector<bool> saved_defined_;
  variable_list non_differentiable_;
  variable_list dirty_;
  bool materialize_grads_ = true;
};

// The node every custom Function records; Function<T>::apply drives it.
class CustomFunctionNode : public Node {
 public:
  using Backward = variable_list (*)(AutogradContext*, variable_list);
  CustomFunctionNode(std::string name, Backward backward);

  std::string name() const override { return name_; }
  std::vector<Tensor> apply(std::vector<Tensor> grads) override;
  void release_saved() override;
  bool materializes_grads() const override { return ctx_.materialize_grads_; }
  // The user's backward runs with grad mode on under create_graph, as in PyTorch: written with
  // differentiable ops, its gradients can be differentiated again.
  bool differentiable_backward() const override { return true; }

  AutogradContext* ctx() { return &ctx_; }
  // Before forward: which arguments are tensors, the tensor inputs, and the edges if it records.
  void begin(std::vector<bool> is_variable_input, variable_list inputs);
  // After forward: the outputs wired to this node (or left alone when it records nothing) and
  // the saved tensors kept. Replaces outputs that are inputs by new handles.
  void finish(variable_list& outputs);
  bool executable() const { return executable_; }
  size_t num_inputs() const { return next_edges.size(); }

 private:
  std::string name_;
  Backward backward_;
  AutogradContext ctx_;
  std::vector<bool> is_variable_input_;
  variable_list inputs_;             // until finish(): to find outputs that are inputs
  std::vector<uint32_t> versions_;   // the inputs' versions before forward
  std::vector<bool> undefined_output_;
  bool executable_ = false;
  std::mutex mutex_;  // backward of one node runs one at a time, as libtorch's CppNode
};

namespace detail {

// Step 1 of apply: which arguments are tensors (libtorch's ExtractVariables).
struct ExtractVariables {
  std::vector<bool>& is_var;
  variable_list& list;
  void operator()(const Tensor& t) {
    is_var.push_back(true);
    list.push_back(t);
  }
  void operator()(const std::optional<Tensor>& t) {
    const bool var = t.has_value() && t->defined();
    is_var.push_back(var);
    if (var) list.push_back(*t);
  }
  void operator()(const std::vector<Tensor>& ts) {
    for (const Tensor& t : ts) (*this)(t);
  }
  template <typename A>
  void operator()(const A&) {
    is_var.push_back(false);
  }
};

template <typename R>
variable_list to_list(R&& out) {
  if constexpr (std::is_same_v<std::decay_t<R>, Tensor>) {
    return {std::forward<R>(out)};
  } else {
    return variable_list(std::forward<R>(out));
  }
}

}  // namespace detail

template <class T>
struct Function {
  template <typename X = T, typename... Args>
  static auto apply(Args&&... args) {
    using Result = std::decay_t<decltype(X::forward(std::declval<AutogradContext*>(), std::forward<Args>(args)...))>;
    static_assert(std::is_same_v<Result, Tensor> || std::is_same_v<Result, variable_list>,
                  "a custom Function's forward returns a Tensor or a variable_list");
    auto node = std::make_shared<CustomFunctionNode>(
        type_name(typeid(X)), [](AutogradContext* ctx, variable_list grads) -> variable_list {
          return X::backward(ctx, std::move(grads));
        });
    std::vector<bool> is_var;
    variable_list inputs;
    detail::ExtractVariables extract{is_var, inputs};
    (extract(static_cast<const std::decay_t<Args>&>(args)), ...);
    node->begin(std::move(is_var), std::move(inputs));
    Result result;
    {
      NoGradGuard no_grad;
      result = X::forward(node->ctx(), std::forward<Args>(args)...);
    }
    variable_list outputs = detail::to_list(std::move(result));
    node->finish(outputs);
    if constexpr (std::is_same_v<Result, Tensor>) {
      return outputs[0];
    } else {
      return outputs;
    }
  }
};

}  // namespace colony::autograd
