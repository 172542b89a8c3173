#include "kernels/common/multinomial.h"

#include <cuda_runtime.h>

#include <stdexcept>

#include "kernels/cuda/launch.cuh"

namespace colony::kernels::cuda {
namespace {

template <typename C>
__global__ void multinomial_kernel(const C* cdf, const C* u, int64_t rows, int64_t n, int64_t samples, int64_t* out) {
  COLONY_GRID_LOOP(i, rows * samples) { out[i] = multinomial_pick(cdf + (i / samples) * n, n, u[i]); }
}

}  // namespace
}  // namespace colony::kernels::cuda

namespace colony::kernels {

void MultinomialSearch::cuda(DType dtype, const void* cdf, const void* u, int64_t rows, int64_t n, int64_t samples,
                             int64_t* out, void* stream) {
  using namespace cuda;  // NOLINT: the kernel above
  if (rows * samples == 0) return;
  constexpr int kThreads = 256;
  auto s = as_stream(stream);
  const unsigned blocks = grid_blocks(rows * samples, kThreads);
  if (dtype == DType::Float32) {
    multinomial_kernel<<<blocks, kThreads, 0, s>>>(static_cast<const float*>(cdf), static_cast<const float*>(u), rows,
                                                   n, samples, out);
  } else if (dtype == DType::Float64) {
    multinomial_kernel<<<blocks, kThreads, 0, s>>>(static_cast<const double*>(cdf), static_cast<const double*>(u),
                                                   rows, n, samples, out);
  } else {
    throw std::invalid_argument("multinomial: the search runs on float32 or float64 sums");
  }
  after_launch("multinomial");
}

}  // namespace colony::kernels
