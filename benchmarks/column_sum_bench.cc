// The bias gradients' column sums (raw::sum over dim 0, reduce.cc's sum_columns) on the shapes of
// the width-384 char GPT's linear layers ([B * T, out_features] at batch 16 and 64: c_attn 1152,
// c_proj and mlp.c_proj 384, mlp.c_fc 1536), float32: one line per shape,
// `sum_columns <rows>x<cols> us=<median microseconds> gb_s=<bytes read per second>`. Each trial
// sums a fresh tensor from a rotating set larger than the last-level cache, so the rows come
// from memory as a training step's dY does.
//   bazel run -c opt --config=cpu //benchmarks:column_sum_bench -- --threads 2
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "benchmarks/bench_args.h"
#include "autograd/autograd.h"
#include "tensor/random.h"
#include "tensor/threads.h"

namespace {

using namespace colony;  // NOLINT: a benchmark program

void run(int64_t rows, int64_t cols, int trials) {
  Generator gen(1);
  // At least 512 MiB of operands in rotation: none is still cached when its turn comes again.
  const int64_t bytes = rows * cols * static_cast<int64_t>(sizeof(float));
  const int64_t copies = std::max<int64_t>(2, (int64_t{512} << 20) / bytes);
  std::vector<Tensor> xs;
  for (int64_t i = 0; i < copies; ++i) xs.push_back(raw::randn({rows, cols}, TensorOptions(kFloat32), &gen));
  std::vector<double> times;
  for (int t = 0; t < trials + 2; ++t) {
    const Tensor& x = xs[static_cast<size_t>(t % copies)];
    auto start = std::chrono::steady_clock::now();
    Tensor s = raw::sum(x, {0});
    double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    if (t >= 2) times.push_back(us);  // 2 warm-up trials
  }
  std::sort(times.begin(), times.end());
  const double med = times[times.size() / 2];
  std::printf("sum_columns %lldx%lld us=%.1f gb_s=%.1f\n", static_cast<long long>(rows), static_cast<long long>(cols),
              med, bytes / med / 1e3);
}

}  // namespace

int main(int argc, char** argv) {
  const auto [threads, trials] = colony::bench::parse_threads_trials(argc, argv, {2, 21});
  set_num_threads(threads);
  std::printf("threads=%d\n", threads);
  for (int64_t rows : {16 * 256, 64 * 256}) {
    for (int64_t cols : {384, 1152, 1536}) run(rows, cols, trials);
  }
  return 0;
}
