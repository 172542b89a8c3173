#include "kernels/common/index.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/common/dispatch.h"
#include "kernels/cpu/parallel.h"

namespace colony::kernels::cpu {
namespace {

constexpr int64_t kGrainElements = 16384;

// Offsets of the column `c` (a position over every dim except `dim`) in `n` stride sets.
void column_offsets(int64_t c, const StridedLayout& shape, int dim, const int64_t* const* strides, int n,
                    int64_t* offsets) {
  for (int s = 0; s < n; ++s) offsets[s] = 0;
  for (int d = shape.ndim - 1; d >= 0; --d) {
    if (d == dim) continue;
    int64_t coord = c % shape.sizes[d];
    c /= shape.sizes[d];
    for (int s = 0; s < n; ++s) offsets[s] += coord * strides[s][d];
  }
}

// Calls fn(offsets) for every column of `shape` along `dim` in parallel.
template <typename F>
void for_each_column(const StridedLayout& shape, int dim, const int64_t* const* strides, int n, F&& fn) {
  int64_t numel = shape.numel();
  if (numel == 0) return;
  int64_t len = shape.sizes[dim];
  int64_t columns = numel / len;
  parallel_for(columns, std::max<int64_t>(1, kGrainElements / len), [&](int64_t b, int64_t e) {
    int64_t offsets[3];
    for (int64_t c = b; c < e; ++c) {
      column_offsets(c, shape, dim, strides, n, offsets);
      fn(offsets);
    }
  });
}

// The front functions' message for an index outside [0, size): gather and scatter check their
// index on the CPU as they read it, where a pass before the kernel (amin, then amax) read it twice
// more (scatter_add's [4096, 1024] int64 index: 64 MiB).
[[noreturn]] void index_out_of_range(const char* op, int64_t value, int dim, int64_t size) {
  throw std::out_of_range(std::string(op) + ": index " + std::to_string(value) + " is out of range for dimension " +
                          std::to_string(dim) + " with size " + std::to_string(size));
}

// Whether every index of a run of n is in [0, size): one unsigned compare each, in vectors.
inline bool run_in_range(const int64_t* index, int64_t n, int64_t size) {
  bool bad = false;
  for (int64_t j = 0; j < n; ++j) bad |= static_cast<uint64_t>(index[j]) >= static_cast<uint64_t>(size);
  return !bad;
}

// Checks a dense run of n indices, naming its first index outside [0, size).
inline void check_run(const char* op, const int64_t* index, int64_t n, int dim, int64_t size) {
  if (run_in_range(index, n, size)) return;
  for (int64_t j = 0; j < n; ++j) {
    if (static_cast<uint64_t>(index[j]) >= static_cast<uint64_t>(size)) index_out_of_range(op, index[j], dim, size);
  }
}

inline int64_t checked(const char* op, int64_t value, int dim, int64_t size) {
  if (static_cast<uint64_t>(value) >= static_cast<uint64_t>(size)) index_out_of_range(op, value, dim, size);
  return value;
}

template <typename W>
void gather_words(const W* x, const StridedLayout& xl, int dim, const int64_t* index, const StridedLayout& il, W* y) {
  StridedLayout yl = il;
  int64_t expected = 1;
  for (int d = yl.ndim - 1; d >= 0; --d) {
    yl.strides[d] = expected;
    expected *= yl.sizes[d];
  }
  const int64_t* strides[3] = {xl.strides, il.strides, yl.strides};
  int64_t len = il.sizes[dim], xs = xl.strides[dim], is = il.strides[dim], ys = yl.strides[dim];
  const int64_t size = xl.sizes[dim];
  // Runs along a dim where x, index and y are all dense (the last dim of contiguous tensors): the
  // run's indices are checked in one vector pass, then read by pointer.
  const bool dense = xs == 1 && is == 1 && ys == 1;
  for_each_column(il, dim, strides, 3, [&](const int64_t* off) {
    const int64_t* ir = index + off[1];
    if (dense) {
      check_run("gather", ir, len, dim, size);
      const W* xr = x + off[0];
      W* yr = y + off[2];
      for (int64_t j = 0; j < len; ++j) yr[j] = xr[ir[j]];
      return;
    }
    for (int64_t j = 0; j < len; ++j) y[off[2] + j * ys] = x[off[0] + checked("gather", ir[j * is], dim, size) * xs];
  });
}

}  // namespace

}  // namespace colony::kernels::cpu

namespace colony::kernels {

using namespace cpu;  // NOLINT(build/namespaces): the helpers above

void IndexSelect::cpu(int64_t elem_size, const void* x, void* y, int64_t outer, int64_t x_dim, int64_t inner,
                      const int64_t* index, int64_t n) {
  int64_t block = inner * elem_size;
  const char* xp = static_cast<const char*>(x);
  char* yp = static_cast<char*>(y);
  parallel_for(outer * n, std::max<int64_t>(1, kGrainElements / std::max<int64_t>(1, inner)),
               [&](int64_t b, int64_t e) {
                 for (int64_t t = b; t < e; ++t) {
                   int64_t o = t / n, j = t % n;
                   std::memcpy(yp + t * block, xp + (o * x_dim + index[j]) * block, static_cast<size_t>(block));
                 }
               });
}

void IndexAdd::cpu(DType dtype, void* out, const void* src, int64_t outer, int64_t out_dim, int64_t inner,
                   const int64_t* index, int64_t n) {
  COLONY_DISPATCH_ALL(dtype, "index_add", [&] {
    using C = compute_t<scalar_t>;
    auto* op = static_cast<scalar_t*>(out);
    const auto* sp = static_cast<const scalar_t*>(src);
    // Threads split the (outer, inner) positions; each walks all of index for its positions, so
    // repeated indices never race.
    constexpr int64_t kWidth = 256;
    int64_t col_blocks = (inner + kWidth - 1) / kWidth;
    int64_t grain = std::max<int64_t>(1, kGrainElements / std::max<int64_t>(1, n * std::min(inner, kWidth)));
    parallel_for(outer * col_blocks, grain, [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) {
        int64_t o = t / col_blocks, c0 = (t % col_blocks) * kWidth, c1 = std::min(inner, c0 + kWidth);
        for (int64_t j = 0; j < n; ++j) {
          scalar_t* dst = op + (o * out_dim + index[j]) * inner;
          const scalar_t* s = sp + (o * n + j) * inner;
          for (int64_t c = c0; c < c1; ++c) dst[c] = static_cast<scalar_t>(static_cast<C>(dst[c]) + static_cast<C>(s[c]));
        }
      }
    });
  });
}

void Gather::cpu(int64_t elem_size, const void* x, const StridedLayout& x_layout, int dim, const int64_t* index,
                 const StridedLayout& index_layout, void* y) {
  switch (elem_size) {
    case 1: return gather_words(static_cast<const uint8_t*>(x), x_layout, dim, index, index_layout, static_cast<uint8_t*>(y));
    case 2: return gather_words(static_cast<const uint16_t*>(x), x_layout, dim, index, index_layout, static_cast<uint16_t*>(y));
    case 4: return gather_words(static_cast<const uint32_t*>(x), x_layout, dim, index, index_layout, static_cast<uint32_t*>(y));
    case 8: return gather_words(static_cast<const uint64_t*>(x), x_layout, dim, index, index_layout, static_cast<uint64_t*>(y));
    default: throw std::invalid_argument("gather: unsupported element size " + std::to_string(elem_size));
  }
}

namespace {

// out[p with dim replaced by index[p]] = combine(that, src[p]), each run along dim on one thread
// and in index order (the result is that of a sequential loop, bit for bit, as torch's CPU kernel).
template <typename F>
void scatter_columns(DType dtype, const char* name, void* out, const StridedLayout& out_layout, int dim,
                     const int64_t* index, const StridedLayout& index_layout, const void* src,
                     const StridedLayout& src_layout, F combine) {
  COLONY_DISPATCH_ALL(dtype, name, [&] {
    using C = compute_t<scalar_t>;
    auto* op = static_cast<scalar_t*>(out);
    const auto* sp = static_cast<const scalar_t*>(src);
    const int64_t* strides[3] = {out_layout.strides, index_layout.strides, src_layout.strides};
    int64_t len = index_layout.sizes[dim], os = out_layout.strides[dim], is = index_layout.strides[dim],
            ss = src_layout.strides[dim];
    const int64_t size = out_layout.sizes[dim];
    // Runs along a dim where out, index and src are all dense (the last dim of contiguous
    // tensors): the run's indices checked in one vector pass, then read by pointer.
    const bool dense = os == 1 && is == 1 && ss == 1;
    for_each_column(index_layout, dim, strides, 3, [&](const int64_t* off) {
      const int64_t* ir = index + off[1];
      if (dense) {
        check_run(name, ir, len, dim, size);
        scalar_t* orow = op + off[0];
        const scalar_t* srow = sp + off[2];
        for (int64_t j = 0; j < len; ++j) {
          scalar_t& dst = orow[ir[j]];
          dst = static_cast<scalar_t>(combine(static_cast<C>(dst), static_cast<C>(srow[j])));
        }
        return;
      }
      for (int64_t j = 0; j < len; ++j) {
        scalar_t& dst = op[off[0] + checked(name, ir[j * is], dim, size) * os];
        dst = static_cast<scalar_t>(combine(static_cast<C>(dst), static_cast<C>(sp[off[2] + j * ss])));
      }
    });
  });
}

}  // namespace

void ScatterAdd::cpu(DType dtype, void* out, const StridedLayout& out_layout, int dim, const int64_t* index,
                     const StridedLayout& index_layout, const void* src, const StridedLayout& src_layout) {
  scatter_columns(dtype, "scatter_add", out, out_layout, dim, index, index_layout, src, src_layout,
                  [](auto a, auto b) { return a + b; });
}

void ScatterReduce::cpu(ScatterOp op, DType dtype, void* out, const StridedLayout& out_layout, int dim,
                        const int64_t* index, const StridedLayout& index_layout, const void* src,
                        const StridedLayout& src_layout) {
  scatter_columns(dtype, "scatter", out, out_layout, dim, index, index_layout, src, src_layout,
                  [op](auto a, auto b) { return scatter_combine(op, a, b); });
}

void OneHot::cpu(const int64_t* labels, int64_t n, int64_t num_classes, int64_t* y) {
  for (int64_t i = 0; i < n; ++i) y[i * num_classes + labels[i]] = 1;
}

}  // namespace colony::kernels
