// colony::linalg's decompositions and solvers on the CPU: inv, solve (one right-hand side column
// block of 16), cholesky, qr (reduced), eigh and svd (reduced) of one n x n matrix for n = 64 and
// 256 (and 512 for cholesky, eigh and svd) and of a batch of 64 8 x 8 matrices, float32 and float64; one line per case,
// `linalg <op> <shape> <dtype> us=<median microseconds>`. The inputs are deterministic (the
// fractional parts of i times the golden ratio, less 0.5): X + n I for the general matrices, X Xᵀ +
// n I for cholesky and eigh. Colony's twin of linalg_pytorch.py; benchmarks/pair_rounds.sh linalg
// alternates the two.
//   bazel run -c opt --config=cpu //benchmarks:linalg_bench -- --threads 2
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "autograd/linalg.h"
#include "benchmarks/bench_args.h"
#include "benchmarks/bench_timing.h"
#include "tensor/threads.h"

namespace {

using namespace colony;  // NOLINT: a benchmark program

// [batch, n, n] (batch 0: one n x n matrix) of frac(i * golden ratio) - 0.5.
Tensor golden_matrix(int64_t batch, int64_t n, DType dtype) {
  const int64_t count = std::max<int64_t>(batch, 1) * n * n;
  std::vector<double> v(count);
  for (int64_t i = 0; i < count; ++i) {
    double whole;
    v[i] = std::modf(static_cast<double>(i) * 0.6180339887498949, &whole) - 0.5;
  }
  Shape shape = batch > 0 ? Shape{batch, n, n} : Shape{n, n};
  return raw::to(raw::from_vector(v, shape), kCPU, dtype);
}

void run(const char* op, int64_t batch, int64_t n, DType dtype, int trials) {
  NoGradGuard no_grad;
  const Tensor x = golden_matrix(batch, n, dtype);
  const Tensor eye = raw::mul(raw::eye(n, n, TensorOptions(dtype)), static_cast<double>(n));
  const Tensor general = raw::contiguous(raw::add(x, eye));
  const Tensor spd = raw::contiguous(raw::add(raw::matmul(x, raw::transpose(x, -2, -1)), eye));
  const Tensor rhs = raw::contiguous(raw::narrow(x, -1, 0, std::min<int64_t>(n, 16)));
  const std::string name = op;
  std::function<void()> fn;
  if (name == "inv") fn = [&] { linalg::inv(general); };
  if (name == "solve") fn = [&] { linalg::solve(general, rhs); };
  if (name == "cholesky") fn = [&] { linalg::cholesky(spd); };
  if (name == "qr") fn = [&] { linalg::qr(general); };
  if (name == "eigh") fn = [&] { linalg::eigh(spd); };
  if (name == "svd") fn = [&] { linalg::svd(general, false); };
  std::vector<double> times;
  for (int t = 0; t < trials + 2; ++t) {
    auto start = std::chrono::steady_clock::now();
    fn();
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    if (t >= 2) times.push_back(us);  // 2 warm-up trials
  }
  const std::string shape = batch > 0 ? std::to_string(batch) + "x" + std::to_string(n) + "x" + std::to_string(n)
                                      : std::to_string(n) + "x" + std::to_string(n);
  std::printf("linalg %s %s %s us=%.1f\n", op, shape.c_str(), dtype == kFloat32 ? "f32" : "f64", colony::bench::median(times));
  std::fflush(stdout);
}

// The 512 x 512 case, for the factorizations whose cost at 256 was in question (eigh and svd's
// reductions, Cholesky's trailing updates).
bool is_spectral_or_cholesky(const std::string& op) { return op == "eigh" || op == "svd" || op == "cholesky"; }

}  // namespace

int main(int argc, char** argv) {
  const auto [threads, trials] = colony::bench::parse_threads_trials(argc, argv, {2, 5});
  set_num_threads(threads);
  std::printf("threads=%d\n", threads);
  for (const char* op : {"inv", "solve", "cholesky", "qr", "eigh", "svd"}) {
    for (DType dtype : {kFloat32, kFloat64}) {
      run(op, 64, 8, dtype, trials);
      run(op, 0, 64, dtype, trials);
      run(op, 0, 256, dtype, trials);
      if (is_spectral_or_cholesky(op)) run(op, 0, 512, dtype, trials);
    }
  }
  return 0;
}
