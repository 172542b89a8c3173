// F::max_pool2d (kernel 2 stride 2; kernel 3 stride 2 padding 1, ResNet's stem), F::avg_pool2d
// (kernel 2) and F::adaptive_avg_pool2d to 1 x 1 (a classifier's global pool), forward alone and
// forward + backward (one backward of sum(out * g), the input's .grad cleared first), float32
// [32, 64, 56, 56], to set beside benchmarks/pool2d_pytorch.py (benchmarks/pair_rounds.sh pool2d
// alternates them). The kernels are kernels/cpu/pool.cc's, planes split over the thread pool.
//
//   pool2d_bench [--threads T] [--trials R]
//
// Prints one line per case and pass: "<case> <pass> us=<median of R calls>".
#include <functional>
#include <string>
#include <vector>

#include "benchmarks/bench_args.h"
#include "benchmarks/bench_leaf.h"
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
  const colony::Shape shape = {32, 64, 56, 56};
  const std::vector<colony::bench::LeafCase> cases = {
      {"max_k2", [](const Tensor& x) { return F::max_pool2d(x, 2); }},
      {"max_k3s2p1", [](const Tensor& x) { return F::max_pool2d(x, F::MaxPool2dFuncOptions(3).stride(2).padding(1)); }},
      {"avg_k2", [](const Tensor& x) { return F::avg_pool2d(x, 2); }},
      {"adaptive_avg_1", [](const Tensor& x) { return F::adaptive_avg_pool2d(x, colony::Int2(1)); }},
  };
  colony::bench::print_leaf_cases(shape, cases, trials, &gen);
  return 0;
}
