#include "kernels/common/amp.h"

#include <cuda_runtime.h>

#include <vector>

#include "kernels/common/amp_functors.h"
#include "kernels/common/dispatch.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/multi_tensor.cuh"

namespace colony::kernels::cuda {
namespace {

// The multi-tensor launches of kernels/cuda/multi_tensor.cuh: each block unscales one chunk of one
// gradient; a LeNet's 10 gradients take one launch.
template <typename T>
__global__ void __launch_bounds__(kMultiTensorThreads) unscale_kernel(TensorChunks<1> c, const float* scale,
                                                                      float* found_inf) {
  const float inv_scale = inverse_scale(scale);
  int64_t begin, end;
  const int t = block_range(c, begin, end);
  T* g = static_cast<T*>(c.ptr[0][t]);
  bool bad = false;
  for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) bad |= unscale_element(g[i], inv_scale);
  // Every writer stores the same value, so plain stores race harmlessly (as PyTorch's kernel does).
  if (bad) *found_inf = 1.0f;
}

__global__ void update_scale_kernel(float* scale, int32_t* growth_tracker, const float* found_inf,
                                    double growth_factor, double backoff_factor, int64_t growth_interval) {
  kernels::update_scale(scale, growth_tracker, found_inf, growth_factor, backoff_factor, growth_interval);
}

}  // namespace

}  // namespace colony::kernels::cuda

namespace colony::kernels {

using namespace cuda;  // NOLINT(build/namespaces): the helpers above

void UpdateScale::cuda(float* scale, int32_t* growth_tracker, const float* found_inf, double growth_factor,
                       double backoff_factor, int64_t growth_interval, void* stream) {
  update_scale_kernel<<<1, 1, 0, as_stream(stream)>>>(scale, growth_tracker, found_inf, growth_factor,
                                                      backoff_factor, growth_interval);
  after_launch("amp_update_scale");
}

void UnscaleAndCheck::cuda(int64_t count, void* const* grads, const int64_t* numel, const DType* dtypes,
                           const float* scale, float* found_inf, void* stream) {
  // One pass per dtype present (gradients are float32 for float32 master weights: one pass).
  for (DType dt : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) {
    std::vector<const void*> list[1];
    std::vector<int64_t> sizes;
    for (int64_t t = 0; t < count; ++t) {
      if (dtypes[t] != dt) continue;
      list[0].push_back(grads[t]);
      sizes.push_back(numel[t]);
    }
    if (sizes.empty()) continue;
    COLONY_DISPATCH_FLOATING(dt, "unscale_and_check", [&] {
      for_each_launch<1>(list, sizes, "unscale_and_check", [&](const TensorChunks<1>& c, unsigned blocks) {
        unscale_kernel<scalar_t><<<blocks, kMultiTensorThreads, 0, as_stream(stream)>>>(c, scale, found_inf);
      });
    });
  }
}

}  // namespace colony::kernels
