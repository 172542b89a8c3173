#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common/dispatch.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/multi_tensor.cuh"
#include "kernels/common/optim.h"

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

static_assert(sizeof(TensorChunks<6>) + sizeof(AdamParams) < 4096, "kernel parameters are limited to 4 KB");

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

template <typename P>
std::vector<const void*> as_const(const std::vector<P>& v) {
  return std::vector<const void*>(v.begin(), v.end());
}

}  // namespace

}  // namespace colony::kernels::cuda

namespace colony::kernels {

using namespace cuda;  // NOLINT(build/namespaces): the helpers above

void SgdStepMulti::cuda(DType dtype, const std::vector<void*>& params, const std::vector<const void*>& grads,
                        const std::vector<void*>& bufs, const std::vector<int64_t>& numels, const SgdParams& s,
                        void* stream) {
  const std::vector<const void*> lists[3] = {as_const(params), grads, as_const(bufs)};
  COLONY_DISPATCH_FLOATING(dtype, "sgd_step", [&] {
    for_each_launch<3>(lists, numels, "sgd_step", [&](const TensorChunks<3>& c, unsigned blocks) {
      multi_sgd_kernel<scalar_t><<<blocks, kMultiTensorThreads, 0, as_stream(stream)>>>(c, s);
    });
  });
}

void AdamStepMulti::cuda(DType dtype, const std::vector<void*>& params, const std::vector<const void*>& grads,
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

void SgdStep::cuda(DType dtype, int64_t n, void* param, const void* grad, void* buf, const SgdParams& s, void* stream) {
  if (n == 0) return;
  COLONY_DISPATCH_FLOATING(dtype, "sgd_step", [&] {
    sgd_kernel<scalar_t><<<grid_blocks(n), kBlockThreads, 0, as_stream(stream)>>>(
        n, static_cast<scalar_t*>(param), static_cast<const scalar_t*>(grad), static_cast<scalar_t*>(buf), s);
  });
  after_launch("sgd_step");
}

void AdamStep::cuda(DType dtype, int64_t n, void* param, const void* grad, void* m, void* v, void* vmax,
                    const AdamParams& a, void* stream) {
  if (n == 0) return;
  COLONY_DISPATCH_FLOATING(dtype, "adam_step", [&] {
    adam_kernel<scalar_t><<<grid_blocks(n), kBlockThreads, 0, as_stream(stream)>>>(
        n, static_cast<scalar_t*>(param), static_cast<const scalar_t*>(grad), static_cast<scalar_t*>(m),
        static_cast<scalar_t*>(v), static_cast<scalar_t*>(vmax), a);
  });
  after_launch("adam_step");
}

}  // namespace colony::kernels
