// The fused LSTM and GRU cells of kernels/common/rnn_cell.h on the CPU: the per-element math of
// that header, over eight float32 lanes at a time for float32 (AVX2, the build's baseline: the
// step is a few passes over [N, 4H] rows that sit in L1/L2, so AVX-512's width gains little), and
// one element at a time in compute_t<T> for double and the 16-bit floats. Batch rows are shared
// among the threads (parallel.h); each element's result is the same whatever the split.
#include "kernels/common/rnn_cell.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <type_traits>

#include "kernels/common/dispatch.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/vec_math.h"

namespace colony::kernels::cpu {
namespace {

// Elements per thread below which a step stays on one thread, as softmax.cc and norm.cc split
// their rows.
constexpr int64_t kGrainElements = 16384;

void for_rows(int64_t batch, int64_t row_elements, const std::function<void(int64_t, int64_t)>& fn) {
  parallel_for(batch, std::max<int64_t>(1, kGrainElements / std::max<int64_t>(1, row_elements)), fn);
}

// ---- float32: eight lanes, through the common formulas ----

using I = vec::Avx2;

// Eight floats with the operators rnn_cell.h's formulas use.
struct F8 {
  __m256 v;
  F8() = default;
  F8(__m256 x) : v(x) {}  // NOLINT: the intrinsics' results convert implicitly
  explicit F8(float x) : v(_mm256_set1_ps(x)) {}
};
inline F8 operator+(F8 a, F8 b) { return I::add(a.v, b.v); }
inline F8 operator-(F8 a, F8 b) { return I::sub(a.v, b.v); }
inline F8 operator*(F8 a, F8 b) { return I::mul(a.v, b.v); }

// The lanes [j, j + n) of a row (n <= 8): whole vectors, or masked at a row's end.
struct Lanes {
  int64_t n;
  F8 load(const float* p) const { return n == I::kLanes ? I::load(p) : I::load_n(p, n); }
  F8 load_or_zero(const float* p) const { return p == nullptr ? F8(0.0f) : load(p); }
  void store(float* p, F8 x) const {
    if (n == I::kLanes) {
      I::store(p, x.v);
    } else {
      I::store_n(p, x.v, n);
    }
  }
};

F8 sigmoid8(F8 x) { return vec::sigmoid<I>(x.v); }
F8 tanh8(F8 x) { return vec::tanh<I>(x.v); }

// Pointer p advanced by k, or null.
template <typename P>
P at(P p, int64_t k) {
  return p == nullptr ? nullptr : p + k;
}

void lstm_forward_f32(const float* xg, const float* hg, const float* c, float* h_next, float* c_next, float* saved,
                      int64_t batch, int64_t H) {
  for_rows(batch, 4 * H, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const float* x = xg + b * 4 * H;
      const float* hh = hg + b * 4 * H;
      float* s = at(saved, b * 5 * H);
      for (int64_t j = 0; j < H; j += I::kLanes) {
        const Lanes l{std::min<int64_t>(I::kLanes, H - j)};
        const F8 i = sigmoid8(l.load(x + j) + l.load(hh + j));
        const F8 f = sigmoid8(l.load(x + H + j) + l.load(hh + H + j));
        const F8 g = tanh8(l.load(x + 2 * H + j) + l.load(hh + 2 * H + j));
        const F8 o = sigmoid8(l.load(x + 3 * H + j) + l.load(hh + 3 * H + j));
        F8 cn, tc, hn;
        lstm_cell_element(i, f, g, o, l.load(c + b * H + j), tanh8, &cn, &tc, &hn);
        l.store(c_next + b * H + j, cn);
        l.store(h_next + b * H + j, hn);
        if (s != nullptr) {
          l.store(s + j, i);
          l.store(s + H + j, f);
          l.store(s + 2 * H + j, g);
          l.store(s + 3 * H + j, o);
          l.store(s + 4 * H + j, tc);
        }
      }
    }
  });
}

void lstm_backward_f32(const float* grad_h, const float* grad_c, const float* c, const float* saved, float* grad_gates,
                       float* grad_c_prev, int64_t batch, int64_t H) {
  for_rows(batch, 4 * H, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const float* s = saved + b * 5 * H;
      float* gg = grad_gates + b * 4 * H;
      for (int64_t j = 0; j < H; j += I::kLanes) {
        const Lanes l{std::min<int64_t>(I::kLanes, H - j)};
        F8 di, df, dg, d_o, dc;
        lstm_cell_element_grads(l.load_or_zero(at(grad_h, b * H + j)), l.load_or_zero(at(grad_c, b * H + j)),
                                l.load(s + j), l.load(s + H + j), l.load(s + 2 * H + j), l.load(s + 3 * H + j),
                                l.load(c + b * H + j), l.load(s + 4 * H + j), &di, &df, &dg, &d_o, &dc);
        l.store(gg + j, di);
        l.store(gg + H + j, df);
        l.store(gg + 2 * H + j, dg);
        l.store(gg + 3 * H + j, d_o);
        l.store(grad_c_prev + b * H + j, dc);
      }
    }
  });
}

void gru_forward_f32(const float* xg, const float* hg, const float* h, float* h_next, float* saved, int64_t batch,
                     int64_t H) {
  for_rows(batch, 3 * H, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const float* x = xg + b * 3 * H;
      const float* hh = hg + b * 3 * H;
      float* s = at(saved, b * 4 * H);
      for (int64_t j = 0; j < H; j += I::kLanes) {
        const Lanes l{std::min<int64_t>(I::kLanes, H - j)};
        const F8 r = sigmoid8(l.load(x + j) + l.load(hh + j));
        const F8 z = sigmoid8(l.load(x + H + j) + l.load(hh + H + j));
        const F8 hn = l.load(hh + 2 * H + j);
        F8 n, out;
        gru_cell_element(r, z, l.load(x + 2 * H + j), hn, l.load(h + b * H + j), tanh8, &n, &out);
        l.store(h_next + b * H + j, out);
        if (s != nullptr) {
          l.store(s + j, r);
          l.store(s + H + j, z);
          l.store(s + 2 * H + j, n);
          l.store(s + 3 * H + j, hn);
        }
      }
    }
  });
}

void gru_backward_f32(const float* grad_h_next, const float* h, const float* saved, float* grad_xg, float* grad_hg,
                      float* grad_h, int64_t batch, int64_t H) {
  for_rows(batch, 3 * H, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const float* s = saved + b * 4 * H;
      float* gx = grad_xg + b * 3 * H;
      float* gh = grad_hg + b * 3 * H;
      for (int64_t j = 0; j < H; j += I::kLanes) {
        const Lanes l{std::min<int64_t>(I::kLanes, H - j)};
        F8 dr, dz, dn, dn_h, dh;
        gru_cell_element_grads(l.load(grad_h_next + b * H + j), l.load(h + b * H + j), l.load(s + j),
                               l.load(s + H + j), l.load(s + 2 * H + j), l.load(s + 3 * H + j), &dr, &dz, &dn, &dn_h,
                               &dh);
        l.store(gx + j, dr);
        l.store(gx + H + j, dz);
        l.store(gx + 2 * H + j, dn);
        l.store(gh + j, dr);
        l.store(gh + H + j, dz);
        l.store(gh + 2 * H + j, dn_h);
        l.store(grad_h + b * H + j, dh);
      }
    }
  });
}

// ---- double and the 16-bit floats: one element at a time in compute_t<T> ----

template <typename C>
C tanh1(C x) {
  return math::tanh(x);
}

// Element k of p in C, or 0 where p is null.
template <typename T>
compute_t<T> value(const T* p, int64_t k) {
  return p == nullptr ? compute_t<T>(0) : static_cast<compute_t<T>>(p[k]);
}

template <typename T>
void lstm_forward_scalar(const T* xg, const T* hg, const compute_t<T>* c, T* h_next, compute_t<T>* c_next,
                         compute_t<T>* saved, int64_t batch, int64_t H) {
  using C = compute_t<T>;
  for_rows(batch, 4 * H, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const T* x = xg + b * 4 * H;
      const T* hh = hg + b * 4 * H;
      C* s = at(saved, b * 5 * H);
      for (int64_t j = 0; j < H; ++j) {
        auto pre = [&](int64_t k) { return static_cast<C>(x[k * H + j]) + static_cast<C>(hh[k * H + j]); };
        const C i = sigmoid(pre(0)), f = sigmoid(pre(1)), g = math::tanh(pre(2)), o = sigmoid(pre(3));
        C cn, tc, hn;
        lstm_cell_element(i, f, g, o, c[b * H + j], tanh1<C>, &cn, &tc, &hn);
        c_next[b * H + j] = cn;
        h_next[b * H + j] = static_cast<T>(hn);
        if (s != nullptr) {
          s[j] = i;
          s[H + j] = f;
          s[2 * H + j] = g;
          s[3 * H + j] = o;
          s[4 * H + j] = tc;
        }
      }
    }
  });
}

template <typename T>
void lstm_backward_scalar(const T* grad_h, const compute_t<T>* grad_c, const compute_t<T>* c,
                          const compute_t<T>* saved, T* grad_gates, compute_t<T>* grad_c_prev, int64_t batch,
                          int64_t H) {
  using C = compute_t<T>;
  for_rows(batch, 4 * H, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const C* s = saved + b * 5 * H;
      T* gg = grad_gates + b * 4 * H;
      for (int64_t j = 0; j < H; ++j) {
        const C gc = grad_c == nullptr ? C(0) : grad_c[b * H + j];
        C di, df, dg, d_o, dc;
        lstm_cell_element_grads(value(grad_h, b * H + j), gc, s[j], s[H + j], s[2 * H + j], s[3 * H + j],
                                c[b * H + j], s[4 * H + j], &di, &df, &dg, &d_o, &dc);
        gg[j] = static_cast<T>(di);
        gg[H + j] = static_cast<T>(df);
        gg[2 * H + j] = static_cast<T>(dg);
        gg[3 * H + j] = static_cast<T>(d_o);
        grad_c_prev[b * H + j] = dc;
      }
    }
  });
}

template <typename T>
void gru_forward_scalar(const T* xg, const T* hg, const T* h, T* h_next, compute_t<T>* saved, int64_t batch,
                        int64_t H) {
  using C = compute_t<T>;
  for_rows(batch, 3 * H, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const T* x = xg + b * 3 * H;
      const T* hh = hg + b * 3 * H;
      C* s = at(saved, b * 4 * H);
      for (int64_t j = 0; j < H; ++j) {
        const C r = sigmoid(static_cast<C>(x[j]) + static_cast<C>(hh[j]));
        const C z = sigmoid(static_cast<C>(x[H + j]) + static_cast<C>(hh[H + j]));
        const C hn = static_cast<C>(hh[2 * H + j]);
        C n, out;
        gru_cell_element(r, z, static_cast<C>(x[2 * H + j]), hn, static_cast<C>(h[b * H + j]), tanh1<C>, &n, &out);
        h_next[b * H + j] = static_cast<T>(out);
        if (s != nullptr) {
          s[j] = r;
          s[H + j] = z;
          s[2 * H + j] = n;
          s[3 * H + j] = hn;
        }
      }
    }
  });
}

template <typename T>
void gru_backward_scalar(const T* grad_h_next, const T* h, const compute_t<T>* saved, T* grad_xg, T* grad_hg,
                         T* grad_h, int64_t batch, int64_t H) {
  using C = compute_t<T>;
  for_rows(batch, 3 * H, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const C* s = saved + b * 4 * H;
      T* gx = grad_xg + b * 3 * H;
      T* gh = grad_hg + b * 3 * H;
      for (int64_t j = 0; j < H; ++j) {
        C dr, dz, dn, dn_h, dh;
        gru_cell_element_grads(static_cast<C>(grad_h_next[b * H + j]), static_cast<C>(h[b * H + j]), s[j], s[H + j],
                               s[2 * H + j], s[3 * H + j], &dr, &dz, &dn, &dn_h, &dh);
        gx[j] = gh[j] = static_cast<T>(dr);
        gx[H + j] = gh[H + j] = static_cast<T>(dz);
        gx[2 * H + j] = static_cast<T>(dn);
        gh[2 * H + j] = static_cast<T>(dn_h);
        grad_h[b * H + j] = static_cast<T>(dh);
      }
    }
  });
}

}  // namespace
}  // namespace colony::kernels::cpu

namespace colony::kernels {

void LstmCellForward::cpu(DType dtype, const void* xg, const void* hg, const void* c, void* h_next, void* c_next,
                          void* saved, int64_t batch, int64_t hidden) {
  using namespace cpu;  // NOLINT: the loops above
  if (batch * hidden == 0) return;
  COLONY_DISPATCH_FLOATING(dtype, "lstm_cell", [&] {
    if constexpr (std::is_same_v<scalar_t, float>) {
      lstm_forward_f32(static_cast<const float*>(xg), static_cast<const float*>(hg), static_cast<const float*>(c),
                       static_cast<float*>(h_next), static_cast<float*>(c_next), static_cast<float*>(saved), batch,
                       hidden);
    } else {
      using C = compute_t<scalar_t>;
      lstm_forward_scalar(static_cast<const scalar_t*>(xg), static_cast<const scalar_t*>(hg),
                          static_cast<const C*>(c), static_cast<scalar_t*>(h_next), static_cast<C*>(c_next),
                          static_cast<C*>(saved), batch, hidden);
    }
  });
}

void LstmCellBackward::cpu(DType dtype, const void* grad_h, const void* grad_c, const void* c, const void* saved,
                           void* grad_gates, void* grad_c_prev, int64_t batch, int64_t hidden) {
  using namespace cpu;  // NOLINT: the loops above
  if (batch * hidden == 0) return;
  COLONY_DISPATCH_FLOATING(dtype, "lstm_cell_backward", [&] {
    if constexpr (std::is_same_v<scalar_t, float>) {
      lstm_backward_f32(static_cast<const float*>(grad_h), static_cast<const float*>(grad_c),
                        static_cast<const float*>(c), static_cast<const float*>(saved), static_cast<float*>(grad_gates),
                        static_cast<float*>(grad_c_prev), batch, hidden);
    } else {
      using C = compute_t<scalar_t>;
      lstm_backward_scalar(static_cast<const scalar_t*>(grad_h), static_cast<const C*>(grad_c),
                           static_cast<const C*>(c), static_cast<const C*>(saved), static_cast<scalar_t*>(grad_gates),
                           static_cast<C*>(grad_c_prev), batch, hidden);
    }
  });
}

void GruCellForward::cpu(DType dtype, const void* xg, const void* hg, const void* h, void* h_next, void* saved,
                         int64_t batch, int64_t hidden) {
  using namespace cpu;  // NOLINT: the loops above
  if (batch * hidden == 0) return;
  COLONY_DISPATCH_FLOATING(dtype, "gru_cell", [&] {
    if constexpr (std::is_same_v<scalar_t, float>) {
      gru_forward_f32(static_cast<const float*>(xg), static_cast<const float*>(hg), static_cast<const float*>(h),
                      static_cast<float*>(h_next), static_cast<float*>(saved), batch, hidden);
    } else {
      using C = compute_t<scalar_t>;
      gru_forward_scalar(static_cast<const scalar_t*>(xg), static_cast<const scalar_t*>(hg),
                         static_cast<const scalar_t*>(h), static_cast<scalar_t*>(h_next), static_cast<C*>(saved), batch,
                         hidden);
    }
  });
}

void GruCellBackward::cpu(DType dtype, const void* grad_h_next, const void* h, const void* saved, void* grad_xg,
                          void* grad_hg, void* grad_h, int64_t batch, int64_t hidden) {
  using namespace cpu;  // NOLINT: the loops above
  if (batch * hidden == 0) return;
  COLONY_DISPATCH_FLOATING(dtype, "gru_cell_backward", [&] {
    if constexpr (std::is_same_v<scalar_t, float>) {
      gru_backward_f32(static_cast<const float*>(grad_h_next), static_cast<const float*>(h),
                       static_cast<const float*>(saved), static_cast<float*>(grad_xg), static_cast<float*>(grad_hg),
                       static_cast<float*>(grad_h), batch, hidden);
    } else {
      using C = compute_t<scalar_t>;
      gru_backward_scalar(static_cast<const scalar_t*>(grad_h_next), static_cast<const scalar_t*>(h),
                          static_cast<const C*>(saved), static_cast<scalar_t*>(grad_xg),
                          static_cast<scalar_t*>(grad_hg), static_cast<scalar_t*>(grad_h), batch, hidden);
    }
  });
}

}  // namespace colony::kernels
