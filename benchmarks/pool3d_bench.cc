// F::max_pool3d and F::avg_pool3d (kernel 2; kernel 3 stride 2 padding 1), forward alone and
// forward + backward (one backward of sum(out * g), the input's .grad cleared first), float32
// [4, 32, 16, 56, 56] (a video network's early feature map), to set beside
// benchmarks/pool3d_pytorch.py (benchmarks/pair_rounds.sh pool3d alternates them). The kernels are
// kernels/cpu/pool.cc's volume loops (vectors of output columns inside a row, the scalar windows at
// its edges), planes split over the thread pool.
//
//   pool3d_bench [--threads T] [--trials R]
//
// Prints one line per case and pass: "<case> <pass> us=<median of R calls>".
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "benchmarks/bench_args.h"
#include "benchmarks/bench_leaf.h"
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
  const colony::Shape shape = {4, 32, 16, 56, 56};
  const std::vector<colony::bench::LeafCase> cases = {
      {"max_k2", [](const Tensor& x) { return F::max_pool3d(x, 2); }},
      {"max_k3s2p1", [](const Tensor& x) { return F::max_pool3d(x, F::MaxPool3dFuncOptions(3).stride(2).padding(1)); }},
      {"avg_k2", [](const Tensor& x) { return F::avg_pool3d(x, 2); }},
      {"avg_k3s2p1", [](const Tensor& x) { return F::avg_pool3d(x, F::AvgPool3dFuncOptions(3).stride(2).padding(1)); }},
  };
  colony::bench::print_leaf_cases(shape, cases, trials, &gen);
  return 0;
}
