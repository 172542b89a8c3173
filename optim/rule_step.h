// What RMSprop, Adagrad, Adamax, NAdam, RAdam, Adadelta, Rprop and ASGD share around their update rules
// (kernels/common/optim_functors.h): the step's setting, the per-parameter step count kept on the
// host as torch's non-capturable optimizers keep it, state tensors made on first use, the lists
// one fused update takes, and torch's range checks with messages that say what was expected.
#pragma once

#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "log/trace.h"
#include "ops/raw_optim_ops.h"
#include "tensor/grad_mode.h"
#include "tensor/tensor.h"

namespace colony::optim::detail {

// For the length of a step: a trace span, no autograd recording, and a refusal when a CUDA graph
// is capturing (the step counts and per-step scalars live on the host, so every replay would
// repeat the captured step's numbers; SGD and capturable Adam can be captured).
class RuleStepScope {
 public:
  explicit RuleStepScope(const char* op);

 private:
  trace::Scope span_{"optimizer.step", "compute"};
  NoGradGuard no_grad_;
};

// Advances state["step"], a float64 scalar on the CPU (created at 0; moved there when a checkpoint
// loaded it onto the parameter's device), and returns the new count.
double advance_step(std::map<std::string, Tensor>& state);

// state[name], made like `param` and filled with `value` when the parameter has none yet.
Tensor& state_tensor(std::map<std::string, Tensor>& state, const std::string& name, const Tensor& param,
                     double value = 0);

// Appends a parameter, its gradient (made contiguous) and its states (in the rule's order; nullptr
// for a state this step does not use) to the lists of one fused update.
void add_to_step(raw::RuleStepTensors& step, const Tensor& param, const Tensor& grad,
                 std::initializer_list<const Tensor*> states);

// The parameters of `params` that have a gradient, batched by their step count (advanced here, as
// advance_step), each with its states `names` in the rule's order (state_tensor: zeros like the
// parameter on first use): one fused update per count, since the bias corrections depend on it.
std::map<double, raw::RuleStepTensors> batch_by_step(
    const std::vector<Tensor>& params, const std::function<std::map<std::string, Tensor>&(const Tensor&)>& state_of,
    std::initializer_list<const char*> names);

// torch's range check: throws std::invalid_argument("<optimizer>: Invalid <what>: <value>,
// expected <expected>") unless ok (write ok so that NaN fails it).
void check_range(bool ok, const char* optimizer, const char* what, double value, const char* expected);

// torch's range checks of the options the Adam family shares (Adamax, NAdam, RAdam): lr, eps,
// betas, weight_decay, in torch's order and words.
template <typename Options>
void check_adam_family_ranges(const Options& o, const char* optimizer) {
  check_range(o.lr() >= 0, optimizer, "learning rate", o.lr(), "lr >= 0");
  check_range(o.eps() >= 0, optimizer, "epsilon value", o.eps(), "eps >= 0");
  check_range(o.beta1() >= 0 && o.beta1() < 1, optimizer, "beta parameter at index 0", o.beta1(), "0 <= beta1 < 1");
  check_range(o.beta2() >= 0 && o.beta2() < 1, optimizer, "beta parameter at index 1", o.beta2(), "0 <= beta2 < 1");
  check_range(o.weight_decay() >= 0, optimizer, "weight_decay value", o.weight_decay(), "weight_decay >= 0");
}

}  // namespace colony::optim::detail
