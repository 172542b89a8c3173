#include "optim/grad_scaler.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "autograd/ops.h"
#include "ops/cuda_graph.h"
#include "ops/raw_optim_ops.h"
#include "ops/raw_ops.h"

namespace colony::optim {

// The scale is kept in float32, as PyTorch's _scale tensor.
GradScaler::GradScaler(const GradScalerOptions& options)
    : options_(options), initial_scale_(static_cast<float>(options.init_scale())) {
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

void GradScaler::init_scale(Device device) {
  if (scale_.defined()) return;
  if (cuda::CUDAGraph::capturing() != nullptr) {
    // Filled inside the capture, every replay would start again from the initial scale.
    throw std::runtime_error("GradScaler: the scale would be created inside a CUDA graph capture; scale a loss in "
                             "an eager step first (make_graphed_step's warm-up does)");
  }
  scale_ = raw::full({}, initial_scale_, TensorOptions(kFloat32).device(device));
  growth_tracker_ = raw::full({}, initial_growth_tracker_, TensorOptions(kInt32).device(device));
}

Tensor GradScaler::scale_on(Device device) const {
  return scale_.device() == device ? scale_ : raw::to(scale_, device, kFloat32);
}

double GradScaler::get_scale() const {
  if (!options_.enabled()) return 1.0;
  return scale_.defined() ? scale_.item<float>() : initial_scale_;
}

int64_t GradScaler::growth_tracker() const {
  if (!options_.enabled()) return 0;
  return growth_tracker_.defined() ? growth_tracker_.item<int32_t>() : initial_growth_tracker_;
}

Tensor GradScaler::scale(const Tensor& loss) {
  if (!options_.enabled()) return loss;
  init_scale(loss.device());
  return mul(loss, scale_on(loss.device()));
}

void GradScaler::unscale_(Optimizer& optimizer) {
  if (!options_.enabled()) return;
  PerOptimizer& s = per_optimizer_[&optimizer];
  if (s.stage == Stage::kUnscaled) {
    throw std::logic_error("GradScaler::unscale_: already called on this optimizer since the last update()");
  }
  if (s.stage == Stage::kStepped) throw std::logic_error("GradScaler::unscale_: called after step()");
  // Gradients grouped by device: one fused pass and one flag per device.
  std::vector<std::pair<Device, std::vector<Tensor>>> by_device;
  for (const Tensor& p : optimizer.stepped_tensors()) {
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
  if (!by_device.empty()) init_scale(by_device.front().first);
  s.found_inf.clear();
  for (auto& [device, grads] : by_device) {
    Tensor found = raw::zeros({1}, TensorOptions(kFloat32).device(device));
    raw::amp_unscale_and_check_(grads, found, scale_on(device));
    s.found_inf.push_back(found);
  }
  s.stage = Stage::kUnscaled;
}

void GradScaler::reduce_found_inf(PerOptimizer& s) {
  if (s.reduced) return;
  s.reduced = true;
  if (reducer_) {
    for (Tensor& f : s.found_inf) reducer_(f);
  }
}

bool GradScaler::read_found_inf(PerOptimizer& s) {
  reduce_found_inf(s);
  if (s.found < 0) {
    s.found = 0;
    for (Tensor& f : s.found_inf) {
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
  if (s.stage == Stage::kReady) unscale_(optimizer);
  s.stage = Stage::kStepped;
  if (cuda::CUDAGraph::capturing() != nullptr) {
    if (!optimizer.supports_step_unless()) {
      throw std::runtime_error("GradScaler::step: inside a CUDA graph capture the skip must be decided on the "
                               "device, which this optimizer cannot do (SGD and Adam can)");
    }
    if (s.found_inf.size() > 1) {
      throw std::runtime_error("GradScaler::step: a captured step needs the gradients on one device, found " +
                               std::to_string(s.found_inf.size()));
    }
    reduce_found_inf(s);
    if (s.found_inf.empty()) {
      optimizer.step();
    } else {
      optimizer.step_unless(s.found_inf.front());
    }
    return true;
  }
  if (read_found_inf(s)) return false;
  optimizer.step();
  return true;
}

void GradScaler::update() {
  if (!options_.enabled()) return;
  if (per_optimizer_.empty()) {
    throw std::logic_error("GradScaler::update: no inf checks were recorded since the last update (call step() or "
                           "unscale_() first)");
  }
  // Every optimizer's flags summed on the scale's device (nonzero: some gradient overflowed).
  Tensor found;
  for (auto& [opt, s] : per_optimizer_) {
    reduce_found_inf(s);
    for (const Tensor& f : s.found_inf) {
      Tensor here = f.device() == scale_.device() ? f : raw::to(f, scale_.device(), kFloat32);
      found = found.defined() ? raw::add(found, here) : here;
    }
  }
  per_optimizer_.clear();
  // No gradients at all: nothing overflowed.
  if (!found.defined()) {
    if (!scale_.defined()) return;
    found = raw::zeros({1}, TensorOptions(kFloat32).device(scale_.device()));
  }
  raw::amp_update_scale_(scale_, growth_tracker_, found, options_.growth_factor(), options_.backoff_factor(),
                         options_.growth_interval());
}

void GradScaler::update(double new_scale) {
  if (!options_.enabled()) return;
  if (!(new_scale > 0) || !std::isfinite(new_scale)) {
    throw std::invalid_argument("GradScaler::update: new_scale must be positive and finite, got " +
                                std::to_string(new_scale));
  }
  per_optimizer_.clear();
  initial_scale_ = static_cast<float>(new_scale);
  initial_growth_tracker_ = 0;
  if (scale_.defined()) {
    raw::fill_(scale_, initial_scale_);
    raw::fill_(growth_tracker_, 0);
  }
}

NamedTensors GradScaler::state_dict() const {
  if (!options_.enabled()) return {};
  auto scalar = [](double v) { return raw::scalar_tensor(v, TensorOptions(kFloat64)); };
  return {{"scale", scalar(get_scale())},
          {"growth_factor", scalar(options_.growth_factor())},
          {"backoff_factor", scalar(options_.backoff_factor())},
          {"growth_interval", scalar(static_cast<double>(options_.growth_interval()))},
          {"_growth_tracker", scalar(static_cast<double>(growth_tracker()))}};
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
  initial_scale_ = static_cast<float>(v["scale"]);
  initial_growth_tracker_ = static_cast<int32_t>(v["_growth_tracker"]);
  if (scale_.defined()) {
    raw::fill_(scale_, initial_scale_);
    raw::fill_(growth_tracker_, initial_growth_tracker_);
  }
  per_optimizer_.clear();
}

}  // namespace colony::optim
