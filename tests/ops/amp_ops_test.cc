// raw::amp_unscale_and_check_ and raw::amp_update_scale_ (ops/amp_ops.cc): the values unscale
// writes, the found-inf flag for inf and NaN in any tensor (and never cleared by a clean call),
// strided gradients, errors, the scale's backoff and growth rules, and the CUDA kernels against
// the CPU.
#include <gtest/gtest.h>

#include <limits>
#include <utility>
#include <vector>

#include "runtime/cuda.h"
#include "tensor/random.h"
#include "ops/raw_optim_ops.h"
#include "ops/raw_ops.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::all_close;
using testing::throws_with;
using testing::values;

// The scale the gradients are divided by: one float32 beside the flag.
Tensor scale_like(const Tensor& found_inf, double scale) {
  return raw::full({1}, scale, TensorOptions(kFloat32).device(found_inf.device()));
}

Tensor randn(const Shape& shape, uint64_t seed, DType dtype = kFloat32) {
  Generator gen(seed);
  return raw::to(raw::randn(shape, TensorOptions(kFloat32), &gen), kCPU, dtype);
}

TEST(AmpUnscale, MultipliesEveryGradientAndLeavesTheFlagWhenClean) {
  for (DType dt : {kFloat32, kFloat64, kBFloat16, kFloat16}) {
    SCOPED_TRACE(dtype_name(dt));
    std::vector<Tensor> grads = {randn({100000}, 1, dt), randn({3, 7}, 2, dt), raw::zeros({0}, TensorOptions(dt))};
    std::vector<Tensor> want;
    for (const Tensor& g : grads) want.push_back(raw::mul(g, 0.25));
    Tensor found = raw::zeros({1});
    uint32_t v0 = grads[0].version();
    raw::amp_unscale_and_check_(grads, found, scale_like(found, 4));
    for (size_t i = 0; i < grads.size(); ++i) EXPECT_TRUE(all_close(grads[i], want[i], 0, 0));
    EXPECT_EQ(found.item<float>(), 0.0f);
    EXPECT_GT(grads[0].version(), v0);
  }
}

TEST(AmpUnscale, InfOrNanInAnyGradientSetsTheFlag) {
  for (double bad : {std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                     std::numeric_limits<double>::quiet_NaN()}) {
    std::vector<Tensor> grads = {randn({50}, 3), randn({70000}, 4)};
    Tensor last = raw::narrow(grads[1], 0, 69999, 1);
    last.fill_(bad);
    Tensor found = raw::zeros({1});
    raw::amp_unscale_and_check_(grads, found, scale_like(found, 2));
    EXPECT_EQ(found.item<float>(), 1.0f) << bad;
    // A later clean call keeps the flag: one flag gathers several calls.
    std::vector<Tensor> clean = {randn({5}, 5)};
    raw::amp_unscale_and_check_(clean, found, scale_like(found, 2));
    EXPECT_EQ(found.item<float>(), 1.0f);
  }
  // A value that only overflows float16 after scaling is not what the flag reports: the input is
  // what was checked (PyTorch's rule), so a finite gradient never trips it.
  std::vector<Tensor> big = {raw::full({4}, 60000.0, TensorOptions(kFloat16))};
  Tensor found = raw::zeros({1});
  raw::amp_unscale_and_check_(big, found, scale_like(found, 1));
  EXPECT_EQ(found.item<float>(), 0.0f);
}

TEST(AmpUnscale, StridedGradientIsWrittenBack) {
  Tensor base = randn({6, 4}, 6);
  Tensor want = raw::mul(base, 0.125);
  std::vector<Tensor> grads = {raw::transpose(base, 0, 1)};
  Tensor found = raw::zeros({1});
  raw::amp_unscale_and_check_(grads, found, scale_like(found, 8));
  EXPECT_TRUE(all_close(base, want, 0, 0));
}

TEST(AmpUnscale, Errors) {
  std::vector<Tensor> grads = {randn({3}, 7)};
  Tensor found64 = raw::zeros({1}, TensorOptions(kFloat64));
  EXPECT_TRUE(throws_with([&] { raw::amp_unscale_and_check_(grads, found64, scale_like(found64, 1)); },
                          "amp_unscale_and_check_: found_inf must be a 1-element float32 tensor, got float64 [1]"));
  Tensor found = raw::zeros({1});
  std::vector<Tensor> ints = {raw::zeros({3}, TensorOptions(kInt64))};
  EXPECT_TRUE(throws_with([&] { raw::amp_unscale_and_check_(ints, found, scale_like(found, 1)); },
                          "amp_unscale_and_check_: gradient 0 is int64, expected a floating dtype"));
  std::vector<Tensor> undefined = {Tensor()};
  EXPECT_TRUE(throws_with([&] { raw::amp_unscale_and_check_(undefined, found, scale_like(found, 1)); },
                          "gradient 0 is undefined"));
}

TEST(AmpUnscale, DividesByTheScaleRoundedAsPyTorch) {
  // The reciprocal is taken in double and rounded to float32 (PyTorch's inv_scale).
  std::vector<Tensor> grads = {raw::full({2}, 1.5)};
  Tensor found = raw::zeros({1});
  raw::amp_unscale_and_check_(grads, found, scale_like(found, 3));
  EXPECT_EQ(grads[0].data_ptr<float>()[0], 1.5f * static_cast<float>(1.0 / 3.0));
  Tensor scale64 = raw::full({1}, 2.0, TensorOptions(kFloat64));
  EXPECT_TRUE(throws_with([&] { raw::amp_unscale_and_check_(grads, found, scale64); },
                          "amp_unscale_and_check_: scale must be a 1-element float32 tensor, got float64 [1]"));
}

// One update from (scale, tracker) with the flag: the new (scale, tracker).
std::pair<float, int32_t> updated(float scale, int32_t tracker, float found, int64_t interval = 3) {
  Tensor s = raw::full({}, scale), t = raw::full({}, tracker, TensorOptions(kInt32)), f = raw::full({1}, found);
  raw::amp_update_scale_(s, t, f, 2.0, 0.5, interval);
  return {s.item<float>(), t.item<int32_t>()};
}

TEST(AmpUpdateScale, BacksOffOnOverflowAndGrowsAfterTheInterval) {
  EXPECT_EQ(updated(1024, 2, 1), std::make_pair(512.0f, 0));        // overflow: back off, count restarts
  EXPECT_EQ(updated(1024, 0, 0), std::make_pair(1024.0f, 1));       // clean: count
  EXPECT_EQ(updated(1024, 2, 0), std::make_pair(2048.0f, 0));       // the third clean step in a row: grow
  const float max = std::numeric_limits<float>::max();
  EXPECT_EQ(updated(max, 2, 0), std::make_pair(max, 0));            // growing would overflow: kept
  EXPECT_EQ(updated(3.0f, 0, 2.0f, 1), std::make_pair(1.5f, 0));     // any nonzero flag (summed flags) backs off
  Tensor s = raw::full({}, 1.0), t32 = raw::zeros({}, TensorOptions(kInt32)), f = raw::zeros({1});
  Tensor t64 = raw::zeros({}, TensorOptions(kInt64));
  EXPECT_TRUE(throws_with([&] { raw::amp_update_scale_(s, t64, f, 2.0, 0.5, 3); },
                          "amp_update_scale_: growth_tracker must be a 1-element int32 tensor, got int64 []"));
}

TEST(AmpUpdateScale, KernelMatchesCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  const TensorOptions gpu_f = TensorOptions(kFloat32).device(Device::cuda(0));
  for (float found : {0.0f, 1.0f}) {
    for (int32_t tracker : {0, 2}) {
      Tensor s = raw::full({}, 1024.0, gpu_f), f = raw::full({1}, found, gpu_f);
      Tensor t = raw::full({}, tracker, TensorOptions(kInt32).device(Device::cuda(0)));
      raw::amp_update_scale_(s, t, f, 2.0, 0.5, 3);
      EXPECT_EQ(std::make_pair(s.item<float>(), t.item<int32_t>()), updated(1024, tracker, found));
    }
  }
}

TEST(AmpUnscale, MultiTensorKernelMatchesCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  const Device dev = Device::cuda(0);
  // More tensors than one launch holds (24), one larger than a block's chunk, mixed dtypes.
  std::vector<Tensor> cpu, gpu;
  for (int i = 0; i < 100; ++i) {
    DType dt = i % 3 == 0 ? kFloat32 : i % 3 == 1 ? kBFloat16 : kFloat16;
    cpu.push_back(randn({i == 7 ? 300000 : 17 * i + 1}, 100 + i, dt));
    gpu.push_back(raw::to(cpu.back(), dev, dt));
  }
  Tensor found_cpu = raw::zeros({1}), found_gpu = raw::zeros({1}, TensorOptions(kFloat32).device(dev));
  raw::amp_unscale_and_check_(cpu, found_cpu, scale_like(found_cpu, 1024));
  raw::amp_unscale_and_check_(gpu, found_gpu, scale_like(found_gpu, 1024));
  for (size_t i = 0; i < cpu.size(); ++i) EXPECT_TRUE(all_close(raw::to(gpu[i], kCPU, cpu[i].dtype()), cpu[i], 0, 0));
  EXPECT_EQ(found_gpu.item<float>(), 0.0f);
  // An inf in the last element of the large tensor and a NaN in the last tensor.
  raw::narrow(gpu[7], 0, 299999, 1).fill_(std::numeric_limits<double>::infinity());
  raw::amp_unscale_and_check_(gpu, found_gpu, scale_like(found_gpu, 1));
  EXPECT_EQ(found_gpu.item<float>(), 1.0f);
  Tensor found2 = raw::zeros({1}, TensorOptions(kFloat32).device(dev));
  std::vector<Tensor> tail = {gpu[99]};
  raw::narrow(gpu[99], 0, 0, 1).fill_(std::numeric_limits<double>::quiet_NaN());
  raw::amp_unscale_and_check_(tail, found2, scale_like(found2, 1));
  EXPECT_EQ(found2.item<float>(), 1.0f);
}

}  // namespace
}  // namespace colony
