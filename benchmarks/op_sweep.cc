// A sweep of everyday ops, float32 on the CPU, to set beside benchmarks/op_sweep_pytorch.py
// (benchmarks/pair_rounds.sh op_sweep alternates them): elementwise unary and binary ops (with
// broadcasting), reductions over the last dim and over dim 0, softmax / log_softmax over rows of
// 1024 and of 64, cross_entropy, the index ops, sort / topk / argsort, cat / stack / transpose,
// layer_norm, batch_norm (training), dropout (training) and one_hot. The big kernels (GEMM, conv,
// attention) have their own benchmarks; this one looks for the everyday ops nobody measured.
//
//   op_sweep [--threads T] [--trials R]
//
// Each case prints "<case> fwd us=<median of R calls>" and, when the op is differentiable,
// "<case> fwd+bwd us=<median>": forward + backward of sum(op(x) * g) into the leaf x, its .grad
// cleared first (bench_leaf.h). Inputs are drawn once per case; most are [4096, 1024]
// (4M floats, 16 MiB: past the caches, as a real activation is).
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "autograd/nn_ops.h"
#include "benchmarks/bench_args.h"
#include "benchmarks/bench_leaf.h"
#include "benchmarks/bench_timing.h"
#include "nn/embedding.h"
#include "nn/functional.h"
#include "nn/normalization.h"
#include "tensor/random.h"
#include "tensor/threads.h"

namespace {

using colony::Tensor;
namespace F = colony::nn::functional;
using Fn = std::function<Tensor(const Tensor&)>;

constexpr int64_t kRows = 4096;
constexpr int64_t kCols = 1024;

// "<name> fwd us=<median>" of fn(x) under no_grad, for the ops without a gradient.
void print_forward(const std::string& name, const Fn& fn, const Tensor& x, int trials) {
  const double fwd = colony::bench::median_call_us(
      [&] {
        colony::NoGradGuard no_grad;
        fn(x);
      },
      trials);
  std::printf("%s fwd us=%.1f\n", name.c_str(), fwd);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const auto [threads, trials] = colony::bench::parse_threads_trials(argc, argv, {1, 10});
  colony::set_num_threads(threads);
  colony::Generator gen(1);
  const auto randn = [&](const colony::Shape& shape) { return colony::raw::randn(shape, colony::kFloat32, &gen); };
  const auto randint = [&](int64_t high, const colony::Shape& shape) {
    return colony::raw::randint(0, high, shape, colony::TensorOptions(colony::kInt64), &gen);
  };
  // [4096, 1024] normals; positive ones (|x| + 0.5) for log, sqrt and pow.
  const auto matrix = [&] { return randn({kRows, kCols}); };
  const auto positive = [&] {
    colony::NoGradGuard no_grad;
    return colony::add(colony::abs(randn({kRows, kCols})), 0.5);
  };
  const auto leaf = [&](const std::string& name, const Fn& fn, Tensor x) {
    colony::bench::print_leaf(name, fn, std::move(x), trials, &gen);
  };

  // Elementwise unary.
  leaf("exp", [](const Tensor& x) { return colony::exp(x); }, matrix());
  leaf("log", [](const Tensor& x) { return colony::log(x); }, positive());
  leaf("tanh", [](const Tensor& x) { return colony::tanh(x); }, matrix());
  leaf("sigmoid", [](const Tensor& x) { return colony::sigmoid(x); }, matrix());
  leaf("gelu", [](const Tensor& x) { return colony::gelu(x); }, matrix());
  leaf("silu", [](const Tensor& x) { return colony::silu(x); }, matrix());
  leaf("sqrt", [](const Tensor& x) { return colony::sqrt(x); }, positive());
  leaf("abs", [](const Tensor& x) { return colony::abs(x); }, matrix());
  leaf("pow2", [](const Tensor& x) { return colony::pow(x, 2.0); }, matrix());

  // Binary, with a [1024] row broadcast over the rows (a leaf too: its gradient sums over dim 0)
  // and with a scalar; where and clamp.
  {
    Tensor row = randn({kCols});
    row.requires_grad_(true);
    leaf("add_row", [row](const Tensor& x) mutable {
      row.set_grad(Tensor());
      return colony::add(x, row);
    }, matrix());
    leaf("mul_row", [row](const Tensor& x) mutable {
      row.set_grad(Tensor());
      return colony::mul(x, row);
    }, matrix());
  }
  leaf("add_scalar", [](const Tensor& x) { return colony::add(x, 2.0); }, matrix());
  leaf("mul_scalar", [](const Tensor& x) { return colony::mul(x, 2.0); }, matrix());
  {
    const Tensor cond = colony::gt(randn({kRows, kCols}), 0.0);
    const Tensor other = randn({kRows, kCols});
    leaf("where", [cond, other](const Tensor& x) { return colony::where(cond, x, other); }, matrix());
    leaf("masked_fill", [cond](const Tensor& x) { return colony::masked_fill(x, cond, 0.0); }, matrix());
  }
  leaf("clamp", [](const Tensor& x) { return colony::clamp(x, -0.5, 0.5); }, matrix());

  // Reductions over the last dim (rows of 1024) and over dim 0 (columns of 4096).
  for (int64_t dim : {1, 0}) {
    const std::string d = dim == 1 ? "_last" : "_dim0";
    leaf("sum" + d, [dim](const Tensor& x) { return colony::sum(x, {dim}); }, matrix());
    leaf("mean" + d, [dim](const Tensor& x) { return colony::mean(x, {dim}); }, matrix());
    leaf("max" + d, [dim](const Tensor& x) { return colony::max(x, dim).first; }, matrix());
    print_forward("argmax" + d, [dim](const Tensor& x) { return colony::argmax(x, dim); }, matrix(), trials);
  }
  leaf("var_last", [](const Tensor& x) { return colony::var(x, {1}); }, matrix());
  leaf("std_last", [](const Tensor& x) { return colony::std(x, {1}); }, matrix());
  leaf("norm_last", [](const Tensor& x) { return colony::norm(x, 2.0, {1}); }, matrix());
  leaf("logsumexp_last", [](const Tensor& x) { return colony::logsumexp(x, {1}); }, matrix());
  leaf("cumsum_last", [](const Tensor& x) { return colony::cumsum(x, 1); }, matrix());

  // Softmax and log_softmax over rows of 1024 and of 64 (the same 4M values).
  for (int64_t cols : {int64_t{1024}, int64_t{64}}) {
    const colony::Shape shape = {kRows * kCols / cols, cols};
    const std::string c = std::to_string(cols);
    leaf("softmax" + c, [](const Tensor& x) { return colony::softmax(x, 1); }, randn(shape));
    leaf("log_softmax" + c, [](const Tensor& x) { return colony::log_softmax(x, 1); }, randn(shape));
  }
  {
    const Tensor target = randint(1000, {kRows});
    leaf("cross_entropy", [target](const Tensor& x) { return F::cross_entropy(x, target); }, randn({kRows, 1000}));
  }

  // Index ops: rows picked by index_select and embedding, gather / scatter_add along rows,
  // index_put_ with accumulate into a copy (the leaf itself cannot be written in place).
  {
    const Tensor rows = randint(kRows, {kRows});
    leaf("index_select", [rows](const Tensor& x) { return colony::index_select(x, 0, rows); }, matrix());
    const Tensor tokens = randint(10000, {32, 128});
    leaf("embedding", [tokens](const Tensor& w) { return F::embedding(tokens, w); }, randn({10000, 512}));
    const Tensor cols = randint(kCols, {kRows, 256});
    leaf("gather", [cols](const Tensor& x) { return colony::gather(x, 1, cols); }, matrix());
    const Tensor targets = randint(kCols, {kRows, kCols});
    leaf("scatter_add", [targets](const Tensor& x) {
      return colony::scatter_add(colony::Shape{kRows, kCols}, 1, targets, x);
    }, matrix());
    const Tensor values = randn({kRows, kCols});
    leaf("index_put_acc", [rows, values](const Tensor& x) {
      Tensor y = colony::clone(x);
      y.index_put_({rows}, values, /*accumulate=*/true);
      return y;
    }, matrix());
  }

  // Sorting rows of 1024.
  leaf("sort", [](const Tensor& x) { return colony::sort(x, 1).first; }, matrix());
  leaf("topk10", [](const Tensor& x) { return colony::topk(x, 10, 1).first; }, matrix());
  print_forward("argsort", [](const Tensor& x) { return colony::argsort(x, 1); }, matrix(), trials);

  // Copies: cat and stack of x with a second [4096, 1024], transpose(0, 1).contiguous().
  {
    const Tensor other = randn({kRows, kCols});
    leaf("cat0", [other](const Tensor& x) { return colony::cat({x, other}, 0); }, matrix());
    leaf("cat1", [other](const Tensor& x) { return colony::cat({x, other}, 1); }, matrix());
    leaf("stack", [other](const Tensor& x) { return colony::stack({x, other}, 0); }, matrix());
  }
  leaf("transpose_contig", [](const Tensor& x) { return colony::contiguous(colony::transpose(x, 0, 1)); }, matrix());

  // Normalization and dropout.
  {
    Tensor weight = randn({kCols});
    Tensor bias = randn({kCols});
    leaf("layer_norm", [weight, bias](const Tensor& x) {
      return colony::layer_norm(x, {kCols}, weight, bias);
    }, matrix());
    const Tensor bn_weight = randn({64});
    const Tensor bn_bias = randn({64});
    Tensor running_mean = colony::raw::zeros({64}, colony::kFloat32);
    Tensor running_var = colony::raw::ones({64}, colony::kFloat32);
    leaf("batch_norm_train", [=](const Tensor& x) {
      return F::batch_norm(x, running_mean, running_var, bn_weight, bn_bias, /*training=*/true);
    }, randn({32, 64, 56, 56}));
  }
  leaf("dropout_train", [&gen](const Tensor& x) { return F::dropout(x, 0.5, true, &gen); }, matrix());
  print_forward("one_hot", [](const Tensor& labels) { return colony::one_hot(labels, 1000); }, randint(1000, {kRows}),
                trials);
  return 0;
}
