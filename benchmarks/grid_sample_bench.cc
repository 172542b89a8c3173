// F::grid_sample forward alone and forward + backward (one backward of sum(out * g) reaching both
// the input and the grid, their .grad cleared first), float32 [8, 64, 64, 64] sampled at a smooth
// grid (affine_grid of a small rotation and zoom, as a spatial transformer gives, reaching a little
// outside the image), to set beside benchmarks/grid_sample_pytorch.py
// (`benchmarks/pair_rounds.sh grid_sample` alternates them).
//
//   grid_sample_bench [--threads T] [--trials R]
//
// Prints one line per case and pass: "<mode>_<padding> <pass> us=<median of R calls>".
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "benchmarks/bench_args.h"
#include "benchmarks/bench_timing.h"
#include "nn/functional.h"
#include "tensor/random.h"
#include "tensor/threads.h"

namespace {

using colony::Tensor;
namespace F = colony::nn::functional;

}  // namespace

int main(int argc, char** argv) {
  const auto [threads, trials] = colony::bench::parse_threads_trials(argc, argv, {2, 10});
  colony::set_num_threads(threads);
  colony::Generator gen(1);
  const int64_t n = 8;
  // theta = 1.1 * rotation(0.2) with a small shift, the same for every batch element.
  const double c = 1.1 * std::cos(0.2), s = 1.1 * std::sin(0.2);
  std::vector<double> theta_values;
  for (int64_t i = 0; i < n; ++i) theta_values.insert(theta_values.end(), {c, -s, 0.05, s, c, -0.03});
  const Tensor theta = colony::raw::to(colony::raw::from_vector<double>(theta_values, {n, 2, 3}), colony::kCPU,
                                       colony::kFloat32);
  struct Case {
    const char* mode;
    const char* padding;
  };
  const std::vector<Case> cases = {{"bilinear", "zeros"}, {"nearest", "zeros"}, {"bicubic", "border"}};
  Tensor x = colony::raw::randn({n, 64, 64, 64}, colony::kFloat32, &gen);
  Tensor grid = colony::raw::contiguous(F::affine_grid(theta, {n, 64, 64, 64}, false));
  x.requires_grad_(true);
  grid.requires_grad_(true);
  const Tensor g = colony::raw::randn({n, 64, 64, 64}, colony::kFloat32, &gen);
  for (const Case& k : cases) {
    const auto options = F::GridSampleFuncOptions().mode(k.mode).padding_mode(k.padding).align_corners(false);
    const double fwd = colony::bench::median_call_us(
        [&] {
          colony::NoGradGuard no_grad;
          F::grid_sample(x, grid, options);
        },
        trials);
    const double both = colony::bench::median_call_us(
        [&] {
          x.set_grad(Tensor());
          grid.set_grad(Tensor());
          colony::sum(colony::mul(F::grid_sample(x, grid, options), g)).backward();
        },
        trials);
    std::printf("%s_%s fwd us=%.1f\n%s_%s fwd+bwd us=%.1f\n", k.mode, k.padding, fwd, k.mode, k.padding, both);
    std::fflush(stdout);
  }
  return 0;
}
