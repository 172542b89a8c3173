// LeNet training on the CPU with the batches already in memory: Colony's side of
// benchmarks/lenet_libtorch.cc, line for line (the same network, SGD lr 0.001 momentum 0.9, 16
// random CIFAR-shaped batches cycled, only zero_grad, forward, backward and step timed), so the two
// figures compare the frameworks and nothing else. `lenet_cifar10 --benchmark` times the same step
// with its DataLoader feeding it.
//
//   bazel run -c opt --config=cpu //benchmarks:lenet_cpu -- --batch 32 --threads 2 --steps 1500 [--amp bf16]
//
// Prints the thread count, batch and the CPU kernels' instruction set (cpu_isa=avx2|avx512|
// avx512_bf16; set COLONY_CPU_ISA=avx2 to compare), then images_per_s=<number>. --amp bf16 runs
// the forward pass and the loss under bfloat16 autocast, as `lenet_cifar10 --amp bf16` does, and
// prints amp=bf16 and whether the convolutions and linear layers multiply bfloat16 natively
// (bf16_kernels=native, on AVX512_BF16) or widen it to float32 (bf16_kernels=widened).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "colony.h"
#include "examples/lenet_cifar10/lenet.h"
#include "kernels/cpu/small_gemm_bf16.h"

namespace {

const char* str_arg(int argc, char** argv, const char* name, const char* fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  return fallback;
}
int int_arg(int argc, char** argv, const char* name, int fallback) {
  const char* v = str_arg(argc, argv, name, nullptr);
  return v != nullptr ? std::atoi(v) : fallback;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace colony;
  const int batch = int_arg(argc, argv, "--batch", 32);
  const int threads = int_arg(argc, argv, "--threads", 2);
  const int steps = int_arg(argc, argv, "--steps", 1500);
  const int warmup = int_arg(argc, argv, "--warmup", 50);
  const std::string amp = str_arg(argc, argv, "--amp", "off");
  if (batch <= 0 || threads <= 0 || steps <= 0 || warmup < 0 || (amp != "off" && amp != "bf16")) {
    std::fprintf(stderr,
                 "usage: lenet_cpu [--batch N] [--threads N] [--steps N] [--warmup N] (positive) [--amp off|bf16]\n");
    return 2;
  }
  set_num_threads(threads);
  try {
    std::printf("cpu_isa=%s\n", get_cpu_capability());
  } catch (const std::exception& e) {  // a bad COLONY_CPU_ISA
    std::fprintf(stderr, "lenet_cpu: %s\n", e.what());
    return 2;
  }
  manual_seed(0);
  auto model = std::make_shared<lenet::LeNet>();
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.001).momentum(0.9));
  std::vector<Tensor> data, target;
  for (int i = 0; i < 16; ++i) {
    data.push_back(raw::randn({batch, 3, 32, 32}));
    target.push_back(raw::randint(0, 10, {batch}, TensorOptions(kInt64)));
  }
  std::printf("colony, %d threads, batch %d\n", threads, batch);
  const bool bf16 = amp == "bf16";
  if (bf16) {
    std::printf("amp=bf16\nbf16_kernels=%s\n", kernels::cpu::has_bf16_small_gemm() ? "native" : "widened");
  }
  std::chrono::steady_clock::time_point start;
  for (int i = 0; i < warmup + steps; ++i) {
    if (i == warmup) start = std::chrono::steady_clock::now();
    opt.zero_grad();
    Tensor loss;
    {
      AutocastGuard autocast(DeviceType::CPU, kBFloat16, bf16);
      loss = F::cross_entropy(model->forward(data[i % 16]), target[i % 16]);
    }
    loss.backward();
    opt.step();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("images_per_s=%.1f\n", static_cast<double>(batch) * steps / seconds);
  return 0;
}
