// GELU forward and backward kernels on contiguous float32, the vector loops of
// kernels/cpu/activation_simd.h against the scalar-functor loop they replace (the strided map over
// unary_fn / activation_grad_fn that elementwise_unary.cc and elementwise.cc ran before), in
// alternating trials within one process. Prints one line per path, approximation and shape:
// `<path> <op> <rows>x<cols> us=<median microseconds>`. The PyTorch twin is activation_pytorch.py.
//   bazel run -c opt //benchmarks:activation_bench -- --threads 1 --trials 15
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "benchmarks/bench_args.h"
#include "benchmarks/bench_timing.h"
#include "kernels/cpu/activation_simd.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/strided_loop.h"

namespace {

using namespace colony::kernels;       // NOLINT: a benchmark program
using namespace colony::kernels::cpu;  // NOLINT

StridedLayout dense(int64_t n) {
  StridedLayout l;
  l.ndim = 1;
  l.sizes[0] = n;
  l.strides[0] = 1;
  return l;
}

double time_us(const std::function<void()>& f, int inner) {
  auto s = std::chrono::steady_clock::now();
  for (int i = 0; i < inner; ++i) f();
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - s).count() / inner;
}

void run(int64_t rows, int64_t cols, GeluApproximate a, int trials) {
  const int64_t n = rows * cols;
  std::vector<float> x(n), g(n), y(n);
  std::mt19937 gen(1);
  std::normal_distribution<float> d(0.0f, 1.0f);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = d(gen);
    g[i] = d(gen);
  }
  const UnaryAttrs attrs{a};
  const StridedLayout l = dense(n);
  // The code path before activation_simd.h: unary_typed's and activation_backward's loops.
  auto scalar_fwd = [&] {
    map1<float, float>(y.data(), l, x.data(), l, [attrs](float v) { return unary_fn<UnaryOp::Gelu>(v, attrs); });
  };
  auto scalar_bwd = [&] {
    map2<float, float, float>(y.data(), l, g.data(), l, x.data(), l, [attrs](float gv, float s) {
      return activation_grad_fn<ActivationGrad::Gelu>(gv, s, attrs);
    });
  };
  auto simd_fwd = [&] { gelu_forward_simd(x.data(), y.data(), n, a); };
  auto simd_bwd = [&] { gelu_backward_simd(g.data(), x.data(), y.data(), n, a); };
  const int inner = static_cast<int>(std::max<int64_t>(1, 4000000 / n));
  std::vector<double> t[4];
  for (int r = 0; r < trials + 2; ++r) {
    double v[4] = {time_us(scalar_fwd, inner), time_us(simd_fwd, inner), time_us(scalar_bwd, inner),
                   time_us(simd_bwd, inner)};
    if (r >= 2)  // 2 warm-up trials
      for (int k = 0; k < 4; ++k) t[k].push_back(v[k]);
  }
  const char* an = a == GeluApproximate::Tanh ? "tanh" : "none";
  const char* names[4] = {"scalar gelu_fwd", "simd gelu_fwd", "scalar gelu_bwd", "simd gelu_bwd"};
  for (int k = 0; k < 4; ++k)
    std::printf("%s(%s) %lldx%lld us=%.1f\n", names[k], an, static_cast<long long>(rows), static_cast<long long>(cols),
                colony::bench::median(t[k]));
  std::printf("speedup gelu(%s) %lldx%lld fwd=%.2f bwd=%.2f (isa %s)\n", an, static_cast<long long>(rows),
              static_cast<long long>(cols), colony::bench::median(t[0]) / colony::bench::median(t[1]), colony::bench::median(t[2]) / colony::bench::median(t[3]),
              active_activation_simd_fns().isa);
}

}  // namespace

int main(int argc, char** argv) {
  const auto [threads, trials] = colony::bench::parse_threads_trials(argc, argv, {1, 15});
  set_num_threads(threads);
  std::printf("threads %d\n", threads);
  for (GeluApproximate a : {GeluApproximate::None, GeluApproximate::Tanh}) {
    run(768, 512, a, trials);
    run(16384, 1536, a, trials);
  }
  return 0;
}
