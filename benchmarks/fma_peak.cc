// The CPU's float32 FMA peak, measured: each thread runs independent chains of vector FMAs (enough
// of them to cover the FMA units' latency), all threads at once, and the total is reported next
// to what LeNet training needs per image, so a training figure can be stated as a fraction of
// the machine's peak. The widest instructions the CPU reports are used (AVX-512 when present,
// else AVX2+FMA), chosen at run time as Colony's kernels are; the build targets x86-64-v3.
//
//   bazel run -c opt //benchmarks:fma_peak -- [--threads 2] [--seconds 1] [--isa avx2]
//
// --isa avx2 runs the 256-bit loop on a CPU with AVX-512 too: the peak of an AVX2 build of the same
// work (a CPU may clock 256-bit code higher than 512-bit code, so it is not simply half).
//
// Prints: isa=..., gflops_per_thread=..., gflops=..., lenet_mflop_per_image=...,
// lenet_peak_images_per_s=... (the peak divided by LeNet's training FLOPs per image); where the
// CPU has AVX512_BF16, also bf16_dot_gflops_per_thread=... and bf16_dot_over_fma=... (below).
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

// 12 chains of 8 floats: two FMA units with 4-cycle latency need 8 in flight; 12 leave margin and
// fit in the 16 ymm registers with the two operands.
__attribute__((target("avx2,fma"))) float fma_avx2(int64_t iters, float seed) {
  __m256 acc[12];
#pragma GCC unroll 12
  for (int c = 0; c < 12; ++c) acc[c] = _mm256_set1_ps(seed + static_cast<float>(c));
  const __m256 m = _mm256_set1_ps(0.999999f), a = _mm256_set1_ps(1e-7f);
  for (int64_t i = 0; i < iters; ++i) {
    // Unrolled, so the chains live in registers (a loop over the array loads and stores each one).
#pragma GCC unroll 12
    for (int c = 0; c < 12; ++c) acc[c] = _mm256_fmadd_ps(acc[c], m, a);
  }
  __m256 s = acc[0];
#pragma GCC unroll 12
  for (int c = 1; c < 12; ++c) s = _mm256_add_ps(s, acc[c]);
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0];
}

// The sum of v's lanes (GCC 12's _mm512_reduce_add_ps warns of an uninitialized variable inside).
__attribute__((target("avx512f"))) float sum_lanes(__m512 v) {
  float lanes[16];
  _mm512_storeu_ps(lanes, v);
  float s = 0;
  for (float x : lanes) s += x;
  return s;
}

// 24 chains of 16 floats (32 zmm registers).
__attribute__((target("avx512f"))) float fma_avx512(int64_t iters, float seed) {
  __m512 acc[24];
#pragma GCC unroll 24
  for (int c = 0; c < 24; ++c) acc[c] = _mm512_set1_ps(seed + static_cast<float>(c));
  const __m512 m = _mm512_set1_ps(0.999999f), a = _mm512_set1_ps(1e-7f);
  for (int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 24
    for (int c = 0; c < 24; ++c) acc[c] = _mm512_fmadd_ps(acc[c], m, a);
  }
  __m512 s = acc[0];
#pragma GCC unroll 24
  for (int c = 1; c < 24; ++c) s = _mm512_add_ps(s, acc[c]);
  return sum_lanes(s);
}

// The bfloat16 dot product's rate where the CPU has AVX512_BF16: 24 chains of vdpbf16ps, each 32
// multiply-adds (pairs of bfloat16 into 16 float32 lanes), twice an FMA's 16. Whether the native
// bfloat16 tiles (kernels/cpu/small_gemm_bf16.h) can beat widening to float32 turns on it: on an
// Intel Xeon it ran at a quarter of vfmadd's instruction rate, so half its FLOPs.
__attribute__((target("avx512f,avx512bf16"))) float dot_bf16(int64_t iters, float seed) {
  __m512 acc[24];
#pragma GCC unroll 24
  for (int c = 0; c < 24; ++c) acc[c] = _mm512_set1_ps(seed + static_cast<float>(c));
  const __m512i a = _mm512_set1_epi32(0x3f803f80), b = _mm512_set1_epi32(0x33d633d6);  // pairs of 1.0, 1e-7
  for (int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 24
    for (int c = 0; c < 24; ++c) acc[c] = _mm512_dpbf16_ps(acc[c], (__m512bh)a, (__m512bh)b);
  }
  __m512 s = acc[0];
#pragma GCC unroll 24
  for (int c = 1; c < 24; ++c) s = _mm512_add_ps(s, acc[c]);
  return sum_lanes(s);
}

struct Isa {
  const char* name;
  float (*run)(int64_t, float);
  int64_t flops_per_iter;  // chains x lanes x 2
};

Isa widest(bool cap_to_avx2) {
  __builtin_cpu_init();
  if (!cap_to_avx2 && __builtin_cpu_supports("avx512f")) return {"avx512f", fma_avx512, 24 * 16 * 2};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return {"avx2+fma", fma_avx2, 12 * 8 * 2};
  return {nullptr, nullptr, 0};
}

// LeNet's training FLOPs per image, from its layer shapes: forward multiply-adds of every layer,
// the weight gradients (as many again), and the input gradients of every layer but the first.
double lenet_mflop_per_image() {
  const double conv1 = 6.0 * 28 * 28 * 3 * 5 * 5, conv2 = 16.0 * 10 * 10 * 6 * 5 * 5;
  const double fc = 400.0 * 120 + 120.0 * 84 + 84.0 * 10;
  const double forward = conv1 + conv2 + fc;
  const double macs = forward + forward + (forward - conv1);
  return 2 * macs / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2;
  double seconds = 1.0;
  bool cap_to_avx2 = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else if (std::strcmp(argv[i], "--isa") == 0 && i + 1 < argc) {
      const std::string isa = argv[++i];
      if (isa != "avx2") {
        std::fprintf(stderr, "fma_peak: --isa %s: expected avx2 (the default is the widest the CPU has)\n", isa.c_str());
        return 2;
      }
      cap_to_avx2 = true;
    } else {
      std::fprintf(stderr, "usage: fma_peak [--threads N] [--seconds S] [--isa avx2]\n");
      return 2;
    }
  }
  if (threads <= 0 || !(seconds > 0)) {
    std::fprintf(stderr, "fma_peak: --threads and --seconds must be positive\n");
    return 2;
  }
  const Isa isa = widest(cap_to_avx2);
  if (isa.run == nullptr) {
    std::fprintf(stderr, "fma_peak: this CPU has neither AVX-512 nor AVX2+FMA\n");
    return 1;
  }
  // Calibrate on one thread: iterations for about `seconds`.
  int64_t iters = 1 << 20;
  for (;;) {
    const auto t0 = std::chrono::steady_clock::now();
    volatile float sink = isa.run(iters, 1.0f);
    (void)sink;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s > seconds / 4) {
      iters = static_cast<int64_t>(static_cast<double>(iters) * seconds / s);
      break;
    }
    iters *= 2;
  }
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<double> per_thread(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      ++ready;
      while (!go.load()) {
      }
      const auto t0 = std::chrono::steady_clock::now();
      volatile float sink = isa.run(iters, static_cast<float>(t));
      (void)sink;
      per_thread[t] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    });
  }
  while (ready.load() < threads) {
  }
  const auto start = std::chrono::steady_clock::now();
  go = true;
  for (auto& th : pool) th.join();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double flops = static_cast<double>(iters) * static_cast<double>(isa.flops_per_iter);
  const double slowest = *std::max_element(per_thread.begin(), per_thread.end());
  const double gflops = flops * threads / wall / 1e9;
  std::printf("isa=%s threads=%d\n", isa.name, threads);
  std::printf("gflops_per_thread=%.1f\n", flops / slowest / 1e9);
  std::printf("gflops=%.1f\n", gflops);
  std::printf("lenet_mflop_per_image=%.2f\n", lenet_mflop_per_image());
  std::printf("lenet_peak_images_per_s=%.0f\n", gflops * 1e3 / lenet_mflop_per_image());
  if (!cap_to_avx2 && __builtin_cpu_supports("avx512bf16")) {  // one thread, about as long as one FMA thread ran
    const int64_t dot_iters = std::max<int64_t>(1, iters / 4);
    const auto t0 = std::chrono::steady_clock::now();
    volatile float sink = dot_bf16(dot_iters, 1.0f);
    (void)sink;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double dot_gflops = static_cast<double>(dot_iters) * 24 * 16 * 2 * 2 / s / 1e9;
    std::printf("bf16_dot_gflops_per_thread=%.1f\n", dot_gflops);
    std::printf("bf16_dot_over_fma=%.2f\n", dot_gflops / (flops / slowest / 1e9));
  }
  return 0;
}
