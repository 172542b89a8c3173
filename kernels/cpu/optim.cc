#include "kernels/common/optim.h"

#include <type_traits>
#include <vector>

#include "kernels/common/dispatch.h"
#include "kernels/cpu/joined_ranges.h"
#include "kernels/cpu/parallel.h"

namespace colony::kernels::cpu {

namespace {

// One chunk of an SGD step. The options are a local copy and the arrays restrict: otherwise any
// store to p or buf might change them, and every element would reload the options.
template <typename T, typename Flags>
void sgd_range(T* __restrict__ p, const T* __restrict__ g, T* __restrict__ buf, int64_t begin, int64_t end,
               const SgdParams options, Flags flags) {
  if constexpr (std::is_same_v<Flags, RuntimeSgdFlags>) {
    T unused{};
    for (int64_t i = begin; i < end; ++i) sgd_update(p[i], g[i], buf ? buf[i] : unused, options, flags);
  } else if constexpr (Flags::kUsesBuffer) {
    for (int64_t i = begin; i < end; ++i) sgd_update(p[i], g[i], buf[i], options, flags);
  } else {
    T unused{};
    for (int64_t i = begin; i < end; ++i) sgd_update(p[i], g[i], unused, options, flags);
  }
}

void sgd_step(DType dtype, int64_t n, void* param, const void* grad, void* buf, const SgdParams& options) {
  if (step_skipped(options.found_inf)) return;
  const SgdParams s = sgd_params_for(options);
  COLONY_DISPATCH_FLOATING(dtype, "sgd_step", [&] {
    scalar_t* p = static_cast<scalar_t*>(param);
    const scalar_t* g = static_cast<const scalar_t*>(grad);
    scalar_t* b = static_cast<scalar_t*>(buf);
    auto run = [&](auto flags) {
      parallel_for(n, 1 << 15, [&](int64_t begin, int64_t end) { sgd_range(p, g, b, begin, end, s, flags); });
    };
    // The usual cases with their flags fixed, so the loop vectorizes (with the flags read per
    // element it did not: 3.7 % of a LeNet step for 62,006 parameters); the rest as they come.
    const bool momentum = s.momentum != 0, decay = s.weight_decay != 0;
    if (s.nesterov || s.maximize || (momentum && !b)) {
      run(RuntimeSgdFlags{});
    } else if (!momentum) {
      decay ? run(FixedSgdFlags<false, false, true>{}) : run(FixedSgdFlags<false, false, false>{});
    } else if (s.first_step) {
      decay ? run(FixedSgdFlags<true, true, true>{}) : run(FixedSgdFlags<true, true, false>{});
    } else {
      decay ? run(FixedSgdFlags<true, false, true>{}) : run(FixedSgdFlags<true, false, false>{});
    }
  });
}

// One Adam tensor, or a piece of one: its buffers and the scalars of its step.
template <typename T>
struct AdamSlice {
  T* p;
  const T* g;
  T* m;
  T* v;
  T* vmax;  // nullptr without amsgrad
  AdamParams a;  // as adam_params_for returns it
};

// Elements [begin, end) of one tensor. The options are a local copy and the arrays restrict, as in
// sgd_range, so the fixed-flag loops vectorize.
template <typename T, typename Flags>
void adam_range(T* __restrict__ p, const T* __restrict__ g, T* __restrict__ m, T* __restrict__ v,
                T* __restrict__ vmax, int64_t begin, int64_t end, const AdamParams a, Flags flags) {
  if constexpr (std::is_same_v<Flags, RuntimeAdamFlags>) {
    T unused{};
    for (int64_t i = begin; i < end; ++i) adam_update(p[i], g[i], m[i], v[i], vmax ? vmax[i] : unused, a, flags);
  } else {
    T unused{};
    for (int64_t i = begin; i < end; ++i) adam_update(p[i], g[i], m[i], v[i], unused, a, flags);
  }
}

template <typename T>
void adam_slice(const AdamSlice<T>& s, int64_t begin, int64_t end) {
  const AdamParams& a = s.a;
  auto run = [&](auto flags) { adam_range(s.p, s.g, s.m, s.v, s.vmax, begin, end, a, flags); };
  if (a.amsgrad || a.maximize) {
    run(RuntimeAdamFlags{});
  } else if (a.weight_decay == 0) {
    run(FixedAdamFlags<false, false>{});
  } else {
    a.decoupled_weight_decay ? run(FixedAdamFlags<true, true>{}) : run(FixedAdamFlags<true, false>{});
  }
}

// Every listed tensor's update in one parallel pass over their elements laid end to end
// (joined_ranges.h). Elementwise, so the result does not depend on the split.
template <typename T>
void adam_slices(const std::vector<AdamSlice<T>>& slices, const std::vector<int64_t>& sizes) {
  for_each_joined_range(sizes, kOptimStepGrain,
                        [&](size_t t, int64_t begin, int64_t end) { adam_slice(slices[t], begin, end); });
}

// `steps`, when not empty, holds each tensor's step count (float64): the bias corrections come
// from it (adam_params_for) and it advances, unless a.found_inf skips.
void adam_step_multi(DType dtype, const std::vector<void*>& params, const std::vector<const void*>& grads,
                     const std::vector<void*>& m, const std::vector<void*>& v, const std::vector<void*>& vmax,
                     const std::vector<void*>& steps, const std::vector<int64_t>& sizes, const AdamParams& a) {
  if (step_skipped(a.found_inf)) return;
  COLONY_DISPATCH_FLOATING(dtype, "adam_step", [&] {
    std::vector<AdamSlice<scalar_t>> slices(params.size());
    for (size_t i = 0; i < params.size(); ++i) {
      double* step = steps.empty() ? nullptr : static_cast<double*>(steps[i]);
      slices[i] = {static_cast<scalar_t*>(params[i]), static_cast<const scalar_t*>(grads[i]),
                   static_cast<scalar_t*>(m[i]),      static_cast<scalar_t*>(v[i]),
                   vmax.empty() ? nullptr : static_cast<scalar_t*>(vmax[i]), adam_params_for(a, step)};
    }
    adam_slices(slices, sizes);
  });
  for (void* step : steps) *static_cast<double*>(step) += 1;
}

}  // namespace
}  // namespace colony::kernels::cpu

namespace colony::kernels {

void SgdStep::cpu(DType dtype, int64_t n, void* param, const void* grad, void* buf, const SgdParams& s) {
  cpu::sgd_step(dtype, n, param, grad, buf, s);
}

void AdamStep::cpu(DType dtype, int64_t n, void* param, const void* grad, void* m, void* v, void* vmax,
                   const AdamParams& a) {
  cpu::adam_step_multi(dtype, {param}, {grad}, {m}, {v}, vmax ? std::vector<void*>{vmax} : std::vector<void*>{}, {}, {n},
                       a);
}

void SgdStepMulti::cpu(DType dtype, const std::vector<void*>& params, const std::vector<const void*>& grads,
                       const std::vector<void*>& bufs, const std::vector<int64_t>& sizes, const SgdParams& s) {
  for (size_t i = 0; i < params.size(); ++i) {
    cpu::sgd_step(dtype, sizes[i], params[i], grads[i], bufs.empty() ? nullptr : bufs[i], s);
  }
}

void AdamStepMulti::cpu(DType dtype, const std::vector<void*>& params, const std::vector<const void*>& grads,
                        const std::vector<void*>& m, const std::vector<void*>& v, const std::vector<void*>& vmax,
                        const std::vector<void*>& steps, const std::vector<int64_t>& sizes, const AdamParams& a) {
  cpu::adam_step_multi(dtype, params, grads, m, v, vmax, steps, sizes, a);
}

}  // namespace colony::kernels
