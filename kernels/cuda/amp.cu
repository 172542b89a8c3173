#include "kernels/cuda/amp.h"

#include <cuda_runtime.h>

#include "kernels/common/amp_functors.h"
#include "kernels/common/dispatch.h"
#include "kernels/cuda/launch.cuh"

namespace colony::kernels::cuda {
namespace {

// Tensors per launch: the pointers and sizes travel as a kernel argument (48 x 16 bytes = 768 B,
// far under the 4 KiB argument limit), as PyTorch's multi_tensor_apply does with its TensorListMetadata.
constexpr int kTensorsPerLaunch = 48;
constexpr int kThreads = 256;
// Each block handles one chunk of one tensor; a LeNet's 10 gradients take one launch.
constexpr int64_t kChunk = 65536;

template <typename T>
struct TensorList {
  T* data[kTensorsPerLaunch];
  int64_t numel[kTensorsPerLaunch];
  int64_t first_block[kTensorsPerLaunch + 1];  // block b works on tensor t where first_block[t] <= b < first_block[t+1]
  int count;
};

template <typename T>
__global__ void unscale_kernel(TensorList<T> list, const float* scale, float* found_inf) {
  const float inv_scale = inverse_scale(scale);
  int t = 0;
  while (t + 1 < list.count && blockIdx.x >= list.first_block[t + 1]) ++t;
  const int64_t chunk = blockIdx.x - list.first_block[t];
  const int64_t begin = chunk * kChunk;
  const int64_t end = begin + kChunk < list.numel[t] ? begin + kChunk : list.numel[t];
  T* g = list.data[t];
  bool bad = false;
  for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) bad |= unscale_element(g[i], inv_scale);
  // Every writer stores the same value, so plain stores race harmlessly (as PyTorch's kernel does).
  if (bad) *found_inf = 1.0f;
}

template <typename T>
void launch(TensorList<T>& list, const float* scale, float* found_inf, cudaStream_t stream) {
  if (list.count == 0) return;
  const int64_t blocks = list.first_block[list.count];
  if (blocks > 0) {
    unscale_kernel<T><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(list, scale, found_inf);
    after_launch("unscale_and_check");
  }
  list.count = 0;
  list.first_block[0] = 0;
}

__global__ void update_scale_kernel(float* scale, int32_t* growth_tracker, const float* found_inf,
                                    double growth_factor, double backoff_factor, int64_t growth_interval) {
  kernels::update_scale(scale, growth_tracker, found_inf, growth_factor, backoff_factor, growth_interval);
}

}  // namespace

void update_scale(float* scale, int32_t* growth_tracker, const float* found_inf, double growth_factor,
                  double backoff_factor, int64_t growth_interval, void* stream) {
  update_scale_kernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(scale, growth_tracker, found_inf, growth_factor,
                                                                      backoff_factor, growth_interval);
  after_launch("amp_update_scale");
}

void unscale_and_check(int64_t count, void* const* grads, const int64_t* numel, const DType* dtypes,
                       const float* scale, float* found_inf, void* stream) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  // One pass per dtype present (gradients are float32 for float32 master weights: one pass).
  for (DType dt : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) {
    COLONY_DISPATCH_FLOATING(dt, "unscale_and_check", [&] {
      TensorList<scalar_t> list;
      list.count = 0;
      list.first_block[0] = 0;
      for (int64_t t = 0; t < count; ++t) {
        if (dtypes[t] != dt || numel[t] == 0) continue;
        // A grid holds at most 2^31 - 1 blocks; flush before the running total could pass it.
        const int64_t blocks = (numel[t] + kChunk - 1) / kChunk;
        if (list.count == kTensorsPerLaunch || list.first_block[list.count] + blocks > 0x7fffffff) {
          launch(list, scale, found_inf, s);
        }
        list.data[list.count] = static_cast<scalar_t*>(grads[t]);
        list.numel[list.count] = numel[t];
        list.first_block[list.count + 1] = list.first_block[list.count] + blocks;
        ++list.count;
      }
      launch(list, scale, found_inf, s);
    });
  }
}

}  // namespace colony::kernels::cuda
