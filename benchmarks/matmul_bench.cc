// CPU GEMM throughput: a 512 x 512 x 512 float32 raw::mm on 1 and 2 threads, after warm-up, as
// GFLOP/s (2 * n^3 flops per product), A @ B and A @ B^T (a linear layer's forward), on each of
// gemm's float kernels (kernels/cpu/gemm.h): Eigen, and small_gemm.h's register tiles, which Auto
// picks under AVX-512. With 2 threads the rows are split over the thread pool, one single-threaded
// product per chunk. Then the same in bfloat16 (autocast's CPU type): widened to float32 around
// the float32 kernel, and on the AVX512_BF16 tiles where the CPU has them
// (kernels/cpu/small_gemm_bf16.h). Optional argument: the matrix size.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kernels/cpu/gemm.h"
#include "kernels/cpu/small_gemm_bf16.h"
#include "kernels/cpu/small_gemm_isa.h"
#include "tensor/raw_ops.h"
#include "tensor/random.h"
#include "tensor/threads.h"

namespace {

struct Timing {
  double best, median;  // seconds per product
};

// Many short trials: the best is the one least disturbed by other processes
// on the machine (the figure to compare), the median what a busy machine gives.
Timing time_mm(const colony::Tensor& a, const colony::Tensor& b, int trials) {
  using clock = std::chrono::steady_clock;
  for (int i = 0; i < 3; ++i) colony::raw::mm(a, b);  // warm-up: page in memory, start the pool
  std::vector<double> t;
  for (int i = 0; i < trials; ++i) {
    auto start = clock::now();
    colony::raw::mm(a, b);
    t.push_back(std::chrono::duration<double>(clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return {t.front(), t[t.size() / 2]};
}

}  // namespace

int main(int argc, char** argv) {
  int64_t n = argc > 1 ? std::atoll(argv[1]) : 512;
  colony::Generator gen(1);
  colony::Tensor a = colony::raw::randn({n, n}, colony::TensorOptions(colony::kFloat32), &gen);
  colony::Tensor b = colony::raw::randn({n, n}, colony::TensorOptions(colony::kFloat32), &gen);
  double flops = 2.0 * static_cast<double>(n) * n * n;
  namespace cpu = colony::kernels::cpu;
  const bool auto_tiles = cpu::gemm_kernel(colony::DType::Float32, n, n) == cpu::GemmKernel::Tiles;
  std::printf("mm float32 %lld x %lld x %lld, GFLOP/s best (median); the CPU kernels run %s, Auto picks %s\n",
              static_cast<long long>(n), static_cast<long long>(n), static_cast<long long>(n),
              cpu::active_small_gemm_fns<float>().isa, auto_tiles ? "the tiles" : "Eigen");
  for (int threads : {1, 2}) {
    colony::set_num_threads(threads);
    for (bool transposed : {false, true}) {
      const colony::Tensor b_arg = transposed ? colony::raw::transpose(b, 0, 1) : b;
      std::printf("threads=%d  A @ %s", threads, transposed ? "B^T" : "B  ");
      for (cpu::GemmKernel kernel : {cpu::GemmKernel::Eigen, cpu::GemmKernel::Tiles}) {
        cpu::ScopedGemmKernel use(kernel);
        const Timing t = time_mm(a, b_arg, 100);
        std::printf("   %s %.1f (%.1f)", kernel == cpu::GemmKernel::Eigen ? "eigen" : "tiles", flops / t.best * 1e-9,
                    flops / t.median * 1e-9);
      }
      std::printf("\n");
    }
  }
  const colony::Tensor a16 = colony::raw::to(a, colony::kCPU, colony::kBFloat16);
  const colony::Tensor b16 = colony::raw::to(b, colony::kCPU, colony::kBFloat16);
  const bool native = cpu::has_bf16_small_gemm();
  std::printf("mm bfloat16, best ms (GFLOP/s); bfloat16 tiles: %s\n",
              native ? cpu::active_small_gemm_bf16_fns()->isa : "none on this CPU (AVX512_BF16 absent or capped)");
  for (int threads : {1, 2}) {
    colony::set_num_threads(threads);
    for (bool transposed : {false, true}) {
      const colony::Tensor b_arg = transposed ? colony::raw::transpose(b16, 0, 1) : b16;
      Timing widened;
      {
        cpu::ScopedSmallGemmBf16Fns none(nullptr);
        widened = time_mm(a16, b_arg, 30);
      }
      std::printf("threads=%d  A @ %s  widened %.3f ms (%.1f)", threads, transposed ? "B^T" : "B  ", widened.best * 1e3,
                  flops / widened.best * 1e-9);
      if (native) {
        const Timing t = time_mm(a16, b_arg, 30);
        std::printf("   native %.3f ms (%.1f)", t.best * 1e3, flops / t.best * 1e-9);
      }
      std::printf("\n");
    }
  }
  return 0;
}
