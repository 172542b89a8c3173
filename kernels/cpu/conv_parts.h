// What the CPU convolutions of any rank share (conv.cc for 2-D, conv3d.cc for 3-D): the split of a
// batch over the thread pool, each part's private weight and bias gradients, the range of output
// positions whose window tap lies inside the input, and GEMM operands by layout.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/common/matrix.h"
#include "kernels/cpu/parallel.h"

namespace colony::kernels::cpu::conv_parts {

// Waking a pool thread costs several microseconds; below ~100K multiply-adds per chunk the work is
// cheaper on one thread (LeNet's smallest layer does ~240K per image).
constexpr double kMinChunkMacs = 1e5;

// Images [begin, end) of part p when `batch` images are dealt to `parts` parts.
inline int64_t part_begin(int64_t batch, int64_t parts, int64_t p) { return batch * p / parts; }

// How many parts `batch` images of `macs` multiply-adds in all are split into: at most one per
// thread and per image, and no part under kMinChunkMacs.
inline int64_t choose_parts(int64_t batch, double macs) {
  int64_t by_work = std::max<int64_t>(1, static_cast<int64_t>(macs / kMinChunkMacs));
  return std::max<int64_t>(1, std::min<int64_t>({static_cast<int64_t>(num_threads()), batch, by_work}));
}

// Runs fn(part, first_image, end_image) for every part, one part per pool chunk.
template <typename F>
void for_each_part(int64_t batch, int64_t parts, const F& fn) {
  parallel_for(parts, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) fn(p, part_begin(batch, parts, p), part_begin(batch, parts, p + 1));
  });
}

// Each part's private weight and bias gradients, a cache line apart so parts never share one.
template <typename T>
struct PartialGrads {
  int64_t stride = 0;
  std::vector<T> data;
  PartialGrads(int64_t parts, int64_t size) : stride((size + 15) / 16 * 16), data(parts * stride, T(0)) {}
  T* part(int64_t p) { return data.data() + p * stride; }
  // out[i] = sum over parts, in part order (deterministic for a given thread count), rounded to
  // out's type once.
  template <typename S>
  void reduce_into(S* out, int64_t offset, int64_t n, int64_t parts) const {
    for (int64_t i = 0; i < n; ++i) {
      T s = T(0);
      for (int64_t p = 0; p < parts; ++p) s += data[p * stride + offset + i];
      out[i] = S(s);
    }
  }
};

// Output positions [lo, hi) whose input position x * stride + offset lies in [0, size), of `out`
// (offset = tap * dilation - pad).
struct ValidRange {
  int64_t lo, hi;
};
inline ValidRange valid_outputs(int64_t size, int64_t out, int64_t stride, int64_t offset) {
  int64_t lo = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  int64_t hi = size - 1 - offset >= 0 ? std::min(out, (size - 1 - offset) / stride + 1) : 0;
  return {std::min(lo, hi), hi};
}

inline MatrixArg row_major(const void* data, int64_t ld) { return MatrixArg{data, ld, false, 0}; }
inline MatrixArg col_major(const void* data, int64_t ld) { return MatrixArg{data, ld, true, 0}; }

}  // namespace colony::kernels::cpu::conv_parts
