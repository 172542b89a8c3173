#include "autograd/engine/engine.h"

#include <functional>
#include <queue>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "autograd/engine/accumulate_grad.h"
#include "autograd/engine/function_node.h"
#include "autograd/engine/graph_math.h"
#include "tensor/grad_mode.h"
#include "ops/raw_ops.h"

namespace colony::autograd {
namespace {

// The callbacks of one backward pass. Passes nest when a hook calls backward; callbacks belong
// to the innermost one.
struct GraphTask {
  std::vector<std::function<void()>> callbacks;
};
thread_local std::vector<GraphTask*> running_tasks;

class TaskScope {
 public:
  explicit TaskScope(GraphTask* task) { running_tasks.push_back(task); }
  ~TaskScope() { running_tasks.pop_back(); }
};

struct Capture {
  int output_nr;
  size_t slot;
};

struct ReadyItem {
  uint64_t sequence_nr;
  uint64_t order;  // FIFO among equal sequence numbers (several AccumulateGrads)
  Node* node;
};
struct ReadyOrder {
  bool operator()(const ReadyItem& a, const ReadyItem& b) const {
    if (a.sequence_nr != b.sequence_nr) return a.sequence_nr < b.sequence_nr;
    return a.order > b.order;
  }
};

std::string what_of(const char* op, size_t i) { return std::string(op) + "[" + std::to_string(i) + "]"; }

// Root edges and their gradients, checked the way torch.autograd.backward checks them.
void prepare_roots(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors,
                   std::vector<Edge>& edges, std::vector<Tensor>& grads) {
  if (!grad_tensors.empty() && grad_tensors.size() != tensors.size()) {
    throw std::invalid_argument("backward: got " + std::to_string(grad_tensors.size()) + " gradients for " +
                                std::to_string(tensors.size()) + " tensors");
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (!t.defined()) throw std::invalid_argument("backward: " + what_of("tensors", i) + " is undefined");
    if (!t.requires_grad()) {
      throw std::runtime_error("element " + std::to_string(i) +
                               " of tensors does not require grad and does not have a grad_fn");
    }
    Tensor g = grad_tensors.empty() ? Tensor() : grad_tensors[i];
    if (!g.defined()) {
      if (t.numel() != 1) {
        throw std::runtime_error("grad can be implicitly created only for scalar outputs, got shape " +
                                 shape_str(t.sizes()));
      }
      g = raw::ones_like(t);
    } else {
      if (g.sizes() != t.sizes()) {
        throw std::invalid_argument("Mismatch in shape: grad_output[" + std::to_string(i) + "] has a shape of " +
                                    shape_str(g.sizes()) + " and output[" + std::to_string(i) +
                                    "] has a shape of " + shape_str(t.sizes()));
      }
      if (g.device() != t.device()) {
        throw std::invalid_argument("backward: grad_output[" + std::to_string(i) + "] is on " + g.device().str() +
                                    " but output[" + std::to_string(i) + "] is on " + t.device().str());
      }
      if (g.dtype() != t.dtype()) g = cast_recorded(g, t.device(), t.dtype());
    }
    edges.push_back(gradient_edge(t));
    grads.push_back(std::move(g));
  }
}

class Execution {
 public:
  // create_graph: the caller runs the pass with grad mode on, so the gradients record their graph.
  Execution(bool retain_graph, bool accumulate, bool create_graph = false)
      : retain_graph_(retain_graph), accumulate_(accumulate), create_graph_(create_graph) {}

  // backward_to_boundary: the nodes `stop_at` selects are neither run nor looked beyond.
  void set_boundary(std::function<bool(const Node&)> stop_at) { stop_at_ = std::move(stop_at); }

  void discover(const std::vector<Edge>& roots) {
    std::vector<Node*> stack;
    auto visit = [&](const Edge& e) {
      if (!seen_.insert(e.fn.get()).second) return;
      keep_alive_.push_back(e.fn);
      if (stop_at_ && stop_at_(*e.fn)) {
        boundary_.insert(e.fn.get());
      } else {
        stack.push_back(e.fn.get());
      }
    };
    for (const Edge& e : roots) visit(e);
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      for (const Edge& e : n->next_edges) {
        if (!e.valid()) continue;
        ++dependencies_[e.fn.get()];
        visit(e);
      }
    }
  }

  // autograd::grad: where to read each input's gradient, and which nodes must run to get there.
  void set_captures(const std::vector<Edge>& input_edges) {
    for (size_t i = 0; i < input_edges.size(); ++i) {
      captures_[input_edges[i].fn.get()].push_back({input_edges[i].input_nr, i});
    }
    captured_.resize(input_edges.size());
    // A node must run when one of its children leads to a capture (post-order over the graph).
    std::unordered_map<Node*, bool> leads;  // node -> it or a descendant is captured
    std::vector<std::pair<Node*, size_t>> stack;
    for (const std::shared_ptr<Node>& n : keep_alive_) {
      if (leads.count(n.get())) continue;
      stack.push_back({n.get(), 0});
      leads[n.get()] = captures_.count(n.get()) > 0;
      while (!stack.empty()) {
        auto& [node, next] = stack.back();
        if (next < node->next_edges.size()) {
          Node* child = node->next_edges[next++].fn.get();
          if (child == nullptr) continue;
          auto it = leads.find(child);
          if (it == leads.end()) {
            leads[child] = captures_.count(child) > 0;
            stack.push_back({child, 0});
          }
          continue;
        }
        Node* done = node;
        stack.pop_back();
        bool any_child = false;
        for (const Edge& e : done->next_edges) any_child = any_child || (e.valid() && leads[e.fn.get()]);
        if (any_child) {
          must_run_.insert(done);
          leads[done] = true;
        }
      }
    }
  }

  void seed(const std::vector<Edge>& roots, std::vector<Tensor>& grads) {
    for (size_t i = 0; i < roots.size(); ++i) add_to_buffer(roots[i], std::move(grads[i]));
  }

  void run() {
    for (const std::shared_ptr<Node>& n : keep_alive_) {
      if (dependencies_[n.get()] == 0) push_ready(n.get());
    }
    while (!ready_.empty()) {
      Node* node = ready_.top().node;
      ready_.pop();
      evaluate(node);
    }
  }

  std::vector<Tensor>& captured() { return captured_; }
  std::vector<BoundaryGradient>& boundary_gradients() { return boundary_grads_; }

 private:
  void push_ready(Node* n) { ready_.push({n->sequence_nr(), order_++, n}); }

  void add_to_buffer(const Edge& e, Tensor grad) {
    std::vector<Tensor>& buf = buffers_[e.fn.get()];
    if (buf.empty()) buf.resize(e.fn->num_outputs());
    Tensor& slot = buf.at(e.input_nr);
    if (!slot.defined()) {
      slot = std::move(grad);
    } else if (exclusively_owned(slot) && !grad.requires_grad() && slot.sizes() == grad.sizes() &&
               slot.dtype() == grad.dtype() && slot.device() == grad.device()) {
      // Nothing else sees the first gradient (not another edge that was sent the same tensor, not a
      // saved tensor): the sum goes where it already is, as PyTorch's InputBuffer accumulates, with
      // no new tensor to allocate and first touch (a residual stream's sums in a transformer).
      raw::binary_(raw::BinaryOp::Add, slot, grad);
    } else {
      slot = add_recorded(slot, grad);
    }
  }

  // Casts a gradient to the dtype of the tensor it belongs to; a wrong shape or device is a bug in
  // the node that produced it.
  Tensor validate(Node* producer, size_t input, const Edge& e, Tensor g) {
    const TensorMeta& want = e.fn->outputs.at(e.input_nr);
    if (g.sizes() != want.shape) {
      throw std::logic_error(producer->name() + " returned a gradient of shape " + shape_str(g.sizes()) +
                             " for input " + std::to_string(input) + ", which has shape " + shape_str(want.shape));
    }
    if (g.device() != want.device) {
      throw std::logic_error(producer->name() + " returned a gradient on " + g.device().str() + " for input " +
                             std::to_string(input) + ", which is on " + want.device.str());
    }
    if (g.dtype() != want.dtype) g = cast_recorded(g, want.device, want.dtype);
    return g;
  }

  void evaluate(Node* node) {
    std::vector<Tensor> grads;
    auto buf = buffers_.find(node);
    if (buf != buffers_.end()) {
      grads = std::move(buf->second);
      buffers_.erase(buf);
    } else {
      grads.resize(node->num_outputs());
    }
    if (boundary_.count(node)) {
      for (size_t i = 0; i < grads.size(); ++i) {
        if (grads[i].defined()) {
          boundary_grads_.push_back({Edge{node->shared_from_this(), static_cast<int>(i)}, std::move(grads[i])});
        }
      }
      return;
    }
    if (node->has_tensor_hooks()) {
      for (size_t i = 0; i < grads.size(); ++i) {
        if (grads[i].defined()) grads[i] = node->run_tensor_hooks(static_cast<int>(i), std::move(grads[i]));
      }
    }
    auto* accumulator = dynamic_cast<AccumulateGrad*>(node);
    auto cap = captures_.find(node);
    if (cap != captures_.end()) {
      for (const Capture& c : cap->second) {
        Tensor g = grads.at(c.output_nr);
        if (accumulator != nullptr && g.defined()) g = accumulator->run_leaf_hooks(std::move(g));
        captured_[c.slot] = g;
      }
    }
    if (!accumulate_ && !must_run_.count(node)) return;

    bool any = false;
    for (const Tensor& g : grads) any = any || g.defined();
    std::vector<Tensor> outputs;
    if (any) {
      for (size_t i = 0; i < grads.size() && node->materializes_grads(); ++i) {
        if (grads[i].defined()) continue;
        const TensorMeta& m = node->outputs[i];
        grads[i] = raw::zeros(m.shape, TensorOptions(m.dtype).device(m.device));
      }
      if (create_graph_ && !node->differentiable_backward()) {
        std::vector<Edge> depends_on;
        for (const Edge& e : node->next_edges) {
          if (e.valid()) depends_on.push_back(e);
        }
        for (const Tensor& g : grads) {
          if (g.defined() && g.requires_grad()) depends_on.push_back(gradient_edge(g));
        }
        {
          NoGradGuard no_grad;
          outputs = node->apply(std::move(grads));
        }
        for (Tensor& o : outputs) {
          if (o.defined()) o = without_double_backward(node->name(), o, depends_on);
        }
      } else {
        outputs = node->apply(std::move(grads));
      }
      if (!retain_graph_) node->release_saved();
    }
    for (size_t i = 0; i < node->next_edges.size(); ++i) {
      const Edge& e = node->next_edges[i];
      if (!e.valid()) continue;
      if (i < outputs.size() && outputs[i].defined()) add_to_buffer(e, validate(node, i, e, std::move(outputs[i])));
      if (--dependencies_[e.fn.get()] == 0) push_ready(e.fn.get());
    }
  }

  bool retain_graph_;
  bool accumulate_;
  bool create_graph_;
  std::vector<std::shared_ptr<Node>> keep_alive_;
  std::unordered_set<Node*> seen_;
  std::unordered_map<Node*, int> dependencies_;
  std::unordered_map<Node*, std::vector<Tensor>> buffers_;
  std::priority_queue<ReadyItem, std::vector<ReadyItem>, ReadyOrder> ready_;
  uint64_t order_ = 0;
  std::unordered_map<Node*, std::vector<Capture>> captures_;
  std::unordered_set<Node*> must_run_;
  std::vector<Tensor> captured_;
  std::function<bool(const Node&)> stop_at_;
  std::unordered_set<Node*> boundary_;
  std::vector<BoundaryGradient> boundary_grads_;
};

void run_callbacks(GraphTask& task) {
  // A callback may queue another; run until none is left.
  for (size_t i = 0; i < task.callbacks.size(); ++i) {
    std::function<void()> cb = std::move(task.callbacks[i]);
    cb();
  }
  task.callbacks.clear();
}

}  // namespace

void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors,
              std::optional<bool> retain_graph, bool create_graph) {
  std::vector<Edge> roots;
  std::vector<Tensor> grads;
  GraphTask task;
  TaskScope scope(&task);
  {
    EnableGradGuard mode(create_graph);  // the backward pass itself is recorded only for create_graph
    prepare_roots(tensors, grad_tensors, roots, grads);
    Execution exec(retain_graph.value_or(create_graph), /*accumulate=*/true, create_graph);
    exec.discover(roots);
    exec.seed(roots, grads);
    exec.run();
  }
  run_callbacks(task);
}

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, std::optional<bool> retain_graph,
                         bool create_graph, bool allow_unused) {
  std::vector<Edge> roots;
  std::vector<Tensor> grads;
  {
    EnableGradGuard mode(create_graph);  // a grad_output's cast is recorded for create_graph
    prepare_roots(outputs, grad_outputs, roots, grads);
  }
  std::vector<Edge> input_edges;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!requires_grad_safe(inputs[i])) {
      throw std::invalid_argument("grad: " + what_of("inputs", i) + " does not require grad");
    }
    input_edges.push_back(gradient_edge(inputs[i]));
  }
  GraphTask task;
  TaskScope scope(&task);
  std::vector<Tensor> result;
  {
    EnableGradGuard mode(create_graph);  // the backward pass itself is recorded only for create_graph
    Execution exec(retain_graph.value_or(create_graph), /*accumulate=*/false, create_graph);
    exec.discover(roots);
    exec.set_captures(input_edges);
    exec.seed(roots, grads);
    exec.run();
    result = std::move(exec.captured());
  }
  for (size_t i = 0; i < result.size(); ++i) {
    if (!result[i].defined() && !allow_unused) {
      throw std::runtime_error("grad: " + what_of("inputs", i) +
                               " appears to not have been used in the graph. Set allow_unused=true if this "
                               "is the desired behavior.");
    }
  }
  run_callbacks(task);
  return result;
}

std::vector<BoundaryGradient> backward_to_boundary(const std::vector<Tensor>& outputs, std::vector<Tensor> grads,
                                                   const std::function<bool(const Node&)>& stop_at,
                                                   bool create_graph) {
  if (grads.size() != outputs.size()) {
    throw std::invalid_argument("backward_to_boundary: got " + std::to_string(grads.size()) + " gradients for " +
                                std::to_string(outputs.size()) + " outputs");
  }
  std::vector<Edge> roots;
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!requires_grad_safe(outputs[i]) || !grads[i].defined()) {
      throw std::invalid_argument("backward_to_boundary: " + what_of("outputs", i) +
                                  " needs a history and a gradient");
    }
    roots.push_back(gradient_edge(outputs[i]));
  }
  EnableGradGuard mode(create_graph);
  // With create_graph the gradients' graph runs through the nodes of this pass (as torch's
  // retain_graph defaults to create_graph), so they keep what they saved.
  Execution exec(/*retain_graph=*/create_graph, /*accumulate=*/true, create_graph);
  exec.set_boundary(stop_at);
  exec.discover(roots);
  exec.seed(roots, grads);
  exec.run();
  return std::move(exec.boundary_gradients());
}

void Engine::queue_callback(std::function<void()> callback) {
  if (running_tasks.empty()) {
    throw std::logic_error("Engine::queue_callback: no backward pass is running on this thread; call it from "
                           "a hook during backward");
  }
  running_tasks.back()->callbacks.push_back(std::move(callback));
}

bool Engine::is_running() { return !running_tasks.empty(); }

}  // namespace colony::autograd
