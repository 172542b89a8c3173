// F::ctc_loss at a speech/OCR shape (T = 200 steps, N = 16, C = 30 classes, padded targets of up to
// S = 50 labels, mean reduction) and F::embedding_bag at a recommender's (a 100000 x 64 float32
// table, 2048 bags of 20 ids with offsets, sum and mean), forward alone and forward + backward (one
// backward of sum(out * g), the leaf's .grad cleared first), to set beside
// benchmarks/ctc_pytorch.py (benchmarks/ctc_rounds.sh alternates them). Both ops are one fused
// kernel each way (kernels/cpu/ctc_loss.cc, kernels/cpu/embedding_bag.cc).
//
//   ctc_bench [--threads T] [--trials R]
//
// Prints one line per case and pass: "<case> <pass> us=<median of R calls>".
#include <functional>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "benchmarks/bench_args.h"
#include "benchmarks/bench_leaf.h"
#include "nn/embedding_bag.h"
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
  {
    const int64_t T = 200, N = 16, C = 30, S = 50;
    std::vector<int64_t> labels, input_lengths, target_lengths;
    for (int64_t b = 0; b < N; ++b) {
      for (int64_t s = 0; s < S; ++s) labels.push_back(1 + (b * 7 + s * 13) % (C - 1));  // no blank
      input_lengths.push_back(T - 3 * b);
      target_lengths.push_back(S - b);
    }
    const Tensor targets = colony::raw::from_vector(labels, {N, S});
    Tensor lp = colony::raw::log_softmax(colony::raw::randn({T, N, C}, colony::kFloat32, &gen), 2);
    colony::bench::print_leaf("ctc_loss_T200_N16_C30_S50", [&](const Tensor& x) {
      return F::ctc_loss(x, targets, input_lengths, target_lengths);
    }, lp, trials, &gen);
  }
  {
    const int64_t rows = 100000, dim = 64, bags = 2048, per_bag = 20;
    std::vector<int64_t> ids, offsets;
    for (int64_t b = 0; b < bags; ++b) {
      offsets.push_back(b * per_bag);
      for (int64_t k = 0; k < per_bag; ++k) ids.push_back((b * 7919 + k * 104729) % rows);
    }
    const Tensor idx = colony::raw::from_vector(ids, {bags * per_bag});
    const Tensor off = colony::raw::from_vector(offsets, {bags});
    for (auto [mode, name] : {std::pair{colony::nn::EmbeddingBagMode::Sum, "sum"},
                              std::pair{colony::nn::EmbeddingBagMode::Mean, "mean"}}) {
      colony::bench::print_leaf(
          std::string("embedding_bag_") + name + "_100000x64_B2048_L20",
          [&, mode = mode](const Tensor& w) {
            return F::embedding_bag(idx, w, F::EmbeddingBagFuncOptions().offsets(off).mode(mode));
          },
          colony::raw::randn({rows, dim}, colony::kFloat32, &gen), trials, &gen);
    }
  }
  return 0;
}
