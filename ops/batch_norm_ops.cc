// batch_norm and its backward: PyTorch's checks, then the kernels of kernels/common/batch_norm.h
// (run_kernel) over the input read as [N, C, S].
#include <stdexcept>
#include <string>

#include "kernels/common/batch_norm.h"
#include "ops/op_checks.h"
#include "ops/raw_nn_ops.h"
#include "ops/raw_ops.h"
#include "runtime/run_kernel.h"

namespace colony::raw {
namespace {

struct Layout {
  int64_t n, c, s;
};

Layout check_input(const Tensor& input, const char* op) {
  check_defined(input, op);
  if (input.dim() < 2) {
    throw std::invalid_argument(std::string(op) + ": input must have at least 2 dims (N,C,...), got " +
                                shape_str(input.sizes()));
  }
  check_floating(input, op);
  if (input.is_cpu() && input.dtype() != kFloat32 && input.dtype() != kFloat64) {
    throw std::invalid_argument(std::string(op) + ": CPU batch norm supports float32 and float64, got " +
                                dtype_name(input.dtype()));
  }
  Layout l{input.size(0), input.size(1), 1};
  for (int64_t d = 2; d < input.dim(); ++d) l.s *= input.size(d);
  return l;
}

// The statistics' dtype: float32 for 16-bit inputs (as PyTorch), the input's otherwise.
DType stat_dtype(DType input) { return input == kFloat16 || input == kBFloat16 ? kFloat32 : input; }

// The dtype of weight, bias and the running statistics: the first defined one's (they must all
// agree), else the input's. Beside a 16-bit input it may be float32 (mixed precision, as PyTorch).
DType param_dtype(const Tensor& input, std::initializer_list<const Tensor*> params) {
  for (const Tensor* t : params) {
    if (t->defined() && (t->dtype() == input.dtype() || t->dtype() == stat_dtype(input.dtype()))) return t->dtype();
  }
  return input.dtype();
}

// A per-channel [C] tensor on input's device with dtype `dtype`, or undefined.
void check_channel_tensor(const Tensor& t, const char* name, const Tensor& input, DType dtype, const char* op) {
  if (!t.defined()) return;
  const int64_t c = input.size(1);
  if (t.dim() != 1 || t.size(0) != c) {
    throw std::invalid_argument(std::string(op) + ": expected " + name + " of shape [" + std::to_string(c) +
                                "] (one per channel of input " + shape_str(input.sizes()) + "), got " +
                                shape_str(t.sizes()));
  }
  if (t.device() != input.device() || t.dtype() != dtype) {
    const std::string like = dtype == input.dtype() ? " like input" : " (the statistics' dtype for a " +
                                                                          std::string(dtype_name(input.dtype())) + " input)";
    throw std::invalid_argument(std::string(op) + ": expected " + name + " as " + dtype_name(dtype) + " on " +
                                input.device().str() + like + ", got " + dtype_name(t.dtype()) + " on " +
                                t.device().str());
  }
}

void* ptr(const Tensor& t) { return t.defined() ? t.data_ptr_raw() : nullptr; }

// The kernels write running statistics in place; a non-contiguous one goes through a copy.
struct InPlace {
  Tensor target, work;
  explicit InPlace(const Tensor& t) : target(t), work(t.defined() ? contiguous(t) : Tensor()) {}
  void finish() {
    if (!target.defined()) return;
    if (!work.is_same(target)) {
      target.copy_(work);
    } else {
      target.storage()->bump_version();
    }
  }
};

}  // namespace

BatchNormResult batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                           const Tensor& running_var, bool training, double momentum, double eps) {
  const char* op = "batch_norm";
  const Layout l = check_input(input, op);
  const DType pd = param_dtype(input, {&weight, &bias, &running_mean, &running_var});
  check_channel_tensor(weight, "weight", input, pd, op);
  check_channel_tensor(bias, "bias", input, pd, op);
  check_channel_tensor(running_mean, "running_mean", input, pd, op);
  check_channel_tensor(running_var, "running_var", input, pd, op);
  if (running_mean.defined() != running_var.defined()) {
    throw std::invalid_argument("batch_norm: running_mean and running_var must be given together");
  }
  if (!training && !running_mean.defined()) {
    throw std::invalid_argument("batch_norm: running_mean and running_var are required in evaluation mode");
  }
  if (training && l.n * l.s <= 1) {
    throw std::invalid_argument("batch_norm: expected more than 1 value per channel when training, got input of "
                                "shape " + shape_str(input.sizes()));
  }
  const TensorOptions opts = TensorOptions(input.dtype()).device(input.device());
  BatchNormResult r;
  r.output = empty(input.sizes(), opts);
  const TensorOptions stats = TensorOptions(stat_dtype(input.dtype())).device(input.device());
  r.save_mean = empty({l.c}, stats);
  r.save_invstd = empty({l.c}, stats);
  if (l.c == 0) return r;
  Tensor x = contiguous(input);
  Tensor w = weight.defined() ? contiguous(weight) : Tensor();
  Tensor b = bias.defined() ? contiguous(bias) : Tensor();
  InPlace rm(running_mean), rv(running_var);
  run_kernel<kernels::BatchNormForward>(x.device(), x.dtype(), pd, l.n, l.c, l.s, x.data_ptr_raw(), ptr(w), ptr(b),
                                        ptr(rm.work), ptr(rv.work), training, momentum, eps, r.output.data_ptr_raw(),
                                        r.save_mean.data_ptr_raw(), r.save_invstd.data_ptr_raw());
  if (training) {
    rm.finish();
    rv.finish();
  }
  return r;
}

BatchNormGrads batch_norm_backward(const Tensor& grad_output, const Tensor& input, const Tensor& weight,
                                   const Tensor& save_mean, const Tensor& save_invstd, bool training,
                                   std::array<bool, 3> output_mask) {
  const char* op = "batch_norm_backward";
  const Layout l = check_input(input, op);
  if (!grad_output.defined() || grad_output.sizes() != input.sizes()) {
    throw std::invalid_argument("batch_norm_backward: expected grad_output of shape " + shape_str(input.sizes()) +
                                ", got " +
                                (grad_output.defined() ? shape_str(grad_output.sizes()) : std::string("undefined")));
  }
  if (grad_output.device() != input.device() || grad_output.dtype() != input.dtype()) {
    throw std::invalid_argument("batch_norm_backward: expected grad_output as " + std::string(dtype_name(input.dtype())) +
                                " on " + input.device().str() + " like input, got " + dtype_name(grad_output.dtype()) +
                                " on " + grad_output.device().str());
  }
  const DType pd = param_dtype(input, {&weight});
  check_channel_tensor(weight, "weight", input, pd, op);
  if (!save_mean.defined() || !save_invstd.defined()) {
    throw std::invalid_argument("batch_norm_backward: expected save_mean and save_invstd from batch_norm");
  }
  check_channel_tensor(save_mean, "save_mean", input, stat_dtype(input.dtype()), op);
  check_channel_tensor(save_invstd, "save_invstd", input, stat_dtype(input.dtype()), op);
  const TensorOptions opts = TensorOptions(input.dtype()).device(input.device());
  const TensorOptions param_opts = TensorOptions(pd).device(input.device());
  BatchNormGrads grads;
  if (output_mask[0]) grads.grad_input = empty(input.sizes(), opts);
  if (output_mask[1]) grads.grad_weight = empty({l.c}, param_opts);
  if (output_mask[2]) grads.grad_bias = empty({l.c}, param_opts);
  if (l.c == 0 || (!output_mask[0] && !output_mask[1] && !output_mask[2])) return grads;
  Tensor gy = contiguous(grad_output), x = contiguous(input);
  Tensor w = weight.defined() ? contiguous(weight) : Tensor();
  Tensor mean = contiguous(save_mean), invstd = contiguous(save_invstd);
  run_kernel<kernels::BatchNormBackward>(x.device(), x.dtype(), pd, l.n, l.c, l.s, gy.data_ptr_raw(), x.data_ptr_raw(),
                                         ptr(w), mean.data_ptr_raw(), invstd.data_ptr_raw(), training,
                                         ptr(grads.grad_input), ptr(grads.grad_weight), ptr(grads.grad_bias));
  return grads;
}

}  // namespace colony::raw
