#include "kernels/common/norm.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "kernels/common/dispatch.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/scratch.h"
#include "kernels/cpu/simd.h"

namespace colony::kernels::cpu {
namespace {

using simd::kLanes;
using simd::load;
using simd::splat;
using simd::store;
using simd::Vec;

constexpr int64_t kGrainElements = 16384;

// Rows whose dweight/dbias contributions one task sums before the blocks are added in order: the
// partition depends only on the shape, so the sums do not depend on the thread count.
constexpr int64_t kRowsPerBlock = 64;

struct NormScratch {};  // thread_scratch owner tag

// sum((x - c)^2) with four vector accumulators (a single one is a chain of dependent adds).
template <typename C>
C sum_sq_dev(const C* x, int64_t n, C c) {
  constexpr int L = kLanes<C>;
  const Vec<C> vc = splat(c);
  Vec<C> acc[4] = {};
  int64_t i = 0;
  for (; i + 4 * L <= n; i += 4 * L) {
    COLONY_UNROLL
    for (int k = 0; k < 4; ++k) {
      Vec<C> d = load(x + i + k * L) - vc;
      acc[k] += d * d;
    }
  }
  for (; i + L <= n; i += L) {
    Vec<C> d = load(x + i) - vc;
    acc[0] += d * d;
  }
  C s = simd::hsum<C>((acc[0] + acc[1]) + (acc[2] + acc[3]));
  for (; i < n; ++i) s += (x[i] - c) * (x[i] - c);
  return s;
}

// One row, forward. Two passes over x for the variance (the row is in L1 by then): the one-pass
// E[x^2] - mean^2 loses all precision for rows with a large mean. kW / kB: weight / bias given.
template <typename C, bool kW, bool kB>
void forward_row(const C* x, const C* w, const C* b, C* y, int64_t n, C eps, bool rms, C* mean_out, C* rstd_out) {
  constexpr int L = kLanes<C>;
  const C mean = rms ? C(0) : simd::sum(x, n) / static_cast<C>(n);
  const C rstd = C(1) / std::sqrt(sum_sq_dev(x, n, mean) / static_cast<C>(n) + eps);
  if (mean_out) *mean_out = mean;
  *rstd_out = rstd;
  const Vec<C> vm = splat(mean), vr = splat(rstd);
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    Vec<C> v = (load(x + i) - vm) * vr;
    if constexpr (kW) v *= load(w + i);
    if constexpr (kB) v += load(b + i);
    store(y + i, v);
  }
  for (; i < n; ++i) {
    C v = (x[i] - mean) * rstd;
    if constexpr (kW) v *= w[i];
    if constexpr (kB) v += b[i];
    y[i] = v;
  }
}

// One row, backward: dx (when wanted) and the row's dweight/dbias terms added to dw/db (when given).
template <typename C, bool kW>
void backward_row(const C* dy, const C* x, C mean, C rstd, const C* w, C* dx, C* dw, C* db, int64_t n, bool rms) {
  constexpr int L = kLanes<C>;
  const Vec<C> vm = splat(mean), vr = splat(rstd);
  if (dw || db) {
    int64_t i = 0;
    for (; i + L <= n; i += L) {
      Vec<C> d = load(dy + i);
      if (dw) store(dw + i, load(dw + i) + d * ((load(x + i) - vm) * vr));
      if (db) store(db + i, load(db + i) + d);
    }
    for (; i < n; ++i) {
      if (dw) dw[i] += dy[i] * ((x[i] - mean) * rstd);
      if (db) db[i] += dy[i];
    }
  }
  if (!dx) return;
  // sum(g) and sum(g * xhat), two accumulators each.
  Vec<C> sg[2] = {}, sgx[2] = {};
  int64_t i = 0;
  for (; i + 2 * L <= n; i += 2 * L) {
    COLONY_UNROLL
    for (int k = 0; k < 2; ++k) {
      Vec<C> g = load(dy + i + k * L);
      if constexpr (kW) g *= load(w + i + k * L);
      sg[k] += g;
      sgx[k] += g * ((load(x + i + k * L) - vm) * vr);
    }
  }
  for (; i + L <= n; i += L) {
    Vec<C> g = load(dy + i);
    if constexpr (kW) g *= load(w + i);
    sg[0] += g;
    sgx[0] += g * ((load(x + i) - vm) * vr);
  }
  C a = simd::hsum<C>(sg[0] + sg[1]), b = simd::hsum<C>(sgx[0] + sgx[1]);
  for (; i < n; ++i) {
    C g = kW ? dy[i] * w[i] : dy[i];
    a += g;
    b += g * ((x[i] - mean) * rstd);
  }
  const C inv_n = C(1) / static_cast<C>(n);
  const C a_n = rms ? C(0) : a * inv_n, b_n = b * inv_n;
  // dx = rstd * (g - a_n - xhat * b_n)
  const Vec<C> va = splat(a_n), vb = splat(b_n);
  i = 0;
  for (; i + L <= n; i += L) {
    Vec<C> g = load(dy + i);
    if constexpr (kW) g *= load(w + i);
    Vec<C> xhat = (load(x + i) - vm) * vr;
    store(dx + i, vr * (g - va - xhat * vb));
  }
  for (; i < n; ++i) {
    C g = kW ? dy[i] * w[i] : dy[i];
    C xhat = (x[i] - mean) * rstd;
    dx[i] = rstd * (g - a_n - xhat * b_n);
  }
}

// A row of T as compute-type values: the row itself when T is the compute type, else converted into
// `buf` (16-bit rows are widened once, so the vector code above runs on float32).
template <typename T, typename C = compute_t<T>>
const C* widen(const T* row, int64_t n, C* buf) {
  if constexpr (std::is_same_v<T, C>) {
    return row;
  } else {
    for (int64_t i = 0; i < n; ++i) buf[i] = static_cast<C>(row[i]);
    return buf;
  }
}

template <typename T, typename C = compute_t<T>>
void narrow(const C* buf, int64_t n, T* row) {
  if constexpr (!std::is_same_v<T, C>) {
    for (int64_t i = 0; i < n; ++i) row[i] = static_cast<T>(buf[i]);
  }
}

template <typename T>
void forward_typed(const T* x, const compute_t<T>* w, const compute_t<T>* b, T* y, compute_t<T>* mean,
                   compute_t<T>* rstd, int64_t rows, int64_t cols, double eps, bool rms) {
  using C = compute_t<T>;
  constexpr bool kWiden = !std::is_same_v<T, C>;
  auto run = [&](auto row_fn) {
    parallel_for(rows, std::max<int64_t>(1, kGrainElements / cols), [&](int64_t begin, int64_t end) {
      C* xbuf = kWiden ? thread_scratch<NormScratch, C, 0>(static_cast<size_t>(cols)) : nullptr;
      C* ybuf = kWiden ? thread_scratch<NormScratch, C, 1>(static_cast<size_t>(cols)) : nullptr;
      for (int64_t r = begin; r < end; ++r) {
        const C* xr = widen(x + r * cols, cols, xbuf);
        C* yr = kWiden ? ybuf : reinterpret_cast<C*>(y + r * cols);
        row_fn(xr, w, b, yr, cols, static_cast<C>(eps), rms, mean ? mean + r : nullptr, rstd + r);
        narrow(yr, cols, y + r * cols);
      }
    });
  };
  if (w && b && !rms) {
    run(forward_row<C, true, true>);
  } else if (w) {
    run(forward_row<C, true, false>);
  } else if (b && !rms) {
    run(forward_row<C, false, true>);
  } else {
    run(forward_row<C, false, false>);
  }
}

template <typename T>
void backward_typed(const T* dy, const T* x, const compute_t<T>* mean, const compute_t<T>* rstd,
                    const compute_t<T>* w, T* dx, compute_t<T>* dweight, compute_t<T>* dbias, int64_t rows,
                    int64_t cols, bool rms) {
  using C = compute_t<T>;
  constexpr bool kWiden = !std::is_same_v<T, C>;
  const int64_t blocks = (rows + kRowsPerBlock - 1) / kRowsPerBlock;
  // Each block's dweight / dbias terms, summed in block order below.
  std::vector<C> dw_part(dweight ? static_cast<size_t>(blocks * cols) : 0);
  std::vector<C> db_part(dbias ? static_cast<size_t>(blocks * cols) : 0);
  const int64_t grain = std::max<int64_t>(1, kGrainElements / (kRowsPerBlock * cols));
  auto run = [&](auto row_fn) {
    parallel_for(blocks, grain, [&](int64_t begin, int64_t end) {
      C* dybuf = kWiden ? thread_scratch<NormScratch, C, 0>(static_cast<size_t>(cols)) : nullptr;
      C* xbuf = kWiden ? thread_scratch<NormScratch, C, 1>(static_cast<size_t>(cols)) : nullptr;
      C* dxbuf = kWiden ? thread_scratch<NormScratch, C, 2>(static_cast<size_t>(cols)) : nullptr;
      for (int64_t blk = begin; blk < end; ++blk) {
        C* dw = dweight ? dw_part.data() + blk * cols : nullptr;
        C* db = dbias ? db_part.data() + blk * cols : nullptr;
        if (dw) std::fill(dw, dw + cols, C(0));
        if (db) std::fill(db, db + cols, C(0));
        const int64_t r1 = std::min(rows, (blk + 1) * kRowsPerBlock);
        for (int64_t r = blk * kRowsPerBlock; r < r1; ++r) {
          const C* dyr = widen(dy + r * cols, cols, dybuf);
          const C* xr = widen(x + r * cols, cols, xbuf);
          C* dxr = !dx ? nullptr : kWiden ? dxbuf : reinterpret_cast<C*>(dx + r * cols);
          row_fn(dyr, xr, rms ? C(0) : mean[r], rstd[r], w, dxr, dw, db, cols, rms);
          if (dx) narrow(dxr, cols, dx + r * cols);
        }
      }
    });
  };
  if (w) {
    run(backward_row<C, true>);
  } else {
    run(backward_row<C, false>);
  }
  if (!dweight && !dbias) return;
  // The blocks' terms in block order, columns split among the threads.
  parallel_for(cols, std::max<int64_t>(1, kGrainElements / blocks), [&](int64_t begin, int64_t end) {
    for (auto [out, part] : {std::make_pair(dweight, dw_part.data()), std::make_pair(dbias, db_part.data())}) {
      if (!out) continue;
      std::copy(part + begin, part + end, out + begin);
      for (int64_t blk = 1; blk < blocks; ++blk) {
        const C* p = part + blk * cols;
        for (int64_t j = begin; j < end; ++j) out[j] += p[j];
      }
    }
  });
}

}  // namespace
}  // namespace colony::kernels::cpu

namespace colony::kernels {

void RowNormForward::cpu(DType dtype, const void* x, const void* weight, const void* bias, void* y, void* mean,
                         void* rstd, int64_t rows, int64_t cols, double eps, bool rms) {
  using namespace cpu;  // NOLINT: the helpers above
  if (rows == 0) return;
  COLONY_DISPATCH_FLOATING(dtype, rms ? "rms_norm" : "layer_norm", [&] {
    using C = compute_t<scalar_t>;
    forward_typed(static_cast<const scalar_t*>(x), static_cast<const C*>(weight), static_cast<const C*>(bias),
                  static_cast<scalar_t*>(y), static_cast<C*>(mean), static_cast<C*>(rstd), rows, cols, eps, rms);
  });
}

void RowNormBackward::cpu(DType dtype, const void* dy, const void* x, const void* mean, const void* rstd,
                          const void* weight, void* dx, void* dweight, void* dbias, int64_t rows, int64_t cols,
                          bool rms) {
  using namespace cpu;  // NOLINT: the helpers above
  COLONY_DISPATCH_FLOATING(dtype, rms ? "rms_norm_backward" : "layer_norm_backward", [&] {
    using C = compute_t<scalar_t>;
    if (rows == 0) {
      // No rows: the parameter gradients are zero sums.
      if (dweight) std::fill_n(static_cast<C*>(dweight), cols, C(0));
      if (dbias) std::fill_n(static_cast<C*>(dbias), cols, C(0));
      return;
    }
    backward_typed(static_cast<const scalar_t*>(dy), static_cast<const scalar_t*>(x), static_cast<const C*>(mean),
                   static_cast<const C*>(rstd), static_cast<const C*>(weight), static_cast<scalar_t*>(dx),
                   static_cast<C*>(dweight), static_cast<C*>(dbias), rows, cols, rms);
  });
}

}  // namespace colony::kernels
