// embedding_bag on the CPU (kernels/common/embedding_bag.h). Forward: the thread pool over bags,
// each bag's rows reduced straight into its output row. Backward: the positions sorted by the row
// they read (a counting sort, stable, so each row's list is in position order), then the thread
// pool over rows, each row summing its positions' bag gradients in that order: no two threads
// write one row, and the result is the same for every thread count. Max's gradient goes over the
// columns instead (each (bag, column) names one row).
#include "kernels/common/embedding_bag.h"

#include <algorithm>
#include <vector>

#include "kernels/common/dispatch.h"
#include "kernels/cpu/parallel.h"

namespace colony::kernels::cpu {
namespace {

constexpr int64_t kGrainElements = 16384;

int64_t grain_rows(int64_t dim) { return std::max<int64_t>(1, kGrainElements / std::max<int64_t>(dim, 1)); }

// The rows of a bag are scattered over the table, so the forward waits on memory: each position
// asks for the row kPrefetchAhead positions on to be brought into the cache (every line of it).
constexpr int64_t kPrefetchAhead = 8;
template <typename T>
void prefetch_row(const T* row, int64_t dim) {
  const char* p = reinterpret_cast<const char*>(row);
  for (int64_t byte = 0; byte < dim * static_cast<int64_t>(sizeof(T)); byte += 64) __builtin_prefetch(p + byte);
}

template <typename T>
void forward_typed(const T* weight, const int64_t* indices, const int64_t* offsets, const T* sample_weights,
                   const EmbeddingBagParams& p, T* out, int64_t* max_indices, int64_t* bag_size) {
  using C = compute_t<T>;
  const int64_t dim = p.dim;
  parallel_for(p.bags, grain_rows(dim), [&](int64_t begin, int64_t end) {
    std::vector<C> acc(static_cast<size_t>(dim));
    const int64_t last = offsets[end];  // this task's positions end here
    for (int64_t b = begin; b < end; ++b) {
      std::fill(acc.begin(), acc.end(), C(0));
      int64_t* arg = p.mode == EmbeddingBagMode::Max ? max_indices + b * dim : nullptr;
      if (arg != nullptr) std::fill(arg, arg + dim, int64_t{-1});
      int64_t count = 0;
      for (int64_t i = offsets[b]; i < offsets[b + 1]; ++i) {
        if (i + kPrefetchAhead < last) prefetch_row(weight + indices[i + kPrefetchAhead] * dim, dim);
        const int64_t idx = indices[i];
        if (!embedding_bag_counts(idx, p)) continue;
        const T* row = weight + idx * dim;
        if (arg != nullptr) {
          for (int64_t d = 0; d < dim; ++d) {
            const C v = static_cast<C>(row[d]);
            if (embedding_bag_takes_max(v, acc[d], count == 0)) {
              acc[d] = v;
              arg[d] = idx;
            }
          }
        } else {
          const C w = sample_weights != nullptr ? static_cast<C>(sample_weights[i]) : C(1);
          for (int64_t d = 0; d < dim; ++d) acc[d] += w * static_cast<C>(row[d]);
        }
        ++count;
      }
      bag_size[b] = count;
      const C scale = (p.mode == EmbeddingBagMode::Mean && count > 0) ? embedding_bag_scale(p, count, C(1)) : C(1);
      T* o = out + b * dim;
      for (int64_t d = 0; d < dim; ++d) o[d] = static_cast<T>(acc[d] * scale);
    }
  });
}

template <typename T>
void backward_typed(const T* grad_output, const int64_t* indices, const int64_t* offsets, int64_t n,
                    const T* sample_weights, const int64_t* max_indices, const int64_t* bag_size,
                    const EmbeddingBagParams& p, T* grad_weight) {
  using C = compute_t<T>;
  const int64_t dim = p.dim, rows = p.num_embeddings;
  if (p.mode == EmbeddingBagMode::Max) {
    std::fill(grad_weight, grad_weight + rows * dim, T(0));
    // Each column is one thread's: (bag, column) names one row, bags in order.
    parallel_for(dim, std::max<int64_t>(1, kGrainElements / std::max<int64_t>(p.bags, 1)), [&](int64_t begin, int64_t end) {
      for (int64_t b = 0; b < p.bags; ++b) {
        for (int64_t d = begin; d < end; ++d) {
          const int64_t row = max_indices[b * dim + d];
          if (row >= 0) {
            grad_weight[row * dim + d] =
                static_cast<T>(static_cast<C>(grad_weight[row * dim + d]) + static_cast<C>(grad_output[b * dim + d]));
          }
        }
      }
    });
    return;
  }
  // Each counted position's bag, then the positions grouped by row (stable: position order).
  std::vector<int64_t> bag_of(static_cast<size_t>(n), -1);
  for (int64_t b = 0; b < p.bags; ++b) {
    for (int64_t i = offsets[b]; i < offsets[b + 1]; ++i) bag_of[static_cast<size_t>(i)] = b;
  }
  std::vector<int64_t> start(static_cast<size_t>(rows + 1), 0), order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    if (bag_of[static_cast<size_t>(i)] >= 0 && embedding_bag_counts(indices[i], p)) ++start[static_cast<size_t>(indices[i] + 1)];
  }
  for (int64_t r = 0; r < rows; ++r) start[static_cast<size_t>(r + 1)] += start[static_cast<size_t>(r)];
  std::vector<int64_t> fill(start.begin(), start.end() - 1);
  for (int64_t i = 0; i < n; ++i) {
    if (bag_of[static_cast<size_t>(i)] >= 0 && embedding_bag_counts(indices[i], p)) {
      order[static_cast<size_t>(fill[static_cast<size_t>(indices[i])]++)] = i;
    }
  }
  parallel_for(rows, grain_rows(dim), [&](int64_t begin, int64_t end) {
    std::vector<C> acc(static_cast<size_t>(dim));
    for (int64_t r = begin; r < end; ++r) {
      std::fill(acc.begin(), acc.end(), C(0));
      for (int64_t k = start[static_cast<size_t>(r)]; k < start[static_cast<size_t>(r + 1)]; ++k) {
        const int64_t i = order[static_cast<size_t>(k)], b = bag_of[static_cast<size_t>(i)];
        const C w = sample_weights != nullptr ? static_cast<C>(sample_weights[i]) : C(1);
        const C scale = embedding_bag_scale(p, bag_size[b], w);
        const T* g = grad_output + b * dim;
        for (int64_t d = 0; d < dim; ++d) acc[d] += scale * static_cast<C>(g[d]);
      }
      T* gw = grad_weight + r * dim;
      for (int64_t d = 0; d < dim; ++d) gw[d] = static_cast<T>(acc[d]);
    }
  });
}

template <typename T>
void sample_weights_backward_typed(const T* grad_output, const T* weight, const int64_t* indices,
                                   const int64_t* offsets, int64_t n, const EmbeddingBagParams& p, T* grad) {
  using C = compute_t<T>;
  const int64_t dim = p.dim;
  std::fill(grad, grad + n, T(0));
  parallel_for(p.bags, grain_rows(dim), [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      for (int64_t i = offsets[b]; i < offsets[b + 1]; ++i) {
        if (!embedding_bag_counts(indices[i], p)) continue;
        const T* row = weight + indices[i] * dim;
        const T* g = grad_output + b * dim;
        C dot = C(0);
        for (int64_t d = 0; d < dim; ++d) dot += static_cast<C>(g[d]) * static_cast<C>(row[d]);
        grad[i] = static_cast<T>(dot);
      }
    }
  });
}

}  // namespace
}  // namespace colony::kernels::cpu

namespace colony::kernels {

using namespace cpu;  // NOLINT(build/namespaces): the helpers above

void EmbeddingBagForward::cpu(DType dtype, const void* weight, const int64_t* indices, const int64_t* offsets,
                              const void* per_sample_weights, const EmbeddingBagParams& p, void* output,
                              int64_t* max_indices, int64_t* bag_size) {
  COLONY_DISPATCH_FLOATING(dtype, "embedding_bag", [&] {
    forward_typed(static_cast<const scalar_t*>(weight), indices, offsets,
                  static_cast<const scalar_t*>(per_sample_weights), p, static_cast<scalar_t*>(output), max_indices,
                  bag_size);
  });
}

void EmbeddingBagBackward::cpu(DType dtype, const void* grad_output, const int64_t* indices, const int64_t* offsets,
                               int64_t indices_count, const void* per_sample_weights, const int64_t* max_indices,
                               const int64_t* bag_size, const EmbeddingBagParams& p, void* grad_weight) {
  COLONY_DISPATCH_FLOATING(dtype, "embedding_bag_backward", [&] {
    backward_typed(static_cast<const scalar_t*>(grad_output), indices, offsets, indices_count,
                   static_cast<const scalar_t*>(per_sample_weights), max_indices, bag_size, p,
                   static_cast<scalar_t*>(grad_weight));
  });
}

void EmbeddingBagSampleWeightsBackward::cpu(DType dtype, const void* grad_output, const void* weight,
                                            const int64_t* indices, const int64_t* offsets, int64_t indices_count,
                                            const EmbeddingBagParams& p, void* grad_per_sample_weights) {
  COLONY_DISPATCH_FLOATING(dtype, "embedding_bag_backward", [&] {
    sample_weights_backward_typed(static_cast<const scalar_t*>(grad_output), static_cast<const scalar_t*>(weight),
                                  indices, offsets, indices_count, p, static_cast<scalar_t*>(grad_per_sample_weights));
  });
}

}  // namespace colony::kernels
