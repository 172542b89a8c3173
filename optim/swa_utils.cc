#include "optim/swa_utils.h"

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "autograd/ops.h"
#include "nn/batchnorm.h"
#include "ops/raw_ops.h"
#include "tensor/grad_mode.h"

namespace colony::optim {

AvgFn ema_avg_fn(double decay) {
  return [decay](const Tensor& averaged, const Tensor& current, int64_t) {
    return raw::add(raw::mul(averaged, decay), raw::mul(current, 1 - decay));
  };
}

AvgFn ema_multi_avg_fn(double decay) {
  return [decay](const Tensor& averaged, const Tensor& current, int64_t) { return lerp(averaged, current, 1 - decay); };
}

AveragedModel::AveragedModel(const std::shared_ptr<nn::Module>& model, std::shared_ptr<nn::Module> copy,
                             AvgFn avg_fn, bool use_buffers)
    : module_(std::move(copy)), avg_fn_(std::move(avg_fn)), use_buffers_(use_buffers) {
  if (!model || !module_) throw std::invalid_argument("AveragedModel: the model and its copy must not be null");
  if (model == module_) {
    throw std::invalid_argument("AveragedModel: `copy` is the model itself; pass a second instance of its architecture");
  }
  module_->load_state_dict(model->state_dict());  // torch's deepcopy(model)
  module_->train(model->is_training());
  register_module("module", module_);
  n_averaged_ = register_buffer("n_averaged", raw::zeros({}, TensorOptions(kInt64)));
}

int64_t AveragedModel::n_averaged() const { return raw::to(n_averaged_, kCPU, kInt64).item<int64_t>(); }

void AveragedModel::update_parameters(const nn::Module& model) {
  NoGradGuard no_grad;
  std::vector<Tensor> mine = module_->parameters(), theirs = model.parameters();
  if (use_buffers_) {
    for (const Tensor& b : module_->buffers()) mine.push_back(b);
    for (const Tensor& b : model.buffers()) theirs.push_back(b);
  }
  if (mine.size() != theirs.size()) {
    throw std::invalid_argument("AveragedModel::update_parameters: the model has " + std::to_string(theirs.size()) +
                                " tensors to average, this copy " + std::to_string(mine.size()));
  }
  const int64_t n = n_averaged();
  for (size_t i = 0; i < mine.size(); ++i) {
    Tensor current = raw::to(theirs[i].detach(), mine[i].device(), theirs[i].dtype());
    Tensor averaged = mine[i].detach();
    Tensor next;
    if (n == 0) {
      next = current;
    } else if (avg_fn_) {
      next = avg_fn_(averaged, current, n);
    } else {
      // torch's get_swa_avg_fn with a tensor count: (current - averaged) / (n + 1) in the
      // tensors' dtype (an integer buffer in float32, truncated back by the copy).
      const DType dt = is_floating(averaged.dtype()) ? averaged.dtype() : kFloat32;
      Tensor a = raw::to(averaged, averaged.device(), dt), c = raw::to(current, averaged.device(), dt);
      next = raw::add(a, raw::div(raw::sub(c, a), raw::full({}, static_cast<double>(n + 1), TensorOptions(dt))));
    }
    raw::copy_(averaged, next);
  }
  if (!use_buffers_) {
    // Buffers not averaged follow the model's (torch keeps them in sync).
    std::vector<Tensor> mb = module_->buffers(), tb = model.buffers();
    for (size_t i = 0; i < mb.size() && i < tb.size(); ++i) {
      Tensor dst = mb[i].detach();
      raw::copy_(dst, raw::to(tb[i].detach(), dst.device(), dst.dtype()));
    }
  }
  raw::fill_(n_averaged_, static_cast<double>(n + 1));
}

void update_bn(const std::vector<Tensor>& inputs, nn::Module& model) {
  std::vector<std::pair<nn::BatchNormBase*, std::optional<double>>> momenta;
  // The module and its descendants (walked by hand: modules() needs a module held by a shared_ptr).
  std::function<void(nn::Module&)> visit = [&](nn::Module& m) {
    if (auto* bn = m.as<nn::BatchNormBase>(); bn && bn->num_batches_tracked.defined()) {
      bn->reset_running_stats();
      momenta.emplace_back(bn, bn->options.momentum());
    }
    for (const auto& child : m.children()) visit(*child);
  };
  visit(model);
  if (momenta.empty()) return;
  const bool was_training = model.is_training();
  model.train(true);
  NoGradGuard no_grad;  // torch runs the loader under the caller's mode; only the buffers change
  // torch's update_bn: momentum=None, the cumulative average over the inputs.
  for (auto& [bn, momentum] : momenta) bn->options.momentum(std::nullopt);
  for (const Tensor& input : inputs) model.forward(input);
  for (auto& [bn, momentum] : momenta) bn->options.momentum(momentum);
  model.train(was_training);
}

}  // namespace colony::optim
