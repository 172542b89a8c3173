#include "optim/rule_step.h"

#include <vector>

#include <sstream>
#include <stdexcept>

#include "ops/cuda_graph.h"
#include "ops/raw_ops.h"

namespace colony::optim::detail {

RuleStepScope::RuleStepScope(const char* op) {
  if (cuda::CUDAGraph::capturing() != nullptr) {
    throw std::runtime_error(std::string(op) +
                             ": can't be captured in a CUDA graph: its step counts live on the host, so every replay "
                             "would take the captured step's bias corrections; capture SGD or Adam(W) with "
                             "capturable(true), or run this optimizer eagerly");
  }
}

double advance_step(std::map<std::string, Tensor>& state) {
  auto it = state.find("step");
  if (it == state.end()) {
    it = state.emplace("step", raw::zeros({}, TensorOptions(kFloat64))).first;
  } else if (!it->second.device().is_cpu() || it->second.dtype() != kFloat64) {
    it->second = raw::to(it->second, kCPU, kFloat64);
  }
  const double step = it->second.item<double>() + 1;
  raw::fill_(it->second, step);
  return step;
}

Tensor& state_tensor(std::map<std::string, Tensor>& state, const std::string& name, const Tensor& param,
                     double value) {
  auto it = state.find(name);
  if (it == state.end()) it = state.emplace(name, raw::full_like(param, value)).first;
  return it->second;
}

namespace {

template <typename States>
void append(raw::RuleStepTensors& step, const Tensor& param, const Tensor& grad, const States& states) {
  step.params.push_back(param);
  step.grads.push_back(raw::contiguous(grad));
  int k = 0;
  for (const Tensor* s : states) {
    if (s != nullptr) step.states[k].push_back(*s);
    ++k;
  }
}

}  // namespace

void add_to_step(raw::RuleStepTensors& step, const Tensor& param, const Tensor& grad,
                 std::initializer_list<const Tensor*> states) {
  append(step, param, grad, states);
}

std::map<double, raw::RuleStepTensors> batch_by_step(
    const std::vector<Tensor>& params, const std::function<std::map<std::string, Tensor>&(const Tensor&)>& state_of,
    std::initializer_list<const char*> names) {
  std::map<double, raw::RuleStepTensors> by_step;
  std::vector<const Tensor*> states;
  for (const Tensor& p : params) {
    if (!p.grad().defined()) continue;
    auto& state = state_of(p);
    const double step = advance_step(state);
    states.clear();
    for (const char* name : names) states.push_back(&state_tensor(state, name, p));
    append(by_step[step], p, p.grad(), states);
  }
  return by_step;
}

void check_range(bool ok, const char* optimizer, const char* what, double value, const char* expected) {
  if (ok) return;
  std::ostringstream message;
  message << optimizer << ": Invalid " << what << ": " << value << ", expected " << expected;
  throw std::invalid_argument(message.str());
}

}  // namespace colony::optim::detail
