// The register tiles of kernels/cpu/small_gemm.h alone, on LeNet's convolution shapes, one image at
// a time on one thread, as the direct convolution calls them (kernels/cpu/conv.cc): each layer's
// forward (gemm_rows over shifted windows), the second layer's input gradient (gemm_rows scattered
// into the image) and each weight gradient (gemm_dot_rows_lanes, two images per call). Prints
// microseconds per image and GFLOP/s: "useful" counts the output pixels, "computed" also the grid
// columns the direct algorithm computes and drops (32 per 28-pixel row on the first layer, 14 per
// 10 on the second). Compare with `fma_peak --threads 1`. The tiles are the CPU's best ISA's, or
// COLONY_CPU_ISA's.
//
//   bazel run -c opt --config=cpu //benchmarks:small_gemm_bench [-- --quick]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "kernels/cpu/small_gemm.h"
#include "kernels/cpu/small_gemm_isa.h"

namespace {

using colony::kernels::cpu::gemm_dot_rows_lanes;
using colony::kernels::cpu::gemm_rows;

// Best seconds per call over `trials` trials of `calls` calls each: the least disturbed trial.
template <typename F>
double best_seconds(F f, int trials, int calls) {
  double best = 1e30;
  for (int t = 0; t < trials; ++t) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / calls);
  }
  return best;
}

struct Layer {
  const char* name;
  int64_t c, hw, o, k;  // in channels, input height = width, out channels, kernel size (stride 1, no padding)
};

void report(const char* pass, const Layer& l, double seconds, double useful_flops, double computed_flops) {
  std::printf("%-6s %-13s %8.2f us %7.1f GFLOP/s useful %7.1f computed\n", l.name, pass, seconds * 1e6,
              useful_flops / seconds * 1e-9, computed_flops / seconds * 1e-9);
}

}  // namespace

int main(int argc, char** argv) {
  int trials = 8, calls = 400;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      trials = 2;
      calls = 20;
    } else {
      std::fprintf(stderr, "small_gemm_bench: unknown argument %s (expected --quick)\n", argv[i]);
      return 2;
    }
  }
  std::printf("isa=%s\n", colony::kernels::cpu::active_small_gemm_fns<float>().isa);
  for (const Layer& l : {Layer{"conv1", 3, 32, 6, 5}, Layer{"conv2", 6, 14, 16, 5}}) {
    const int64_t ho = l.hw - l.k + 1, K = l.c * l.k * l.k, plane = l.hw * l.hw;
    const int64_t nq = (ho - 1) * l.hw + ho;  // grid positions per output plane (conv.cc's DirectPlan)
    std::vector<float> x(l.c * plane, 0.5f), w(l.o * K, 0.25f), wt(K * l.o, 0.125f);
    std::vector<float> grid(l.o * ho * l.hw, 0.75f), gx(l.c * plane), lanes(l.o * K * colony::kernels::cpu::dot_lanes<float>());
    std::vector<int64_t> window, scatter, planes;
    for (int64_t c = 0; c < l.c; ++c)
      for (int64_t i = 0; i < l.k; ++i)
        for (int64_t j = 0; j < l.k; ++j) window.push_back(c * plane + i * l.hw + j);
    for (int64_t ij = 0; ij < l.k * l.k; ++ij)  // kernel position-major, as conv.cc scatters
      for (int64_t c = 0; c < l.c; ++c) scatter.push_back(c * plane + (ij / l.k) * l.hw + ij % l.k);
    for (int64_t o = 0; o < l.o; ++o) planes.push_back(o * ho * l.hw);
    const double useful = 2.0 * l.o * K * ho * ho, computed = 2.0 * l.o * K * nq;
    report("forward", l,
           best_seconds([&] { gemm_rows<float>(l.o, nq, K, w.data(), K, 1, x.data(), window.data(), grid.data(),
                                               planes.data(), false, nullptr); },
                        trials, calls),
           useful, computed);
    if (l.c > 3) {  // LeNet's first layer needs no input gradient
      report("input_grad", l,
             best_seconds([&] { gemm_rows<float>(K, nq, l.o, wt.data(), l.o, 1, grid.data(), planes.data(), gx.data(),
                                                 scatter.data(), true, nullptr); },
                          trials, calls),
             useful, computed);
    }
    // Two images per call, as conv.cc's kDotImages: seconds per image.
    std::vector<float> x2(2 * x.size(), 0.5f), grid2(2 * grid.size(), 0.75f);
    const colony::kernels::cpu::DotBatch two{2, static_cast<int64_t>(grid.size()), static_cast<int64_t>(x.size())};
    report("weight_grad", l,
           best_seconds([&] { gemm_dot_rows_lanes<float>(l.o, K, nq, grid2.data(), ho * l.hw, x2.data(),
                                                         window.data(), lanes.data(), two); },
                        trials, calls) / 2,
           useful, computed);
  }
  return 0;
}
