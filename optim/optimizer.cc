#include "optim/optimizer.h"

#include <cmath>
#include <set>
#include <stdexcept>
#include <typeinfo>

#include "ops/cuda_graph.h"
#include "tensor/grad_mode.h"
#include "ops/raw_ops.h"

namespace colony::optim {
namespace {

// A group's option or count as saved by state_dict: a tensor of one element.
double scalar_of(const Tensor& t, const std::string& name) {
  if (t.numel() != 1) {
    throw std::invalid_argument("optimizer load_state_dict: \"" + name + "\" holds " + std::to_string(t.numel()) +
                                " values, expected one");
  }
  return raw::to(t, kCPU, kFloat64).item<double>();
}

}  // namespace

OptimizerOptions& GroupOptions::get() {
  return const_cast<OptimizerOptions&>(static_cast<const GroupOptions&>(*this).get());
}

const OptimizerOptions& GroupOptions::get() const {
  if (!options_) throw std::logic_error("parameter group options: empty (the group is not in an optimizer yet)");
  return *options_;
}

void GroupOptions::throw_wrong_type(const OptimizerOptions& o, const std::string& wanted) {
  throw std::invalid_argument("parameter group options are " + o.type_name() + ", not " + wanted);
}

Optimizer::Optimizer(std::vector<Tensor> params, const OptimizerOptions& defaults)
    : Optimizer(std::vector<ParamGroup>{ParamGroup(std::move(params))}, defaults) {}

Optimizer::Optimizer(std::vector<ParamGroup> groups, const OptimizerOptions& defaults) : defaults_(defaults.clone()) {
  size_t total = 0;
  for (auto& g : groups) {
    total += g.params.size();
    add_param_group(std::move(g));
  }
  if (total == 0) throw std::invalid_argument("optimizer got an empty parameter list");
}

void Optimizer::add_param_group(ParamGroup group) {
  std::set<const TensorImpl*> seen;
  for (const auto& g : groups_)
    for (const auto& p : g.params) seen.insert(p.impl());
  for (const auto& p : group.params) {
    if (!p.defined()) throw std::invalid_argument("optimizer: parameter list holds an undefined tensor");
    if (!p.is_leaf()) throw std::invalid_argument("optimizer: can't optimize a non-leaf Tensor");
    if (!seen.insert(p.impl()).second) {
      throw std::invalid_argument("optimizer: some parameters appear in more than one parameter group");
    }
  }
  if (!group.options.has_value()) {
    group.options = GroupOptions(defaults_->clone());
  } else if (typeid(group.options.get()) != typeid(*defaults_)) {
    // AdamW given AdamOptions would train without its weight decay: refused, as any other mix-up.
    throw std::invalid_argument("optimizer: a parameter group has " + group.options.get().type_name() +
                                ", but this optimizer takes " + defaults_->type_name());
  } else {
    group.options.get().inherit_unset(*defaults_);  // torch.optim's param_group.setdefault(name, default)
  }
  check_options(group.options.get());  // the base class's check while constructing; the optimizer's later
  groups_.push_back(std::move(group));
}

void Optimizer::check_options(const OptimizerOptions& options) const {
  for (const auto& [k, v] : options.to_map()) {
    if (!std::isfinite(v)) throw std::invalid_argument("optimizer: option \"" + k + "\" is " + std::to_string(v));
  }
}

// One float64 per (group, device) whose steps a graph captured, and the value last written there.
struct Optimizer::DeviceLr {
  Optimizer* owner;
  std::map<std::pair<size_t, int>, Tensor> tensors;
  std::map<std::pair<size_t, int>, double> written;
};

Device Optimizer::captured_device(size_t group, const char* op) const {
  Device device = kCPU;
  for (const Tensor& p : groups_.at(group).params) {
    if (!p.grad().defined()) continue;
    if (!device.is_cpu() && p.device() != device) {
      throw std::runtime_error(std::string(op) + ": a captured step needs each group's parameters on one device, " +
                               "group " + std::to_string(group) + " has " + device.str() + " and " +
                               p.device().str());
    }
    device = p.device();
  }
  return device;
}

const double* Optimizer::captured_lr(size_t group, Device device) {
  if (!device_lr_) device_lr_ = std::make_shared<DeviceLr>(DeviceLr{this, {}, {}});
  const auto key = std::make_pair(group, device.index);
  auto it = device_lr_->tensors.find(key);
  if (it == device_lr_->tensors.end()) {
    it = device_lr_->tensors.emplace(key, raw::empty({1}, TensorOptions(kFloat64).device(device))).first;
    device_lr_->written[key] = std::nan("");
  }
  std::weak_ptr<DeviceLr> weak = device_lr_;
  cuda::CUDAGraph::capturing()->add_replay_prologue([weak, key] {
    auto lrs = weak.lock();
    if (!lrs) return;
    const double lr = lrs->owner->lr(key.first);
    double& written = lrs->written[key];
    if (lr == written) return;  // unchanged: no launch
    raw::fill_(lrs->tensors[key], lr);
    written = lr;
  });
  return static_cast<const double*>(it->second.data_ptr_raw());
}

void Optimizer::step_unless(const Tensor&) {
  throw std::logic_error("Optimizer::step_unless: this optimizer cannot skip a step on the device (SGD and Adam "
                         "can); read the flag on the host instead (GradScaler::step does outside a graph capture)");
}

void Optimizer::zero_grad(bool set_to_none) {
  for (auto& g : groups_) {
    for (auto& p : g.params) {
      Tensor& grad = p.mutable_grad();
      if (!grad.defined()) continue;
      if (set_to_none) {
        grad = Tensor();
      } else {
        raw::fill_(grad, 0.0);
      }
    }
  }
}

std::vector<Tensor> Optimizer::stepped_tensors() const {
  std::vector<Tensor> out;
  for (const auto& g : groups_) out.insert(out.end(), g.params.begin(), g.params.end());
  return out;
}

double Optimizer::lr(size_t group) const { return groups_.at(group).options.get().get_lr(); }
void Optimizer::set_lr(double lr) {
  for (auto& g : groups_) g.options.get().set_lr(lr);
}
void Optimizer::set_lr(size_t group, double lr) { groups_.at(group).options.get().set_lr(lr); }

std::map<std::string, Tensor>& Optimizer::state_of(const Tensor& param) {
  std::map<std::string, Tensor>& state = state_[param.impl()];
  // The parameter changed dtype or device since its state was made (Module::to between steps): the
  // state follows it as load_state_dict places state, floating tensors of one or more dims in the
  // parameter's dtype, on its device (0-d counts stay where each optimizer keeps them).
  for (auto& [_, t] : state) {
    if (!t.defined() || t.dim() == 0) continue;
    const DType dtype = is_floating(t.dtype()) ? param.dtype() : t.dtype();
    if (t.dtype() != dtype || t.device() != param.device()) {
      NoGradGuard no_grad;
      t = raw::to(t, param.device(), dtype);
    }
  }
  return state;
}

NamedTensors Optimizer::state_dict() const {
  NamedTensors out;
  size_t index = 0;
  for (size_t g = 0; g < groups_.size(); ++g) {
    for (const auto& [k, v] : groups_[g].options.get().to_map()) {
      out.emplace_back("param_groups." + std::to_string(g) + "." + k, raw::scalar_tensor(v, kFloat64));
    }
    if (groups_[g].initial_lr) {
      out.emplace_back("param_groups." + std::to_string(g) + ".initial_lr",
                       raw::scalar_tensor(*groups_[g].initial_lr, kFloat64));
    }
    out.emplace_back("param_groups." + std::to_string(g) + ".num_params",
                     raw::scalar_tensor(static_cast<double>(groups_[g].params.size()), kFloat64));
    for (const auto& p : groups_[g].params) {
      auto it = state_.find(p.impl());
      if (it != state_.end()) {
        for (const auto& [k, t] : it->second) out.emplace_back("state." + std::to_string(index) + "." + k, t);
      }
      ++index;
    }
  }
  return out;
}

void Optimizer::load_state_dict(const NamedTensors& state) {
  std::map<std::string, Tensor> by_name(state.begin(), state.end());
  for (size_t g = 0; g < groups_.size(); ++g) {
    std::string prefix = "param_groups." + std::to_string(g) + ".";
    auto n = by_name.find(prefix + "num_params");
    if (n == by_name.end()) {
      throw std::invalid_argument("optimizer load_state_dict: the state has no parameter group " + std::to_string(g) +
                                  " but this optimizer has " + std::to_string(groups_.size()));
    }
    // Compared as doubles: casting a NaN or 1e300 from a file to size_t is undefined behaviour.
    const double count = scalar_of(n->second, prefix + "num_params");
    if (count != static_cast<double>(groups_[g].params.size())) {
      throw std::invalid_argument("optimizer load_state_dict: group " + std::to_string(g) + " has " +
                                  std::to_string(count) + " parameters in the state but " +
                                  std::to_string(groups_[g].params.size()) + " here");
    }
  }
  if (by_name.count("param_groups." + std::to_string(groups_.size()) + ".num_params")) {
    throw std::invalid_argument("optimizer load_state_dict: the state has more parameter groups than this optimizer (" +
                                std::to_string(groups_.size()) + ")");
  }
  // Every group's new options are checked before any is changed.
  std::vector<GroupOptions> options(groups_.size());
  std::vector<std::optional<double>> initial_lrs(groups_.size());
  for (size_t g = 0; g < groups_.size(); ++g) {
    std::string prefix = "param_groups." + std::to_string(g) + ".";
    options[g] = groups_[g].options;
    HyperParams saved;
    for (const auto& [k, _] : options[g].get().to_map()) {
      auto it = by_name.find(prefix + k);
      if (it != by_name.end()) saved[k] = scalar_of(it->second, prefix + k);
    }
    options[g].get().update_from_map(saved);
    try {
      check_options(options[g].get());
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("optimizer load_state_dict: group " + std::to_string(g) + ": " + e.what());
    }
    // Written once an LR scheduler ran; older checkpoints and scheduler-less runs have none.
    initial_lrs[g] = groups_[g].initial_lr;
    auto il = by_name.find(prefix + "initial_lr");
    if (il != by_name.end()) {
      const double v = scalar_of(il->second, prefix + "initial_lr");
      if (!std::isfinite(v) || v < 0) {
        throw std::invalid_argument("optimizer load_state_dict: group " + std::to_string(g) + ": initial_lr is " +
                                    std::to_string(v) + ", expected a finite rate >= 0");
      }
      initial_lrs[g] = v;
    }
  }
  NoGradGuard no_grad;
  size_t index = 0;
  for (size_t g = 0; g < groups_.size(); ++g) {
    groups_[g].options = std::move(options[g]);
    groups_[g].initial_lr = initial_lrs[g];
    for (auto& p : groups_[g].params) {
      std::string sp = "state." + std::to_string(index) + ".";
      std::map<std::string, Tensor> st;
      for (const auto& [name, t] : state) {
        if (name.rfind(sp, 0) != 0) continue;
        std::string key = name.substr(sp.size());
        // State lives with its parameter: same device; floating state takes the parameter's dtype.
        DType dt = is_floating(t.dtype()) && t.dim() > 0 ? p.dtype() : t.dtype();
        st[key] = raw::clone(raw::to(t, p.device(), dt));
      }
      if (st.empty()) {
        state_.erase(p.impl());
      } else {
        state_[p.impl()] = std::move(st);
      }
      ++index;
    }
  }
}

}  // namespace colony::optim
