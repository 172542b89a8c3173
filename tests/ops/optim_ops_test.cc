// Optimizer updates over lists of parameters (ops/optim_ops.cc): the list forms equal the
// per-tensor ones on the CPU, and on CUDA the multi-tensor kernels equal the CPU for every
// floating dtype, across several launches (more than 24 tensors, a tensor of more than 320 chunks).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/common/multi_tensor.h"
#include "tensor/random.h"
#include "ops/raw_ops.h"
#include "ops/raw_optim_ops.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::all_close;
using testing::throws_with;

Tensor randn(const Shape& shape, uint64_t seed, DType dtype = kFloat64) {
  Generator gen(seed);
  return raw::to(raw::randn(shape, TensorOptions(kFloat64), &gen), kCPU, dtype);
}

std::vector<Tensor> tensors(const std::vector<int64_t>& sizes, uint64_t seed, DType dtype, Device dev = kCPU) {
  std::vector<Tensor> out;
  for (size_t i = 0; i < sizes.size(); ++i) out.push_back(raw::to(randn({sizes[i]}, seed + i, dtype), dev, dtype));
  return out;
}

std::vector<Tensor> copies(const std::vector<Tensor>& ts, Device dev) {
  std::vector<Tensor> out;
  for (const Tensor& t : ts) out.push_back(raw::contiguous(raw::clone(raw::to(t, dev, t.dtype()))));
  return out;
}

kernels::SgdParams sgd(double momentum, bool first) { return {0.1, momentum, 0.1, 0.01, false, first, false}; }
kernels::AdamParams adam(bool amsgrad, bool decoupled) {
  return {1e-2, 0.9, 0.999, 1e-8, 0.01, decoupled, amsgrad, false, 1 - std::pow(0.9, 3), std::sqrt(1 - std::pow(0.999, 3))};
}

TEST(OptimOps, ListFormsEqualThePerTensorUpdatesOnTheCpu) {
  const std::vector<int64_t> sizes = {5, 1, 100, 7};
  for (double momentum : {0.0, 0.9}) {
    std::vector<Tensor> p = tensors(sizes, 1, kFloat64), g = tensors(sizes, 10, kFloat64), b = tensors(sizes, 20, kFloat64);
    std::vector<Tensor> p1 = copies(p, kCPU), b1 = copies(b, kCPU);
    raw::sgd_step_multi_(p, g, b, sgd(momentum, false));
    for (size_t i = 0; i < sizes.size(); ++i) {
      raw::sgd_step_(p1[i], g[i], b1[i], sgd(momentum, false));
      EXPECT_TRUE(all_close(p[i], p1[i], 0, 0));
      EXPECT_TRUE(all_close(b[i], b1[i], 0, 0));
    }
  }
  std::vector<Tensor> p = tensors(sizes, 1, kFloat64), g = tensors(sizes, 10, kFloat64);
  std::vector<Tensor> m = tensors(sizes, 20, kFloat64), v = copies(tensors(sizes, 30, kFloat64), kCPU), x = tensors(sizes, 40, kFloat64);
  for (Tensor& t : v) t = raw::mul(t, t);
  for (Tensor& t : x) t = raw::mul(t, t);
  std::vector<Tensor> p1 = copies(p, kCPU), m1 = copies(m, kCPU), v1 = copies(v, kCPU), x1 = copies(x, kCPU);
  raw::adam_step_multi_(p, g, m, v, x, adam(true, true));
  for (size_t i = 0; i < sizes.size(); ++i) {
    raw::adam_step_(p1[i], g[i], m1[i], v1[i], x1[i], adam(true, true));
    EXPECT_TRUE(all_close(p[i], p1[i], 0, 0));
    EXPECT_TRUE(all_close(v[i], v1[i], 0, 0));
  }
}

TEST(OptimOps, ListErrors) {
  std::vector<Tensor> p = tensors({3, 4}, 1, kFloat32), g = tensors({3}, 2, kFloat32), none;
  EXPECT_TRUE(throws_with([&] { raw::sgd_step_multi_(p, g, none, sgd(0, false)); }, "sgd_step: 2 parameters but 1 gradients"));
  std::vector<Tensor> g2 = tensors({3, 5}, 2, kFloat32);
  EXPECT_TRUE(throws_with([&] { raw::sgd_step_multi_(p, g2, none, sgd(0, false)); }, "sgd_step: gradient is float32 [5]"));
  EXPECT_TRUE(throws_with([&] { raw::sgd_step_multi_(p, tensors({3, 4}, 2, kFloat32), none, sgd(0.9, false)); },
                          "0 momentum buffers"));
}

// ---------- CUDA against CPU ----------

TEST(OptimOps, MultiTensorKernelsEqualTheCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  Device dev = Device::cuda(0);
  // 30 tensors (two launches of at most 24) of odd sizes; for float32 also one of 321 chunks
  // (it spans two launches; 21M elements, so only once).
  std::vector<int64_t> small;
  for (int i = 0; i < 30; ++i) small.push_back(i * 37 + 1);
  for (DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    std::vector<int64_t> sizes = small;
    if (dtype == kFloat32) sizes.back() = kernels::kMultiTensorChunk * kernels::kMultiTensorMaxBlocks + 3;
    const double tol = dtype == kFloat64 ? 1e-12 : dtype == kFloat32 ? 1e-6 : 1e-2;
    for (double momentum : {0.0, 0.9}) {
      for (bool first : {true, false}) {
        std::vector<Tensor> p = tensors(sizes, 1, dtype), g = tensors(sizes, 100, dtype), b = tensors(sizes, 200, dtype);
        std::vector<Tensor> pg = copies(p, dev), gg = copies(g, dev), bg = copies(b, dev);
        raw::sgd_step_multi_(p, g, b, sgd(momentum, first));
        raw::sgd_step_multi_(pg, gg, bg, sgd(momentum, first));
        for (size_t i = 0; i < sizes.size(); ++i) {
          EXPECT_TRUE(all_close(pg[i], p[i], tol, tol)) << "sgd tensor " << i;
          if (momentum != 0) {
            EXPECT_TRUE(all_close(bg[i], b[i], tol, tol)) << "sgd buffer " << i;
          }
        }
      }
    }
    for (bool amsgrad : {false, true}) {
      std::vector<Tensor> p = tensors(sizes, 1, dtype), g = tensors(sizes, 100, dtype), m = tensors(sizes, 200, dtype);
      std::vector<Tensor> v = tensors(sizes, 300, dtype), x = tensors(sizes, 400, dtype);
      for (Tensor& t : v) t = raw::mul(t, t);
      for (Tensor& t : x) t = raw::mul(t, t);
      std::vector<Tensor> pg = copies(p, dev), gg = copies(g, dev), mg = copies(m, dev), vg = copies(v, dev);
      std::vector<Tensor> xg = copies(x, dev);
      raw::adam_step_multi_(p, g, m, v, x, adam(amsgrad, true));
      raw::adam_step_multi_(pg, gg, mg, vg, xg, adam(amsgrad, true));
      for (size_t i = 0; i < sizes.size(); ++i) {
        EXPECT_TRUE(all_close(pg[i], p[i], tol, tol)) << "adam tensor " << i;
        EXPECT_TRUE(all_close(vg[i], v[i], tol, tol)) << "adam exp_avg_sq " << i;
        if (amsgrad) {
          EXPECT_TRUE(all_close(xg[i], x[i], tol, tol)) << "adam max_exp_avg_sq " << i;
        }
      }
    }
  }
}

}  // namespace
}  // namespace colony
