// SyncBatchNorm: the per-rank statistics and their combination (tensor ops on the input's device,
// so nothing here blocks the host on a GPU), the normalization by the batch_norm kernel in its
// evaluation form with the global statistics in place of the running ones, and a backward that
// all-reduces the two per-channel sums the input gradient needs.
#include "distributed/sync_batch_norm.h"

#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/autocast.h"
#include "autograd/engine/function_node.h"
#include "autograd/nn_ops.h"
#include "autograd/ops.h"
#include "distributed/init.h"
#include "ops/raw_nn_ops.h"
#include "ops/raw_ops.h"
#include "tensor/grad_mode.h"

namespace colony::dist {
namespace {

using autograd::SavedTensor;

// The statistics' dtype: float32 for 16-bit inputs, the input's otherwise (raw::batch_norm's).
DType stat_dtype(DType input) { return input == kFloat16 || input == kBFloat16 ? kFloat32 : input; }

// [1, C, 1, ...]: a per-channel [C] tensor broadcast against input.
Tensor per_channel(const Tensor& t, int64_t dim) {
  Shape shape(dim, 1);
  shape[1] = t.size(0);
  return raw::reshape(t, shape);
}

// running = (1 - momentum) * running + momentum * stat, in place (in running's dtype).
void update_running(Tensor running, const Tensor& stat, double momentum) {
  Tensor updated = raw::add(raw::mul(raw::to(running, stat.device(), stat.dtype()), 1.0 - momentum),
                            raw::mul(stat, momentum));
  raw::copy_(running, updated);
}

}  // namespace

Tensor sync_batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                       const Tensor& weight, const Tensor& bias, double momentum, double eps,
                       const std::shared_ptr<ProcessGroup>& group_arg) {
  if (!input.defined() || input.dim() < 2) {
    throw std::invalid_argument("SyncBatchNorm: expected at least 2D input (got " +
                                (input.defined() ? std::to_string(input.dim()) + "D input " + shape_str(input.sizes())
                                                 : std::string("an undefined tensor")) +
                                ")");
  }
  const std::shared_ptr<ProcessGroup> group = group_arg ? group_arg : default_process_group();
  if (!group || group->size() == 1) {
    return colony::batch_norm(input, weight, bias, running_mean, running_var, /*training=*/true, momentum, eps);
  }
  if (autocast::casts(autocast::Op::batch_norm, input)) {
    // As colony::batch_norm: statistics and normalization in float32, the output in the input's dtype.
    auto f32 = [](const Tensor& t) { return autocast::cast(autocast::Op::batch_norm, t); };
    Tensor out = sync_batch_norm(f32(input), running_mean, running_var, f32(weight), f32(bias), momentum, eps, group);
    return colony::to(out, input.device(), input.dtype());
  }
  const Device dev = input.device();
  const DType sd = stat_dtype(input.dtype());
  const TensorOptions so = TensorOptions(sd).device(dev);
  const int64_t c = input.size(1);
  int64_t count = input.size(0);
  std::vector<int64_t> dims = {0};
  for (int64_t d = 2; d < input.dim(); ++d) {
    count *= input.size(d);
    dims.push_back(d);
  }

  // This rank's [mean (C), biased variance (C), count (1)]; zeros for an empty batch, which then
  // weighs nothing.
  Tensor local;
  if (count > 0) {
    const Tensor x = raw::to(input, dev, sd);
    local = raw::cat({raw::mean(x, dims), raw::var(x, dims, /*unbiased=*/false),
                      raw::full({1}, static_cast<double>(count), so)});
  } else {
    local = raw::zeros({2 * c + 1}, so);
  }
  const int64_t world = group->size();
  Tensor gathered = raw::empty({world * (2 * c + 1)}, so);
  group->wait_and_explain(group->allgather_into_tensor(gathered, local));

  // The global mean and biased variance: count-weighted, with each rank's spread about the global
  // mean added to its variance (Chan et al.'s pairwise combination, in one step).
  const Tensor all = raw::reshape(gathered, {world, 2 * c + 1});
  const Tensor means = raw::narrow(all, 1, 0, c), vars = raw::narrow(all, 1, c, c);
  const Tensor counts = raw::narrow(all, 1, 2 * c, 1);
  const Tensor total = raw::sum(counts);
  const Tensor mean = raw::div(raw::sum(raw::mul(counts, means), {0}), total);
  const Tensor spread = raw::sub(means, raw::reshape(mean, {1, c}));
  const Tensor var = raw::div(raw::sum(raw::mul(counts, raw::add(vars, raw::mul(spread, spread))), {0}), total);

  if (running_mean.defined() && running_var.defined()) {
    NoGradGuard no_grad;
    update_running(running_mean, mean, momentum);
    update_running(running_var, raw::mul(var, raw::div(total, raw::binary(raw::BinaryOp::Sub, total, 1.0))), momentum);
  }

  // y = (x - mean) * invstd * weight + bias: the kernel's evaluation form, the global statistics
  // standing in for the running ones (in the parameters' dtype, which the kernel wants for both).
  const DType pd = weight.defined() ? weight.dtype() : bias.defined() ? bias.dtype() : sd;
  raw::BatchNormResult r = raw::batch_norm(input, weight, bias, raw::to(mean, dev, pd), raw::to(var, dev, pd),
                                           /*training=*/false, 0.0, eps);
  if (!autograd::needs_grad(input, weight, bias)) return r.output;

  const bool has_weight = weight.defined(), has_bias = bias.defined();
  std::vector<Tensor> inputs = {input};
  if (has_weight) inputs.push_back(weight);
  if (has_bias) inputs.push_back(bias);
  SavedTensor si(input), sw = has_weight ? SavedTensor(weight) : SavedTensor();
  const Tensor save_mean = r.save_mean, save_invstd = r.save_invstd;
  const DType input_dtype = input.dtype();
  autograd::record(
      "SyncBatchNormBackward", inputs, r.output, {si, sw},
      [si, sw, save_mean, save_invstd, total, group, has_weight, has_bias, c, sd, input_dtype](
          const std::vector<Tensor>& g, const std::vector<bool>& needs) -> std::vector<Tensor> {
        const Tensor x = si.unpack();
        const Device dev = x.device();
        // Without a weight, ones in the statistics' dtype: the kernel's sums then come in it too.
        const Tensor w = has_weight ? sw.unpack() : raw::ones({c}, TensorOptions(sd).device(dev));
        // The kernel's evaluation backward gives this rank's sum(dy * x_hat) and sum(dy) per channel:
        // the weight's and bias's gradients, and what the input's needs from every rank.
        raw::BatchNormGrads local = raw::batch_norm_backward(g[0], x, w, save_mean, save_invstd, /*training=*/false,
                                                             {false, true, true});
        std::vector<Tensor> out = {Tensor()};
        if (needs[0]) {
          Tensor sums = raw::cat({raw::to(local.grad_bias, dev, sd), raw::to(local.grad_weight, dev, sd)});
          group->wait_and_explain(group->allreduce(sums));
          const Tensor mean_dy = raw::div(raw::narrow(sums, 0, 0, c), total);
          const Tensor mean_dy_xhat = raw::div(raw::narrow(sums, 0, c, c), total);
          // dx = weight * invstd * (dy - mean(dy) - x_hat * mean(dy * x_hat)), means over the global
          // batch, x_hat = (x - mean) * invstd.
          const int64_t dim = x.dim();
          const Tensor xmu = raw::sub(raw::to(x, dev, sd), per_channel(save_mean, dim));
          const Tensor centered =
              raw::sub(raw::sub(raw::to(g[0], dev, sd), per_channel(mean_dy, dim)),
                       raw::mul(xmu, per_channel(raw::mul(save_invstd, mean_dy_xhat), dim)));
          const Tensor scale = raw::mul(raw::to(w, dev, sd), save_invstd);
          out[0] = raw::to(raw::mul(centered, per_channel(scale, dim)), dev, input_dtype);
        }
        if (has_weight) out.push_back(needs[1] ? local.grad_weight : Tensor());
        if (has_bias) out.push_back(needs[has_weight ? 2 : 1] ? local.grad_bias : Tensor());
        return out;
      });
  return r.output;
}

Tensor GroupBatchNormSync::forward(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                                   const Tensor& weight, const Tensor& bias, double momentum, double eps) {
  return sync_batch_norm(input, running_mean, running_var, weight, bias, momentum, eps, group_);
}

SyncBatchNorm::SyncBatchNorm(const nn::BatchNormOptions& options, std::shared_ptr<ProcessGroup> process_group)
    : nn::BatchNormBase(options, "SyncBatchNorm") {
  sync = std::make_shared<GroupBatchNormSync>(std::move(process_group));
}

void SyncBatchNorm::check_input_dim(const Tensor& input) const {
  if (input.dim() < 2) {
    throw std::invalid_argument("SyncBatchNorm: expected at least 2D input (got " + std::to_string(input.dim()) +
                                "D input " + shape_str(input.sizes()) + ")");
  }
}

void convert_sync_batchnorm_in_place(nn::Module& module, std::shared_ptr<ProcessGroup> process_group) {
  // One sync for the whole tree: it holds nothing but the group.
  auto sync = std::make_shared<GroupBatchNormSync>(std::move(process_group));
  std::vector<nn::Module*> stack = {&module};
  while (!stack.empty()) {
    nn::Module* m = stack.back();
    stack.pop_back();
    if (auto* bn = m->as<nn::BatchNormBase>()) bn->sync = sync;
    for (const auto& child : m->children()) stack.push_back(child.get());
  }
}

bool is_sync_batch_norm(const nn::Module& module) {
  const auto* bn = module.as<nn::BatchNormBase>();
  return bn != nullptr && dynamic_cast<const GroupBatchNormSync*>(bn->sync.get()) != nullptr;
}

}  // namespace colony::dist
