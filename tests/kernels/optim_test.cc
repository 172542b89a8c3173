// The CPU Adam step over many tensors (kernels/cpu/optim.cc: one pass over all their elements,
// split across the threads, with the usual flags fixed so the loop vectorizes) against PyTorch's
// single-tensor update written out per element, for float32 and float64, every flag combination,
// tensors that straddle the threads' split and the vector lanes, one and two threads; and the step
// counts kept per tensor (their own bias corrections, advanced) or a skipped step.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/common/optim.h"
#include "tests/kernels/kernel_testing.h"

namespace colony::kernels::cpu {
namespace {

using colony::testing::ScopedThreads;

// One tensor's state, in T.
template <typename T>
struct State {
  std::vector<T> p, g, m, v, vmax;
};

template <typename T>
State<T> random_state(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  State<T> s;
  for (int64_t i = 0; i < n; ++i) {
    s.p.push_back(static_cast<T>(normal(rng)));
    s.g.push_back(static_cast<T>(normal(rng)));
    s.m.push_back(static_cast<T>(0.1 * normal(rng)));
    const double v = normal(rng);
    s.v.push_back(static_cast<T>(0.01 * v * v));
    s.vmax.push_back(static_cast<T>(0.02 * v * v));
  }
  return s;
}

// PyTorch's torch/optim/adam.py (_single_tensor_adam) for one element, in T.
template <typename T>
void reference_update(T& p, T g, T& m, T& v, T& vmax, const AdamParams& a) {
  T grad = a.maximize ? -g : g;
  if (a.weight_decay != 0) {
    if (a.decoupled_weight_decay) p *= static_cast<T>(1 - a.lr * a.weight_decay);
    else grad += static_cast<T>(a.weight_decay) * p;
  }
  m += (grad - m) * static_cast<T>(1 - a.beta1);  // exp_avg.lerp_(grad, 1 - beta1)
  v = static_cast<T>(a.beta2) * v + static_cast<T>(1 - a.beta2) * grad * grad;
  T second = v;
  if (a.amsgrad) {
    vmax = std::max(vmax, v);
    second = vmax;
  }
  const T denom = std::sqrt(second) / static_cast<T>(a.bias_correction2_sqrt) + static_cast<T>(a.eps);
  p -= static_cast<T>(a.lr / a.bias_correction1) * m / denom;
}

AdamParams params(double weight_decay, bool decoupled, bool amsgrad, bool maximize, double step) {
  return {1e-2, 0.9, 0.99, 1e-8, weight_decay, decoupled, amsgrad, maximize, 1 - std::pow(0.9, step),
          std::sqrt(1 - std::pow(0.99, step))};
}

// Runs AdamStepMulti::cpu over states in place.
template <typename T>
void run(std::vector<State<T>>& states, const AdamParams& a, std::vector<double>* steps = nullptr) {
  std::vector<void*> p, m, v, vmax, step_ptrs;
  std::vector<const void*> g;
  std::vector<int64_t> sizes;
  for (State<T>& s : states) {
    p.push_back(s.p.data());
    g.push_back(s.g.data());
    m.push_back(s.m.data());
    v.push_back(s.v.data());
    if (a.amsgrad) vmax.push_back(s.vmax.data());
    sizes.push_back(static_cast<int64_t>(s.p.size()));
  }
  if (steps)
    for (double& s : *steps) step_ptrs.push_back(&s);
  AdamStepMulti::cpu(dtype_of<T>::value, p, g, m, v, vmax, step_ptrs, sizes, a);
}

// Relative agreement of a few ulp: the vector loop may contract a multiply and an add into an FMA
// where the reference rounds twice.
template <typename T>
void expect_close(const std::vector<T>& got, const std::vector<T>& want, const std::string& what) {
  const double tol = std::is_same_v<T, float> ? 2e-6 : 1e-14;
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], tol * (1.0 + std::abs(static_cast<double>(want[i])))) << what << " element " << i;
  }
}

// Sizes below and above the 16K-element split, off the lanes, and an empty tensor.
const std::vector<int64_t> kSizes = {5, 1, 16384 + 3, 0, 40000, 17, 128};

template <typename T>
void check_every_flag_combination() {
  struct Case {
    double wd;
    bool decoupled, amsgrad, maximize;
  };
  for (const Case c : {Case{0, false, false, false}, Case{0.1, true, false, false}, Case{0.1, false, false, false},
                       Case{0.1, true, true, false}, Case{0.1, true, false, true}, Case{0, false, true, true}}) {
    const AdamParams a = params(c.wd, c.decoupled, c.amsgrad, c.maximize, 3);
    std::vector<State<T>> want;
    for (size_t t = 0; t < kSizes.size(); ++t) want.push_back(random_state<T>(kSizes[t], static_cast<uint32_t>(t + 1)));
    const std::vector<State<T>> start = want;
    for (State<T>& s : want) {
      for (size_t i = 0; i < s.p.size(); ++i) reference_update(s.p[i], s.g[i], s.m[i], s.v[i], s.vmax[i], a);
    }
    std::vector<std::vector<State<T>>> by_threads;
    for (int threads : {1, 2}) {
      ScopedThreads scoped(threads);
      std::vector<State<T>> got = start;
      run(got, a);
      const std::string what = "wd " + std::to_string(c.wd) + (c.decoupled ? " decoupled" : "") +
                               (c.amsgrad ? " amsgrad" : "") + (c.maximize ? " maximize" : "") + ", " +
                               std::to_string(threads) + " threads";
      for (size_t t = 0; t < got.size(); ++t) {
        expect_close(got[t].p, want[t].p, what + ", tensor " + std::to_string(t) + " param");
        expect_close(got[t].m, want[t].m, what + ", tensor " + std::to_string(t) + " exp_avg");
        expect_close(got[t].v, want[t].v, what + ", tensor " + std::to_string(t) + " exp_avg_sq");
        if (c.amsgrad) expect_close(got[t].vmax, want[t].vmax, what + ", tensor " + std::to_string(t) + " max");
      }
      by_threads.push_back(got);
    }
    // Elementwise: the split over threads changes nothing, to the bit.
    for (size_t t = 0; t < kSizes.size(); ++t) EXPECT_EQ(by_threads[0][t].p, by_threads[1][t].p);
  }
}

TEST(CpuAdam, MultiTensorStepMatchesPyTorchsUpdateFloat32) { check_every_flag_combination<float>(); }
TEST(CpuAdam, MultiTensorStepMatchesPyTorchsUpdateFloat64) { check_every_flag_combination<double>(); }

TEST(CpuAdam, PerTensorStepCountsGiveEachItsBiasCorrectionAndAdvance) {
  ScopedThreads scoped(2);
  std::vector<State<double>> got = {random_state<double>(20000, 1), random_state<double>(30, 2)};
  std::vector<State<double>> want = got;
  std::vector<double> steps = {0, 4};  // the counts before this step
  run(got, params(0.1, true, false, false, 1), &steps);
  for (size_t t = 0; t < want.size(); ++t) {
    const AdamParams a = params(0.1, true, false, false, t == 0 ? 1 : 5);
    State<double>& s = want[t];
    for (size_t i = 0; i < s.p.size(); ++i) reference_update(s.p[i], s.g[i], s.m[i], s.v[i], s.vmax[i], a);
    expect_close(got[t].p, s.p, "tensor " + std::to_string(t));
  }
  EXPECT_EQ(steps, (std::vector<double>{1, 5}));
}

TEST(CpuAdam, StepSkippedByFoundInfChangesNothing) {
  std::vector<State<float>> got = {random_state<float>(100, 1)};
  const std::vector<State<float>> start = got;
  std::vector<double> steps = {2};
  const float found_inf = 1.0f;
  AdamParams a = params(0.1, true, false, false, 3);
  a.found_inf = &found_inf;
  run(got, a, &steps);
  EXPECT_EQ(got[0].p, start[0].p);
  EXPECT_EQ(got[0].m, start[0].m);
  EXPECT_EQ(steps[0], 2);
}

}  // namespace
}  // namespace colony::kernels::cpu
