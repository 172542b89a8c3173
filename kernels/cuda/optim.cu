#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common/dispatch.h"
#include "kernels/common/multi_tensor.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/optim.h"

namespace colony::kernels::cuda {
namespace {

template <typename T>
__global__ void sgd_kernel(int64_t n, T* p, const T* g, T* buf, SgdParams options) {
  if (step_skipped(options.found_inf)) return;
  const SgdParams s = sgd_params_for(options);
  COLONY_GRID_LOOP(i, n) {
    T unused{};
    sgd_update(p[i], g[i], buf ? buf[i] : unused, s);
  }
}

template <typename T>
__global__ void adam_kernel(int64_t n, T* p, const T* g, T* m, T* v, T* vmax, AdamParams a) {
  if (step_skipped(a.found_inf)) return;
  const AdamParams r = adam_params_for(a, nullptr);
  COLONY_GRID_LOOP(i, n) {
    T unused{};
    adam_update(p[i], g[i], m[i], v[i], vmax ? vmax[i] : unused, r);
  }
}

// One launch's tensors and chunks, passed by value in the kernel parameters (< 4 KB).
template <int Depth>
struct TensorChunks {
  void* ptr[Depth][kMultiTensorMaxTensors];
  int64_t numel[kMultiTensorMaxTensors];
  unsigned char block_tensor[kMultiTensorMaxBlocks];
  int block_chunk[kMultiTensorMaxBlocks];
};
static_assert(sizeof(TensorChunks<6>) + sizeof(AdamParams) < 4096, "kernel parameters are limited to 4 KB");

constexpr int kMultiTensorThreads = 512;

// Block b updates chunk block_chunk[b] of tensor block_tensor[b]: [begin, end) of its elements.
template <int Depth>
__device__ __forceinline__ int block_range(const TensorChunks<Depth>& c, int64_t& begin, int64_t& end) {
  const int t = c.block_tensor[blockIdx.x];
  begin = static_cast<int64_t>(c.block_chunk[blockIdx.x]) * kMultiTensorChunk;
  end = begin + kMultiTensorChunk < c.numel[t] ? begin + kMultiTensorChunk : c.numel[t];
  return t;
}

template <typename T>
__global__ void __launch_bounds__(kMultiTensorThreads) multi_sgd_kernel(TensorChunks<3> c, SgdParams options) {
  if (step_skipped(options.found_inf)) return;
  const SgdParams s = sgd_params_for(options);
  int64_t begin, end;
  const int t = block_range(c, begin, end);
  T* p = static_cast<T*>(c.ptr[0][t]);
  const T* g = static_cast<const T*>(c.ptr[1][t]);
  T* buf = static_cast<T*>(c.ptr[2][t]);
  for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    T unused{};
    sgd_update(p[i], g[i], buf ? buf[i] : unused, s);
  }
}

// ptr[5][t], when set, is tensor t's step count before this step (count_steps_kernel advances it
// after every block has read it).
template <typename T>
__global__ void __launch_bounds__(kMultiTensorThreads) multi_adam_kernel(TensorChunks<6> c, AdamParams a) {
  if (step_skipped(a.found_inf)) return;
  int64_t begin, end;
  const int t = block_range(c, begin, end);
  T* p = static_cast<T*>(c.ptr[0][t]);
  const T* g = static_cast<const T*>(c.ptr[1][t]);
  T* m = static_cast<T*>(c.ptr[2][t]);
  T* v = static_cast<T*>(c.ptr[3][t]);
  T* vmax = static_cast<T*>(c.ptr[4][t]);
  const AdamParams r = adam_params_for(a, static_cast<const double*>(c.ptr[5][t]));
  for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    T unused{};
    adam_update(p[i], g[i], m[i], v[i], vmax ? vmax[i] : unused, r);
  }
}

// Step counts kept on the device, one thread each (a separate launch: in the update kernel many
// blocks read one tensor's count).
struct StepCounts {
  double* step[kMultiTensorMaxTensors];
  int count;
};

__global__ void count_steps_kernel(StepCounts s, const float* found_inf) {
  if (static_cast<int>(threadIdx.x) < s.count) count_step(s.step[threadIdx.x], found_inf);
}

void count_steps(const std::vector<void*>& steps, const float* found_inf, cudaStream_t stream) {
  for (size_t first = 0; first < steps.size(); first += kMultiTensorMaxTensors) {
    StepCounts s{};
    s.count = static_cast<int>(std::min(steps.size() - first, static_cast<size_t>(kMultiTensorMaxTensors)));
    for (int k = 0; k < s.count; ++k) s.step[k] = static_cast<double*>(steps[first + k]);
    count_steps_kernel<<<1, kMultiTensorMaxTensors, 0, stream>>>(s, found_inf);
    after_launch("adam_step (step counts)");
  }
}

// Runs launch(chunks, blocks) for each planned launch, with `lists` (Depth parallel pointer lists,
// an empty list meaning null pointers) packed into the kernel parameters.
template <int Depth, typename Launch>
void for_each_launch(const std::vector<const void*> (&lists)[Depth], const std::vector<int64_t>& numels,
                     const char* op, Launch&& launch) {
  for (int d = 0; d < Depth; ++d) {
    if (!lists[d].empty() && lists[d].size() != numels.size()) {
      throw std::invalid_argument(std::string(op) + ": tensor lists of different lengths");
    }
  }
  for (const MultiTensorLaunch& plan : plan_multi_tensor_launches(numels)) {
    TensorChunks<Depth> c{};
    for (size_t k = 0; k < plan.tensors.size(); ++k) {
      const int t = plan.tensors[k];
      for (int d = 0; d < Depth; ++d) c.ptr[d][k] = lists[d].empty() ? nullptr : const_cast<void*>(lists[d][t]);
      c.numel[k] = numels[t];
    }
    for (size_t b = 0; b < plan.block_tensor.size(); ++b) {
      c.block_tensor[b] = static_cast<unsigned char>(plan.block_tensor[b]);
      c.block_chunk[b] = plan.block_chunk[b];
    }
    launch(c, static_cast<unsigned>(plan.block_tensor.size()));
    after_launch(op);
  }
}

template <typename P>
std::vector<const void*> as_const(const std::vector<P>& v) {
  return std::vector<const void*>(v.begin(), v.end());
}

}  // namespace

void sgd_step_multi(DType dtype, const std::vector<void*>& params, const std::vector<const void*>& grads,
                    const std::vector<void*>& bufs, const std::vector<int64_t>& numels, const SgdParams& s,
                    void* stream) {
  const std::vector<const void*> lists[3] = {as_const(params), grads, as_const(bufs)};
  COLONY_DISPATCH_FLOATING(dtype, "sgd_step", [&] {
    for_each_launch<3>(lists, numels, "sgd_step", [&](const TensorChunks<3>& c, unsigned blocks) {
      multi_sgd_kernel<scalar_t><<<blocks, kMultiTensorThreads, 0, as_stream(stream)>>>(c, s);
    });
  });
}

void adam_step_multi(DType dtype, const std::vector<void*>& params, const std::vector<const void*>& grads,
                     const std::vector<void*>& m, const std::vector<void*>& v, const std::vector<void*>& vmax,
                     const std::vector<void*>& steps, const std::vector<int64_t>& numels, const AdamParams& a,
                     void* stream) {
  const std::vector<const void*> lists[6] = {as_const(params), grads,        as_const(m),
                                             as_const(v),      as_const(vmax), as_const(steps)};
  COLONY_DISPATCH_FLOATING(dtype, "adam_step", [&] {
    for_each_launch<6>(lists, numels, "adam_step", [&](const TensorChunks<6>& c, unsigned blocks) {
      multi_adam_kernel<scalar_t><<<blocks, kMultiTensorThreads, 0, as_stream(stream)>>>(c, a);
    });
  });
  // Every tensor's count, empty ones too (they get no update block).
  if (!steps.empty()) count_steps(steps, a.found_inf, as_stream(stream));
}

void sgd_step(DType dtype, int64_t n, void* param, const void* grad, void* buf, const SgdParams& s, void* stream) {
  if (n == 0) return;
  COLONY_DISPATCH_FLOATING(dtype, "sgd_step", [&] {
    sgd_kernel<scalar_t><<<grid_blocks(n), kBlockThreads, 0, as_stream(stream)>>>(
        n, static_cast<scalar_t*>(param), static_cast<const scalar_t*>(grad), static_cast<scalar_t*>(buf), s);
  });
  after_launch("sgd_step");
}

void adam_step(DType dtype, int64_t n, void* param, const void* grad, void* m, void* v, void* vmax, const AdamParams& a,
               void* stream) {
  if (n == 0) return;
  COLONY_DISPATCH_FLOATING(dtype, "adam_step", [&] {
    adam_kernel<scalar_t><<<grid_blocks(n), kBlockThreads, 0, as_stream(stream)>>>(
        n, static_cast<scalar_t*>(param), static_cast<const scalar_t*>(grad), static_cast<scalar_t*>(m),
        static_cast<scalar_t*>(v), static_cast<scalar_t*>(vmax), a);
  });
  after_launch("adam_step");
}

}  // namespace colony::kernels::cuda
