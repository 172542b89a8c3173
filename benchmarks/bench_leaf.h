// The forward-and-backward timing of one op on a leaf, shared by the kernel benchmarks (as
// bench_timing.py's run_leaf is by their torch twins): fn(x) under no_grad, then forward + backward
// of sum(fn(x) * g) into x (its .grad cleared before each call), g drawn from `gen` like fn(x).
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "benchmarks/bench_timing.h"
#include "ops/raw_ops.h"
#include "tensor/random.h"

namespace colony::bench {

// Prints "<name> fwd us=<median>" and "<name> fwd+bwd us=<median>". x becomes a leaf.
inline void print_leaf(const std::string& name, const std::function<Tensor(const Tensor&)>& fn, Tensor x,
                       int trials, Generator* gen) {
  x.requires_grad_(true);
  Tensor y0;
  {
    NoGradGuard no_grad;
    y0 = fn(x);
  }
  const Tensor g = raw::randn(y0.sizes(), y0.dtype(), gen);
  const double fwd = median_call_us(
      [&] {
        NoGradGuard no_grad;
        fn(x);
      },
      trials);
  const double both = median_call_us(
      [&] {
        x.set_grad(Tensor());
        sum(mul(fn(x), g)).backward();
      },
      trials);
  std::printf("%s fwd us=%.1f\n%s fwd+bwd us=%.1f\n", name.c_str(), fwd, name.c_str(), both);
  std::fflush(stdout);
}

// A row of a benchmark's table: its name and the op.
struct LeafCase {
  std::string name;
  std::function<Tensor(const Tensor&)> fn;
};

// print_leaf for each case in order, each on a fresh float32 standard-normal input of `shape`.
inline void print_leaf_cases(const Shape& shape, const std::vector<LeafCase>& cases, int trials, Generator* gen) {
  for (const LeafCase& c : cases) print_leaf(c.name, c.fn, raw::randn(shape, kFloat32, gen), trials, gen);
}

}  // namespace colony::bench
