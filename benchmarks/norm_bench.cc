// LayerNorm and RMSNorm forward + backward (colony::layer_norm / rms_norm through autograd, with a
// weight and a bias requiring grad), float32 on the CPU, on the shapes of a char-level GPT: prints
// one line per op and shape, `<op> <rows>x<cols> us=<median microseconds per forward+backward>`.
// Colony's twin of norm_pytorch.py; benchmarks/norm_rounds.sh alternates the two. With
// NORM_BENCH_PARTS=1 it also times layer_norm's raw forward and backward kernels alone.
//   bazel run -c opt --config=cpu //benchmarks:norm_bench -- --threads 2
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "benchmarks/bench_args.h"
#include "benchmarks/bench_timing.h"
#include "autograd/autograd.h"
#include "autograd/nn_ops.h"
#include "tensor/random.h"
#include "tensor/threads.h"

namespace {

using namespace colony;  // NOLINT: a benchmark program

void run(bool rms, int64_t rows, int64_t cols, int trials) {
  Generator gen(1);
  Tensor x = raw::randn({rows, cols}, TensorOptions(kFloat32), &gen);
  Tensor g = raw::randn({rows, cols}, TensorOptions(kFloat32), &gen);
  Tensor w = raw::ones({cols}), b = raw::zeros({cols});
  for (Tensor* t : {&x, &w, &b}) t->requires_grad_(true);
  // Each iteration is timed alone; the iterations count is picked so each trial is >= ~2 ms.
  const int inner = std::max<int64_t>(1, 200000 / (rows * cols / 64 + 1));
  std::vector<double> times;
  for (int t = 0; t < trials + 3; ++t) {
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < inner; ++i) {
      for (Tensor* p : {&x, &w, &b}) p->mutable_grad() = Tensor();
      Tensor out = rms ? rms_norm(x, {cols}, w, 1e-5) : layer_norm(x, {cols}, w, b, 1e-5);
      out.backward(g);
    }
    double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / inner;
    if (t >= 3) times.push_back(us);  // 3 warm-up trials
  }
  std::printf("%s %lldx%lld us=%.2f\n", rms ? "rms_norm" : "layer_norm", static_cast<long long>(rows),
              static_cast<long long>(cols), colony::bench::median(times));
  if (std::getenv("NORM_BENCH_PARTS")) {
    // The raw kernels alone, for finding where the time goes.
    std::vector<double> f, bw;
    raw::NormResult r;
    for (int t = 0; t < trials; ++t) {
      auto s0 = std::chrono::steady_clock::now();
      r = raw::layer_norm(x.detach(), {cols}, w.detach(), b.detach(), 1e-5);
      auto s1 = std::chrono::steady_clock::now();
      raw::layer_norm_backward(g, x.detach(), {cols}, r.mean, r.rstd, w.detach());
      auto s2 = std::chrono::steady_clock::now();
      f.push_back(std::chrono::duration<double, std::micro>(s1 - s0).count());
      bw.push_back(std::chrono::duration<double, std::micro>(s2 - s1).count());
    }
    std::printf("  raw forward us=%.2f raw backward us=%.2f\n", colony::bench::median(f), colony::bench::median(bw));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const auto [threads, trials] = colony::bench::parse_threads_trials(argc, argv, {2, 30});
  set_num_threads(threads);
  std::printf("threads=%d cpu_isa=%s\n", threads, get_cpu_capability());
  for (bool rms : {false, true}) {
    run(rms, 12 * 64, 128, trials);
    run(rms, 64 * 256, 384, trials);
  }
  return 0;
}
