#include "kernels/common/copy.h"

#include <algorithm>
#include <cstdint>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "kernels/common/convert.h"
#include "kernels/common/dispatch.h"
#include "kernels/cpu/bf16_rows.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/strided_loop.h"

namespace colony::kernels::cpu {
namespace {

// The copy of a transposed 2-D walk of 4- or 8-byte words (contiguous(t.transpose(0, 1)) of a
// float32, int32, float64 or int64 matrix): dst[r][c] = src[c][r], dst dense along c, src dense
// along r. map1's scalar tiles (strided_loop.h) moved one element per load and store through
// run-time byte strides, and with rows a power of two apart (4 KiB for 1024 floats) the 32 rows of
// a tile fall into the same L1 sets: 9 ms for a [1024, 4096] float32 copy. Here 8 x 8 (4 x 4 for
// 8-byte words) blocks are transposed in AVX2 registers, the project's baseline ISA
// (-march=x86-64-v3), so no run-time choice is needed; they are walked in 16 x 16 (8 x 8) tiles, so
// that every cache line of src and dst is used whole at once, inside 128 x 128 blocks. Edges that
// fill no tile are copied one element at a time.

// A tile's side: one 64-byte cache line of elements, so a tile's src rows and dst rows are each
// read or written whole.
template <typename W>
constexpr int64_t kTile = 64 / static_cast<int64_t>(sizeof(W));

#if defined(__AVX2__)
// dst[i * dst_row + j] = src[j * src_row + i] for i, j < 8: 8 rows in, 8 columns out.
inline void block_8x8(const uint32_t* src, int64_t src_row, uint32_t* dst, int64_t dst_row) {
  const float* s = reinterpret_cast<const float*>(src);
  float* d = reinterpret_cast<float*>(dst);
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(s + i * src_row);
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // r[4h + k], 128-bit lane l: words 4h..4h+3 of output column 4l + k (h: which half of the rows).
  for (int h = 0; h < 2; ++h) {
    r[4 * h] = _mm256_shuffle_ps(t[4 * h], t[4 * h + 2], _MM_SHUFFLE(1, 0, 1, 0));
    r[4 * h + 1] = _mm256_shuffle_ps(t[4 * h], t[4 * h + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[4 * h + 2] = _mm256_shuffle_ps(t[4 * h + 1], t[4 * h + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[4 * h + 3] = _mm256_shuffle_ps(t[4 * h + 1], t[4 * h + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int k = 0; k < 4; ++k) {
    _mm256_storeu_ps(d + k * dst_row, _mm256_permute2f128_ps(r[k], r[4 + k], 0x20));
    _mm256_storeu_ps(d + (4 + k) * dst_row, _mm256_permute2f128_ps(r[k], r[4 + k], 0x31));
  }
}

// The same for 8-byte words, 4 x 4.
inline void block_4x4(const uint64_t* src, int64_t src_row, uint64_t* dst, int64_t dst_row) {
  const double* s = reinterpret_cast<const double*>(src);
  double* d = reinterpret_cast<double*>(dst);
  const __m256d r0 = _mm256_loadu_pd(s), r1 = _mm256_loadu_pd(s + src_row), r2 = _mm256_loadu_pd(s + 2 * src_row),
                r3 = _mm256_loadu_pd(s + 3 * src_row);
  const __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1), t2 = _mm256_unpacklo_pd(r2, r3),
                t3 = _mm256_unpackhi_pd(r2, r3);
  _mm256_storeu_pd(d, _mm256_permute2f128_pd(t0, t2, 0x20));
  _mm256_storeu_pd(d + dst_row, _mm256_permute2f128_pd(t1, t3, 0x20));
  _mm256_storeu_pd(d + 2 * dst_row, _mm256_permute2f128_pd(t0, t2, 0x31));
  _mm256_storeu_pd(d + 3 * dst_row, _mm256_permute2f128_pd(t1, t3, 0x31));
}

inline void block(const uint32_t* src, int64_t src_row, uint32_t* dst, int64_t dst_row) {
  block_8x8(src, src_row, dst, dst_row);
}
inline void block(const uint64_t* src, int64_t src_row, uint64_t* dst, int64_t dst_row) {
  block_4x4(src, src_row, dst, dst_row);
}
#endif

// Side of the square blocks of tiles the walk takes in turn: 128 rows of src and 128 of dst, each
// typically on its own 4 KiB page, stay within the TLB, where a walk down a whole column of tiles
// touched a new page per tile (measured on Zen 4 with [1024, 4096] float32: 4.6 ms a copy against 5.1
// for whole strips of tiles and 9 for map1's scalar tiles, thread CPU time).
constexpr int64_t kPageBlock = 128;

// dst[r0:r1, c0:c1] with r1 - r0 and c1 - c0 at most a tile.
template <typename W>
void transpose_tile(const W* src, int64_t src_row, W* dst, int64_t dst_row, int64_t r0, int64_t r1, int64_t c0,
                    int64_t c1) {
  constexpr int64_t T = kTile<W>;
#if defined(__AVX2__)
  constexpr int64_t B = T / 2;  // one 32-byte register of words
  if (r1 - r0 == T && c1 - c0 == T) {
    for (int64_t bc = 0; bc < T; bc += B)
      for (int64_t br = 0; br < T; br += B)
        block(src + (c0 + bc) * src_row + r0 + br, src_row, dst + (r0 + br) * dst_row + c0 + bc, dst_row);
    return;
  }
#endif
  for (int64_t r = r0; r < r1; ++r)
    for (int64_t c = c0; c < c1; ++c) dst[r * dst_row + c] = src[c * src_row + r];
}

template <typename W>
void transpose_words(const W* src, int64_t src_row, W* dst, int64_t dst_row, int64_t rows, int64_t cols) {
  constexpr int64_t T = kTile<W>;
  const int64_t strips = (rows + kPageBlock - 1) / kPageBlock;
  const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(1, kPageBlock * cols));
  parallel_for(strips, grain, [&](int64_t s0, int64_t s1) {
    for (int64_t rb = s0 * kPageBlock; rb < std::min(rows, s1 * kPageBlock); rb += kPageBlock) {
      const int64_t rb1 = std::min(rows, rb + kPageBlock);
      for (int64_t cb = 0; cb < cols; cb += kPageBlock) {
        const int64_t cb1 = std::min(cols, cb + kPageBlock);
        for (int64_t r0 = rb; r0 < rb1; r0 += T)
          for (int64_t c0 = cb; c0 < cb1; c0 += T)
            transpose_tile(src, src_row, dst, dst_row, r0, std::min(rb1, r0 + T), c0, std::min(cb1, c0 + T));
      }
    }
  });
}

// dst[r * dst_row + c] = src[c * src_row + r] for r < rows, c < cols (strides in elements);
// elem_size 4 or 8.
void transpose_copy(int64_t elem_size, const void* src, int64_t src_row, void* dst, int64_t dst_row, int64_t rows,
                    int64_t cols) {
  if (elem_size == 4) {
    transpose_words(static_cast<const uint32_t*>(src), src_row, static_cast<uint32_t*>(dst), dst_row, rows, cols);
  } else {
    transpose_words(static_cast<const uint64_t*>(src), src_row, static_cast<uint64_t*>(dst), dst_row, rows, cols);
  }
}

// Whether the coalesced walk is the one map1 (strided_loop.h) takes tile by tile: 2-D, out dense
// along its inner dim, a dense along the outer one (and not broadcast along the inner: stride 0),
// both dims at least a tile.
bool is_transposed_walk(const StridedLoop<2>& L, int64_t size) {
  return L.ndim == 2 && L.strides[0][1] == size && L.strides[1][0] == size && L.strides[1][1] != 0 &&
         L.sizes[0] >= kTransposeTile && L.sizes[1] >= kTransposeTile && L.strides[0][0] % size == 0 &&
         L.strides[1][1] % size == 0;
}

}  // namespace
}  // namespace colony::kernels::cpu

namespace colony::kernels {

using namespace cpu;  // NOLINT(build/namespaces): the CPU helpers (parallel.h, strided_loop.h)

void Copy::cpu(DType src_dtype, const void* src, const StridedLayout& src_layout, DType dst_dtype, void* dst,
               const StridedLayout& dst_layout) {
  // float32 <-> bfloat16 between contiguous tensors (autocast's casts) in vector rows: bf16_rows.h.
  if (src_layout.is_contiguous() && dst_layout.is_contiguous()) {
    if (src_dtype == DType::Float32 && dst_dtype == DType::BFloat16) {
      round_to_bf16_parallel(static_cast<const float*>(src), dst_layout.numel(), static_cast<BFloat16*>(dst));
      return;
    }
    if (src_dtype == DType::BFloat16 && dst_dtype == DType::Float32) {
      widen_from_bf16_parallel(static_cast<const BFloat16*>(src), dst_layout.numel(), static_cast<float*>(dst));
      return;
    }
  }
  // A same-dtype transpose of 4- or 8-byte words (contiguous(t.transpose(0, 1))) by register
  // blocks (transpose_copy above).
  const int64_t size = element_size(src_dtype);
  if (src_dtype == dst_dtype && (size == 4 || size == 8)) {
    auto loop = make_loop<2>({static_cast<char*>(dst), const_cast<char*>(static_cast<const char*>(src))},
                             {&dst_layout, &src_layout}, {size, size});
    if (is_transposed_walk(loop, size)) {
      transpose_copy(size, loop.data[1], loop.strides[1][1] / size, loop.data[0], loop.strides[0][0] / size,
                     loop.sizes[0], loop.sizes[1]);
      return;
    }
  }
  COLONY_DISPATCH_ALL(dst_dtype, "copy", [&] {
    using Dst = scalar_t;
    COLONY_DISPATCH_ALL(src_dtype, "copy", [&] {
      using Src = scalar_t;
      map1<Dst, Src>(dst, dst_layout, src, src_layout, [](Src x) { return convert<Dst>(x); });
    });
  });
}

void Fill::cpu(DType dtype, void* out, const StridedLayout& out_layout, double value) {
  COLONY_DISPATCH_ALL(dtype, "fill", [&] {
    const scalar_t v = convert<scalar_t>(value);
    map0<scalar_t>(out, out_layout, [v] { return v; });
  });
}

}  // namespace colony::kernels
