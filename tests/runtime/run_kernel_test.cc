// runtime/run_kernel.h, the seam of the kernels declared with COLONY_KERNEL: the CPU implementation
// runs on the CPU, a CUDA device runs the CUDA one on its current stream, and a device this process
// cannot use is refused with check_device's message.
#include "runtime/run_kernel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "kernels/common/softmax.h"
#include "runtime/cuda.h"
#include "ops/raw_ops.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::throws_with;

TEST(RunKernel, CpuRunsTheCpuImplementation) {
  std::vector<float> x = {0, std::log(3.0f)}, y(2);
  run_kernel<kernels::SoftmaxForward>(kCPU, kFloat32, x.data(), y.data(), int64_t{1}, int64_t{2}, int64_t{1}, false);
  EXPECT_FLOAT_EQ(y[0], 0.25f);
  EXPECT_FLOAT_EQ(y[1], 0.75f);
}

TEST(RunKernel, TagsNameTheirKernel) { EXPECT_STREQ(kernels::SoftmaxBackward::name, "SoftmaxBackward"); }

TEST(RunKernel, UnusableCudaDeviceIsRefusedWithTheReason) {
  if (cuda::device_count() > 0) GTEST_SKIP() << "a CUDA device is present";
  float x = 0, y = 0;
  EXPECT_TRUE(throws_with<std::runtime_error>(
      [&] {
        run_kernel<kernels::SoftmaxForward>(Device::cuda(0), kFloat32, &x, &y, int64_t{1}, int64_t{1}, int64_t{1},
                                            false);
      },
      "cuda:0: no CUDA device available (" + cuda::unavailable_reason()));
}

TEST(RunKernel, CudaRunsOnTheTensorsDevice_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  const int n = cuda::device_count();
  const Device last = Device::cuda(n - 1);
  const int before = cuda::current_device();
  Tensor x = raw::to(raw::tensor({0.0, std::log(3.0)}), last, kFloat32);
  Tensor y = raw::softmax(x, 0);
  EXPECT_EQ(y.device(), last);
  EXPECT_EQ(cuda::current_device(), before);
  EXPECT_TRUE(testing::all_close(raw::to(y, kCPU, kFloat32), raw::tensor({0.25, 0.75}), 1e-6, 1e-6));
}

}  // namespace
}  // namespace colony
