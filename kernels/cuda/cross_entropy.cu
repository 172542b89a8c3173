#include "kernels/common/cross_entropy.h"

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "kernels/common/device_error.h"
#include "kernels/common/dispatch.h"
#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/device_errors.h"
#include "kernels/cuda/row_reduce.cuh"
#include "runtime/cuda/workspaces.h"

namespace colony::kernels::cuda {
namespace {

const char* op_name(const CrossEntropyParams& p) { return p.log_probs ? "nll_loss" : "cross_entropy"; }
__host__ __device__ CheckedOp checked_op(const CrossEntropyParams& p) {
  return p.log_probs ? CheckedOp::NllLoss : CheckedOp::CrossEntropy;
}

// Block sums of the Mean/Sum forward, padded to 8 bytes so either compute type fits; the counter
// of finished blocks follows them.
struct BlockSum {
  double loss, count;
};

unsigned forward_blocks(const CrossEntropyParams& p) { return row_blocks(p.rows, use_warp_rows(p.classes)); }

template <typename C>
struct LossCount {
  C loss, count;
};

template <typename C>
__device__ __forceinline__ LossCount<C> shfl_xor(LossCount<C> s, int mask) {
  return {cuda::shfl_xor(s.loss, mask), cuda::shfl_xor(s.count, mask)};  // the scalar overloads
}

struct LossCountPlus {
  template <typename C>
  __device__ __forceinline__ LossCount<C> operator()(LossCount<C> a, LossCount<C> b) const {
    return {a.loss + b.loss, a.count + b.count};
  }
};

template <bool kWarp, typename T>
__global__ void cross_entropy_forward_kernel(const T* x, const int64_t* target, CrossEntropyParams p, T* loss,
                                             compute_t<T>* lse, compute_t<T>* counted, BlockSum* block_sums,
                                             unsigned* finished, DeviceErrorRecord* err) {
  using C = compute_t<T>;
  __shared__ C shared[32];
  __shared__ LossCount<C> shared_lc[32];
  __shared__ bool last_block;
  const int64_t k = p.classes;
  const bool smoothing = p.label_smoothing != 0.0;
  LossCount<C> mine{C(0), C(0)};  // this thread's counted rows (lane 0 of each group only)
  RowGroup<kWarp> g;
  for (int64_t row = g.first; row < p.rows; row += g.stride) {
    const T* xr = x + row * k;
    C m = C(0), log_sum = C(0);
    if (!p.log_probs) {
      m = -INFINITY;
      for (int64_t c = g.lane; c < k; c += g.size) m = NanMax{}(m, static_cast<C>(xr[c]));
      m = group_allreduce<kWarp>(m, NanMax{}, shared);
      C s = C(0);
      for (int64_t c = g.lane; c < k; c += g.size) s += device_exp(static_cast<C>(xr[c]) - m);
      s = group_allreduce<kWarp>(s, Plus{}, shared);
      log_sum = device_log(s);
    }
    C sum_shifted = C(0);
    if (smoothing) {
      for (int64_t c = g.lane; c < k; c += g.size) sum_shifted += static_cast<C>(xr[c]) - m;
      sum_shifted = group_allreduce<kWarp>(sum_shifted, Plus{}, shared);
    }
    if (g.lane == 0) {
      if (!p.log_probs) {
        lse[2 * row] = m;
        lse[2 * row + 1] = log_sum;
      }
      const int64_t t = target[row];
      C l = C(0);
      if (t != p.ignore_index) {
        if (index_in_range(t, k)) {
          l = cross_entropy_row_loss(m, log_sum, static_cast<C>(xr[t]), sum_shifted, p);
          mine.loss += l;
          mine.count += C(1);
        } else {
          record_bad_index(err, checked_op(p), t, k);
        }
      }
      if (p.reduction == LossReduction::None) loss[row] = static_cast<T>(l);
    }
  }
  if (p.reduction == LossReduction::None) return;

  // Every thread of the block takes part (the row loop above has ended for all of them).
  LossCount<C> block = block_allreduce(mine, LossCountPlus{}, shared_lc);
  if (threadIdx.x == 0) {
    block_sums[blockIdx.x] = {static_cast<double>(block.loss), static_cast<double>(block.count)};
    __threadfence();  // the block sum is visible device-wide before the counter says so
    last_block = atomicAdd(finished, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last_block) return;
  // The last block adds the block sums in a fixed order (strided, then the block tree).
  LossCount<C> total{C(0), C(0)};
  const volatile BlockSum* sums = block_sums;  // written by other blocks: bypass the L1 cache
  for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x) {
    total.loss += static_cast<C>(sums[b].loss);
    total.count += static_cast<C>(sums[b].count);
  }
  total = block_allreduce(total, LossCountPlus{}, shared_lc);
  if (threadIdx.x == 0) {
    counted[0] = total.count;
    loss[0] = static_cast<T>(p.reduction == LossReduction::Mean ? total.loss / total.count : total.loss);
    *finished = 0;
  }
}

template <typename T>
__global__ void cross_entropy_backward_kernel(const T* grad_output, const T* x, const int64_t* target,
                                              const compute_t<T>* lse, const compute_t<T>* counted,
                                              CrossEntropyParams p, T* gx) {
  using C = compute_t<T>;
  const int64_t k = p.classes;
  COLONY_GRID_LOOP(i, p.rows * k) {
    const int64_t row = i / k, c = i - row * k;
    const int64_t t = target[row];
    C d = C(0);
    // Out-of-range targets were recorded by the forward; their rows get no gradient.
    if (t != p.ignore_index && index_in_range(t, k)) {
      const C g = cross_entropy_row_grad(static_cast<C>(grad_output[cross_entropy_grad_slot(row, p)]), counted, p);
      const C prob =
          p.log_probs ? C(0) : device_exp(log_softmax_value(static_cast<C>(x[i]), lse[2 * row], lse[2 * row + 1]));
      d = cross_entropy_grad(prob, c == t, g, p);
    }
    gx[i] = static_cast<T>(d);
  }
}

// The forward's scratch: the block sums and the count of finished blocks.
size_t cross_entropy_scratch_bytes(const CrossEntropyParams& p) {
  return static_cast<size_t>(forward_blocks(p)) * sizeof(BlockSum) + sizeof(unsigned);
}

}  // namespace
}  // namespace colony::kernels::cuda

namespace colony::kernels {

using namespace cuda;  // NOLINT(build/namespaces): the helpers above

void CrossEntropyForward::cuda(DType dtype, const void* x, const int64_t* target, const CrossEntropyParams& p,
                               void* loss, void* lse, void* counted, void* stream) {
  KernelScratch scratch(cross_entropy_scratch_bytes(p));  // for this call, from the caching allocator
  const char* op = op_name(p);
  if (p.rows == 0) {
    throw std::invalid_argument(std::string(op) + ": the CUDA kernel needs at least one row (the caller handles empty inputs)");
  }
  const unsigned blocks = forward_blocks(p);
  auto* block_sums = static_cast<BlockSum*>(scratch.get());
  auto* finished = reinterpret_cast<unsigned*>(block_sums + blocks);
  if (p.reduction != LossReduction::None) {
    check_cuda(cudaMemsetAsync(finished, 0, sizeof(unsigned), as_stream(stream)),
               (std::string(op) + ": cudaMemsetAsync").c_str());
  }
  const bool warp = use_warp_rows(p.classes);
  COLONY_DISPATCH_FLOATING(dtype, op, [&] {
    using C = compute_t<scalar_t>;
    auto kernel = warp ? cross_entropy_forward_kernel<true, scalar_t> : cross_entropy_forward_kernel<false, scalar_t>;
    kernel<<<blocks, kRowThreads, 0, as_stream(stream)>>>(static_cast<const scalar_t*>(x), target, p,
                                                          static_cast<scalar_t*>(loss), static_cast<C*>(lse),
                                                          static_cast<C*>(counted), block_sums, finished,
                                                          device_error_record());
  });
  after_launch(op);
}

void CrossEntropyBackward::cuda(DType dtype, const void* grad_output, const void* x, const int64_t* target,
                                const void* lse, const void* counted, const CrossEntropyParams& p, void* grad_x,
                                void* stream) {
  const int64_t n = p.rows * p.classes;
  if (n == 0) return;
  const char* op = p.log_probs ? "nll_loss_backward" : "cross_entropy_backward";
  COLONY_DISPATCH_FLOATING(dtype, op, [&] {
    using C = compute_t<scalar_t>;
    cross_entropy_backward_kernel<scalar_t><<<grid_blocks(n), kBlockThreads, 0, as_stream(stream)>>>(
        static_cast<const scalar_t*>(grad_output), static_cast<const scalar_t*>(x), target,
        static_cast<const C*>(lse), static_cast<const C*>(counted), p, static_cast<scalar_t*>(grad_x));
  });
  after_launch(op);
}

}  // namespace colony::kernels
