#include "optim/grad_scaler.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "autograd/ops.h"
#include "tensor/cuda_graph.h"
#include "tensor/raw_optim_ops.h"
#include "tensor/raw_ops.h"

namespace colony::optim {

// The scale is kept in float32, as PyTorch's _scale tensor.
GradScaler::GradScaler(const GradScalerOptions& options)
    : options_(options), scale_(static_cast<float>(options.init_scale())) {
  if (!(options.init_scale() > 0) || !std::isfinite(options.init_scale())) {
    throw std::invalid_argument("GradScaler: init_scale must be positive and finite, got " +
                                std::to_string(options.init_scale()));
  }
  if (!(options.growth_factor() > 1.0)) {
    throw std::invalid_argument("GradScaler: growth_factor should be > 1, got " + std::to_string(options.growth_factor()));
  }
  if (!(options.backoff_factor() > 0.0 && options.backoff_factor() < 1.0)) {
    throw std::invalid_argument("GradScaler: backoff_factor should be in (0, 1), got " +
                                std::to_string(options.backoff_factor()));
  }
  if (options.growth_interval() <= 0) {
    throw std::invalid_argument("GradScaler: growth_interval should be a positive integer, got " +
                                std::to_string(options.growth_interval()));
  }
}

Tensor GradScaler::scale(const Tensor& loss) const {
  if (!options_.enabled()) return loss;
  return mul(loss, scale_);
}

void GradScaler::unscale_(Optimizer& optimizer) {
  if (!options_.enabled()) return;
  PerOptimizer& s = per_optimizer_[&optimizer];
  if (s.stage == Stage::kUnscaled) {
    throw std::logic_error("GradScaler::unscale_: already called on this optimizer since the last update()");
  }
  if (s.stage == Stage::kStepped) throw std::logic_error("GradScaler::unscale_: called after step()");
  // PyTorch computes the reciprocal in double and rounds it to float32 for the kernel.
  const double inv_scale = 1.0 / static_cast<double>(static_cast<float>(scale_));
  // Gradients grouped by device: one fused pass and one flag per device.
  std::vector<std::pair<Device, std::vector<Tensor>>> by_device;
  for (const ParamGroup& group : optimizer.param_groups()) {
    for (const Tensor& p : group.params) {
      Tensor g = p.grad();
      if (!g.defined()) continue;
      if (g.dtype() == kFloat16) {
        throw std::invalid_argument("GradScaler::unscale_: a parameter has a float16 gradient; keep the parameters "
                                    "in float32 (autocast casts them per op) so that unscaled gradients fit");
      }
      auto it = by_device.begin();
      while (it != by_device.end() && it->first != g.device()) ++it;
      if (it == by_device.end()) {
        by_device.emplace_back(g.device(), std::vector<Tensor>{});
        it = by_device.end() - 1;
      }
      it->second.push_back(g);
    }
  }
  s.found_inf.clear();
  for (auto& [device, grads] : by_device) {
    Tensor found = raw::zeros({1}, TensorOptions(kFloat32).device(device));
    raw::amp_unscale_and_check_(grads, found, inv_scale);
    s.found_inf.push_back(found);
  }
  s.stage = Stage::kUnscaled;
}

bool GradScaler::read_found_inf(PerOptimizer& s) {
  if (s.found < 0) {
    s.found = 0;
    for (Tensor& f : s.found_inf) {
      if (reducer_) reducer_(f);
      if (f.item<float>() != 0.0f) s.found = 1;  // the one wait for the device per optimizer and step
    }
  }
  return s.found != 0;
}

bool GradScaler::step(Optimizer& optimizer) {
  if (!options_.enabled()) {
    optimizer.step();
    return true;
  }
  PerOptimizer& s = per_optimizer_[&optimizer];
  if (s.stage == Stage::kStepped) {
    throw std::logic_error("GradScaler::step: already called on this optimizer since the last update()");
  }
  if (cuda::CUDAGraph::capturing() != nullptr) {
    throw std::runtime_error("GradScaler::step: cannot be captured in a CUDA graph yet (the skip decision reads "
                             "the overflow flag on the host); capture with the scaler disabled (float32 or "
                             "bfloat16 autocast)");
  }
  if (s.stage == Stage::kReady) unscale_(optimizer);
  const bool skip = read_found_inf(s);
  s.stage = Stage::kStepped;
  if (skip) return false;
  optimizer.step();
  return true;
}

void GradScaler::update() {
  if (!options_.enabled()) return;
  if (per_optimizer_.empty()) {
    throw std::logic_error("GradScaler::update: no inf checks were recorded since the last update (call step() or "
                           "unscale_() first)");
  }
  bool found = false;
  for (auto& [opt, s] : per_optimizer_) found = read_found_inf(s) || found;
  per_optimizer_.clear();
  // The scale lives in float32, as PyTorch's _scale tensor; _amp_update_scale_'s rules.
  if (found) {
    scale_ = static_cast<float>(scale_ * options_.backoff_factor());
    growth_tracker_ = 0;
    return;
  }
  if (++growth_tracker_ == options_.growth_interval()) {
    const float grown = static_cast<float>(scale_ * options_.growth_factor());
    if (std::isfinite(grown)) scale_ = grown;
    growth_tracker_ = 0;
  }
}

void GradScaler::update(double new_scale) {
  if (!options_.enabled()) return;
  if (!(new_scale > 0) || !std::isfinite(new_scale)) {
    throw std::invalid_argument("GradScaler::update: new_scale must be positive and finite, got " +
                                std::to_string(new_scale));
  }
  per_optimizer_.clear();
  scale_ = static_cast<float>(new_scale);
  growth_tracker_ = 0;
}

NamedTensors GradScaler::state_dict() const {
  if (!options_.enabled()) return {};
  auto scalar = [](double v) { return raw::scalar_tensor(v, TensorOptions(kFloat64)); };
  return {{"scale", scalar(scale_)},
          {"growth_factor", scalar(options_.growth_factor())},
          {"backoff_factor", scalar(options_.backoff_factor())},
          {"growth_interval", scalar(static_cast<double>(options_.growth_interval()))},
          {"_growth_tracker", scalar(static_cast<double>(growth_tracker_))}};
}

void GradScaler::load_state_dict(const NamedTensors& state) {
  if (!options_.enabled()) {
    throw std::logic_error("GradScaler::load_state_dict: the scaler is disabled");
  }
  if (state.empty()) {
    throw std::invalid_argument("GradScaler::load_state_dict: the state is empty (saved from a disabled scaler?)");
  }
  std::map<std::string, double> v;
  for (const auto& [name, t] : state) {
    if (!t.defined() || t.numel() != 1) {
      throw std::invalid_argument("GradScaler::load_state_dict: \"" + name + "\" must hold one value");
    }
    v[name] = t.item<double>();
  }
  for (const char* key : {"scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker"}) {
    if (!v.count(key)) throw std::invalid_argument(std::string("GradScaler::load_state_dict: missing \"") + key + "\"");
  }
  GradScaler checked(GradScalerOptions()
                         .init_scale(v["scale"])
                         .growth_factor(v["growth_factor"])
                         .backoff_factor(v["backoff_factor"])
                         .growth_interval(static_cast<int64_t>(v["growth_interval"])));
  options_ = checked.options_;
  scale_ = v["scale"];
  growth_tracker_ = static_cast<int64_t>(v["_growth_tracker"]);
  per_optimizer_.clear();
}

}  // namespace colony::optim
