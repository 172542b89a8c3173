#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "kernels/common/dispatch.h"
#include "kernels/common/random.h"
#include "kernels/common/random_fill.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/random.h"

namespace colony::kernels::cuda {
namespace {

template <typename T>
__global__ void fill_random_kernel(T* out, int64_t n, bool normal, double a, double b, PhiloxArgs philox) {
  uint64_t seed, offset;
  philox_unpack(philox, seed, offset);
  COLONY_GRID_LOOP(i, n) {
    out[i] = random_value_at<T>(normal, a, b, seed, offset, i);
  }
}

__global__ void set_philox_state_kernel(uint64_t* state, uint64_t seed, uint64_t offset) {
  state[0] = seed;
  state[1] = offset;
}

}  // namespace

void set_philox_state(uint64_t* state, uint64_t seed, uint64_t offset, void* stream) {
  set_philox_state_kernel<<<1, 1, 0, as_stream(stream)>>>(state, seed, offset);
  after_launch("set_philox_state");
}

}  // namespace colony::kernels::cuda

namespace colony::kernels {

using namespace cuda;  // NOLINT(build/namespaces): the helpers above

void FillRandom::cuda(DType dtype, void* out, int64_t n, bool normal, double a, double b, const PhiloxArgs& philox,
                      void* stream) {
  if (n == 0) return;
  COLONY_DISPATCH_FLOATING(dtype, "random", [&] {
    fill_random_kernel<scalar_t><<<grid_blocks(n), kBlockThreads, 0, as_stream(stream)>>>(
        static_cast<scalar_t*>(out), n, normal, a, b, philox);
  });
  after_launch("random");
}

}  // namespace colony::kernels
