// Automatic mixed precision (torch.autocast): inside an AutocastGuard, the differentiable ops pick
// their compute dtype by PyTorch's op lists, per device type:
//  - lower precision (the guard's dtype): mm, bmm, matmul, F::linear, conv2d;
//  - float32: softmax, log_softmax, cross_entropy/nll_loss/mse_loss, batch_norm's statistics,
//    sum, mean, var, exp, log, log1p, expm1, pow, reciprocal, rsqrt;
//  - everything else runs in its inputs' dtype, and binary ops of mixed dtypes promote to the
//    widest (promote_types), as outside autocast.
// The casts are ordinary differentiable to() calls, so gradients arrive in each parameter's own
// dtype (float32 master weights stay float32). float64 and integer tensors are never cast.
//
//   {
//     AutocastGuard amp(DeviceType::CPU, kBFloat16);
//     Tensor loss = F::cross_entropy(model->forward(x), y);  // conv/linear in bfloat16, loss in float32
//   }
//   loss.backward();                                         // outside the guard, as in PyTorch
//
// Cast cache: a float32 leaf that requires grad (a weight) is cast once per autocast region and the
// copy reused by every op that reads it; an entry is dropped when the weight's version counter
// moves (an in-place update) and the cache is cleared when the outermost guard on the thread exits.
// The state is per thread, like grad mode.
#pragma once

#include "tensor/device.h"
#include "tensor/dtype.h"
#include "tensor/tensor.h"

namespace colony {

// torch.is_autocast_enabled(device_type) / torch.get_autocast_dtype(device_type). The dtype is the
// one the next guard would keep: bfloat16 on the CPU and float16 on CUDA until a guard sets another.
bool is_autocast_enabled(DeviceType device);
DType get_autocast_dtype(DeviceType device);

// Scoped torch.autocast(device_type, dtype, enabled). dtype must be float16 or bfloat16. Guards
// nest: the inner one's (enabled, dtype) holds until it exits, then the outer one's again;
// enabled = false switches autocast off inside an autocast region (e.g. for a float32 sub-block).
class AutocastGuard {
 public:
  AutocastGuard(DeviceType device, DType dtype, bool enabled = true);
  // The device's current autocast dtype (get_autocast_dtype).
  explicit AutocastGuard(DeviceType device, bool enabled = true);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  DeviceType device_;
  bool prev_enabled_;
  DType prev_dtype_;
};

namespace autocast {

// The policy's casts, used by the op files. Each returns t itself when autocast is off for t's
// device type, t is undefined, not floating, float64, or already in the target dtype.
// To the autocast dtype (through the cast cache for weights):
Tensor to_lower_precision(const Tensor& t);
// 16-bit floats to float32:
Tensor to_float32(const Tensor& t);
// Whether autocast is on for t's device and t is a 16-bit float (batch norm's case).
bool is_lower_precision_input(const Tensor& t);

// Entries in this thread's cast cache (for tests).
size_t cache_size();
void clear_cache();

}  // namespace autocast
}  // namespace colony
