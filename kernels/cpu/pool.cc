#include "kernels/common/pool.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/common/dispatch.h"
#include "kernels/common/half.h"
#include "kernels/common/pool_window.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/simd.h"

namespace colony::kernels::cpu {
namespace {

// Planes per chunk: at least 32K input elements (~10 us), as for elementwise ops. Pooling is bound
// by memory traffic, but each core brings its own caches: split over 2 threads, LeNet's pools at
// batch 32 (150K and 51K input elements) ran 1.4-1.9x faster in benchmarks/conv_bench.cc (the
// first pool's forward 90 -> 50 us, its backward 68-88 -> 46-53 us; AMD EPYC, 2 cores,
// 2026-12-04). With 256K elements per chunk they had run on one thread while the other waited.
int64_t plane_grain(int64_t plane_elements) { return std::max<int64_t>(1, 32768 / std::max<int64_t>(1, plane_elements)); }

template <typename T> struct BitsOf;
template <> struct BitsOf<float> { using type = uint32_t; };
template <> struct BitsOf<double> { using type = uint64_t; };

// best, at = v, offset when v beats best: greater, or a NaN (which always takes over). Written with
// masks because on real activations each comparison is a coin toss, and GCC turns the plain
// `if` (or a ?: on floats) into a mispredicted branch.
template <typename T>
inline void take_if_beats(T v, int64_t offset, T& best, int64_t& at) {
  using U = typename BitsOf<T>::type;
  const U take = static_cast<U>((v > best) | (v != v));
  const U mask = U(0) - take;
  U v_bits, best_bits;
  std::memcpy(&v_bits, &v, sizeof(T));
  std::memcpy(&best_bits, &best, sizeof(T));
  best_bits = (v_bits & mask) | (best_bits & ~mask);
  std::memcpy(&best, &best_bits, sizeof(T));
  const int64_t at_mask = -static_cast<int64_t>(take);
  at = (offset & at_mask) | (at & ~at_mask);
}

// bfloat16 max pooling without widening the tensors: a window's maximum is one of its elements,
// so the values are compared as float32 (a bfloat16's bits shifted up 16) and the winner's bits
// stored back by shifting down, exactly, NaN payloads included. LeNet's `--amp bf16` step had
// widened the whole input to float32 and rounded the output back (two extra passes over conv1's
// 150K-element output at batch 32). Compute<S> is the type comparisons run in.
template <typename S> struct ComputeOf { using type = S; };
template <> struct ComputeOf<BFloat16> { using type = float; };
template <typename S> using Compute = typename ComputeOf<S>::type;

typedef uint16_t Bf16x8 __attribute__((vector_size(16)));
typedef uint32_t Uint32x8 __attribute__((vector_size(32)));

template <typename S>
inline simd::Vec<Compute<S>> load_widened(const S* p) {
  return simd::load(p);
}
template <>
inline simd::Float8 load_widened(const BFloat16* p) {
  Bf16x8 h;
  std::memcpy(&h, p, sizeof(h));
  const Uint32x8 bits = __builtin_convertvector(h, Uint32x8) << 16;
  simd::Float8 v;
  std::memcpy(&v, &bits, sizeof(v));
  return v;
}
template <typename S>
inline void store_exact(S* p, const simd::Vec<Compute<S>>& v) {
  simd::store(p, v);
}
template <>
inline void store_exact(BFloat16* p, const simd::Float8& v) {
  Uint32x8 bits;
  std::memcpy(&bits, &v, sizeof(bits));
  const Bf16x8 h = __builtin_convertvector(bits >> 16, Bf16x8);
  std::memcpy(static_cast<void*>(p), &h, sizeof(h));
}
inline float widen(BFloat16 v) { return static_cast<float>(v); }
inline float widen(float v) { return v; }
inline double widen(double v) { return v; }
// v is a widened element of type S (a maximum): back to S without rounding.
template <typename S>
inline S narrow_exact(Compute<S> v) {
  if constexpr (std::is_same_v<S, BFloat16>) {
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof(bits));
    return BFloat16::from_bits(static_cast<uint16_t>(bits >> 16));
  } else {
    return v;
  }
}

// Outputs [ox, ox + lanes) of one row of the 2 x 2, stride 2 window (LeNet's, and most CNNs'):
// r0 and r1 point at input column 2 * ox of the window's two rows and hold 2 * lanes elements.
// Windows are independent, so one vector lane per window replaces the compare-and-branch chain.
template <typename S, typename T = Compute<S>>
inline void max_2x2_lanes(const S* r0, const S* r1, int64_t w, simd::Vec<T>& best, simd::Mask<T>& at) {
  using simd::Mask;
  using simd::Vec;
  constexpr int L = simd::kLanes<T>;
  using Offset = typename std::remove_reference_t<decltype(at[0])>;
  const Vec<T> a0 = load_widened(r0), a1 = load_widened(r0 + L), b0 = load_widened(r1), b1 = load_widened(r1 + L);
  best = simd::evens(a0, a1);
  at = Mask<T>{};
  const Vec<T> candidates[3] = {simd::odds(a0, a1), simd::evens(b0, b1), simd::odds(b0, b1)};
  const Offset offsets[3] = {1, static_cast<Offset>(w), static_cast<Offset>(w + 1)};
  COLONY_UNROLL
  for (int k = 0; k < 3; ++k) {
    const Vec<T>& v = candidates[k];
    const Mask<T> take = (v > best) | (v != v);  // a NaN always takes over
    best = take ? v : best;
    at = take ? simd::splat(offsets[k]) : at;
  }
}

// idx[l] = base + 2 * l + at[l] for the vector's lanes, as int64.
template <typename Offsets>
inline void store_window_indices(int64_t* idx, int64_t base, const Offsets& at) {
  constexpr int L = static_cast<int>(sizeof(Offsets) / sizeof(at[0]));
  typedef int64_t Wide __attribute__((vector_size(L * 8)));
  Offsets lane2;
  COLONY_UNROLL
  for (int l = 0; l < L; ++l) lane2[l] = 2 * l;
  const Wide v = __builtin_convertvector(lane2 + at, Wide) + base;
  std::memcpy(idx, &v, sizeof(v));
}

template <typename S, typename T = Compute<S>>
void max_pool_2x2(const Pool2dGeometry& g, const S* x, S* y, int64_t* idx) {
  constexpr int L = simd::kLanes<T>;
  const int64_t W = g.in_w, Ho = g.out_h, Wo = g.out_w;
  const S* x_end = x + g.planes * g.in_h * W;
  parallel_for(g.planes, plane_grain(g.in_h * W), [&](int64_t p0, int64_t p1) {
    S tail0[2 * L], tail1[2 * L];
    for (int64_t p = p0; p < p1; ++p) {
      const S* xp = x + p * g.in_h * W;
      S* yp = y + p * Ho * Wo;
      int64_t* ip = idx + p * Ho * Wo;
      for (int64_t oy = 0; oy < Ho; ++oy) {
        const S* r0 = xp + 2 * oy * W;
        const S* r1 = r0 + W;
        for (int64_t ox = 0; ox < Wo; ox += L) {
          const int64_t n = std::min<int64_t>(L, Wo - ox);
          const S* s0 = r0 + 2 * ox;
          const S* s1 = r1 + 2 * ox;
          // A short last group of windows reads past its row into the next one (those lanes are
          // dropped); only at the very end of the input does it go through a padded copy.
          if (n < L && s1 + 2 * L > x_end) {
            std::fill(tail0, tail0 + 2 * L, S(0.0f));
            std::fill(tail1, tail1 + 2 * L, S(0.0f));
            std::memcpy(static_cast<void*>(tail0), s0, sizeof(S) * 2 * n);
            std::memcpy(static_cast<void*>(tail1), s1, sizeof(S) * 2 * n);
            s0 = tail0;
            s1 = tail1;
          }
          simd::Vec<T> best;
          simd::Mask<T> at;
          max_2x2_lanes(s0, s1, W, best, at);
          const int64_t o = oy * Wo + ox;
          // Whole vectors are stored unless they would pass the end of this plane (another
          // chunk's, or past the array): lanes beyond a short row land in the next row of the
          // plane, which the next groups overwrite. Extracting lanes one by one cost more than
          // finding the maxima.
          if (o + L <= Ho * Wo) {
            store_exact(yp + o, best);
            store_window_indices(ip + o, 2 * oy * W + 2 * ox, at);
          } else {
            for (int64_t l = 0; l < n; ++l) {
              yp[o + l] = narrow_exact<S>(best[l]);
              ip[o + l] = 2 * oy * W + 2 * (ox + l) + at[l];
            }
          }
        }
      }
    }
  });
}

// Lanes over output columns: a window tap's input for `Stride`-apart outputs, from p (lane 0's
// element; stride 2 reads one element past the last lane's).
template <int Stride, typename S, typename T = Compute<S>>
inline simd::Vec<T> load_lanes(const S* p) {
  if constexpr (Stride == 1) {
    return load_widened(p);
  } else {
    static_assert(Stride == 2, "strides 1 and 2 have vector loops");
    return simd::evens(load_widened(p), load_widened(p + simd::kLanes<T>));
  }
}

// The vector loops take output columns whose windows lie inside the input row (inner_outputs),
// strides 1 and 2; the rest go through the scalar windows. The reach, stride - 1: a stride-2 tap's
// two loads end one element past the last lane's.
inline InnerOutputs vector_columns(const Pool3dGeometry& g, int64_t dilation_w) {
  if (g.stride_w != 1 && g.stride_w != 2) return {0, 0};
  return inner_outputs(g.in_w, g.out_w, g.kernel_w, g.stride_w, g.pad_w, dilation_w, g.stride_w - 1);
}

// Max pooling of outputs [ox, ox + lanes) of one output row: the scalar loop's taps and take rule
// (take_if_beats) lane by lane, so the same values and indices. Indices run in the lanes' integer
// type (int32 for float32: the caller checks the volume fits), widened to int64 when stored.
template <int Stride, typename S, typename T = Compute<S>>
inline void max_lanes(const Pool3dGeometry& g, const S* xp, MaxPoolSpan sd, MaxPoolSpan sh, int64_t ox, S* y,
                      int64_t* idx) {
  using M = simd::Mask<T>;
  using Index = std::remove_reference_t<decltype(std::declval<M&>()[0])>;
  constexpr int L = simd::kLanes<T>;
  M lane_columns;
  COLONY_UNROLL
  for (int l = 0; l < L; ++l) lane_columns[l] = static_cast<Index>(l * Stride);
  const int64_t H = g.in_h, W = g.in_w, c0 = ox * Stride - g.pad_w;
  simd::Vec<T> best = simd::splat(-std::numeric_limits<T>::infinity());
  M at = simd::splat(static_cast<Index>((sd.first * H + sh.first) * W + c0)) + lane_columns;
  for (int64_t iz = sd.first; iz < sd.end; iz += g.dilation_d) {
    for (int64_t ih = sh.first; ih < sh.end; ih += g.dilation_h) {
      const int64_t row = (iz * H + ih) * W + c0;
      for (int64_t kx = 0; kx < g.kernel_w; ++kx) {
        const int64_t c = row + kx * g.dilation_w;
        const simd::Vec<T> v = load_lanes<Stride>(xp + c);
        const M take = (v > best) | (v != v);  // a NaN always takes over
        best = take ? v : best;
        at = take ? simd::splat(static_cast<Index>(c)) + lane_columns : at;
      }
    }
  }
  store_exact(y, best);
  typedef int64_t Wide __attribute__((vector_size(L * 8)));
  const Wide wide = __builtin_convertvector(at, Wide);
  std::memcpy(idx, &wide, sizeof(wide));
}

// The general max pooling, over volumes (the 2-D kernel's planes are depth 1): each output row's
// inner columns by vectors of outputs (max_lanes), its edges and other strides window by window.
template <typename S, typename T = Compute<S>>
void max_pool_volume(const Pool3dGeometry& g, const S* x, S* y, int64_t* idx) {
  constexpr int L = simd::kLanes<T>;
  const int64_t D = g.in_d, H = g.in_h, W = g.in_w, Do = g.out_d, Ho = g.out_h, Wo = g.out_w;
  using Index = std::remove_reference_t<decltype(std::declval<simd::Mask<T>&>()[0])>;
  const bool indices_fit = g.in_volume() <= std::numeric_limits<Index>::max();
  const InnerOutputs inner = indices_fit ? vector_columns(g, g.dilation_w) : InnerOutputs{0, 0};
  parallel_for(g.planes, plane_grain(g.in_volume()), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const S* xp = x + p * g.in_volume();
      for (int64_t oz = 0; oz < Do; ++oz) {
        const MaxPoolSpan sd = max_pool_span(oz, D, g.kernel_d, g.stride_d, g.pad_d, g.dilation_d);
        for (int64_t oy = 0; oy < Ho; ++oy) {
          const MaxPoolSpan sh = max_pool_span(oy, H, g.kernel_h, g.stride_h, g.pad_h, g.dilation_h);
          const int64_t o_row = ((p * Do + oz) * Ho + oy) * Wo;
          auto one = [&](int64_t ox) {
            const MaxPoolSpan sw = max_pool_span(ox, W, g.kernel_w, g.stride_w, g.pad_w, g.dilation_w);
            T best = -std::numeric_limits<T>::infinity();
            int64_t at = (sd.first * H + sh.first) * W + sw.first;
            for (int64_t iz = sd.first; iz < sd.end; iz += g.dilation_d) {
              for (int64_t ih = sh.first; ih < sh.end; ih += g.dilation_h) {
                const int64_t row = (iz * H + ih) * W;
                for (int64_t iw = sw.first; iw < sw.end; iw += g.dilation_w) {
                  take_if_beats(widen(xp[row + iw]), row + iw, best, at);
                }
              }
            }
            y[o_row + ox] = narrow_exact<S>(best);
            idx[o_row + ox] = at;
          };
          int64_t ox = 0;
          for (; ox < inner.first; ++ox) one(ox);
          if (g.stride_w == 1) {
            for (; ox + L <= inner.end; ox += L) max_lanes<1>(g, xp, sd, sh, ox, y + o_row + ox, idx + o_row + ox);
          } else {
            for (; ox + L <= inner.end; ox += L) max_lanes<2>(g, xp, sd, sh, ox, y + o_row + ox, idx + o_row + ox);
          }
          for (; ox < Wo; ++ox) one(ox);
        }
      }
    }
  });
}

template <typename S, typename T = Compute<S>>
void max_pool_forward(const Pool2dGeometry& g, const S* x, S* y, int64_t* idx) {
  if (g.kernel_h == 2 && g.kernel_w == 2 && g.stride_h == 2 && g.stride_w == 2 && g.pad_h == 0 && g.pad_w == 0 &&
      g.dilation_h == 1 && g.dilation_w == 1 && 2 * g.out_h <= g.in_h && 2 * g.out_w <= g.in_w) {
    max_pool_2x2(g, x, y, idx);
    return;
  }
  max_pool_volume(as_3d(g), x, y, idx);
}

// grad_x is zero but at each window's maximum, where the window's grad_y is added. bfloat16
// gradients are summed in float32 and rounded once, as the widened kernel did: where windows may
// overlap (several gradients into one element) in a float32 plane; where they cannot (stride at
// least the window's extent, as LeNet's 2 x 2 stride 2), 0 + g rounded is g itself, so its bits
// are stored (a -0 as +0, a NaN quieted: what the sum and the rounding give). The float32 plane and
// its rounding had made the bfloat16 backward slower than float32's (perf, LeNet, 1 thread: 4.0 %
// of the step against 3.4 %).
// Out of the loops: built inline, the message's strings had made the check a call per element.
[[noreturn]] __attribute__((noinline)) void throw_index_outside_plane(const Pool2dGeometry& g, int64_t o, int64_t at) {
  throw std::out_of_range("max_pool2d_backward: index " + std::to_string(at) + " at output element " +
                          std::to_string(o) + " is outside its input plane of " + std::to_string(g.in_h) + " x " +
                          std::to_string(g.in_w) + " elements");
}

template <typename S, typename T = Compute<S>>
void max_pool_backward(const Pool2dGeometry& g, const S* gy, const int64_t* idx, S* gx) {
  constexpr bool kRounds = !std::is_same_v<S, T>;
  const bool disjoint = g.stride_h >= (g.kernel_h - 1) * g.dilation_h + 1 &&
                        g.stride_w >= (g.kernel_w - 1) * g.dilation_w + 1;
  const int64_t plane_in = g.in_h * g.in_w, plane_out = g.out_h * g.out_w;
  parallel_for(g.planes, plane_grain(plane_in), [&](int64_t p0, int64_t p1) {
    std::vector<T> sums(kRounds && !disjoint ? plane_in : 0);
    for (int64_t p = p0; p < p1; ++p) {
      S* out = gx + p * plane_in;
      if constexpr (kRounds) {
        if (disjoint) {
          std::memset(static_cast<void*>(out), 0, sizeof(S) * plane_in);
          for (int64_t o = p * plane_out; o < (p + 1) * plane_out; ++o) {
            if (idx[o] < 0 || idx[o] >= plane_in) throw_index_outside_plane(g, o, idx[o]);
            const uint16_t b = gy[o].bits;
            const bool nan = (b & 0x7fffu) > 0x7f80u;
            out[idx[o]] = S::from_bits(b == 0x8000u ? uint16_t(0) : nan ? static_cast<uint16_t>(b | 0x40u) : b);
          }
          continue;
        }
      }
      T* sum;
      if constexpr (kRounds) {
        sum = sums.data();
      } else {
        sum = out;
      }
      std::fill(sum, sum + plane_in, T(0));
      for (int64_t o = p * plane_out; o < (p + 1) * plane_out; ++o) {
        if (idx[o] < 0 || idx[o] >= plane_in) throw_index_outside_plane(g, o, idx[o]);
        sum[idx[o]] += widen(gy[o]);
      }
      if constexpr (kRounds) {
        for (int64_t i = 0; i < plane_in; ++i) out[i] = S(sum[i]);
      }
    }
  });
}

// Average pooling of outputs [ox, ox + lanes) of one output row whose windows lie inside the input
// row (vector_columns): the scalar loop's sums lane by lane, in its order, and its division, so
// the same values. `win` is the window of any of them (only their columns differ).
template <int Stride, typename T>
inline void avg_lanes(const Pool3dGeometry& g, const T* xp, const AvgPoolWindow& win, int64_t ox, T* y) {
  const int64_t H = g.in_h, W = g.in_w, c0 = ox * Stride - g.pad_w;
  simd::Vec<T> sum = simd::splat(T(0));
  for (int64_t iz = win.d0; iz < win.d1; ++iz) {
    for (int64_t ih = win.h0; ih < win.h1; ++ih) {
      const T* row = xp + (iz * H + ih) * W + c0;
      for (int64_t kx = 0; kx < g.kernel_w; ++kx) sum += load_lanes<Stride>(row + kx);
    }
  }
  simd::store(y, sum / simd::splat(static_cast<T>(win.divisor)));
}

// The backward's lanes: each output's share added to its window's inputs. Stride 2 adds to 2 x
// lanes elements with zeros between the shares (x + 0 is x: a gradient sum is never -0).
template <int Stride, typename T>
inline void avg_lanes_backward(const Pool3dGeometry& g, const T* gy, const AvgPoolWindow& win, int64_t ox, T* gxp) {
  constexpr int L = simd::kLanes<T>;
  const int64_t H = g.in_h, W = g.in_w, c0 = ox * Stride - g.pad_w;
  const simd::Vec<T> share = simd::load(gy) / simd::splat(static_cast<T>(win.divisor));
  const simd::Vec<T> zero = simd::splat(T(0));
  const simd::Vec<T> low = simd::zip_lo(share, zero), high = simd::zip_hi(share, zero);
  for (int64_t iz = win.d0; iz < win.d1; ++iz) {
    for (int64_t ih = win.h0; ih < win.h1; ++ih) {
      T* row = gxp + (iz * H + ih) * W + c0;
      for (int64_t kx = 0; kx < g.kernel_w; ++kx) {
        T* p = row + kx;
        if constexpr (Stride == 1) {
          simd::store(p, simd::load(p) + share);
        } else {
          simd::store(p, simd::load(p) + low);
          simd::store(p + L, simd::load(p + L) + high);
        }
      }
    }
  }
}

// Runs one(ox) for the output columns of a row outside the vector loops and lanes<Stride>(ox) for
// each vector of them inside, where the row's window is not empty (an empty one, only possible in
// the padding, is the scalar loop's 0).
template <typename T, typename One, typename Lanes>
inline void avg_row(const Pool3dGeometry& g, const InnerOutputs& inner, const AvgPoolWindow& win, const One& one,
                    const Lanes& lanes) {
  constexpr int L = simd::kLanes<T>;
  int64_t ox = 0;
  if (win.d0 < win.d1 && win.h0 < win.h1) {
    for (; ox < inner.first; ++ox) one(ox);
    if (g.stride_w == 1) {
      for (; ox + L <= inner.end; ox += L) lanes(std::integral_constant<int, 1>(), ox);
    } else {
      for (; ox + L <= inner.end; ox += L) lanes(std::integral_constant<int, 2>(), ox);
    }
  }
  for (; ox < g.out_w; ++ox) one(ox);
}

template <typename T>
void avg_pool_forward(const Pool3dGeometry& g, bool include_pad, int64_t divisor_override, const T* x, T* y) {
  const int64_t H = g.in_h, W = g.in_w, Do = g.out_d, Ho = g.out_h, Wo = g.out_w;
  const InnerOutputs inner = vector_columns(g, 1);
  parallel_for(g.planes, plane_grain(g.in_volume()), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const T* xp = x + p * g.in_volume();
      for (int64_t oz = 0; oz < Do; ++oz) {
        for (int64_t oy = 0; oy < Ho; ++oy) {
          T* yr = y + ((p * Do + oz) * Ho + oy) * Wo;
          auto one = [&](int64_t ox) {
            const AvgPoolWindow win = avg_pool_window(g, oz, oy, ox, include_pad, divisor_override);
            T sum = T(0);
            for (int64_t iz = win.d0; iz < win.d1; ++iz)
              for (int64_t ih = win.h0; ih < win.h1; ++ih)
                for (int64_t iw = win.w0; iw < win.w1; ++iw) sum += xp[(iz * H + ih) * W + iw];
            // An empty window (only possible in the padding) averages to 0, as in PyTorch.
            yr[ox] = win.empty() ? T(0) : sum / static_cast<T>(win.divisor);
          };
          const AvgPoolWindow row_win =
              avg_pool_window(g, oz, oy, std::min(inner.first, Wo - 1), include_pad, divisor_override);
          avg_row<T>(g, inner, row_win, one,
                     [&](auto stride, int64_t ox) { avg_lanes<decltype(stride)::value>(g, xp, row_win, ox, yr + ox); });
        }
      }
    }
  });
}

template <typename T>
void avg_pool_backward(const Pool3dGeometry& g, bool include_pad, int64_t divisor_override, const T* gy, T* gx) {
  const int64_t H = g.in_h, W = g.in_w, Do = g.out_d, Ho = g.out_h, Wo = g.out_w;
  const InnerOutputs inner = vector_columns(g, 1);
  parallel_for(g.planes, plane_grain(g.in_volume()), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      T* gxp = gx + p * g.in_volume();
      std::fill(gxp, gxp + g.in_volume(), T(0));
      for (int64_t oz = 0; oz < Do; ++oz) {
        for (int64_t oy = 0; oy < Ho; ++oy) {
          const T* gyr = gy + ((p * Do + oz) * Ho + oy) * Wo;
          auto one = [&](int64_t ox) {
            const AvgPoolWindow win = avg_pool_window(g, oz, oy, ox, include_pad, divisor_override);
            const T share = gyr[ox] / static_cast<T>(win.divisor);
            for (int64_t iz = win.d0; iz < win.d1; ++iz)
              for (int64_t ih = win.h0; ih < win.h1; ++ih)
                for (int64_t iw = win.w0; iw < win.w1; ++iw) gxp[(iz * H + ih) * W + iw] += share;
          };
          const AvgPoolWindow row_win =
              avg_pool_window(g, oz, oy, std::min(inner.first, Wo - 1), include_pad, divisor_override);
          avg_row<T>(g, inner, row_win, one,
                     [&](auto stride, int64_t ox) { avg_lanes_backward<decltype(stride)::value>(g, gyr + ox, row_win, ox, gxp); });
        }
      }
    }
  });
}

// Adaptive windows along the three dims of output (oz, oy, ox).
struct AdaptiveWindow {
  int64_t d0, d1, h0, h1, w0, w1;
  int64_t size() const { return (d1 - d0) * (h1 - h0) * (w1 - w0); }
};
inline AdaptiveWindow adaptive_window(const Pool3dGeometry& g, int64_t oz, int64_t oy, int64_t ox) {
  return {adaptive_start(oz, g.in_d, g.out_d), adaptive_end(oz, g.in_d, g.out_d),
          adaptive_start(oy, g.in_h, g.out_h), adaptive_end(oy, g.in_h, g.out_h),
          adaptive_start(ox, g.in_w, g.out_w), adaptive_end(ox, g.in_w, g.out_w)};
}

template <typename T>
void adaptive_forward(const Pool3dGeometry& g, const T* x, T* y) {
  const int64_t H = g.in_h, W = g.in_w, Do = g.out_d, Ho = g.out_h, Wo = g.out_w;
  parallel_for(g.planes, plane_grain(g.in_volume()), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const T* xp = x + p * g.in_volume();
      for (int64_t oz = 0; oz < Do; ++oz) {
        for (int64_t oy = 0; oy < Ho; ++oy) {
          for (int64_t ox = 0; ox < Wo; ++ox) {
            const AdaptiveWindow win = adaptive_window(g, oz, oy, ox);
            T sum = T(0);
            if (win.w1 - win.w0 == W) {
              // Whole rows (global pooling's one window): each depth's are contiguous, summed by
              // vectors (a plain loop is one dependent add per element).
              for (int64_t iz = win.d0; iz < win.d1; ++iz)
                sum += simd::sum(xp + (iz * H + win.h0) * W, (win.h1 - win.h0) * W);
            } else {
              for (int64_t iz = win.d0; iz < win.d1; ++iz)
                for (int64_t ih = win.h0; ih < win.h1; ++ih)
                  for (int64_t iw = win.w0; iw < win.w1; ++iw) sum += xp[(iz * H + ih) * W + iw];
            }
            y[((p * Do + oz) * Ho + oy) * Wo + ox] = sum / static_cast<T>(win.size());
          }
        }
      }
    }
  });
}

template <typename T>
void adaptive_backward(const Pool3dGeometry& g, const T* gy, T* gx) {
  const int64_t H = g.in_h, W = g.in_w, Do = g.out_d, Ho = g.out_h, Wo = g.out_w;
  parallel_for(g.planes, plane_grain(g.in_volume()), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      T* gxp = gx + p * g.in_volume();
      if (g.out_volume() == 1) {
        // Global pooling: every input gets the one share, in one pass (+ 0 as the sum below gives
        // it: a -0 share as +0).
        std::fill(gxp, gxp + g.in_volume(), gy[p] / static_cast<T>(g.in_volume()) + T(0));
        continue;
      }
      std::fill(gxp, gxp + g.in_volume(), T(0));
      for (int64_t oz = 0; oz < Do; ++oz) {
        for (int64_t oy = 0; oy < Ho; ++oy) {
          for (int64_t ox = 0; ox < Wo; ++ox) {
            const AdaptiveWindow win = adaptive_window(g, oz, oy, ox);
            const T share = gy[((p * Do + oz) * Ho + oy) * Wo + ox] / static_cast<T>(win.size());
            for (int64_t iz = win.d0; iz < win.d1; ++iz)
              for (int64_t ih = win.h0; ih < win.h1; ++ih)
                for (int64_t iw = win.w0; iw < win.w1; ++iw) gxp[(iz * H + ih) * W + iw] += share;
          }
        }
      }
    }
  });
}

template <typename T>
void adaptive_max_forward(const Pool3dGeometry& g, const T* x, T* y, int64_t* idx) {
  const int64_t H = g.in_h, W = g.in_w, Do = g.out_d, Ho = g.out_h, Wo = g.out_w;
  parallel_for(g.planes, plane_grain(g.in_volume()), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const T* xp = x + p * g.in_volume();
      for (int64_t oz = 0; oz < Do; ++oz) {
        for (int64_t oy = 0; oy < Ho; ++oy) {
          for (int64_t ox = 0; ox < Wo; ++ox) {
            const AdaptiveWindow win = adaptive_window(g, oz, oy, ox);
            T best = -std::numeric_limits<T>::infinity();
            int64_t at = (win.d0 * H + win.h0) * W + win.w0;
            for (int64_t iz = win.d0; iz < win.d1; ++iz)
              for (int64_t ih = win.h0; ih < win.h1; ++ih)
                for (int64_t iw = win.w0; iw < win.w1; ++iw) {
                  const int64_t i = (iz * H + ih) * W + iw;
                  take_if_beats(xp[i], i, best, at);
                }
            const int64_t o = ((p * Do + oz) * Ho + oy) * Wo + ox;
            y[o] = best;
            idx[o] = at;
          }
        }
      }
    }
  });
}

// Each plane's window starts along each dim (fractional_start), then max pooling over them.
template <typename T>
void fractional_max_forward(const Pool3dGeometry& g, int sample_dims, const T* samples, const T* x, T* y,
                            int64_t* idx) {
  const int64_t H = g.in_h, W = g.in_w, Do = g.out_d, Ho = g.out_h, Wo = g.out_w;
  parallel_for(g.planes, plane_grain(g.in_volume()), [&](int64_t p0, int64_t p1) {
    std::vector<int64_t> starts_d(Do), starts_h(Ho), starts_w(Wo);
    for (int64_t p = p0; p < p1; ++p) {
      const T* s = samples + p * sample_dims;
      const T sd = sample_dims == 3 ? s[0] : T(0), sh = s[1], sw = sample_dims == 3 ? s[2] : s[0];
      for (int64_t o = 0; o < Do; ++o) starts_d[o] = fractional_start(sd, o, g.in_d, Do, g.kernel_d);
      for (int64_t o = 0; o < Ho; ++o) starts_h[o] = fractional_start(sh, o, H, Ho, g.kernel_h);
      for (int64_t o = 0; o < Wo; ++o) starts_w[o] = fractional_start(sw, o, W, Wo, g.kernel_w);
      const T* xp = x + p * g.in_volume();
      for (int64_t oz = 0; oz < Do; ++oz) {
        for (int64_t oy = 0; oy < Ho; ++oy) {
          for (int64_t ox = 0; ox < Wo; ++ox) {
            const int64_t z0 = starts_d[oz], h0 = starts_h[oy], w0 = starts_w[ox];
            T best = -std::numeric_limits<T>::infinity();
            int64_t at = (z0 * H + h0) * W + w0;
            for (int64_t iz = z0; iz < z0 + g.kernel_d; ++iz)
              for (int64_t ih = h0; ih < h0 + g.kernel_h; ++ih)
                for (int64_t iw = w0; iw < w0 + g.kernel_w; ++iw) {
                  const int64_t i = (iz * H + ih) * W + iw;
                  take_if_beats(xp[i], i, best, at);
                }
            const int64_t o = ((p * Do + oz) * Ho + oy) * Wo + ox;
            y[o] = best;
            idx[o] = at;
          }
        }
      }
    }
  });
}

}  // namespace

}  // namespace colony::kernels::cpu

namespace colony::kernels {

using namespace cpu;  // NOLINT(build/namespaces): the helpers above

void MaxPool2dForward::cpu(DType dtype, const Pool2dGeometry& g, const void* x, void* y, int64_t* indices) {
  if (dtype == DType::BFloat16) {
    max_pool_forward(g, static_cast<const BFloat16*>(x), static_cast<BFloat16*>(y), indices);
    return;
  }
  COLONY_DISPATCH_FLOAT32_64(dtype, "max_pool2d", [&] {
    using T = scalar_t;
    max_pool_forward<T>(g, static_cast<const T*>(x), static_cast<T*>(y), indices);
  });
}

void MaxPool2dBackward::cpu(DType dtype, const Pool2dGeometry& g, const void* grad_y, const int64_t* indices,
                            void* grad_x) {
  if (dtype == DType::BFloat16) {
    max_pool_backward(g, static_cast<const BFloat16*>(grad_y), indices, static_cast<BFloat16*>(grad_x));
    return;
  }
  COLONY_DISPATCH_FLOAT32_64(dtype, "max_pool2d_backward", [&] {
    using T = scalar_t;
    max_pool_backward<T>(g, static_cast<const T*>(grad_y), indices, static_cast<T*>(grad_x));
  });
}

void AvgPool2dForward::cpu(DType dtype, const Pool2dGeometry& g, bool count_include_pad, int64_t divisor_override,
                           const void* x, void* y) {
  COLONY_DISPATCH_FLOAT32_64(dtype, "avg_pool2d", [&] {
    using T = scalar_t;
    avg_pool_forward<T>(as_3d(g), count_include_pad, divisor_override, static_cast<const T*>(x), static_cast<T*>(y));
  });
}

void AvgPool2dBackward::cpu(DType dtype, const Pool2dGeometry& g, bool count_include_pad, int64_t divisor_override,
                            const void* grad_y, void* grad_x) {
  COLONY_DISPATCH_FLOAT32_64(dtype, "avg_pool2d_backward", [&] {
    using T = scalar_t;
    avg_pool_backward<T>(as_3d(g), count_include_pad, divisor_override, static_cast<const T*>(grad_y),
                         static_cast<T*>(grad_x));
  });
}

void AdaptiveAvgPool2dForward::cpu(DType dtype, const Pool2dGeometry& g, const void* x, void* y) {
  COLONY_DISPATCH_FLOAT32_64(dtype, "adaptive_avg_pool2d", [&] {
    using T = scalar_t;
    adaptive_forward<T>(as_3d(g), static_cast<const T*>(x), static_cast<T*>(y));
  });
}

void AdaptiveAvgPool2dBackward::cpu(DType dtype, const Pool2dGeometry& g, const void* grad_y, void* grad_x) {
  COLONY_DISPATCH_FLOAT32_64(dtype, "adaptive_avg_pool2d_backward", [&] {
    using T = scalar_t;
    adaptive_backward<T>(as_3d(g), static_cast<const T*>(grad_y), static_cast<T*>(grad_x));
  });
}

void AdaptiveMaxPool2dForward::cpu(DType dtype, const Pool2dGeometry& g, const void* x, void* y, int64_t* indices) {
  COLONY_DISPATCH_FLOAT32_64(dtype, "adaptive_max_pool2d", [&] {
    using T = scalar_t;
    adaptive_max_forward<T>(as_3d(g), static_cast<const T*>(x), static_cast<T*>(y), indices);
  });
}

void MaxPool3dForward::cpu(DType dtype, const Pool3dGeometry& g, const void* x, void* y, int64_t* indices) {
  COLONY_DISPATCH_FLOAT32_64(dtype, "max_pool3d", [&] {
    using T = scalar_t;
    max_pool_volume<T>(g, static_cast<const T*>(x), static_cast<T*>(y), indices);
  });
}

void AvgPool3dForward::cpu(DType dtype, const Pool3dGeometry& g, bool count_include_pad, int64_t divisor_override,
                           const void* x, void* y) {
  COLONY_DISPATCH_FLOAT32_64(dtype, "avg_pool3d", [&] {
    using T = scalar_t;
    avg_pool_forward<T>(g, count_include_pad, divisor_override, static_cast<const T*>(x), static_cast<T*>(y));
  });
}

void AvgPool3dBackward::cpu(DType dtype, const Pool3dGeometry& g, bool count_include_pad, int64_t divisor_override,
                            const void* grad_y, void* grad_x) {
  COLONY_DISPATCH_FLOAT32_64(dtype, "avg_pool3d_backward", [&] {
    using T = scalar_t;
    avg_pool_backward<T>(g, count_include_pad, divisor_override, static_cast<const T*>(grad_y),
                         static_cast<T*>(grad_x));
  });
}

void AdaptiveAvgPool3dForward::cpu(DType dtype, const Pool3dGeometry& g, const void* x, void* y) {
  COLONY_DISPATCH_FLOAT32_64(dtype, "adaptive_avg_pool3d", [&] {
    using T = scalar_t;
    adaptive_forward<T>(g, static_cast<const T*>(x), static_cast<T*>(y));
  });
}

void AdaptiveAvgPool3dBackward::cpu(DType dtype, const Pool3dGeometry& g, const void* grad_y, void* grad_x) {
  COLONY_DISPATCH_FLOAT32_64(dtype, "adaptive_avg_pool3d_backward", [&] {
    using T = scalar_t;
    adaptive_backward<T>(g, static_cast<const T*>(grad_y), static_cast<T*>(grad_x));
  });
}

void AdaptiveMaxPool3dForward::cpu(DType dtype, const Pool3dGeometry& g, const void* x, void* y, int64_t* indices) {
  COLONY_DISPATCH_FLOAT32_64(dtype, "adaptive_max_pool3d", [&] {
    using T = scalar_t;
    adaptive_max_forward<T>(g, static_cast<const T*>(x), static_cast<T*>(y), indices);
  });
}

void FractionalMaxPoolForward::cpu(DType dtype, const Pool3dGeometry& g, int sample_dims, const void* samples,
                                   const void* x, void* y, int64_t* indices) {
  COLONY_DISPATCH_FLOAT32_64(dtype, "fractional_max_pool", [&] {
    using T = scalar_t;
    fractional_max_forward<T>(g, sample_dims, static_cast<const T*>(samples), static_cast<const T*>(x),
                              static_cast<T*>(y), indices);
  });
}

}  // namespace colony::kernels
