#include "kernels/common/batch_norm.h"

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/common/dispatch.h"
#include "kernels/cuda/row_reduce.cuh"

namespace colony::kernels::cuda {
namespace {

constexpr int kThreads = 512;

// Element j of channel ch's n * s values in the [n, c, s] array: consecutive threads read
// consecutive pixels of one sample, so loads coalesce.
__device__ __forceinline__ int64_t element(int64_t j, int64_t ch, int64_t c, int64_t s) {
  return ((j / s) * c + ch) * s + j % s;
}

// T: the input's type; P: weight, bias and running statistics (T, or float for a 16-bit T);
// the saved statistics are compute_t<T> (float for 16-bit inputs, as PyTorch).
template <typename T, typename P>
__global__ void batch_norm_forward_kernel(int64_t n, int64_t c, int64_t s, const T* x, const P* weight, const P* bias,
                                          P* running_mean, P* running_var, bool training, double momentum, double eps,
                                          T* y, compute_t<T>* save_mean, compute_t<T>* save_invstd) {
  using C = compute_t<T>;
  __shared__ C shared[32];
  const int64_t ch = blockIdx.x, m = n * s;
  C mean, invstd;
  if (training) {
    // Two passes, as on the CPU: no cancellation when |mean| >> std.
    C sum = C(0);
    for (int64_t j = threadIdx.x; j < m; j += blockDim.x) sum += static_cast<C>(x[element(j, ch, c, s)]);
    sum = group_allreduce<false>(sum, Plus{}, shared);
    mean = sum / static_cast<C>(m);
    C sq = C(0);
    for (int64_t j = threadIdx.x; j < m; j += blockDim.x) {
      const C d = static_cast<C>(x[element(j, ch, c, s)]) - mean;
      sq += d * d;
    }
    sq = group_allreduce<false>(sq, Plus{}, shared);
    const C var = sq / static_cast<C>(m);
    invstd = C(1) / sqrt(var + static_cast<C>(eps));
    if (threadIdx.x == 0 && running_mean != nullptr) {
      const C mom = static_cast<C>(momentum);
      const C unbiased = m > 1 ? sq / static_cast<C>(m - 1) : var;
      running_mean[ch] = static_cast<P>((C(1) - mom) * static_cast<C>(running_mean[ch]) + mom * mean);
      running_var[ch] = static_cast<P>((C(1) - mom) * static_cast<C>(running_var[ch]) + mom * unbiased);
    }
  } else {
    mean = static_cast<C>(running_mean[ch]);
    invstd = C(1) / sqrt(static_cast<C>(running_var[ch]) + static_cast<C>(eps));
  }
  if (threadIdx.x == 0) {
    save_mean[ch] = mean;
    save_invstd[ch] = invstd;
  }
  const C w = weight != nullptr ? static_cast<C>(weight[ch]) : C(1);
  const C b = bias != nullptr ? static_cast<C>(bias[ch]) : C(0);
  const C scale = invstd * w, shift = b - mean * scale;
  for (int64_t j = threadIdx.x; j < m; j += blockDim.x) {
    const int64_t e = element(j, ch, c, s);
    y[e] = static_cast<T>(static_cast<C>(x[e]) * scale + shift);
  }
}

template <typename T, typename P>
__global__ void batch_norm_backward_kernel(int64_t n, int64_t c, int64_t s, const T* gy, const T* x, const P* weight,
                                           const compute_t<T>* save_mean, const compute_t<T>* save_invstd,
                                           bool training, T* gx, P* gw, P* gb) {
  using C = compute_t<T>;
  __shared__ C shared[32];
  const int64_t ch = blockIdx.x, m = n * s;
  const C mean = save_mean[ch], invstd = save_invstd[ch];
  C sum_g = C(0), dot = C(0);  // sum(g), sum(g * (x - mean))
  for (int64_t j = threadIdx.x; j < m; j += blockDim.x) {
    const int64_t e = element(j, ch, c, s);
    const C g = static_cast<C>(gy[e]);
    sum_g += g;
    dot += g * (static_cast<C>(x[e]) - mean);
  }
  sum_g = group_allreduce<false>(sum_g, Plus{}, shared);
  dot = group_allreduce<false>(dot, Plus{}, shared);
  if (threadIdx.x == 0) {
    if (gw != nullptr) gw[ch] = static_cast<P>(dot * invstd);
    if (gb != nullptr) gb[ch] = static_cast<P>(sum_g);
  }
  if (gx == nullptr) return;
  const C w = weight != nullptr ? static_cast<C>(weight[ch]) : C(1);
  const C proj = training ? dot * invstd * invstd / static_cast<C>(m) : C(0);
  const C grad_mean = training ? sum_g / static_cast<C>(m) : C(0);
  for (int64_t j = threadIdx.x; j < m; j += blockDim.x) {
    const int64_t e = element(j, ch, c, s);
    const C g = static_cast<C>(gy[e]);
    gx[e] = static_cast<T>((g - (static_cast<C>(x[e]) - mean) * proj - grad_mean) * invstd * w);
  }
}

// Calls f(P{}) with P the parameter type: T itself, or float beside a 16-bit T.
template <typename T, typename F>
void with_param_type(DType param_dtype, const char* op, F&& f) {
  if (param_dtype == dtype_of<T>::value) return f(T{});
  if constexpr (!std::is_same_v<compute_t<T>, T>) {
    if (param_dtype == DType::Float32) return f(float{});
  }
  throw std::invalid_argument(std::string(op) + ": parameters of dtype " + dtype_name(param_dtype) + " with a " +
                              dtype_name(dtype_of<T>::value) + " input");
}

}  // namespace

}  // namespace colony::kernels::cuda

namespace colony::kernels {

using namespace cuda;  // NOLINT(build/namespaces): the helpers above

void BatchNormForward::cuda(DType dtype, DType param_dtype, int64_t n, int64_t c, int64_t s, const void* x,
                            const void* weight, const void* bias, void* running_mean, void* running_var, bool training,
                            double momentum, double eps, void* y, void* save_mean, void* save_invstd, void* stream) {
  if (c == 0) return;
  COLONY_DISPATCH_FLOATING(dtype, "batch_norm", [&] {
    using T = scalar_t;
    using C = compute_t<T>;
    with_param_type<T>(param_dtype, "batch_norm", [&](auto param) {
      using P = decltype(param);
      batch_norm_forward_kernel<T, P><<<static_cast<unsigned>(c), kThreads, 0, as_stream(stream)>>>(
          n, c, s, static_cast<const T*>(x), static_cast<const P*>(weight), static_cast<const P*>(bias),
          static_cast<P*>(running_mean), static_cast<P*>(running_var), training, momentum, eps, static_cast<T*>(y),
          static_cast<C*>(save_mean), static_cast<C*>(save_invstd));
    });
  });
  after_launch("batch_norm");
}

void BatchNormBackward::cuda(DType dtype, DType param_dtype, int64_t n, int64_t c, int64_t s, const void* grad_y,
                             const void* x, const void* weight, const void* save_mean, const void* save_invstd,
                             bool training, void* grad_x, void* grad_weight, void* grad_bias, void* stream) {
  if (c == 0) return;
  COLONY_DISPATCH_FLOATING(dtype, "batch_norm_backward", [&] {
    using T = scalar_t;
    using C = compute_t<T>;
    with_param_type<T>(param_dtype, "batch_norm_backward", [&](auto param) {
      using P = decltype(param);
      batch_norm_backward_kernel<T, P><<<static_cast<unsigned>(c), kThreads, 0, as_stream(stream)>>>(
          n, c, s, static_cast<const T*>(grad_y), static_cast<const T*>(x), static_cast<const P*>(weight),
          static_cast<const C*>(save_mean), static_cast<const C*>(save_invstd), training, static_cast<T*>(grad_x),
          static_cast<P*>(grad_weight), static_cast<P*>(grad_bias));
    });
  });
  after_launch("batch_norm_backward");
}

}  // namespace colony::kernels
