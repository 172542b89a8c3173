// attention_head.h's widened entry points: per task, one 16-bit head widened into float32 buffers
// whose strides make them the whole tensor of a float32 call (batch and head strides 0), the
// float32 head kernels run on them, the outputs rounded back into the input's dtype.
#include <algorithm>
#include <type_traits>

#include "kernels/common/half.h"
#include "kernels/cpu/attention_head.h"
#include "kernels/cpu/bf16_rows.h"
#include "kernels/cpu/parallel.h"

namespace colony::kernels::cpu {
namespace {

template <typename T>
void widen_row(const T* src, int64_t n, float* dst) {
  if constexpr (std::is_same_v<T, BFloat16>) {
    widen_row_from_bf16(src, n, dst);
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(src[i]);
  }
}

template <typename T>
void round_row(const float* src, int64_t n, T* dst) {
  if constexpr (std::is_same_v<T, BFloat16>) {
    round_row_to_bf16<false>(src, n, 0.0f, dst);
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i] = T(src[i]);
  }
}

// A head's rows r0..r1 (cols each, strides s) widened into `to` (row r at to + r * cols); returns
// the strides that make `to` the tensor of every head.
template <typename T>
AttentionStrides widen_head(const AttentionArgs& a, const void* src, const AttentionStrides& s, int64_t bh,
                            int64_t r0, int64_t r1, int64_t cols, float* to) {
  const T* head = head_base(static_cast<const T*>(src), s, a, bh);
  for (int64_t r = r0; r < r1; ++r) widen_row(head + r * s.row, cols, to + r * cols);
  return AttentionStrides{0, 0, cols, 1};
}

template <typename T>
void round_head(const AttentionArgs& a, const float* from, int64_t bh, int64_t r0, int64_t r1, int64_t cols,
                void* dst, const AttentionStrides& s) {
  T* head = head_base(static_cast<T*>(dst), s, a, bh);
  for (int64_t r = r0; r < r1; ++r) round_row(from + r * cols, cols, head + r * s.row);
}

// One thread's float32 copies of one head.
struct WidenedHead {
  AlignedFloats q, k, v, out, go, dq, dk, dv;
  int64_t bh = -1;  // whose k and v (forward: and q) are widened
};

WidenedHead& thread_widened_head() {
  thread_local WidenedHead w;
  w.bh = -1;
  return w;
}

// `a` as a float32 call whose q, k and v are head bh's widened copies in w.
template <typename T>
AttentionArgs widened_inputs(const AttentionArgs& a, int64_t bh, WidenedHead& w) {
  AttentionArgs f = a;
  f.dtype = DType::Float32;
  f.q = w.q.get(a.L * a.E);
  f.k = w.k.get(a.S * a.E);
  f.v = w.v.get(a.S * a.Ev);
  f.qs = f.ks = AttentionStrides{0, 0, a.E, 1};
  f.vs = AttentionStrides{0, 0, a.Ev, 1};
  if (w.bh != bh) {
    widen_head<T>(a, a.q, a.qs, bh, 0, a.L, a.E, w.q.data);
    widen_head<T>(a, a.k, a.ks, bh, 0, a.S, a.E, w.k.data);
    widen_head<T>(a, a.v, a.vs, bh, 0, a.S, a.Ev, w.v.data);
    w.bh = bh;
  }
  return f;
}

template <typename T>
void forward(const AttentionArgs& a) {
  const AttentionHeadFns& fns = active_attention_head_fns();
  const int64_t panels = (a.L + kHeadPanelRows - 1) / kHeadPanelRows;
  parallel_for(a.batch * a.heads * panels, 1, [&](int64_t begin, int64_t end) {
    HeadAttentionScratch& scratch = thread_head_scratch();
    WidenedHead& w = thread_widened_head();
    for (int64_t task = begin; task < end; ++task) {
      const int64_t bh = task / panels, i0 = (task % panels) * kHeadPanelRows;
      AttentionArgs f = widened_inputs<T>(a, bh, w);
      f.out = w.out.get(a.L * a.Ev);
      f.os = AttentionStrides{0, 0, a.Ev, 1};
      fns.forward_panel(f, bh, i0, scratch);
      round_head<T>(a, w.out.data, bh, i0, std::min(a.L, i0 + kHeadPanelRows), a.Ev, a.out, a.os);
    }
  });
}

template <typename T>
void backward(const AttentionArgs& a) {
  const AttentionHeadFns& fns = active_attention_head_fns();
  parallel_for(a.batch * a.heads, 1, [&](int64_t begin, int64_t end) {
    HeadAttentionScratch& scratch = thread_head_scratch();
    WidenedHead& w = thread_widened_head();
    for (int64_t bh = begin; bh < end; ++bh) {
      AttentionArgs f = widened_inputs<T>(a, bh, w);
      f.out = w.out.get(a.L * a.Ev);
      f.grad_out = w.go.get(a.L * a.Ev);
      f.os = widen_head<T>(a, a.out, a.os, bh, 0, a.L, a.Ev, w.out.data);
      f.gs = widen_head<T>(a, a.grad_out, a.gs, bh, 0, a.L, a.Ev, w.go.data);
      f.dq = w.dq.get(a.L * a.E);
      f.dk = w.dk.get(a.S * a.E);
      f.dv = w.dv.get(a.S * a.Ev);
      f.dqs = f.qs;
      f.dks = f.ks;
      f.dvs = f.vs;
      fns.backward_head(f, bh, scratch);
      round_head<T>(a, w.dq.data, bh, 0, a.L, a.E, a.dq, a.dqs);
      round_head<T>(a, w.dk.data, bh, 0, a.S, a.E, a.dk, a.dks);
      round_head<T>(a, w.dv.data, bh, 0, a.S, a.Ev, a.dv, a.dvs);
    }
  });
}

}  // namespace

bool widened_head_attention_applies(const AttentionArgs& a) {
  AttentionArgs as_float = a;
  as_float.dtype = DType::Float32;
  return (a.dtype == DType::BFloat16 || a.dtype == DType::Float16) && head_attention_applies(as_float);
}

void widened_head_attention_forward(const AttentionArgs& a) {
  if (a.dtype == DType::BFloat16) return forward<BFloat16>(a);
  forward<Half>(a);
}

void widened_head_attention_backward(const AttentionArgs& a) {
  if (a.dtype == DType::BFloat16) return backward<BFloat16>(a);
  backward<Half>(a);
}

}  // namespace colony::kernels::cpu
