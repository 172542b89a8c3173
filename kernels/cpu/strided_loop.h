// The CPU elementwise loop over strided operands. The coalesced shape (kernels/common/multi_layout.h)
// is split into chunks of the row-major walk for parallel_for; inside a chunk the innermost dimension
// is a plain inner loop and the outer index advances like an odometer, so no element pays for a
// division. Inner runs whose operands are dense take a loop the compiler vectorizes.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/common/layout.h"
#include "kernels/common/multi_layout.h"
#include "kernels/cpu/parallel.h"

namespace colony::kernels::cpu {

// Elements per thread below which an elementwise op is not split: about 32K elements (128 KiB of
// float32 per operand) keeps the cost of waking a worker well under the work it is given.
constexpr int64_t kElementwiseGrain = 32768;

// Dense inner loops promise the vectorizer that iterations are independent. That holds because an
// input is either the output itself (same element, same index) or does not overlap it at all: the
// front functions clone partially overlapping inputs first. Without the promise, GCC's -O2 cost
// model refuses loops that would need a runtime alias check, which is most of them.
#if defined(__clang__)
#define COLONY_IVDEP _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__)
#define COLONY_IVDEP _Pragma("GCC ivdep")
#else
#define COLONY_IVDEP
#endif

template <int K>
struct StridedLoop {
  int ndim = 1;
  int64_t numel = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t strides[K][kMaxDims] = {};  // bytes
  char* data[K] = {};
};

// Operand 0 is the output; every layout has its sizes.
template <int K>
StridedLoop<K> make_loop(char* const (&data)[K], const StridedLayout* const (&layouts)[K],
                         const int64_t (&element_sizes)[K]) {
  MultiLayout<K> m = make_multi_layout<K>(layouts);
  StridedLoop<K> loop;
  loop.numel = m.numel;
  loop.ndim = m.ndim == 0 ? 1 : m.ndim;
  if (m.ndim == 0) loop.sizes[0] = 1;  // every stride stays 0
  for (int d = 0; d < m.ndim; ++d) {
    loop.sizes[d] = m.sizes[d];
    for (int k = 0; k < K; ++k) loop.strides[k][d] = m.strides[k][d] * element_sizes[k];
  }
  for (int k = 0; k < K; ++k) loop.data[k] = data[k];
  return loop;
}

// body(char* const* ptr, const int64_t* stride, int64_t n): n elements along the innermost dim,
// operand k at ptr[k] stepping stride[k] bytes.
template <int K, typename Body>
void run_range(const StridedLoop<K>& L, int64_t begin, int64_t end, const Body& body) {
  const int nd = L.ndim;
  const int64_t inner = L.sizes[nd - 1];
  int64_t idx[kMaxDims];
  char* ptr[K];
  int64_t inner_stride[K];
  for (int k = 0; k < K; ++k) {
    ptr[k] = L.data[k];
    inner_stride[k] = L.strides[k][nd - 1];
  }
  int64_t rest = begin;
  for (int d = nd - 1; d >= 0; --d) {
    idx[d] = rest % L.sizes[d];
    rest /= L.sizes[d];
    for (int k = 0; k < K; ++k) ptr[k] += idx[d] * L.strides[k][d];
  }
  int64_t i = begin;
  while (i < end) {
    int64_t n = std::min(inner - idx[nd - 1], end - i);
    body(ptr, inner_stride, n);
    i += n;
    if (i >= end) break;
    // The run reached the end of the innermost dim: rewind it and carry into the outer dims.
    for (int k = 0; k < K; ++k) ptr[k] -= idx[nd - 1] * inner_stride[k];
    idx[nd - 1] = 0;
    for (int d = nd - 2; d >= 0; --d) {
      ++idx[d];
      for (int k = 0; k < K; ++k) ptr[k] += L.strides[k][d];
      if (idx[d] < L.sizes[d]) break;
      for (int k = 0; k < K; ++k) ptr[k] -= idx[d] * L.strides[k][d];
      idx[d] = 0;
    }
  }
}

template <int K, typename Body>
void run_loop(const StridedLoop<K>& L, const Body& body) {
  if (L.numel == 0) return;
  parallel_for(L.numel, kElementwiseGrain, [&](int64_t begin, int64_t end) { run_range(L, begin, end, body); });
}

template <typename T>
inline T& at(char* p, int64_t stride, int64_t i) {
  return *reinterpret_cast<T*>(p + i * stride);
}

// out = f() for every element.
template <typename Out, typename F>
void map0(void* out, const StridedLayout& lout, const F& f) {
  auto loop = make_loop<1>({static_cast<char*>(out)}, {&lout}, {int64_t(sizeof(Out))});
  run_loop(loop, [&](char* const* p, const int64_t* s, int64_t n) {
    if (s[0] == int64_t(sizeof(Out))) {
      Out* o = reinterpret_cast<Out*>(p[0]);
      COLONY_IVDEP
      for (int64_t i = 0; i < n; ++i) o[i] = f();
    } else {
      for (int64_t i = 0; i < n; ++i) at<Out>(p[0], s[0], i) = f();
    }
  });
}

// Side of the square tiles a transposing map1 walks: two 32 x 32 tiles of float64 take 16 KiB,
// well inside L1, so both the reads and the writes use every cache line they touch.
constexpr int64_t kTransposeTile = 32;

// out = f(a) where, after coalescing, the walk is 2-D, out is dense along its inner dim and a is
// dense along the outer one (contiguous(t.transpose(0, 1)), a transposed conversion): walking rows
// would touch a new cache line of `a` per element, so the walk goes tile by tile instead.
template <typename Out, typename A, typename F>
void map1_transposed(const StridedLoop<2>& L, const F& f) {
  const int64_t rows = L.sizes[0], cols = L.sizes[1];
  const int64_t so0 = L.strides[0][0], so1 = L.strides[0][1], sa0 = L.strides[1][0], sa1 = L.strides[1][1];
  const int64_t row_tiles = (rows + kTransposeTile - 1) / kTransposeTile;
  const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / (kTransposeTile * cols));
  parallel_for(row_tiles, grain, [&](int64_t t0, int64_t t1) {
    for (int64_t rt = t0; rt < t1; ++rt) {
      const int64_t r0 = rt * kTransposeTile, r1 = std::min(rows, r0 + kTransposeTile);
      for (int64_t c0 = 0; c0 < cols; c0 += kTransposeTile) {
        const int64_t c1 = std::min(cols, c0 + kTransposeTile);
        for (int64_t r = r0; r < r1; ++r)
          for (int64_t c = c0; c < c1; ++c)
            *reinterpret_cast<Out*>(L.data[0] + r * so0 + c * so1) =
                f(*reinterpret_cast<const A*>(L.data[1] + r * sa0 + c * sa1));
      }
    }
  });
}

// out = f(a). Besides dense runs, runs where a is broadcast along the innermost dim (stride 0)
// compute f once per run.
template <typename Out, typename A, typename F>
void map1(void* out, const StridedLayout& lout, const void* a, const StridedLayout& la, const F& f) {
  auto loop = make_loop<2>({static_cast<char*>(out), const_cast<char*>(static_cast<const char*>(a))}, {&lout, &la},
                           {int64_t(sizeof(Out)), int64_t(sizeof(A))});
  // (A broadcast along the inner dim, stride 0, is no transpose: a row of the output is one value.)
  if (loop.ndim == 2 && loop.strides[0][1] == int64_t(sizeof(Out)) && loop.strides[1][0] == int64_t(sizeof(A)) &&
      loop.strides[1][1] != 0 && loop.sizes[0] >= kTransposeTile && loop.sizes[1] >= kTransposeTile) {
    map1_transposed<Out, A>(loop, f);
    return;
  }
  run_loop(loop, [&](char* const* p, const int64_t* s, int64_t n) {
    if (s[0] == int64_t(sizeof(Out)) && s[1] == int64_t(sizeof(A))) {
      Out* o = reinterpret_cast<Out*>(p[0]);
      const A* x = reinterpret_cast<const A*>(p[1]);
      COLONY_IVDEP
      for (int64_t i = 0; i < n; ++i) o[i] = f(x[i]);
    } else if (s[0] == int64_t(sizeof(Out)) && s[1] == 0) {
      // a broadcast along the inner dim (contiguous(expand(t)), a reduction's gradient): one value
      // per run, stored with the vector loop map0 has.
      Out* o = reinterpret_cast<Out*>(p[0]);
      const Out v = f(*reinterpret_cast<const A*>(p[1]));
      COLONY_IVDEP
      for (int64_t i = 0; i < n; ++i) o[i] = v;
    } else {
      for (int64_t i = 0; i < n; ++i) at<Out>(p[0], s[0], i) = f(at<A>(p[1], s[1], i));
    }
  });
}

// out = f(a, b). Besides dense runs, runs where one input is broadcast along the innermost dim
// (stride 0: a bias, a per-channel scale) read that input once.
template <typename Out, typename A, typename B, typename F>
void map2(void* out, const StridedLayout& lout, const void* a, const StridedLayout& la, const void* b,
          const StridedLayout& lb, const F& f) {
  auto loop = make_loop<3>({static_cast<char*>(out), const_cast<char*>(static_cast<const char*>(a)),
                            const_cast<char*>(static_cast<const char*>(b))},
                           {&lout, &la, &lb}, {int64_t(sizeof(Out)), int64_t(sizeof(A)), int64_t(sizeof(B))});
  run_loop(loop, [&](char* const* p, const int64_t* s, int64_t n) {
    const bool dense_out = s[0] == int64_t(sizeof(Out));
    const bool dense_a = s[1] == int64_t(sizeof(A)), dense_b = s[2] == int64_t(sizeof(B));
    Out* o = reinterpret_cast<Out*>(p[0]);
    const A* x = reinterpret_cast<const A*>(p[1]);
    const B* y = reinterpret_cast<const B*>(p[2]);
    if (dense_out && dense_a && dense_b) {
      COLONY_IVDEP
      for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], y[i]);
    } else if (dense_out && dense_a && s[2] == 0) {
      const B y0 = *y;
      COLONY_IVDEP
      for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], y0);
    } else if (dense_out && s[1] == 0 && dense_b) {
      const A x0 = *x;
      COLONY_IVDEP
      for (int64_t i = 0; i < n; ++i) o[i] = f(x0, y[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) at<Out>(p[0], s[0], i) = f(at<A>(p[1], s[1], i), at<B>(p[2], s[2], i));
    }
  });
}

// out = f(a, b, c). Besides dense runs, runs where b or c is broadcast along the innermost dim
// (stride 0: masked_fill's value, where(mask, x, 0.0)) read that input once, as map2's do.
template <typename Out, typename A, typename B, typename C, typename F>
void map3(void* out, const StridedLayout& lout, const void* a, const StridedLayout& la, const void* b,
          const StridedLayout& lb, const void* c, const StridedLayout& lc, const F& f) {
  auto loop = make_loop<4>({static_cast<char*>(out), const_cast<char*>(static_cast<const char*>(a)),
                            const_cast<char*>(static_cast<const char*>(b)),
                            const_cast<char*>(static_cast<const char*>(c))},
                           {&lout, &la, &lb, &lc},
                           {int64_t(sizeof(Out)), int64_t(sizeof(A)), int64_t(sizeof(B)), int64_t(sizeof(C))});
  run_loop(loop, [&](char* const* p, const int64_t* s, int64_t n) {
    const bool dense_oa = s[0] == int64_t(sizeof(Out)) && s[1] == int64_t(sizeof(A));
    const bool dense_b = s[2] == int64_t(sizeof(B)), dense_c = s[3] == int64_t(sizeof(C));
    Out* o = reinterpret_cast<Out*>(p[0]);
    const A* x = reinterpret_cast<const A*>(p[1]);
    const B* y = reinterpret_cast<const B*>(p[2]);
    const C* z = reinterpret_cast<const C*>(p[3]);
    if (dense_oa && dense_b && dense_c) {
      COLONY_IVDEP
      for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], y[i], z[i]);
    } else if (dense_oa && s[2] == 0 && dense_c) {
      const B y0 = *y;
      COLONY_IVDEP
      for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], y0, z[i]);
    } else if (dense_oa && dense_b && s[3] == 0) {
      const C z0 = *z;
      COLONY_IVDEP
      for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], y[i], z0);
    } else {
      for (int64_t i = 0; i < n; ++i)
        at<Out>(p[0], s[0], i) = f(at<A>(p[1], s[1], i), at<B>(p[2], s[2], i), at<C>(p[3], s[3], i));
    }
  });
}

}  // namespace colony::kernels::cpu
