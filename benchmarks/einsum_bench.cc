// einsum against the matmul it stands for, on attention's two products: the scores
// "bhqd,bhkd->bhqk" against matmul(q, k.transpose(-2, -1)) and the output "bhqk,bhkd->bhqd"
// against matmul(p, v), float32, forward alone and forward + backward (one backward of
// sum(out * g), the inputs' .grad cleared first). einsum's permutes and reshapes are views and it
// ends in one bmm, as matmul does, so the two should take the same time; the difference is the
// cost of its extra graph nodes (visible on the tiny shape). Rounds alternate matmul and einsum,
// each the median of --trials calls.
//
//   einsum_bench [--threads T] [--trials R]
//
// Prints one line per shape, product, pass and round:
//   "shape=B12_H4_T64_D32 product=scores pass=fwd round=0 matmul_ms=.. einsum_ms=.. ratio=.."
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "benchmarks/bench_args.h"
#include "benchmarks/bench_timing.h"
#include "tensor/random.h"
#include "tensor/threads.h"

namespace {

using colony::Tensor;

struct Dims {
  int64_t B, H, T, D;
};

constexpr int kRounds = 5;

}  // namespace

int main(int argc, char** argv) {
  const auto [threads, trials] = colony::bench::parse_threads_trials(argc, argv, {2, 10});
  colony::set_num_threads(threads);
  for (Dims s : {Dims{1, 1, 8, 8}, Dims{12, 4, 64, 32}, Dims{16, 6, 256, 64}}) {
    colony::Generator gen(1);
    auto make = [&](int64_t rows, int64_t cols) {
      Tensor t = colony::raw::randn({s.B, s.H, rows, cols}, colony::kFloat32, &gen);
      t.requires_grad_(true);
      return t;
    };
    const Tensor q = make(s.T, s.D), k = make(s.T, s.D), p = make(s.T, s.T), v = make(s.T, s.D);
    struct Product {
      const char* name;
      std::function<Tensor()> by_matmul, by_einsum;
    };
    const std::vector<Product> products = {
        {"scores", [&] { return colony::matmul(q, k.transpose(-2, -1)); },
         [&] { return colony::einsum("bhqd,bhkd->bhqk", {q, k}); }},
        {"output", [&] { return colony::matmul(p, v); }, [&] { return colony::einsum("bhqk,bhkd->bhqd", {p, v}); }},
    };
    const std::string shape = "B" + std::to_string(s.B) + "_H" + std::to_string(s.H) + "_T" + std::to_string(s.T) +
                              "_D" + std::to_string(s.D);
    for (const Product& product : products) {
      const Tensor g = colony::raw::randn(product.by_matmul().sizes(), colony::kFloat32, &gen);
      for (const char* pass : {"fwd", "fwd+bwd"}) {
        const bool backward = std::string(pass) == "fwd+bwd";
        auto run = [&](const std::function<Tensor()>& f) {
          return [&, backward] {
            if (!backward) {
              colony::NoGradGuard no_grad;
              f();
              return;
            }
            for (Tensor t : {q, k, p, v}) t.set_grad(Tensor());
            colony::sum(colony::mul(f(), g)).backward();
          };
        };
        for (int round = 0; round < kRounds; ++round) {
          const double m = colony::bench::median_call_us(run(product.by_matmul), trials, 1) / 1000;
          const double e = colony::bench::median_call_us(run(product.by_einsum), trials, 1) / 1000;
          std::printf("shape=%s product=%s pass=%s round=%d matmul_ms=%.4f einsum_ms=%.4f ratio=%.3f\n", shape.c_str(),
                      product.name, pass, round, m, e, e / m);
          std::fflush(stdout);
        }
      }
    }
  }
  return 0;
}
