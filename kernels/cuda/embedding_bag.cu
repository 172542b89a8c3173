// embedding_bag on CUDA (kernels/common/embedding_bag.h). Forward: one thread per (bag, column),
// walking its bag's positions in order (neighbouring threads read neighbouring columns of one row).
// Backward: grad_weight zeroed, then one thread per (position, column) adding its bag's scaled
// gradient with an atomic (Max: one per (bag, column), to the maximum's row), so the sum's order
// varies from run to run, as torch's CUDA embedding_bag; the per-sample-weights gradient is one
// thread per position. Indices are checked here: a bad one is recorded for check_device_errors()
// and skipped.
#include <cuda_runtime.h>

#include "kernels/common/device_error.h"
#include "kernels/common/dispatch.h"
#include "kernels/common/embedding_bag.h"
#include "kernels/cuda/launch.cuh"
#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/device_errors.h"

namespace colony::kernels::cuda {
namespace {

__device__ __forceinline__ bool checked_counts(int64_t idx, const EmbeddingBagParams& p, DeviceErrorRecord* err,
                                               bool report) {
  if (!index_in_range(idx, p.num_embeddings)) {
    if (report) record_bad_index(err, CheckedOp::EmbeddingBag, idx, p.num_embeddings);
    return false;
  }
  return embedding_bag_counts(idx, p);
}

template <typename T>
__global__ void forward_kernel(const T* weight, const int64_t* indices, const int64_t* offsets, const T* sample_weights,
                               EmbeddingBagParams p, T* out, int64_t* max_indices, int64_t* bag_size,
                               DeviceErrorRecord* err) {
  using C = compute_t<T>;
  COLONY_GRID_LOOP(e, p.bags * p.dim) {
    const int64_t b = e / p.dim, d = e % p.dim;
    C acc = C(0);
    int64_t arg = -1, count = 0;
    for (int64_t i = offsets[b]; i < offsets[b + 1]; ++i) {
      const int64_t idx = indices[i];
      if (!checked_counts(idx, p, err, d == 0)) continue;
      const C v = static_cast<C>(weight[idx * p.dim + d]);
      if (p.mode == EmbeddingBagMode::Max) {
        if (embedding_bag_takes_max(v, acc, count == 0)) {
          acc = v;
          arg = idx;
        }
      } else {
        acc += (sample_weights != nullptr ? static_cast<C>(sample_weights[i]) : C(1)) * v;
      }
      ++count;
    }
    if (p.mode == EmbeddingBagMode::Max) max_indices[e] = arg;
    if (p.mode == EmbeddingBagMode::Mean && count > 0) acc *= embedding_bag_scale(p, count, C(1));
    out[e] = static_cast<T>(acc);
    if (d == 0) bag_size[b] = count;
  }
}

template <typename T>
__global__ void zero_kernel(T* x, int64_t n) {
  COLONY_GRID_LOOP(e, n) { x[e] = T(0.0f); }
}

template <typename T>
__global__ void backward_kernel(const T* grad_output, const int64_t* indices, const int64_t* offsets, int64_t n,
                                const T* sample_weights, const int64_t* bag_size, EmbeddingBagParams p,
                                T* grad_weight) {
  using C = compute_t<T>;
  COLONY_GRID_LOOP(e, n * p.dim) {
    const int64_t i = e / p.dim, d = e % p.dim;
    if (i < offsets[0] || i >= offsets[p.bags]) continue;  // outside every bag
    const int64_t idx = indices[i];
    if (!index_in_range(idx, p.num_embeddings) || !embedding_bag_counts(idx, p)) continue;
    const int64_t b = embedding_bag_of(offsets, p.bags, i);
    const C w = sample_weights != nullptr ? static_cast<C>(sample_weights[i]) : C(1);
    const C g = embedding_bag_scale(p, bag_size[b], w) * static_cast<C>(grad_output[b * p.dim + d]);
    atomic_add(grad_weight + idx * p.dim + d, static_cast<T>(g));
  }
}

template <typename T>
__global__ void max_backward_kernel(const T* grad_output, const int64_t* max_indices, EmbeddingBagParams p,
                                    T* grad_weight) {
  COLONY_GRID_LOOP(e, p.bags * p.dim) {
    const int64_t row = max_indices[e];
    if (row >= 0) atomic_add(grad_weight + row * p.dim + e % p.dim, grad_output[e]);
  }
}

template <typename T>
__global__ void sample_weights_backward_kernel(const T* grad_output, const T* weight, const int64_t* indices,
                                               const int64_t* offsets, int64_t n, EmbeddingBagParams p, T* grad) {
  using C = compute_t<T>;
  COLONY_GRID_LOOP(i, n) {
    const int64_t idx = indices[i];
    C dot = C(0);
    if (i >= offsets[0] && i < offsets[p.bags] && index_in_range(idx, p.num_embeddings) && embedding_bag_counts(idx, p)) {
      const T* g = grad_output + embedding_bag_of(offsets, p.bags, i) * p.dim;
      const T* row = weight + idx * p.dim;
      for (int64_t d = 0; d < p.dim; ++d) dot += static_cast<C>(g[d]) * static_cast<C>(row[d]);
    }
    grad[i] = static_cast<T>(dot);
  }
}

}  // namespace
}  // namespace colony::kernels::cuda

namespace colony::kernels {

using namespace cuda;  // NOLINT(build/namespaces): the helpers above

void EmbeddingBagForward::cuda(DType dtype, const void* weight, const int64_t* indices, const int64_t* offsets,
                               const void* per_sample_weights, const EmbeddingBagParams& p, void* output,
                               int64_t* max_indices, int64_t* bag_size, void* stream) {
  const int64_t n = p.bags * p.dim;
  if (n == 0) return;
  COLONY_DISPATCH_FLOATING(dtype, "embedding_bag", [&] {
    forward_kernel<scalar_t><<<grid_blocks(n), kBlockThreads, 0, as_stream(stream)>>>(
        static_cast<const scalar_t*>(weight), indices, offsets, static_cast<const scalar_t*>(per_sample_weights), p,
        static_cast<scalar_t*>(output), max_indices, bag_size, device_error_record());
  });
  after_launch("embedding_bag");
}

void EmbeddingBagBackward::cuda(DType dtype, const void* grad_output, const int64_t* indices, const int64_t* offsets,
                                int64_t indices_count, const void* per_sample_weights, const int64_t* max_indices,
                                const int64_t* bag_size, const EmbeddingBagParams& p, void* grad_weight,
                                void* stream) {
  const int64_t table = p.num_embeddings * p.dim;
  if (table == 0) return;
  COLONY_DISPATCH_FLOATING(dtype, "embedding_bag_backward", [&] {
    auto* gw = static_cast<scalar_t*>(grad_weight);
    const auto* g = static_cast<const scalar_t*>(grad_output);
    zero_kernel<scalar_t><<<grid_blocks(table), kBlockThreads, 0, as_stream(stream)>>>(gw, table);
    if (p.mode == EmbeddingBagMode::Max) {
      if (p.bags * p.dim > 0) {
        max_backward_kernel<scalar_t><<<grid_blocks(p.bags * p.dim), kBlockThreads, 0, as_stream(stream)>>>(
            g, max_indices, p, gw);
      }
    } else if (indices_count * p.dim > 0 && p.bags > 0) {
      backward_kernel<scalar_t><<<grid_blocks(indices_count * p.dim), kBlockThreads, 0, as_stream(stream)>>>(
          g, indices, offsets, indices_count, static_cast<const scalar_t*>(per_sample_weights), bag_size, p, gw);
    }
  });
  after_launch("embedding_bag_backward");
}

void EmbeddingBagSampleWeightsBackward::cuda(DType dtype, const void* grad_output, const void* weight,
                                             const int64_t* indices, const int64_t* offsets, int64_t indices_count,
                                             const EmbeddingBagParams& p, void* grad_per_sample_weights,
                                             void* stream) {
  if (indices_count == 0) return;
  if (p.bags == 0) {
    check_cuda(cudaMemsetAsync(grad_per_sample_weights, 0, static_cast<size_t>(indices_count * element_size(dtype)),
                               as_stream(stream)),
               "embedding_bag_backward: cudaMemsetAsync");
    return;
  }
  COLONY_DISPATCH_FLOATING(dtype, "embedding_bag_backward", [&] {
    sample_weights_backward_kernel<scalar_t><<<grid_blocks(indices_count), kBlockThreads, 0, as_stream(stream)>>>(
        static_cast<const scalar_t*>(grad_output), static_cast<const scalar_t*>(weight), indices, offsets,
        indices_count, p, static_cast<scalar_t*>(grad_per_sample_weights));
  });
  after_launch("embedding_bag_backward");
}

}  // namespace colony::kernels
