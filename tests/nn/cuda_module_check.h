// What each nn module's *_CUDA test checks: the module and a copy on cuda:0 with the same weights
// and buffers, run forward on the same input and backward from the same output gradient, agree
// with the CPU in the output, the input's gradient, every parameter's gradient and every buffer
// (BatchNorm's running statistics). float32 with TF32 off on both (testing::Tf32Guard).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>

#include "autograd/autograd.h"
#include "nn/module.h"
#include "tensor/random.h"
#include "tests/test_util.h"
#include "tests/tf32_guard.h"

namespace colony::testing {

struct CudaModuleCheck {
  double rtol = 1e-4, atol = 1e-5;  // outputs and input gradients
  double grad_atol = 1e-4;          // parameter gradients: sums over the batch and positions
  bool training = true;
};

// `make` builds the module; the CUDA copy takes the first one's state_dict, so `make` may draw
// its initialization at random. `input` is a CPU tensor.
inline void expect_cuda_module_matches_cpu(const std::function<std::shared_ptr<nn::Module>()>& make,
                                           const Tensor& input, const CudaModuleCheck& check = {}) {
  const Device dev = Device::cuda(0);
  Tf32Guard tf32(false);
  std::shared_ptr<nn::Module> cpu = make(), gpu = make();
  gpu->load_state_dict(cpu->state_dict());
  gpu->to(dev);
  cpu->train(check.training);
  gpu->train(check.training);

  Tensor x_cpu = raw::clone(input), x_gpu = raw::to(input, dev, input.dtype());
  x_cpu.requires_grad_(true);
  x_gpu.requires_grad_(true);
  Tensor y_cpu = cpu->forward(x_cpu), y_gpu = gpu->forward(x_gpu);
  ASSERT_TRUE(y_gpu.is_cuda());
  EXPECT_TRUE(all_close(y_gpu, y_cpu, check.rtol, check.atol)) << "output";

  // A random output gradient, not ones, so that each output element's path back counts apart.
  Generator gen(2024);
  Tensor gy = raw::randn(y_cpu.sizes(), TensorOptions(y_cpu.dtype()), &gen);
  sum(mul(y_cpu, gy)).backward();
  sum(mul(y_gpu, raw::to(gy, dev, gy.dtype()))).backward();
  EXPECT_TRUE(all_close(x_gpu.grad(), x_cpu.grad(), check.rtol, check.atol)) << "input gradient";

  const nn::NamedTensors cpu_params = cpu->named_parameters(), gpu_params = gpu->named_parameters();
  ASSERT_EQ(cpu_params.size(), gpu_params.size());
  for (size_t i = 0; i < cpu_params.size(); ++i) {
    const Tensor g_cpu = cpu_params[i].second.grad(), g_gpu = gpu_params[i].second.grad();
    ASSERT_EQ(g_gpu.defined(), g_cpu.defined()) << cpu_params[i].first;
    if (g_cpu.defined()) {
      EXPECT_TRUE(g_gpu.is_cuda()) << cpu_params[i].first;
      EXPECT_TRUE(all_close(g_gpu, g_cpu, check.rtol, check.grad_atol)) << "gradient of " << cpu_params[i].first;
    }
  }
  const nn::NamedTensors cpu_buffers = cpu->named_buffers(), gpu_buffers = gpu->named_buffers();
  ASSERT_EQ(cpu_buffers.size(), gpu_buffers.size());
  for (size_t i = 0; i < cpu_buffers.size(); ++i) {
    EXPECT_TRUE(gpu_buffers[i].second.is_cuda()) << cpu_buffers[i].first;
    EXPECT_TRUE(all_close(gpu_buffers[i].second, cpu_buffers[i].second, check.rtol, check.atol))
        << "buffer " << cpu_buffers[i].first;
  }
}

}  // namespace colony::testing
