#include "autograd/engine/graph_math.h"

#include <stdexcept>

#include "autograd/engine/function_node.h"
#include "ops/raw_ops.h"

namespace colony::autograd {
namespace {

using Grads = std::vector<Tensor>;
using Needs = std::vector<bool>;

// The end of a gradient's history that cannot be differentiated: applying it is the error.
class NotDifferentiableTwice : public Node {
 public:
  explicit NotDifferentiableTwice(std::string node_name) : node_name_(std::move(node_name)) {}
  std::string name() const override { return "NotImplemented"; }
  std::vector<Tensor> apply(std::vector<Tensor>) override {
    throw std::runtime_error("the derivative of " + node_name_ +
                             " is not implemented: a gradient computed with create_graph=true went through "
                             "it, and Colony cannot differentiate that op's backward a second time "
                             "(autograd/README.md lists the ops that can)");
  }

 private:
  std::string node_name_;
};

}  // namespace

Tensor add_recorded(const Tensor& a, const Tensor& b) {
  Tensor out = raw::add(a, b);
  if (needs_grad(a, b)) {
    record("AddBackward0", {a, b}, out, {},
           [](const Grads& g, const Needs&) -> Grads { return {g[0], g[0]}; }, Backward::Differentiable);
  }
  return out;
}

Tensor cast_recorded(const Tensor& g, Device device, DType dtype) {
  Tensor out = raw::to(g, device, dtype);
  if (needs_grad(g)) {
    const Device from_device = g.device();
    const DType from_dtype = g.dtype();
    record("ToCopyBackward0", {g}, out, {}, [from_device, from_dtype](const Grads& gr, const Needs&) -> Grads {
      return {cast_recorded(gr[0], from_device, from_dtype)};
    }, Backward::Differentiable);
  }
  return out;
}

Tensor clone_recorded(const Tensor& g) {
  Tensor out = raw::clone(g);
  if (needs_grad(g)) {
    record("CloneBackward0", {g}, out, {}, [](const Grads& gr, const Needs&) -> Grads { return {gr[0]}; },
           Backward::Differentiable);
  }
  return out;
}

Tensor without_double_backward(const std::string& node_name, const Tensor& grad, const std::vector<Edge>& depends_on) {
  std::vector<Tensor> outputs{raw::alias(grad)};
  auto node = std::make_shared<NotDifferentiableTwice>(node_name);
  attach(node, {}, outputs);
  node->next_edges = depends_on;
  return outputs[0];
}

}  // namespace colony::autograd
