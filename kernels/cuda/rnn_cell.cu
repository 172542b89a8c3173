// The fused LSTM and GRU cells of kernels/common/rnn_cell.h on CUDA: one thread per (batch row,
// hidden unit), the per-element math of that header in compute_t<T>.
#include "kernels/common/rnn_cell.h"

#include <cuda_runtime.h>

#include "kernels/common/dispatch.h"
#include "kernels/cuda/launch.cuh"

namespace colony::kernels::cuda {
namespace {

template <typename C>
struct TanhFn {
  COLONY_INLINE C operator()(C x) const { return math::tanh(x); }
};

template <typename T>
__device__ __forceinline__ compute_t<T> value(const T* p, int64_t k) {
  return p == nullptr ? compute_t<T>(0) : static_cast<compute_t<T>>(p[k]);
}

template <typename T>
__global__ void lstm_forward_kernel(const T* xg, const T* hg, const compute_t<T>* c, T* h_next, compute_t<T>* c_next,
                                    compute_t<T>* saved, int64_t batch, int64_t H) {
  using C = compute_t<T>;
  COLONY_GRID_LOOP(e, batch * H) {
    const int64_t b = e / H, j = e % H;
    const T* x = xg + b * 4 * H + j;
    const T* hh = hg + b * 4 * H + j;
    auto pre = [&](int64_t k) { return static_cast<C>(x[k * H]) + static_cast<C>(hh[k * H]); };
    const C i = sigmoid(pre(0)), f = sigmoid(pre(1)), g = math::tanh(pre(2)), o = sigmoid(pre(3));
    C cn, tc, hn;
    lstm_cell_element(i, f, g, o, c[e], TanhFn<C>{}, &cn, &tc, &hn);
    c_next[e] = cn;
    h_next[e] = static_cast<T>(hn);
    if (saved != nullptr) {
      C* s = saved + b * 5 * H + j;
      s[0] = i;
      s[H] = f;
      s[2 * H] = g;
      s[3 * H] = o;
      s[4 * H] = tc;
    }
  }
}

template <typename T>
__global__ void lstm_backward_kernel(const T* grad_h, const compute_t<T>* grad_c, const compute_t<T>* c,
                                     const compute_t<T>* saved, T* grad_gates, compute_t<T>* grad_c_prev, int64_t batch,
                                     int64_t H) {
  using C = compute_t<T>;
  COLONY_GRID_LOOP(e, batch * H) {
    const int64_t b = e / H, j = e % H;
    const C* s = saved + b * 5 * H + j;
    C di, df, dg, d_o, dc;
    lstm_cell_element_grads(value(grad_h, e), grad_c == nullptr ? C(0) : grad_c[e], s[0], s[H], s[2 * H], s[3 * H],
                            c[e], s[4 * H], &di, &df, &dg, &d_o, &dc);
    T* gg = grad_gates + b * 4 * H + j;
    gg[0] = static_cast<T>(di);
    gg[H] = static_cast<T>(df);
    gg[2 * H] = static_cast<T>(dg);
    gg[3 * H] = static_cast<T>(d_o);
    grad_c_prev[e] = dc;
  }
}

template <typename T>
__global__ void gru_forward_kernel(const T* xg, const T* hg, const T* h, T* h_next, compute_t<T>* saved, int64_t batch,
                                   int64_t H) {
  using C = compute_t<T>;
  COLONY_GRID_LOOP(e, batch * H) {
    const int64_t b = e / H, j = e % H;
    const T* x = xg + b * 3 * H + j;
    const T* hh = hg + b * 3 * H + j;
    const C r = sigmoid(static_cast<C>(x[0]) + static_cast<C>(hh[0]));
    const C z = sigmoid(static_cast<C>(x[H]) + static_cast<C>(hh[H]));
    const C hn = static_cast<C>(hh[2 * H]);
    C n, out;
    gru_cell_element(r, z, static_cast<C>(x[2 * H]), hn, static_cast<C>(h[e]), TanhFn<C>{}, &n, &out);
    h_next[e] = static_cast<T>(out);
    if (saved != nullptr) {
      C* s = saved + b * 4 * H + j;
      s[0] = r;
      s[H] = z;
      s[2 * H] = n;
      s[3 * H] = hn;
    }
  }
}

template <typename T>
__global__ void gru_backward_kernel(const T* grad_h_next, const T* h, const compute_t<T>* saved, T* grad_xg,
                                    T* grad_hg, T* grad_h, int64_t batch, int64_t H) {
  using C = compute_t<T>;
  COLONY_GRID_LOOP(e, batch * H) {
    const int64_t b = e / H, j = e % H;
    const C* s = saved + b * 4 * H + j;
    C dr, dz, dn, dn_h, dh;
    gru_cell_element_grads(static_cast<C>(grad_h_next[e]), static_cast<C>(h[e]), s[0], s[H], s[2 * H], s[3 * H], &dr,
                           &dz, &dn, &dn_h, &dh);
    T* gx = grad_xg + b * 3 * H + j;
    T* gh = grad_hg + b * 3 * H + j;
    gx[0] = gh[0] = static_cast<T>(dr);
    gx[H] = gh[H] = static_cast<T>(dz);
    gx[2 * H] = static_cast<T>(dn);
    gh[2 * H] = static_cast<T>(dn_h);
    grad_h[e] = static_cast<T>(dh);
  }
}

}  // namespace
}  // namespace colony::kernels::cuda

namespace colony::kernels {

void LstmCellForward::cuda(DType dtype, const void* xg, const void* hg, const void* c, void* h_next, void* c_next,
                           void* saved, int64_t batch, int64_t hidden, void* stream) {
  using namespace cuda;  // NOLINT: the kernels above
  if (batch * hidden == 0) return;
  COLONY_DISPATCH_FLOATING(dtype, "lstm_cell", [&] {
    using C = compute_t<scalar_t>;
    lstm_forward_kernel<scalar_t><<<grid_blocks(batch * hidden), kBlockThreads, 0, as_stream(stream)>>>(
        static_cast<const scalar_t*>(xg), static_cast<const scalar_t*>(hg), static_cast<const C*>(c),
        static_cast<scalar_t*>(h_next), static_cast<C*>(c_next), static_cast<C*>(saved), batch, hidden);
  });
  after_launch("lstm_cell");
}

void LstmCellBackward::cuda(DType dtype, const void* grad_h, const void* grad_c, const void* c, const void* saved,
                            void* grad_gates, void* grad_c_prev, int64_t batch, int64_t hidden, void* stream) {
  using namespace cuda;  // NOLINT: the kernels above
  if (batch * hidden == 0) return;
  COLONY_DISPATCH_FLOATING(dtype, "lstm_cell_backward", [&] {
    using C = compute_t<scalar_t>;
    lstm_backward_kernel<scalar_t><<<grid_blocks(batch * hidden), kBlockThreads, 0, as_stream(stream)>>>(
        static_cast<const scalar_t*>(grad_h), static_cast<const C*>(grad_c), static_cast<const C*>(c),
        static_cast<const C*>(saved), static_cast<scalar_t*>(grad_gates), static_cast<C*>(grad_c_prev), batch, hidden);
  });
  after_launch("lstm_cell_backward");
}

void GruCellForward::cuda(DType dtype, const void* xg, const void* hg, const void* h, void* h_next, void* saved,
                          int64_t batch, int64_t hidden, void* stream) {
  using namespace cuda;  // NOLINT: the kernels above
  if (batch * hidden == 0) return;
  COLONY_DISPATCH_FLOATING(dtype, "gru_cell", [&] {
    using C = compute_t<scalar_t>;
    gru_forward_kernel<scalar_t><<<grid_blocks(batch * hidden), kBlockThreads, 0, as_stream(stream)>>>(
        static_cast<const scalar_t*>(xg), static_cast<const scalar_t*>(hg), static_cast<const scalar_t*>(h),
        static_cast<scalar_t*>(h_next), static_cast<C*>(saved), batch, hidden);
  });
  after_launch("gru_cell");
}

void GruCellBackward::cuda(DType dtype, const void* grad_h_next, const void* h, const void* saved, void* grad_xg,
                           void* grad_hg, void* grad_h, int64_t batch, int64_t hidden, void* stream) {
  using namespace cuda;  // NOLINT: the kernels above
  if (batch * hidden == 0) return;
  COLONY_DISPATCH_FLOATING(dtype, "gru_cell_backward", [&] {
    using C = compute_t<scalar_t>;
    gru_backward_kernel<scalar_t><<<grid_blocks(batch * hidden), kBlockThreads, 0, as_stream(stream)>>>(
        static_cast<const scalar_t*>(grad_h_next), static_cast<const scalar_t*>(h), static_cast<const C*>(saved),
        static_cast<scalar_t*>(grad_xg), static_cast<scalar_t*>(grad_hg), static_cast<scalar_t*>(grad_h), batch,
        hidden);
  });
  after_launch("gru_cell_backward");
}

}  // namespace colony::kernels
