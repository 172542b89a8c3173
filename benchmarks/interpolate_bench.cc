// F::interpolate's modes, forward alone and forward + backward (one backward of sum(out * g), the
// input's .grad cleared first), float32 [8, 64, 32, 32] (a U-Net decoder's feature map) and
// images of 128 to 512 pixels a side, to set
// beside benchmarks/interpolate_pytorch.py (benchmarks/interpolate_rounds.sh alternates them).
// Each weighted pass is a matrix product or one resample kernel per spatial dim
// (nn/functional_upsample.cc), where torch has one kernel per mode for all dims.
//
//   interpolate_bench [--threads T] [--trials R]
//
// INTERPOLATE_PATH=matrix or =kernel forces how every weighted dim is resampled
// (nn/interpolate_path.h), to time the two paths against each other; unset, F::interpolate chooses.
//
// Prints one line per case and pass: "<mode> <pass> us=<median of R calls>".
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "benchmarks/bench_args.h"
#include "benchmarks/bench_leaf.h"
#include "nn/functional.h"
#include "nn/interpolate_path.h"
#include "tensor/random.h"
#include "tensor/threads.h"

namespace {

using colony::Tensor;
namespace F = colony::nn::functional;

}  // namespace

int main(int argc, char** argv) {
  const auto [threads, trials] = colony::bench::parse_threads_trials(argc, argv, {2, 10});
  colony::set_num_threads(threads);
  std::optional<F::ForceResamplePath> force;
  if (const char* path = std::getenv("INTERPOLATE_PATH")) {
    if (std::strcmp(path, "matrix") != 0 && std::strcmp(path, "kernel") != 0) {
      std::fprintf(stderr, "interpolate_bench: INTERPOLATE_PATH must be matrix or kernel, got %s\n", path);
      return 2;
    }
    force.emplace(std::strcmp(path, "matrix") == 0 ? F::ResamplePath::matrix : F::ResamplePath::kernel);
  }
  colony::Generator gen(1);
  struct Case {
    const char* name;
    F::InterpolateFuncOptions options;
    colony::Shape input = {8, 64, 32, 32};
  };
  const std::vector<Case> cases = {
      {"nearest_x2", F::InterpolateFuncOptions().scale_factor(std::vector<double>{2.0})},
      {"bilinear_x2", F::InterpolateFuncOptions().scale_factor(std::vector<double>{2.0}).mode("bilinear")},
      {"bicubic_x2", F::InterpolateFuncOptions().scale_factor(std::vector<double>{2.0}).mode("bicubic")},
      {"bilinear_aa_half",
       F::InterpolateFuncOptions().scale_factor(std::vector<double>{0.5}).mode("bilinear").antialias(true)},
      // Images: the interpolated dims of 128 to 512 pixels.
      {"image128_bilinear_x2", F::InterpolateFuncOptions().scale_factor(2.0).mode("bilinear"), {4, 3, 128, 128}},
      {"image256_bilinear_x2", F::InterpolateFuncOptions().scale_factor(2.0).mode("bilinear"), {2, 3, 256, 256}},
      {"image512_bilinear_x2", F::InterpolateFuncOptions().scale_factor(2.0).mode("bilinear"), {1, 3, 512, 512}},
      {"image512_bicubic_half", F::InterpolateFuncOptions().scale_factor(0.5).mode("bicubic"), {1, 3, 512, 512}},
  };
  for (const Case& c : cases) {
    colony::bench::print_leaf(
        c.name, [&](const Tensor& x) { return F::interpolate(x, c.options); },
        colony::raw::randn(c.input, colony::kFloat32, &gen), trials, &gen);
  }
  return 0;
}
