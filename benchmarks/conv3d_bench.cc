// F::conv3d forward alone and forward + backward (one backward of sum(out * g) reaching the input,
// the weight and the bias, their .grad cleared first), float32, on two C3D-like layers: 32 -> 64
// channels 3x3x3 padding 1 over [2, 32, 16, 32, 32], and 64 -> 128 channels 3x3x3 stride 2 padding 1
// over [2, 64, 16, 32, 32], and C3D's first layer, 3 -> 64 channels 3x3x3 padding 1 over
// [2, 3, 16, 112, 112]; to set beside benchmarks/conv3d_pytorch.py
// (`benchmarks/pair_rounds.sh conv3d` alternates them).
//
//   conv3d_bench [--threads T] [--trials R]
//
// Prints one line per case and pass: "<case> <pass> us=<median of R calls>".
#include <cstdio>
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

struct Case {
  const char* name;
  colony::Shape x;
  int64_t out_channels;
  int64_t stride;
};

}  // namespace

int main(int argc, char** argv) {
  const auto [threads, trials] = colony::bench::parse_threads_trials(argc, argv, {2, 10});
  colony::set_num_threads(threads);
  colony::Generator gen(1);
  const std::vector<Case> cases = {{"c3d_32to64_s1", {2, 32, 16, 32, 32}, 64, 1},
                                   {"c3d_64to128_s2", {2, 64, 16, 32, 32}, 128, 2},
                                   {"c3d_conv1", {2, 3, 16, 112, 112}, 64, 1}};
  for (const Case& k : cases) {
    Tensor x = colony::raw::randn(k.x, colony::kFloat32, &gen);
    Tensor w = colony::raw::mul(colony::raw::randn({k.out_channels, k.x[1], 3, 3, 3}, colony::kFloat32, &gen), 0.05);
    Tensor b = colony::raw::randn({k.out_channels}, colony::kFloat32, &gen);
    x.requires_grad_(true);
    w.requires_grad_(true);
    b.requires_grad_(true);
    const auto options = F::Conv3dFuncOptions().stride(k.stride).padding(1);
    Tensor g;
    {
      colony::NoGradGuard no_grad;
      g = colony::raw::randn(F::conv3d(x, w, b, options).sizes(), colony::kFloat32, &gen);
    }
    const double fwd = colony::bench::median_call_us(
        [&] {
          colony::NoGradGuard no_grad;
          F::conv3d(x, w, b, options);
        },
        trials);
    const double both = colony::bench::median_call_us(
        [&] {
          x.set_grad(Tensor());
          w.set_grad(Tensor());
          b.set_grad(Tensor());
          colony::sum(colony::mul(F::conv3d(x, w, b, options), g)).backward();
        },
        trials);
    std::printf("%s fwd us=%.1f\n%s fwd+bwd us=%.1f\n", k.name, fwd, k.name, both);
    std::fflush(stdout);
  }
  return 0;
}
