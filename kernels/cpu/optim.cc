#include "kernels/common/optim.h"

#include <algorithm>
#include <type_traits>
#include <vector>

#include "kernels/common/dispatch.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/simd.h"

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

// Elements a thread takes at least: 16K (about 5 us of AdamW's update, ~20 bytes moved per
// element) outweighs waking the other thread.
constexpr int64_t kAdamGrain = 1 << 14;

// Every listed tensor's update in one parallel pass over their elements laid end to end (PyTorch's
// fused / foreach AdamW): a model's many small tensors (biases, LayerNorm's 128 weights) are split
// over the threads together rather than each run on one thread, and the whole step costs one
// wake-up of the pool instead of one per tensor. Elementwise, so the result does not depend on the
// split.
template <typename T>
void adam_slices(const std::vector<AdamSlice<T>>& slices, const std::vector<int64_t>& sizes) {
  std::vector<int64_t> offsets(sizes.size() + 1, 0);  // where each tensor starts in the joined range
  for (size_t i = 0; i < sizes.size(); ++i) offsets[i + 1] = offsets[i] + sizes[i];
  parallel_for(offsets.back(), kAdamGrain, [&](int64_t begin, int64_t end) {
    size_t t = static_cast<size_t>(std::upper_bound(offsets.begin(), offsets.end(), begin) - offsets.begin()) - 1;
    for (; begin < end; ++t) {
      const int64_t stop = std::min(end, offsets[t + 1]);
      if (stop > begin) adam_slice(slices[t], begin - offsets[t], stop - offsets[t]);
      begin = stop;
    }
  });
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

// Gradient clipping's passes (SumSquaresMulti, ScaleMulti) cut every tensor into pieces of
// kClipPiece elements, all tensors' pieces in one list split over the threads: the shape alone
// decides the pieces, and each tensor's sum adds its pieces' sums in order, so the result does not
// depend on the thread count. One pass each replaced, for the char-level GPT's ~50 gradients, a
// product, a sum and a read-back per tensor (1.1 % of its 1-thread step's samples) and a scaling
// per tensor: the sums of squares took 89-113 us against 181-212 us, the scaling 96-109 against
// 100-107 (best of 200, the GPT's gradient sizes, 1 and 2 threads, caches warm or flushed, Intel
// Xeon VM under load 5, docs/benchmarks.md, branch gptstep, 2026-12-06). 16K elements: enough to
// outweigh a piece's bookkeeping, few enough that the ~50 tensors' pieces share out evenly over
// the threads.
constexpr int64_t kClipPiece = 1 << 14;

struct ClipPiece {
  size_t tensor;
  int64_t begin, end;
};

std::vector<ClipPiece> clip_pieces(const std::vector<int64_t>& sizes) {
  std::vector<ClipPiece> pieces;
  for (size_t t = 0; t < sizes.size(); ++t)
    for (int64_t b = 0; b < sizes[t]; b += kClipPiece) pieces.push_back({t, b, std::min(sizes[t], b + kClipPiece)});
  return pieces;
}

// The sum of x[i]^2 over [begin, end): blocks of 256 elements summed in float32 by four 8-float
// vector accumulators (8 terms a lane, so no more rounding than raw::sum's leaves), the blocks'
// sums in float64.
double sum_squares(const float* x, int64_t begin, int64_t end) {
  constexpr int64_t kBlock = 256;
  double total = 0;
  int64_t i = begin;
  for (; i + kBlock <= end; i += kBlock) {
    simd::Float8 acc[4] = {};
    for (int64_t j = i; j < i + kBlock; j += 32) {
      COLONY_UNROLL
      for (int k = 0; k < 4; ++k) {
        const simd::Float8 v = simd::load(x + j + 8 * k);
        acc[k] += v * v;
      }
    }
    total += static_cast<double>(simd::hsum<float>((acc[0] + acc[1]) + (acc[2] + acc[3])));
  }
  for (; i < end; ++i) total += static_cast<double>(x[i] * x[i]);
  return total;
}

double sum_squares(const double* x, int64_t begin, int64_t end) {
  simd::Double4 acc[4] = {};
  int64_t i = begin;
  for (; i + 16 <= end; i += 16) {
    COLONY_UNROLL
    for (int k = 0; k < 4; ++k) {
      const simd::Double4 v = simd::load(x + i + 4 * k);
      acc[k] += v * v;
    }
  }
  double total = simd::hsum<double>((acc[0] + acc[1]) + (acc[2] + acc[3]));
  for (; i < end; ++i) total += x[i] * x[i];
  return total;
}

// x[begin, end) *= f, in vectors as above.
template <typename T>
void scale(T* x, int64_t begin, int64_t end, T f) {
  constexpr int L = simd::kLanes<T>;
  const simd::Vec<T> fv = simd::splat(f);
  int64_t i = begin;
  for (; i + L <= end; i += L) simd::store(x + i, simd::load(x + i) * fv);
  for (; i < end; ++i) x[i] = x[i] * f;
}

void sum_squares_multi(DType dtype, const std::vector<const void*>& tensors, const std::vector<int64_t>& sizes,
                       double* sums) {
  const std::vector<ClipPiece> pieces = clip_pieces(sizes);
  std::vector<double> partial(pieces.size());
  COLONY_DISPATCH_FLOAT32_64(dtype, "sum_squares_multi", [&] {
    parallel_for(static_cast<int64_t>(pieces.size()), 2, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        const ClipPiece& piece = pieces[static_cast<size_t>(p)];
        partial[static_cast<size_t>(p)] =
            sum_squares(static_cast<const scalar_t*>(tensors[piece.tensor]), piece.begin, piece.end);
      }
    });
  });
  for (size_t t = 0; t < sizes.size(); ++t) sums[t] = 0;
  for (size_t p = 0; p < pieces.size(); ++p) sums[pieces[p].tensor] += partial[p];
}

void scale_multi(DType dtype, const std::vector<void*>& tensors, const std::vector<int64_t>& sizes, double factor) {
  const std::vector<ClipPiece> pieces = clip_pieces(sizes);
  COLONY_DISPATCH_FLOAT32_64(dtype, "scale_multi", [&] {
    const scalar_t f = static_cast<scalar_t>(factor);
    parallel_for(static_cast<int64_t>(pieces.size()), 2, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        const ClipPiece& piece = pieces[static_cast<size_t>(p)];
        scale(static_cast<scalar_t*>(tensors[piece.tensor]), piece.begin, piece.end, f);
      }
    });
  });
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

void SumSquaresMulti::cpu(DType dtype, const std::vector<const void*>& tensors, const std::vector<int64_t>& sizes,
                          double* sums) {
  cpu::sum_squares_multi(dtype, tensors, sizes, sums);
}

void ScaleMulti::cpu(DType dtype, const std::vector<void*>& tensors, const std::vector<int64_t>& sizes, double factor) {
  cpu::scale_multi(dtype, tensors, sizes, factor);
}

}  // namespace colony::kernels
