// Automatic mixed precision (torch.autocast): inside an AutocastGuard, the differentiable ops pick
// their compute dtype by the policy table below (COLONY_FOR_EACH_AUTOCAST_OP, the only place the
// policy is written): an op in the table casts its floating inputs to the dtype its row says; every
// other op runs in its inputs' dtype, and binary ops of mixed dtypes promote to the widest
// (promote_types), as outside autocast. The casts are ordinary differentiable to() calls, so
// gradients arrive in each parameter's own dtype (float32 master weights stay float32). float64 and
// integer tensors are never cast.
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

#include <memory>

#include "runtime/device.h"
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

// The policy: every op autocast changes, with the dtype it computes in, after PyTorch's op lists
// (torch.amp's "ops that can autocast to float16" and "ops that can autocast to float32"):
//  - LowerPrecision: the guard's dtype (float16 or bfloat16);
//  - Float32: 16-bit floating inputs widened to float32 (batch_norm's output goes back to the
//    input's dtype, as cuDNN's mixed-precision batch norm gives it).
// One row serves both devices. Where torch's CPU and CUDA lists differ: cosine_similarity is on
// CUDA's float32 list only (the row holds on the CPU too), and binary_cross_entropy is on the CPU's
// float32 list, while under CUDA autocast F::binary_cross_entropy refuses to run, as PyTorch does,
// naming binary_cross_entropy_with_logits. The losses of nn/functional_loss.cc cast with these rows.
// The recurrent cells (nn/rnn_cell_math.h) are on CUDA's lower-precision list (lstm_cell, gru_cell,
// rnn_tanh_cell, rnn_relu_cell) and the whole recurrent layers run there in it through cuDNN
// (torch's _cudnn_rnn autocast wrapper); on the CPU torch's list has mkldnn_rnn_layer (LSTM in
// bfloat16) while its cells, GRU and RNN only cast their products: one row each serves both
// devices here, so on the CPU too a cell or layer gives the lower precision.
// softplus is in PyTorch's CUDA float32 list (its CPU list leaves it, and the other activations, in
// the input's dtype); like exp and log, one row serves both devices here, and so for tan, asin, acos,
// sinh, cosh, log2, log10 and erfinv, torch's other elementwise float32 rows. atan2 is on torch's
// promote list, which is what every binary op of mixed dtypes does here. interpolate stands for
// torch's upsample_* ops (float32 in its lists); F::interpolate casts with it. The add-and-multiply
// ops (addmm, addmv, addr, baddbmm, addbmm) cast every operand, the added input too, as torch's; the
// margin and likelihood losses, cdist and pdist are on torch's CUDA float32 list.
// The linalg rows are torch's CUDA float32 list (linalg_inv and inv_ex, linalg_solve, linalg_cholesky and cholesky_ex,
// linalg_qr, linalg_eigh, linalg_eigvalsh, linalg_svd, linalg_svdvals, linalg_vector_norm,
// linalg_matrix_norm; autograd/linalg.h): its CPU list has none of them, and without autocast a
// 16-bit input is refused, as torch refuses it; one row serves both devices here.
// conv3d and conv_transpose3d are on both of torch's lower-precision lists, as conv2d and
// conv_transpose2d; their rows are at the table's end.
// ctc_loss is on torch's CPU float32 list (and its CUDA kernels are float32/float64 only); one row
// serves both devices.
// grid_sampler is on torch's CPU float32 list and its CUDA "promote" list (the widest of input and
// grid): float32 here on both devices, which is CUDA torch's result too unless both are 16-bit.
// avg_pool3d, adaptive_max_pool3d, fractional_max_pool2d and fractional_max_pool3d are on torch's
// CPU float32 list (its CUDA list has no pooling); one row serves both devices. Fractional max
// pooling casts its _random_samples with the input, as they must share its dtype.
// dist, renorm and nuclear_norm are on torch's CUDA float32 list (one row serves both devices):
// dist casts both operands before subtracting, renorm its input before the norms and the scaling.
// An op file casts its inputs with cast(Op::name, t). tests/autograd/autocast_test.cc walks this table
// and checks each op's dtypes and values, and fails for a row it has no case for.
#define COLONY_FOR_EACH_AUTOCAST_OP(X) \
  X(mm, LowerPrecision)                \
  X(bmm, LowerPrecision)               \
  X(matmul, LowerPrecision)            \
  X(linear, LowerPrecision)            \
  X(conv2d, LowerPrecision)            \
  X(conv_transpose2d, LowerPrecision)  \
  X(scaled_dot_product_attention, LowerPrecision) \
  X(rnn_tanh_cell, LowerPrecision)     \
  X(rnn_relu_cell, LowerPrecision)     \
  X(lstm_cell, LowerPrecision)         \
  X(gru_cell, LowerPrecision)          \
  X(rnn_tanh, LowerPrecision)          \
  X(rnn_relu, LowerPrecision)          \
  X(lstm, LowerPrecision)              \
  X(gru, LowerPrecision)               \
  X(softmax, Float32)                  \
  X(log_softmax, Float32)              \
  X(cross_entropy, Float32)            \
  X(nll_loss, Float32)                 \
  X(mse_loss, Float32)                 \
  X(l1_loss, Float32)                  \
  X(smooth_l1_loss, Float32)           \
  X(huber_loss, Float32)               \
  X(binary_cross_entropy, Float32)     \
  X(binary_cross_entropy_with_logits, Float32) \
  X(kl_div, Float32)                   \
  X(cosine_similarity, Float32)        \
  X(cosine_embedding_loss, Float32)    \
  X(batch_norm, Float32)               \
  X(group_norm, Float32)               \
  X(layer_norm, Float32)               \
  X(rms_norm, Float32)                 \
  X(sum, Float32)                      \
  X(mean, Float32)                     \
  X(var, Float32)                      \
  X(exp, Float32)                      \
  X(log, Float32)                      \
  X(log1p, Float32)                    \
  X(expm1, Float32)                    \
  X(tan, Float32)                      \
  X(asin, Float32)                     \
  X(acos, Float32)                     \
  X(sinh, Float32)                     \
  X(cosh, Float32)                     \
  X(log2, Float32)                     \
  X(log10, Float32)                    \
  X(erfinv, Float32)                   \
  X(pow, Float32)                      \
  X(reciprocal, Float32)               \
  X(rsqrt, Float32)                    \
  X(softplus, Float32)                 \
  X(interpolate, Float32)              \
  X(cumsum, Float32)                   \
  X(cumprod, Float32)                  \
  X(addmm, LowerPrecision)             \
  X(addmv, LowerPrecision)             \
  X(addr, LowerPrecision)              \
  X(baddbmm, LowerPrecision)           \
  X(addbmm, LowerPrecision)            \
  X(margin_ranking_loss, Float32)      \
  X(hinge_embedding_loss, Float32)     \
  X(soft_margin_loss, Float32)         \
  X(multi_margin_loss, Float32)        \
  X(multilabel_margin_loss, Float32)   \
  X(triplet_margin_loss, Float32)      \
  X(poisson_nll_loss, Float32)         \
  X(cdist, Float32)                    \
  X(pdist, Float32)                    \
  X(linalg_inv, Float32)               \
  X(linalg_solve, Float32)             \
  X(linalg_cholesky, Float32)          \
  X(linalg_qr, Float32)                \
  X(linalg_eigh, Float32)              \
  X(linalg_eigvalsh, Float32)          \
  X(linalg_svd, Float32)               \
  X(linalg_svdvals, Float32)           \
  X(linalg_vector_norm, Float32)       \
  X(linalg_matrix_norm, Float32)       \
  X(ctc_loss, Float32)                 \
  X(grid_sampler, Float32)             \
  X(conv3d, LowerPrecision)            \
  X(conv_transpose3d, LowerPrecision)  \
  X(avg_pool3d, Float32)               \
  X(adaptive_max_pool3d, Float32)      \
  X(fractional_max_pool2d, Float32)    \
  X(fractional_max_pool3d, Float32)    \
  X(dist, Float32)                     \
  X(renorm, Float32)                   \
  X(nuclear_norm, Float32)             \
  X(prelu, LowerPrecision)             \

enum class CastPolicy { LowerPrecision, Float32 };

#define COLONY_AUTOCAST_ENUMERATOR(name, policy) name,
enum class Op { COLONY_FOR_EACH_AUTOCAST_OP(COLONY_AUTOCAST_ENUMERATOR) };
#undef COLONY_AUTOCAST_ENUMERATOR

CastPolicy policy(Op op);
const char* op_name(Op op);

// t cast as `op`'s row says, when autocast is on for t's device; t itself when autocast is off,
// t is undefined, not floating, float64, or already in the target dtype. Weights cast to the lower
// precision come from the cast cache.
Tensor cast(Op op, const Tensor& t);
// Whether cast(op, t) would give another dtype than t's.
bool casts(Op op, const Tensor& t);

// Entries in this thread's cast cache (for tests).
size_t cache_size();
void clear_cache();

// Gives the code in its scope a cast cache of its own, empty at entry, and puts the enclosing
// region's back at exit. Activation checkpointing (autograd/checkpoint.h) runs its function under
// one at the forward and again at the recomputation, so both build the same casts of the same
// weights: sharing the enclosing cache would hand the forward a cast made before the checkpoint
// (an edge into the outer graph) that the recomputation, in a region of its own, makes afresh.
class CacheScope {
 public:
  CacheScope();
  ~CacheScope();
  CacheScope(const CacheScope&) = delete;
  CacheScope& operator=(const CacheScope&) = delete;

 private:
  struct Saved;
  std::unique_ptr<Saved> saved_;
};

}  // namespace autocast
}  // namespace colony
