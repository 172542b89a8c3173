// The fused CPU attention (colony::scaled_dot_product_attention) on a char-level GPT's shapes, causal
// float32 (or bfloat16: --dtype bf16, the operands autocast hands it): forward alone and forward +
// backward (one backward of sum(out * g), the inputs' .grad cleared first), ms per call, best and
// median of the trials.
// benchmarks/sdpa_pytorch.py times torch's on the same shapes and threads; run the two in
// alternating rounds on a shared machine. bfloat16 runs on AMX tiles where AMX is active;
// COLONY_CPU_ISA=avx512_bf16 times the widened path it replaced.
//
//   sdpa_bench [--threads T] [--trials R] [--dtype f32|bf16]
//
// Prints one line per shape and pass: "shape=B12_H4_T64_D32 pass=fwd best_ms=.. median_ms=..".
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "benchmarks/bench_args.h"
#include "autograd/autograd.h"
#include "tensor/random.h"
#include "tensor/threads.h"

namespace {

using colony::Tensor;

struct Timing {
  double best, median;  // ms per call
};

Timing time_calls(const std::function<void()>& fn, int trials) {
  using clock = std::chrono::steady_clock;
  for (int i = 0; i < 3; ++i) fn();  // warm-up: page in, start the pool
  std::vector<double> t;
  for (int i = 0; i < trials; ++i) {
    auto start = clock::now();
    fn();
    t.push_back(std::chrono::duration<double, std::milli>(clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return {t.front(), t[t.size() / 2]};
}

struct Shape {
  int64_t B, H, T, D;
};

}  // namespace

int main(int argc, char** argv) {
  colony::DType dtype = colony::kFloat32;
  std::vector<char*> rest{argv[0]};  // the arguments but --dtype, for parse_threads_trials
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--dtype") != 0) {
      rest.push_back(argv[i]);
      continue;
    }
    const char* d = i + 1 < argc ? argv[++i] : "";
    if (std::strcmp(d, "f32") != 0 && std::strcmp(d, "bf16") != 0) {
      std::fprintf(stderr, "sdpa_bench: --dtype '%s': expected f32 or bf16\n", d);
      return 2;
    }
    dtype = std::strcmp(d, "bf16") == 0 ? colony::kBFloat16 : colony::kFloat32;
  }
  const auto [threads, trials] =
      colony::bench::parse_threads_trials(static_cast<int>(rest.size()), rest.data(), {2, 20});
  colony::set_num_threads(threads);
  for (Shape s : {Shape{12, 4, 64, 32}, Shape{64, 6, 256, 64}}) {
    colony::Generator gen(1);
    const colony::TensorOptions f32(colony::kFloat32);
    auto make = [&] {
      Tensor t = colony::raw::to(colony::raw::randn({s.B, s.H, s.T, s.D}, f32, &gen), colony::kCPU, dtype);
      t.requires_grad_(true);
      return t;
    };
    Tensor q = make(), k = make(), v = make();
    Tensor g = colony::raw::to(colony::raw::randn({s.B, s.H, s.T, s.D}, f32, &gen), colony::kCPU, dtype);
    Timing fwd = time_calls(
        [&] {
          colony::NoGradGuard no_grad;
          colony::scaled_dot_product_attention(q, k, v, Tensor(), 0.0, true);
        },
        trials);
    Timing both = time_calls(
        [&] {
          // Gradients cleared first: no trial times their accumulation into .grad.
          for (Tensor* t : {&q, &k, &v}) t->set_grad(Tensor());
          Tensor out = colony::scaled_dot_product_attention(q, k, v, Tensor(), 0.0, true);
          out.backward(g);
        },
        trials);
    char name[64];
    std::snprintf(name, sizeof(name), "B%lld_H%lld_T%lld_D%lld", static_cast<long long>(s.B),
                  static_cast<long long>(s.H), static_cast<long long>(s.T), static_cast<long long>(s.D));
    std::printf("shape=%s pass=fwd best_ms=%.3f median_ms=%.3f\n", name, fwd.best, fwd.median);
    std::printf("shape=%s pass=fwd+bwd best_ms=%.3f median_ms=%.3f\n", name, both.best, both.median);
  }
  return 0;
}
