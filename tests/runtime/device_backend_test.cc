// The device seams: run_kernel<Tag>(device, ...) runs the CPU kernels of the entries declared with
// COLONY_KERNEL on the CPU; backend_for() picks the runtime backend of a device (memcpy); a device
// this process cannot use is refused with check_device's message.
#include "runtime/device_backend.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "kernels/common/copy.h"
#include "kernels/common/elementwise.h"
#include "kernels/common/layout.h"
#include "runtime/cuda.h"
#include "ops/raw_ops.h"
#include "runtime/run_kernel.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::throws_with;

kernels::StridedLayout dense_1d(int64_t n) {
  kernels::StridedLayout l;
  l.ndim = 1;
  l.sizes[0] = n;
  l.strides[0] = 1;
  return l;
}

TEST(Backend, OneCpuBackendForTheCpu) {
  EXPECT_EQ(&backend_for(kCPU), &backend_for(Device("cpu")));
  EXPECT_EQ(&backend_for(kCPU), &detail::cpu_backend());
}

TEST(Backend, CpuKernelsRunThroughRunKernel) {
  std::vector<float> a = {1, -2, 3}, b = {10, 20, 30}, out(3);
  run_kernel<kernels::Binary>(kCPU, kernels::BinaryOp::Add, kFloat32, a.data(), dense_1d(3), b.data(), dense_1d(3),
                              out.data(), dense_1d(3), 2.0);
  EXPECT_EQ(out, (std::vector<float>{21, 38, 63}));
  run_kernel<kernels::Unary>(kCPU, kernels::UnaryOp::Abs, kFloat32, a.data(), dense_1d(3), out.data(), dense_1d(3),
                             kernels::UnaryAttrs{});
  EXPECT_EQ(out, (std::vector<float>{1, 2, 3}));
  run_kernel<kernels::Fill>(kCPU, kFloat32, out.data(), dense_1d(3), 7.0);
  EXPECT_EQ(out, (std::vector<float>{7, 7, 7}));
}

TEST(Backend, CpuBackendHasNoDeviceMemoryToTransfer) {
  float x = 1, y = 0;
  EXPECT_TRUE(throws_with<std::logic_error>(
      [&] { backend_for(kCPU).memcpy(&y, &x, sizeof x, MemcpyKind::HostToDevice, Stream(), false); }, "CPU backend"));
}

TEST(Backend, UnusableCudaDeviceIsRefusedWithTheReason) {
  if (cuda::device_count() > 0) GTEST_SKIP() << "a CUDA device is present";
  EXPECT_TRUE(throws_with<std::runtime_error>([] { backend_for(Device::cuda(0)); },
                                              "cuda:0: no CUDA device available (" + cuda::unavailable_reason()));
}

TEST(Backend, OneBackendPerCudaDevice_CUDA) {
  if (cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const int n = cuda::device_count();
  EXPECT_EQ(&backend_for(Device::cuda(0)), &backend_for(Device::cuda(0)));
  EXPECT_NE(&backend_for(Device::cuda(0)), &backend_for(kCPU));
  if (n > 1) {
    EXPECT_NE(&backend_for(Device::cuda(0)), &backend_for(Device::cuda(1)));
  }
  EXPECT_TRUE(throws_with<std::runtime_error>([&] { backend_for(Device::cuda(n)); }, "out of range"));
}

TEST(Backend, CudaKernelsRunOnTheTensorsDevice_CUDA) {
  if (cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  // An op on the last device runs there and leaves the current device as it found it.
  const int before = cuda::current_device();
  const int last = cuda::device_count() - 1;
  Tensor x = raw::full({4}, 3.0, TensorOptions(kFloat32).device(Device::cuda(last)));
  Tensor y = raw::binary(raw::BinaryOp::Mul, x, x);
  EXPECT_EQ(raw::to(y, kCPU, kFloat32).data_ptr<float>()[3], 9.0f);
  EXPECT_EQ(cuda::current_device(), before);
}

}  // namespace
}  // namespace colony
