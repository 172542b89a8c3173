#include "kernels/common/reduce.h"

#include <cuda_runtime.h>

#include <climits>
#include <stdexcept>
#include <string>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/common/dispatch.h"
#include "kernels/common/sum_dtype.h"
#include "kernels/common/vector_norm.h"
#include "kernels/cuda/row_reduce.cuh"
#include "runtime/cuda/workspaces.h"

namespace colony::kernels::cuda {
namespace {

template <typename T>
using sum_acc_t = std::conditional_t<std::is_floating_point_v<compute_t<T>>, compute_t<T>, int64_t>;

template <typename Y, typename Acc>
__device__ __forceinline__ Y finish_sum(Acc acc, double scale) {
  if constexpr (std::is_floating_point_v<Acc>) {
    return static_cast<Y>(static_cast<Acc>(acc * static_cast<Acc>(scale)));
  } else {
    return static_cast<Y>(acc);
  }
}

// Row reductions are written once, over a reducer R: how an element enters a thread's state
// (R::init, R::add, which sees the element's index in its row) and how two states meet (R::Merge,
// exact or order-insensitive, so the tree's shape cannot change the result); `out(row, state)`
// writes a row's final state. rows_kernel gives each row a warp or a block. Few long rows (a full
// reduction is one) take two passes over the whole device (kernels::split_rows):
// row_chunks_kernel leaves one state per block of a row, merge_rows_kernel merges a row's states.
template <bool kWarp, typename R, typename T, typename Out>
__global__ void rows_kernel(const T* x, int64_t rows, int64_t len, Out out) {
  using S = typename R::State;
  __shared__ S shared[32];
  RowGroup<kWarp> g;
  for (int64_t row = g.first; row < rows; row += g.stride) {
    const T* xr = x + row * len;
    S s = R::init();
    for (int64_t i = g.lane; i < len; i += g.size) R::add(s, xr[i], i);
    s = group_allreduce<kWarp>(s, typename R::Merge{}, shared);
    if (g.lane == 0) out(row, s);
  }
}

// Pass 1: block (s, row) reduces elements [s * chunk, (s + 1) * chunk) of its row (none is empty).
template <typename R, typename T>
__global__ void row_chunks_kernel(const T* x, typename R::State* partials, int64_t len, RowSplit split) {
  using S = typename R::State;
  __shared__ S shared[32];
  const int64_t row = blockIdx.y, begin = static_cast<int64_t>(blockIdx.x) * split.chunk;
  const int64_t end = begin + split.chunk < len ? begin + split.chunk : len;
  const T* xr = x + row * len;
  S s = R::init();
  for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) R::add(s, xr[i], i);
  s = block_allreduce(s, typename R::Merge{}, shared);
  if (threadIdx.x == 0) partials[row * split.splits + blockIdx.x] = s;
}

// Pass 2: each row's `splits` block states merged.
template <bool kWarp, typename R, typename Out>
__global__ void merge_rows_kernel(const typename R::State* partials, int64_t rows, int64_t splits, Out out) {
  using S = typename R::State;
  __shared__ S shared[32];
  RowGroup<kWarp> g;
  for (int64_t row = g.first; row < rows; row += g.stride) {
    S s = R::init();
    for (int64_t i = g.lane; i < splits; i += g.size) s = typename R::Merge{}(s, partials[row * splits + i]);
    s = group_allreduce<kWarp>(s, typename R::Merge{}, shared);
    if (g.lane == 0) out(row, s);
  }
}

template <typename T>
struct SumReducer {
  using State = sum_acc_t<T>;
  using Merge = Plus;
  __device__ __forceinline__ static State init() { return State(0); }
  __device__ __forceinline__ static void add(State& s, T x, int64_t) { s += static_cast<State>(x); }
};

template <typename Y, typename Acc>
struct SumOut {
  Y* y;
  double scale;
  __device__ __forceinline__ void operator()(int64_t row, Acc acc) const { y[row] = finish_sum<Y>(acc, scale); }
};

// What an element adds to a sum: itself (Sum) or its square (VectorNorm2; the math is
// kernels/common/vector_norm.h's, shared with the CPU).
struct Plain {
  template <typename Acc, typename T>
  __device__ __forceinline__ static Acc term(T x) {
    return static_cast<Acc>(x);
  }
};

struct Squared {
  template <typename Acc, typename T>
  __device__ __forceinline__ static Acc term(T x) {
    return square_term<Acc>(x);
  }
};

template <typename T>
struct Norm2Reducer {
  using State = compute_t<T>;
  using Merge = Plus;
  __device__ __forceinline__ static State init() { return State(0); }
  __device__ __forceinline__ static void add(State& s, T x, int64_t) { s += square_term<State>(x); }
};

template <typename T>
struct Norm2Out {
  T* y;
  __device__ __forceinline__ void operator()(int64_t i, compute_t<T> sum_of_squares) const {
    y[i] = static_cast<T>(norm_from_sum_of_squares(sum_of_squares));
  }
};

constexpr int kColumnSplit = 8;  // threads per column, each summing every 8th row (kColumnTile wide)

// Block (32, 8): column blockIdx.x * 32 + threadIdx.x of slab o; partial sums meet in shared memory,
// and out(o * inner + column, sum) writes each.
template <typename Term, typename T, typename Out>
__global__ void sum_columns_kernel(const T* x, int64_t outer, int64_t len, int64_t inner, Out out) {
  using Acc = sum_acc_t<T>;
  __shared__ Acc part[kColumnSplit][kColumnTile + 1];
  int64_t col = static_cast<int64_t>(blockIdx.x) * kColumnTile + threadIdx.x;
  for (int64_t o = blockIdx.y; o < outer; o += gridDim.y) {
    Acc acc = Acc(0);
    if (col < inner) {
      const T* xo = x + o * len * inner + col;
      for (int64_t r = threadIdx.y; r < len; r += kColumnSplit) acc += Term::template term<Acc>(xo[r * inner]);
    }
    part[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && col < inner) {
      Acc s = part[0][threadIdx.x];
      for (int k = 1; k < kColumnSplit; ++k) s += part[k][threadIdx.x];
      out(o * inner + col, s);
    }
    __syncthreads();
  }
}

// Pass 1 of a split column sum: block (tile, s, o) adds up rows [s * chunk, (s + 1) * chunk) of its
// kColumnTile columns of slab o into partials [outer, splits, inner], which sum_columns_kernel
// then sums as a [outer, splits, inner] array (Plain: the partials are sums already).
template <typename Term, typename T>
__global__ void sum_column_chunks_kernel(const T* x, sum_acc_t<T>* partials, int64_t len, int64_t inner,
                                         RowSplit split) {
  using Acc = sum_acc_t<T>;
  __shared__ Acc part[kColumnSplit][kColumnTile + 1];
  const int64_t col = static_cast<int64_t>(blockIdx.x) * kColumnTile + threadIdx.x, o = blockIdx.z;
  const int64_t begin = static_cast<int64_t>(blockIdx.y) * split.chunk;
  const int64_t end = begin + split.chunk < len ? begin + split.chunk : len;
  Acc acc = Acc(0);
  if (col < inner) {
    const T* xo = x + o * len * inner + col;
    for (int64_t r = begin + threadIdx.y; r < end; r += kColumnSplit) acc += Term::template term<Acc>(xo[r * inner]);
  }
  part[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y == 0 && col < inner) {
    Acc s = part[0][threadIdx.x];
    for (int k = 1; k < kColumnSplit; ++k) s += part[k][threadIdx.x];
    partials[(o * split.splits + blockIdx.y) * inner + col] = s;
  }
}

template <typename Acc>
struct Welford {
  int64_t n;
  Acc mean, m2;
};

template <typename Acc>
__device__ __forceinline__ Welford<Acc> shfl_xor(Welford<Acc> s, int mask) {
  return {cuda::shfl_xor(s.n, mask), cuda::shfl_xor(s.mean, mask), cuda::shfl_xor(s.m2, mask)};  // the scalar overloads
}

struct WelfordMerge {
  template <typename Acc>
  __device__ __forceinline__ Welford<Acc> operator()(Welford<Acc> a, Welford<Acc> b) const {
    if (a.n == 0) return b;
    if (b.n == 0) return a;
    int64_t n = a.n + b.n;
    Acc delta = b.mean - a.mean;
    Acc b_frac = static_cast<Acc>(b.n) / static_cast<Acc>(n);
    return {n, a.mean + delta * b_frac, a.m2 + b.m2 + delta * delta * static_cast<Acc>(a.n) * b_frac};
  }
};

template <typename T>
struct VarReducer {
  using Acc = compute_t<T>;
  using State = Welford<Acc>;
  using Merge = WelfordMerge;
  __device__ __forceinline__ static State init() { return {0, Acc(0), Acc(0)}; }
  __device__ __forceinline__ static void add(State& s, T x, int64_t) {
    const Acc v = static_cast<Acc>(x);
    ++s.n;
    Acc delta = v - s.mean;
    s.mean += delta / static_cast<Acc>(s.n);
    s.m2 += delta * (v - s.mean);
  }
};

// The variance, divided by max(0, len - correction).
template <typename T>
struct VarOut {
  T* y;
  int64_t len, correction;
  __device__ __forceinline__ void operator()(int64_t row, const Welford<compute_t<T>>& s) const {
    using Acc = compute_t<T>;
    Acc denom = static_cast<Acc>(len - correction > 0 ? len - correction : 0);
    Acc nan = std::numeric_limits<Acc>::quiet_NaN();
    y[row] = static_cast<T>(len == 0 ? nan : s.m2 / denom);
  }
};

// A candidate extreme: value and index; idx == kNoIndex marks a thread that saw no element.
constexpr int64_t kNoIndex = LLONG_MAX;

template <typename C>
struct Extreme {
  C v;
  int64_t idx;
};

template <typename C>
__device__ __forceinline__ Extreme<C> shfl_xor(Extreme<C> s, int mask) {
  return {cuda::shfl_xor(s.v, mask), cuda::shfl_xor(s.idx, mask)};  // the scalar overloads
}

// Symmetric in its arguments (ties go to the lower index), so the tree's shape cannot change
// which occurrence wins.
template <bool kMax>
struct ExtremeMerge {
  template <typename C>
  __device__ __forceinline__ Extreme<C> operator()(Extreme<C> a, Extreme<C> b) const {
    if (a.idx == kNoIndex) return b;
    if (b.idx == kNoIndex) return a;
    bool an = is_nan(a.v), bn = is_nan(b.v);
    if (an || bn) {
      if (an && bn) return a.idx < b.idx ? a : b;
      return an ? a : b;
    }
    if (a.v == b.v) return a.idx < b.idx ? a : b;
    return (kMax ? a.v > b.v : a.v < b.v) ? a : b;
  }
};

// Small integers and bool travel through shuffles as int.
template <typename T>
using extreme_t = std::conditional_t<(sizeof(compute_t<T>) < 4), int, compute_t<T>>;

template <bool kMax, typename T>
struct ExtremeReducer {
  using C = extreme_t<T>;
  using State = Extreme<C>;
  using Merge = ExtremeMerge<kMax>;
  __device__ __forceinline__ static State init() { return {C(0), kNoIndex}; }
  // Each thread sees its elements in increasing index order: a strict improvement is needed to
  // replace, and a NaN, once held, is kept.
  __device__ __forceinline__ static void add(State& s, T x, int64_t i) {
    C v = static_cast<C>(static_cast<compute_t<T>>(x));
    bool take = s.idx == kNoIndex || (!is_nan(s.v) && (is_nan(v) || (kMax ? v > s.v : v < s.v)));
    if (take) s = {v, i};
  }
};

template <typename T>
struct ExtremeOut {
  T* values;          // may be null
  int64_t* indices;   // may be null
  __device__ __forceinline__ void operator()(int64_t row, const Extreme<extreme_t<T>>& s) const {
    if (values != nullptr) values[row] = static_cast<T>(static_cast<compute_t<T>>(s.v));
    if (indices != nullptr) indices[row] = s.idx;
  }
};

template <typename Kernel, typename... Args>
void launch_rows(Kernel warp_kernel, Kernel block_kernel, int64_t rows, int64_t len, void* stream, const char* op,
                 Args... args) {
  if (rows == 0) return;
  bool warp = use_warp_rows(len);
  (warp ? warp_kernel : block_kernel)<<<row_blocks(rows, warp), kRowThreads, 0, as_stream(stream)>>>(
      args...);
  after_launch(op);
}

// Device workspace reduce_rows needs with R for this shape (0: one pass, none).
template <typename R>
size_t rows_workspace_bytes(int64_t rows, int64_t len) {
  const RowSplit split = split_rows(rows, len);
  return split.splits > 1 ? static_cast<size_t>(rows * split.splits) * sizeof(typename R::State) : 0;
}

// Reduces each of `rows` contiguous rows of `len` elements with R and writes it through `out`: in
// one pass, or in two through `workspace` (rows_workspace_bytes<R>).
template <typename R, typename T, typename Out>
void reduce_rows(const T* x, int64_t rows, int64_t len, Out out, void* workspace, void* stream, const char* op) {
  const RowSplit split = split_rows(rows, len);
  if (split.splits <= 1) {
    launch_rows(rows_kernel<true, R, T, Out>, rows_kernel<false, R, T, Out>, rows, len, stream, op, x, rows, len,
                out);
    return;
  }
  auto* partials = static_cast<typename R::State*>(workspace);
  if (partials == nullptr) throw std::invalid_argument(std::string(op) + ": this shape needs a device workspace");
  row_chunks_kernel<R, T><<<dim3(static_cast<unsigned>(split.splits), static_cast<unsigned>(rows)), kRowThreads, 0,
                            as_stream(stream)>>>(x, partials, len, split);
  after_launch(op);
  launch_rows(merge_rows_kernel<true, R, Out>, merge_rows_kernel<false, R, Out>, rows, split.splits, stream, op,
              static_cast<const typename R::State*>(partials), rows, split.splits, out);
}

// Few long rows, or few column tiles over many rows, are summed in two passes (split > 1).
RowSplit sum_split(int64_t outer, int64_t len, int64_t inner) {
  return inner == 1 ? split_rows(outer, len) : split_columns(outer, len, inner);
}

size_t sum_workspace_bytes(DType x_dtype, int64_t outer, int64_t len, int64_t inner) {
  if (outer == 0 || inner == 0) return 0;
  const RowSplit split = sum_split(outer, len, inner);
  if (split.splits <= 1) return 0;
  size_t acc_size = 8;  // int64 or double
  if (x_dtype == DType::Float32 || x_dtype == DType::Float16 || x_dtype == DType::BFloat16) acc_size = 4;
  return static_cast<size_t>(outer * split.splits * inner) * acc_size;
}

// The columns of [outer, len, inner] (inner > 1) summed over Term and written through `out`: in one
// pass, or in two through `workspace` (sum_workspace_bytes) when the split asks for it.
template <typename Term, typename T, typename Out>
void sum_columns(const T* x, int64_t outer, int64_t len, int64_t inner, Out out, void* workspace, void* stream,
                 const char* op) {
  using Acc = sum_acc_t<T>;
  const RowSplit split = sum_split(outer, len, inner);
  const unsigned tiles = static_cast<unsigned>(ceil_div(inner, kColumnTile));
  const dim3 block(kColumnTile, kColumnSplit);
  const dim3 slabs(tiles, static_cast<unsigned>(std::min<int64_t>(outer, kMaxGridY)));
  if (split.splits > 1) {
    auto* partials = static_cast<Acc*>(workspace);
    if (partials == nullptr) throw std::invalid_argument(std::string(op) + ": this shape needs a workspace");
    const dim3 chunks(tiles, static_cast<unsigned>(split.splits), static_cast<unsigned>(outer));
    sum_column_chunks_kernel<Term, T><<<chunks, block, 0, as_stream(stream)>>>(x, partials, len, inner, split);
    after_launch(op);
    sum_columns_kernel<Plain, Acc, Out><<<slabs, block, 0, as_stream(stream)>>>(static_cast<const Acc*>(partials),
                                                                               outer, split.splits, inner, out);
  } else {
    sum_columns_kernel<Term, T, Out><<<slabs, block, 0, as_stream(stream)>>>(x, outer, len, inner, out);
  }
  after_launch(op);
}

void sum(DType x_dtype, const void* x, DType y_dtype, void* y, int64_t outer, int64_t len, int64_t inner,
         double scale, void* workspace, void* stream) {
  COLONY_DISPATCH_ALL(x_dtype, "sum", [&] {
    using Y = sum_out_t<scalar_t>;
    check_sum_out<scalar_t>(x_dtype, y_dtype);
    const auto* xp = static_cast<const scalar_t*>(x);
    const SumOut<Y, sum_acc_t<scalar_t>> out{static_cast<Y*>(y), scale};
    if (outer == 0 || inner == 0) return;
    if (inner == 1) {
      reduce_rows<SumReducer<scalar_t>>(xp, outer, len, out, workspace, stream, "sum");
    } else {
      sum_columns<Plain>(xp, outer, len, inner, out, workspace, stream, "sum");
    }
  });
}

// The same passes as sum's, over squares; the workspace is sum's for float types.
void vector_norm2(DType dtype, const void* x, void* y, int64_t outer, int64_t len, int64_t inner, void* workspace,
                  void* stream) {
  COLONY_DISPATCH_FLOATING(dtype, "vector_norm", [&] {
    const auto* xp = static_cast<const scalar_t*>(x);
    const Norm2Out<scalar_t> out{static_cast<scalar_t*>(y)};
    if (outer == 0 || inner == 0) return;
    if (inner == 1) {
      reduce_rows<Norm2Reducer<scalar_t>>(xp, outer, len, out, workspace, stream, "vector_norm");
    } else {
      sum_columns<Squared>(xp, outer, len, inner, out, workspace, stream, "vector_norm");
    }
  });
}

size_t var_workspace_bytes(DType dtype, int64_t rows, int64_t len) {
  size_t bytes = 0;
  COLONY_DISPATCH_FLOATING(dtype, "var", [&] { bytes = rows_workspace_bytes<VarReducer<scalar_t>>(rows, len); });
  return bytes;
}

void var(DType dtype, const void* x, void* y, int64_t rows, int64_t len, int64_t correction, void* workspace,
         void* stream) {
  COLONY_DISPATCH_FLOATING(dtype, "var", [&] {
    reduce_rows<VarReducer<scalar_t>>(static_cast<const scalar_t*>(x), rows, len,
                                      VarOut<scalar_t>{static_cast<scalar_t*>(y), len, correction}, workspace, stream,
                                      "var");
  });
}

size_t max_min_workspace_bytes(DType dtype, int64_t rows, int64_t len) {
  size_t bytes = 0;
  // max and min keep the same state.
  COLONY_DISPATCH_ALL(dtype, "max_min",
                      [&] { bytes = rows_workspace_bytes<ExtremeReducer<true, scalar_t>>(rows, len); });
  return bytes;
}

void max_min(DType dtype, const void* x, void* values, int64_t* indices, int64_t rows, int64_t len, bool is_max,
             void* workspace, void* stream) {
  if (len < 1) throw std::invalid_argument("max_min: rows must not be empty");
  COLONY_DISPATCH_ALL(dtype, is_max ? "max" : "min", [&] {
    const auto* xp = static_cast<const scalar_t*>(x);
    const ExtremeOut<scalar_t> out{static_cast<scalar_t*>(values), indices};
    if (is_max) {
      reduce_rows<ExtremeReducer<true, scalar_t>>(xp, rows, len, out, workspace, stream, "max");
    } else {
      reduce_rows<ExtremeReducer<false, scalar_t>>(xp, rows, len, out, workspace, stream, "min");
    }
  });
}

}  // namespace
}  // namespace colony::kernels::cuda

namespace colony::kernels {

using namespace cuda;  // NOLINT(build/namespaces): the helpers above

// Each takes the workspace its shape needs (none for most) for the call, from the caching allocator.
void Sum::cuda(DType x_dtype, const void* x, DType y_dtype, void* y, int64_t outer, int64_t len, int64_t inner,
               double scale, void* stream) {
  KernelScratch workspace(sum_workspace_bytes(x_dtype, outer, len, inner));
  kernels::cuda::sum(x_dtype, x, y_dtype, y, outer, len, inner, scale, workspace.get(), stream);
}

void VectorNorm2::cuda(DType dtype, const void* x, void* y, int64_t outer, int64_t len, int64_t inner, void* stream) {
  KernelScratch workspace(sum_workspace_bytes(dtype, outer, len, inner));
  kernels::cuda::vector_norm2(dtype, x, y, outer, len, inner, workspace.get(), stream);
}

void Var::cuda(DType dtype, const void* x, void* y, int64_t rows, int64_t len, int64_t correction, void* stream) {
  KernelScratch workspace(var_workspace_bytes(dtype, rows, len));
  kernels::cuda::var(dtype, x, y, rows, len, correction, workspace.get(), stream);
}

void MaxMin::cuda(DType dtype, const void* x, void* values, int64_t* indices, int64_t rows, int64_t len, bool is_max,
                  void* stream) {
  KernelScratch workspace(max_min_workspace_bytes(dtype, rows, len));
  kernels::cuda::max_min(dtype, x, values, indices, rows, len, is_max, workspace.get(), stream);
}

}  // namespace colony::kernels
