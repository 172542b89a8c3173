// Helpers of the conv, pool and batch-norm op tests (tests/tensor/{conv,pool,batch_norm}_ops_test.cc):
// tensors of reproducible random values, finite-difference gradients, a thread-count guard.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "ops/raw_ops.h"
#include "tests/kernels/kernel_testing.h"
#include "tests/test_util.h"

namespace colony::testing {

inline Tensor random_tensor(const Shape& shape, uint32_t seed, DType dtype = kFloat64) {
  return raw::from_vector(random_values(shape_numel(shape), seed), shape, TensorOptions(dtype));
}

inline Tensor from(const std::vector<double>& v, const Shape& shape, DType dtype = kFloat64) {
  return raw::from_vector(v, shape, TensorOptions(dtype));
}

// Restores the thread count a test changed.
using ThreadCount = ScopedThreads;

// Central differences of loss() in each element of the float64 tensor t (h = 1e-6).
inline std::vector<double> numeric_grad(Tensor& t, const std::function<double()>& loss) {
  const double h = 1e-6;
  std::vector<double> g(t.numel());
  double* p = t.data_ptr<double>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    double saved = p[i];
    p[i] = saved + h;
    double up = loss();
    p[i] = saved - h;
    double down = loss();
    p[i] = saved;
    g[i] = (up - down) / (2 * h);
  }
  return g;
}

// The low-precision CPU tests' conversions: a CPU copy as dt (float16, bfloat16), and as float32.
inline Tensor low(const Tensor& t, DType dt) { return raw::to(t, kCPU, dt); }
inline Tensor f32(const Tensor& t) { return raw::to(t, kCPU, kFloat32); }

// The CUDA tests' conversions: to cuda:0 as dt, and back as float64 for comparisons.
inline Tensor to_cuda(const Tensor& t, DType dt) { return raw::to(t, Device::cuda(0), dt); }
inline Tensor to_cpu64(const Tensor& t) { return raw::to(t, kCPU, kFloat64); }

}  // namespace colony::testing
