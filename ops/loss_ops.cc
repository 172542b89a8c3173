// Fused cross-entropy / nll_loss: PyTorch's checks, then the fused kernel of its device
// (kernels/common/cross_entropy.h, run_kernel) over [N, C] rows. Nothing here synchronizes with the device: CUDA
// targets are validated by the kernel (runtime/cuda/device_errors.h).
#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/common/cross_entropy.h"
#include "ops/op_checks.h"
#include "ops/raw_nn_ops.h"
#include "ops/raw_ops.h"
#include "runtime/run_kernel.h"

namespace colony::raw {
namespace {

const char* op_name(const CrossEntropyOptions& o) { return o.log_probs ? "nll_loss" : "cross_entropy"; }

// float32 for the 16-bit types, the type itself otherwise: what the kernels accumulate in.
DType compute_dtype(DType t) { return t == kFloat64 ? kFloat64 : kFloat32; }

kernels::CrossEntropyParams params(const Tensor& input, const CrossEntropyOptions& o) {
  kernels::CrossEntropyParams p;
  p.rows = input.size(0);
  p.classes = input.size(1);
  p.ignore_index = o.ignore_index;
  p.label_smoothing = o.label_smoothing;
  p.log_probs = o.log_probs;
  p.reduction = o.reduction;
  return p;
}

void check_inputs(const Tensor& input, const Tensor& target, const CrossEntropyOptions& o) {
  const char* op = op_name(o);
  if (input.dim() != 2) throw std::invalid_argument(std::string(op) + ": expected input [N, C], got " + shape_str(input.sizes()));
  check_floating(input, op);
  if (target.dtype() != kInt64) {
    throw std::invalid_argument(std::string(op) + ": expected int64 targets, got " + dtype_name(target.dtype()));
  }
  if (target.dim() != 1 || target.size(0) != input.size(0)) {
    throw std::invalid_argument(std::string(op) + ": expected target of shape [" + std::to_string(input.size(0)) +
                                "] for input " + shape_str(input.sizes()) + ", got " + shape_str(target.sizes()));
  }
  if (target.device() != input.device()) {
    throw std::invalid_argument(std::string(op) + ": input is on " + input.device().str() + " but target is on " +
                                target.device().str());
  }
  if (o.label_smoothing < 0 || o.label_smoothing > 1) {
    throw std::invalid_argument(std::string(op) + ": label_smoothing must be in [0, 1], got " +
                                std::to_string(o.label_smoothing));
  }
  if (o.log_probs && o.label_smoothing != 0) {
    throw std::invalid_argument("nll_loss: label smoothing applies to cross_entropy only");
  }
  if (input.size(1) == 0 && input.size(0) > 0) {
    throw std::invalid_argument(std::string(op) + ": input " + shape_str(input.sizes()) + " has no classes");
  }
}

void* ptr(const Tensor& t) { return t.defined() ? t.data_ptr_raw() : nullptr; }

}  // namespace

CrossEntropyResult cross_entropy_loss(const Tensor& input, const Tensor& target, const CrossEntropyOptions& options) {
  check_inputs(input, target, options);
  Tensor x = contiguous(input), t = contiguous(target);
  const int64_t n = x.size(0);
  const TensorOptions compute = TensorOptions(compute_dtype(x.dtype())).device(x.device());
  CrossEntropyResult r;
  r.loss = options.reduction == LossReduction::None ? empty({n}, TensorOptions(x.dtype()).device(x.device()))
                                                    : empty({}, TensorOptions(x.dtype()).device(x.device()));
  r.counted = empty({1}, compute);
  if (!options.log_probs) r.lse = empty({n, 2}, compute);
  if (n == 0) {
    // PyTorch: the mean over no targets is NaN, the sum 0.
    if (options.reduction != LossReduction::None) {
      r.loss = full({}, options.reduction == LossReduction::Mean ? std::nan("") : 0.0,
                    TensorOptions(x.dtype()).device(x.device()));
    }
    r.counted = zeros({1}, compute);
    return r;
  }
  const kernels::CrossEntropyParams p = params(x, options);
  run_kernel<kernels::CrossEntropyForward>(x.device(), x.dtype(), x.data_ptr_raw(), t.data_ptr<int64_t>(), p,
                                           r.loss.data_ptr_raw(), ptr(r.lse), r.counted.data_ptr_raw());
  return r;
}

Tensor cross_entropy_loss_backward(const Tensor& grad_output, const Tensor& input, const Tensor& target,
                                   const Tensor& lse, const Tensor& counted, const CrossEntropyOptions& options) {
  check_inputs(input, target, options);
  const char* op = options.log_probs ? "nll_loss_backward" : "cross_entropy_backward";
  const Shape loss_shape = options.reduction == LossReduction::None ? Shape{input.size(0)} : Shape{};
  if (grad_output.sizes() != loss_shape || grad_output.dtype() != input.dtype() ||
      grad_output.device() != input.device()) {
    throw std::invalid_argument(std::string(op) + ": grad_output is " + dtype_name(grad_output.dtype()) + " " +
                                shape_str(grad_output.sizes()) + " on " + grad_output.device().str() + ", expected " +
                                dtype_name(input.dtype()) + " " + shape_str(loss_shape) + " on " + input.device().str());
  }
  const DType compute = compute_dtype(input.dtype());
  auto is_saved = [&](const Tensor& s, int64_t numel) {
    return s.defined() && s.numel() == numel && s.dtype() == compute && s.device() == input.device();
  };
  if (!is_saved(counted, 1) || (!options.log_probs && !is_saved(lse, 2 * input.size(0)))) {
    throw std::invalid_argument(std::string(op) + ": lse and counted must be the forward's (" + dtype_name(compute) +
                                " on " + input.device().str() + ")");
  }
  Tensor x = contiguous(input), t = contiguous(target), g = contiguous(grad_output), l = lse, n = contiguous(counted);
  if (l.defined()) l = contiguous(l);
  Tensor gx = empty(x.sizes(), TensorOptions(x.dtype()).device(x.device()));
  if (gx.numel() == 0) return gx;
  const kernels::CrossEntropyParams p = params(x, options);
  run_kernel<kernels::CrossEntropyBackward>(x.device(), x.dtype(), g.data_ptr_raw(), x.data_ptr_raw(),
                                            t.data_ptr<int64_t>(), ptr(l), n.data_ptr_raw(), p, gx.data_ptr_raw());
  return gx;
}

}  // namespace colony::raw
