#include "autograd/checkpoint.h"

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "autograd/autocast.h"
#include "autograd/engine/accumulate_grad.h"
#include "autograd/engine/engine.h"
#include "autograd/engine/function_node.h"
#include "autograd/engine/saved_tensor.h"
#include "ops/raw_ops.h"
#include "tensor/grad_mode.h"
#include "tensor/random.h"

namespace colony::autograd {
namespace {

const char* const kNodeName = "CheckpointBackward";

// What the recomputation must reproduce of the forward's surroundings.
struct ForwardState {
  uint64_t rng_seed = 0, rng_offset = 0;
  bool preserve_rng = true;
  bool cpu_autocast = false, cuda_autocast = false;
  DType cpu_dtype = kBFloat16, cuda_dtype = kFloat16;

  static ForwardState now(bool preserve_rng) {
    ForwardState s;
    s.preserve_rng = preserve_rng;
    if (preserve_rng) {
      s.rng_seed = default_generator().seed();
      s.rng_offset = default_generator().offset();
    }
    s.cpu_autocast = is_autocast_enabled(DeviceType::CPU);
    s.cpu_dtype = get_autocast_dtype(DeviceType::CPU);
    s.cuda_autocast = is_autocast_enabled(DeviceType::CUDA);
    s.cuda_dtype = get_autocast_dtype(DeviceType::CUDA);
    return s;
  }
};

// Sets the forward's generator state for the recomputation and puts the current one back after it
// (torch's fork_rng), so a backward does not move the random stream the training loop sees.
class RngReplay {
 public:
  explicit RngReplay(const ForwardState& s) : active_(s.preserve_rng) {
    if (!active_) return;
    seed_ = default_generator().seed();
    offset_ = default_generator().offset();
    default_generator().set_state(s.rng_seed, s.rng_offset);
  }
  ~RngReplay() {
    if (active_) default_generator().set_state(seed_, offset_);
  }
  RngReplay(const RngReplay&) = delete;
  RngReplay& operator=(const RngReplay&) = delete;

 private:
  bool active_;
  uint64_t seed_ = 0, offset_ = 0;
};

// Detached copies of the inputs; those whose original required grad require grad, so the graph
// recorded on them ends at their own AccumulateGrad nodes.
std::vector<Tensor> detached(const std::vector<Tensor>& inputs, const std::vector<bool>& wants_grad) {
  std::vector<Tensor> out(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) continue;
    out[i] = inputs[i].detach();
    if (wants_grad[i]) out[i].requires_grad_(true);
  }
  return out;
}

// Whether `n` lies outside the graph fn records from the moment `start` was drawn: made before, or
// a leaf's AccumulateGrad (which take the highest number).
bool outside(const Node& n, uint64_t start) {
  return n.sequence_nr() < start || n.sequence_nr() == kMaxSequenceNr;
}

// Which detached input `n` accumulates into, or -1.
int detached_input_of(const Node& n, const std::vector<Tensor>& detached_inputs) {
  const auto* acc = dynamic_cast<const AccumulateGrad*>(&n);
  if (acc == nullptr) return -1;
  for (size_t i = 0; i < detached_inputs.size(); ++i) {
    if (detached_inputs[i].defined() && acc->variable().is_same(detached_inputs[i])) return static_cast<int>(i);
  }
  return -1;
}

using EdgeKey = std::pair<const Node*, int>;

std::string describe(const Node& n) {
  if (const auto* acc = dynamic_cast<const AccumulateGrad*>(&n)) {
    return "a leaf of shape " + shape_str(acc->variable().sizes());
  }
  return "the output of " + n.name();
}

class CheckpointNode : public Node {
 public:
  CheckpointNode(CheckpointFunction fn, const std::vector<Tensor>& inputs, std::vector<bool> wants_grad,
                 std::vector<size_t> differentiable_outputs, size_t num_outputs, ForwardState state)
      : fn_(std::move(fn)),
        wants_grad_(std::move(wants_grad)),
        differentiable_(std::move(differentiable_outputs)),
        num_outputs_(num_outputs),
        state_(state) {
    for (const Tensor& t : inputs) {
      saved_.emplace_back(t);
      saved_.back().set_owner(kNodeName);
    }
  }

  std::string name() const override { return kNodeName; }

  void release_saved() override {
    for (SavedTensor& s : saved_) s.release();
  }

  // Edges 0..inputs-1 are the inputs', the rest the tensors fn reached by itself.
  std::vector<Tensor> apply(std::vector<Tensor> grads) override {
    std::vector<Tensor> inputs;
    for (const SavedTensor& s : saved_) inputs.push_back(s.unpack());
    const std::vector<Tensor> detached_inputs = detached(inputs, wants_grad_);

    std::vector<Tensor> outputs;
    uint64_t start = 0;
    {
      RngReplay rng(state_);
      EnableGradGuard grad_mode;
      autocast::CacheScope cache;
      AutocastGuard cpu(DeviceType::CPU, state_.cpu_dtype, state_.cpu_autocast);
      AutocastGuard cuda(DeviceType::CUDA, state_.cuda_dtype, state_.cuda_autocast);
      start = next_sequence_nr();
      outputs = fn_(detached_inputs);
    }
    if (outputs.size() != num_outputs_) {
      throw std::runtime_error(std::string(kNodeName) + ": the recomputation of fn returned " +
                               std::to_string(outputs.size()) + " tensors, the forward " +
                               std::to_string(num_outputs_));
    }
    std::vector<Tensor> roots;
    for (size_t k = 0; k < differentiable_.size(); ++k) {
      const size_t j = differentiable_[k];
      const Tensor& out = outputs[j];
      if (!out.defined() || !requires_grad_safe(out) || out.sizes() != this->outputs[k].shape) {
        throw std::runtime_error(std::string(kNodeName) + ": the recomputation of fn gave output " + std::to_string(j) +
                                 (out.defined() ? " of shape " + shape_str(out.sizes()) +
                                                      (out.requires_grad() ? "" : " with no history")
                                                : " undefined") +
                                 ", the forward one of shape " + shape_str(this->outputs[k].shape) +
                                 " requiring grad: fn must compute the same each time it runs");
      }
      roots.push_back(out);
    }

    std::map<EdgeKey, size_t> edge_of;
    for (size_t k = inputs.size(); k < next_edges.size(); ++k) {
      edge_of.emplace(EdgeKey{next_edges[k].fn.get(), next_edges[k].input_nr}, k);
    }
    std::vector<Tensor> result(next_edges.size());
    for (BoundaryGradient& b : backward_to_boundary(roots, std::move(grads),
                                                    [start](const Node& n) { return outside(n, start); })) {
      const int input = detached_input_of(*b.edge.fn, detached_inputs);
      if (input >= 0) {
        result[static_cast<size_t>(input)] = std::move(b.grad);
        continue;
      }
      auto it = edge_of.find(EdgeKey{b.edge.fn.get(), b.edge.input_nr});
      if (it == edge_of.end()) {
        throw std::runtime_error(std::string(kNodeName) + ": the recomputation of fn reached " + describe(*b.edge.fn) +
                                 ", which requires grad and which the forward did not use: fn must compute the "
                                 "same each time it runs");
      }
      result[it->second] = std::move(b.grad);
    }
    return result;
  }

 private:
  CheckpointFunction fn_;
  std::vector<SavedTensor> saved_;
  std::vector<bool> wants_grad_;
  std::vector<size_t> differentiable_;  // which of fn's outputs are this node's outputs, in order
  size_t num_outputs_;
  ForwardState state_;
};

// The edges by which fn's recorded graph (made after `start`) leaves itself, in the order a
// depth-first walk from the outputs meets them, other than those into the detached inputs.
std::vector<Edge> edges_leaving(const std::vector<Tensor>& outputs, uint64_t start,
                                const std::vector<Tensor>& detached_inputs) {
  std::vector<Edge> leaving;
  std::map<EdgeKey, bool> seen_edges;
  std::map<const Node*, bool> seen_nodes;
  std::vector<Edge> stack;
  for (auto it = outputs.rbegin(); it != outputs.rend(); ++it) {
    if (requires_grad_safe(*it)) stack.push_back(gradient_edge(*it));
  }
  while (!stack.empty()) {
    Edge e = std::move(stack.back());
    stack.pop_back();
    if (outside(*e.fn, start)) {
      if (detached_input_of(*e.fn, detached_inputs) < 0 && !seen_edges[{e.fn.get(), e.input_nr}]) {
        seen_edges[{e.fn.get(), e.input_nr}] = true;
        leaving.push_back(e);
      }
      continue;
    }
    if (seen_nodes[e.fn.get()]) continue;
    seen_nodes[e.fn.get()] = true;
    for (auto it = e.fn->next_edges.rbegin(); it != e.fn->next_edges.rend(); ++it) {
      if (it->valid()) stack.push_back(*it);
    }
  }
  return leaving;
}

}  // namespace

std::vector<Tensor> checkpoint(const CheckpointFunction& fn, const std::vector<Tensor>& inputs,
                               bool preserve_rng_state) {
  if (!fn) throw std::invalid_argument("checkpoint: fn is empty");
  if (!GradMode::is_enabled()) {
    std::vector<Tensor> outputs = fn(inputs);
    if (outputs.empty()) throw std::invalid_argument("checkpoint: fn returned no tensors; it must return at least one");
    return outputs;
  }
  std::vector<bool> wants_grad(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) wants_grad[i] = requires_grad_safe(inputs[i]);
  const ForwardState state = ForwardState::now(preserve_rng_state);
  const std::vector<Tensor> detached_inputs = detached(inputs, wants_grad);

  std::vector<Tensor> outputs;
  uint64_t start = 0;
  {
    autocast::CacheScope cache;
    start = next_sequence_nr();
    outputs = fn(detached_inputs);
  }
  if (outputs.empty()) throw std::invalid_argument("checkpoint: fn returned no tensors; it must return at least one");

  std::vector<size_t> differentiable;
  std::vector<Tensor> attached;
  for (size_t j = 0; j < outputs.size(); ++j) {
    if (requires_grad_safe(outputs[j])) {
      differentiable.push_back(j);
      // A fresh handle on each (fn may return an input as it is), so the history set below is
      // the output's alone.
      attached.push_back(raw::alias(outputs[j]));
    }
  }
  if (attached.empty()) return outputs;  // nothing fn read requires grad: nothing to recompute for

  auto node = std::make_shared<CheckpointNode>(fn, inputs, wants_grad, differentiable, outputs.size(), state);
  for (const Tensor& in : inputs) node->next_edges.push_back(gradient_edge(in));
  for (Edge& e : edges_leaving(outputs, start, detached_inputs)) node->next_edges.push_back(std::move(e));
  // fn's own graph, and all it saved, goes with the tensors that held it.
  attach(node, {}, attached);
  for (size_t k = 0; k < differentiable.size(); ++k) outputs[differentiable[k]] = std::move(attached[k]);
  return outputs;
}

Tensor checkpoint(const std::function<Tensor(const Tensor&)>& fn, const Tensor& input, bool preserve_rng_state) {
  if (!fn) throw std::invalid_argument("checkpoint: fn is empty");
  return checkpoint([fn](const std::vector<Tensor>& in) { return std::vector<Tensor>{fn(in[0])}; },
                    std::vector<Tensor>{input}, preserve_rng_state)[0];
}

}  // namespace colony::autograd
