// F::pad in "reflect", "replicate" and "circular" mode (2-D, by 1 and 3 pixels) and F::unfold /
// F::fold (3x3, padding 1), forward alone and forward + backward (one backward of sum(out * g), the
// input's .grad cleared first), float32 [16, 64, 56, 56] (a ResNet stage's feature map), to set
// beside benchmarks/pad_pytorch.py (benchmarks/pad_rounds.sh alternates them). F::pad's modes are
// one kernel each way (kernels/cpu/pad.cc), as torch's; so are unfold and fold (kernels/cpu/fold.cc),
// as torch's im2col/col2im.
//
//   pad_bench [--threads T] [--trials R]
//
// Prints one line per case and pass: "<case> <pass> us=<median of R calls>".
#include <algorithm>
#include <chrono>
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
  const colony::Shape shape = {16, 64, 56, 56};
  std::vector<colony::bench::LeafCase> cases;
  for (const char* mode : {"reflect", "replicate", "circular"}) {
    for (int64_t p : {1, 3}) {
      cases.push_back({std::string(mode) + "_pad" + std::to_string(p), [mode, p](const Tensor& x) {
                         return F::pad(x, F::PadFuncOptions({p, p, p, p}).mode(mode));
                       }});
    }
  }
  cases.push_back({"zeros_pad1", [](const Tensor& x) { return F::pad(x, F::PadFuncOptions({1, 1, 1, 1})); }});
  cases.push_back({"unfold_k3", [](const Tensor& x) { return F::unfold(x, F::UnfoldFuncOptions(3).padding(1)); }});
  colony::bench::print_leaf_cases(shape, cases, trials, &gen);
  // F::fold of the columns unfold_k3 gives.
  const F::FoldFuncOptions fold_options = F::FoldFuncOptions({56, 56}, 3).padding(1);
  colony::bench::print_leaf("fold_k3", [&](const Tensor& cols) { return F::fold(cols, fold_options); },
                            colony::raw::randn({16, 64 * 9, 56 * 56}, colony::kFloat32, &gen), trials, &gen);
  return 0;
}
