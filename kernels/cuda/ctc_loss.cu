// The CTC loss on CUDA (kernels/common/ctc_loss.h): one block per sample, its threads over the
// positions s of the extended target within a time step, a block barrier between steps (each step
// reads the previous one). The backward keeps two rows of beta per sample in scratch from the
// caching allocator; after each beta row, the threads take one class each and collect
// alpha * beta over the positions of that class in descending s, the CPU's order, so both devices
// sum the same terms in the same order and no atomics are needed. Labels are checked on the
// device: a label outside [0, C) is recorded for check_device_errors() and the sample's loss is NaN.
#include <cuda_runtime.h>

#include <cmath>

#include "kernels/common/ctc_loss.h"
#include "kernels/common/device_error.h"
#include "kernels/common/dispatch.h"
#include "kernels/cuda/launch.cuh"
#include "runtime/cuda/device_errors.h"
#include "runtime/cuda/workspaces.h"

namespace colony::kernels::cuda {
namespace {

constexpr int kThreads = 128;

template <typename T>
__global__ void ctc_forward_kernel(const T* log_probs, const int64_t* targets, const int64_t* target_offsets,
                                   const int64_t* input_lengths, const int64_t* target_lengths, CtcLossParams p,
                                   T* nll, T* log_alpha, DeviceErrorRecord* err) {
  const int64_t b = blockIdx.x, n = p.batch, c = p.classes, width = p.positions();
  const int64_t time = input_lengths[b], length = target_lengths[b];
  const int64_t* target = targets + target_offsets[b];
  int bad = 0;
  for (int64_t j = threadIdx.x; j < length; j += blockDim.x) {
    if (!index_in_range(target[j], c)) {
      record_bad_index(err, CheckedOp::CtcLoss, target[j], c);
      bad = 1;
    }
  }
  if (__syncthreads_or(bad)) {
    if (threadIdx.x == 0) nll[b] = static_cast<T>(NAN);
    return;
  }
  if (time == 0) {
    if (threadIdx.x == 0) nll[b] = ctc_nll_no_input<T>(length);
    return;
  }
  T* alpha = log_alpha + b * p.max_time * width;
  for (int64_t s = threadIdx.x; s <= 2 * length; s += blockDim.x) {
    alpha[s] = ctc_alpha_first<T>(s, target, p.blank, log_probs + b * c);
  }
  for (int64_t t = 1; t < time; ++t) {
    __syncthreads();  // row t - 1 complete
    const T* prev = alpha + (t - 1) * width;
    T* row = alpha + t * width;
    const T* y = log_probs + (t * n + b) * c;
    for (int64_t s = threadIdx.x; s <= 2 * length; s += blockDim.x) row[s] = ctc_alpha_step<T>(prev, s, target, p.blank, y);
  }
  __syncthreads();
  if (threadIdx.x == 0) nll[b] = ctc_nll(alpha + (time - 1) * width, length);
}

template <typename T>
__global__ void ctc_backward_kernel(const T* grad_nll, const T* log_probs, const int64_t* targets,
                                    const int64_t* target_offsets, const int64_t* input_lengths,
                                    const int64_t* target_lengths, const T* nll, const T* log_alpha, CtcLossParams p,
                                    T* beta_rows, T* grad) {
  const int64_t b = blockIdx.x, n = p.batch, c = p.classes, width = p.positions();
  const int64_t time = input_lengths[b], length = target_lengths[b];
  const T loss = nll[b];
  const bool zeroed = ctc_zeroed(loss, p);
  const int64_t first_zero = zeroed ? 0 : time;
  for (int64_t e = threadIdx.x; e < (p.max_time - first_zero) * c; e += blockDim.x) {
    grad[((first_zero + e / c) * n + b) * c + e % c] = T(0);
  }
  if (zeroed || time == 0) return;
  const int64_t* target = targets + target_offsets[b];
  const T* alpha = log_alpha + b * p.max_time * width;
  T* rows = beta_rows + b * 2 * width;
  const T gr = grad_nll[b];
  for (int64_t t = time - 1; t >= 0; --t) {
    const T* y = log_probs + (t * n + b) * c;
    T* beta = rows + (t % 2) * width;
    const T* next = rows + ((t + 1) % 2) * width;
    for (int64_t s = threadIdx.x; s <= 2 * length; s += blockDim.x) {
      beta[s] = t == time - 1 ? ctc_beta_last<T>(s, length, target, p.blank, y)
                              : ctc_beta_step<T>(next, s, length, target, p.blank, y);
    }
    __syncthreads();  // beta row t complete; the next step writes the other row
    T* g = grad + (t * n + b) * c;
    for (int64_t k = threadIdx.x; k < c; k += blockDim.x) {
      T collected = ctc_neg_inf<T>();
      // The blank sits at every even s (and wherever a label equals it); the others at odd s only.
      const int64_t step = k == p.blank ? 1 : 2;
      for (int64_t s = k == p.blank ? 2 * length : 2 * length - 1; s >= 0; s -= step) {
        if (ctc_extended_label(target, s, p.blank) == k) {
          collected = ctc_log_accumulate(collected, alpha[t * width + s] + beta[s]);
        }
      }
      g[k] = ctc_grad(y[k], collected, loss, gr);
    }
  }
}

}  // namespace
}  // namespace colony::kernels::cuda

namespace colony::kernels {

using namespace cuda;  // NOLINT(build/namespaces): the helpers above

void CtcLossForward::cuda(DType dtype, const void* log_probs, const int64_t* targets, const int64_t* target_offsets,
                          const int64_t* input_lengths, const int64_t* target_lengths, const CtcLossParams& p,
                          void* nll, void* log_alpha, void* stream) {
  if (p.batch == 0) return;
  COLONY_DISPATCH_FLOAT32_64(dtype, "ctc_loss", [&] {
    ctc_forward_kernel<scalar_t><<<static_cast<unsigned>(p.batch), kThreads, 0, as_stream(stream)>>>(
        static_cast<const scalar_t*>(log_probs), targets, target_offsets, input_lengths, target_lengths, p,
        static_cast<scalar_t*>(nll), static_cast<scalar_t*>(log_alpha), device_error_record());
  });
  after_launch("ctc_loss");
}

void CtcLossBackward::cuda(DType dtype, const void* grad_nll, const void* log_probs, const int64_t* targets,
                           const int64_t* target_offsets, const int64_t* input_lengths, const int64_t* target_lengths,
                           const void* nll, const void* log_alpha, const CtcLossParams& p, void* grad, void* stream) {
  if (p.batch == 0) return;
  KernelScratch scratch(static_cast<size_t>(p.batch * 2 * p.positions() * element_size(dtype)));  // two beta rows a sample
  COLONY_DISPATCH_FLOAT32_64(dtype, "ctc_loss_backward", [&] {
    ctc_backward_kernel<scalar_t><<<static_cast<unsigned>(p.batch), kThreads, 0, as_stream(stream)>>>(
        static_cast<const scalar_t*>(grad_nll), static_cast<const scalar_t*>(log_probs), targets, target_offsets,
        input_lengths, target_lengths, static_cast<const scalar_t*>(nll), static_cast<const scalar_t*>(log_alpha), p,
        static_cast<scalar_t*>(scratch.get()), static_cast<scalar_t*>(grad));
  });
  after_launch("ctc_loss_backward");
}

}  // namespace colony::kernels
