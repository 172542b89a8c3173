#include "kernels/cpu/packed_gemm.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "kernels/cpu/parallel.h"
#include "kernels/cpu/scratch.h"
#include "kernels/cpu/small_gemm_isa.h"

namespace colony::kernels::cpu {
namespace {

struct PackedGemmScratch;

// A block of packed B (kc x nc) fills at most 1 MiB of the 2 MiB L2 of a Sapphire Rapids core;
// the rows of A one call of the micro-kernel sweeps (mc x kc) at most 256 KiB beside it.
constexpr int64_t kPackedBBytes = int64_t{1} << 20;
constexpr int64_t kARowsBytes = int64_t{256} << 10;

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// The size of the blocks `extent` is cut into: as few as `limit` allows, of equal size rounded up
// to a multiple of `unit` (limit is one), the last no larger. With the limit itself as the block,
// 2048 = 5 x 384 + 128 deep and 3 x 640 + 128 wide under AVX-512 left thin last blocks: C passed
// over for 128 steps, A read for two panels of B.
int64_t balanced_block(int64_t extent, int64_t limit, int64_t unit) {
  const int64_t blocks = std::max<int64_t>(1, (extent + limit - 1) / limit);
  return std::min(limit, round_up((extent + blocks - 1) / blocks, unit));
}

// p's buffer rounded up to a 64-byte boundary (thread_scratch is only malloc-aligned): the
// micro-kernel's loads of a panel row then never straddle two cache lines.
template <typename T>
T* align64(T* p) {
  return p + ((64 - reinterpret_cast<uintptr_t>(p) % 64) % 64) / sizeof(T);
}

// The packed B of nc columns by k rows: block pc (rows [pc, pc + kc) of B, kc = min(kc_max, k -
// pc)) starts at pc * panels * nr, its panel q at q * kc * nr past that: kc rows of nr elements,
// B(p, j) of the panel's columns and zeros past column nc. packed_gemm packs one block at a time
// (k is then that block's depth, at most kc_max).
struct PackedB {
  int64_t k, kc_max, nc, nr, panels;
  template <typename T>
  T* row(T* dst, int64_t q, int64_t p) const {
    const int64_t pc = p / kc_max * kc_max;
    return dst + pc * panels * nr + q * std::min(kc_max, k - pc) * nr + (p - pc) * nr;
  }
};

// Row-major B (a product's usual right operand): rows [p0, p1) of B, each read whole, front to
// back, and cut into the panels. (Panel after panel instead, each row was read in 256-byte pieces
// nc elements apart, far from the prefetcher's reach.) Each row's nc elements (2 KiB at 512
// columns, a row of B 6 KiB long at n = 1536: a new 4 KiB page nearly every row, where the
// hardware's streams start late) are prefetched while the row before is copied. matmul_bench
// --form atb --cpu-time, 1 thread, 4 alternating rounds, 2026-12-06 11:33 UTC, load 2.5-2.6,
// GFLOP/s without / the next row / 8 rows ahead, the first 4 lines of each: (384, 1536, 4096)
// 170.6-173.4 / 174.5-176.6 / 167.9-178.0 (higher in 4 rounds of 4), (384, 384, 4096)
// 180.2-193.4 / 187.1-197.7 / 186.7-189.9 (4 of 4), 2048^3 175.1-191.0 / 179.6-193.3 /
// 181.9-196.3 (2 of 4). 2 and 4 rows ahead, every line, ran as the next row or below (and
// gemmgrid's 4 or 8 ahead, docs/benchmarks.md, within the scatter).
template <typename T>
void pack_b_rows(const PackedB& pb, int64_t p0, int64_t p1, const T* b, int64_t brs, T* dst) {
  const int64_t row_bytes = pb.nc * static_cast<int64_t>(sizeof(T));
  for (int64_t p = p0; p < p1; ++p) {
    const T* src = b + p * brs;
    if (p + 1 < p1) {
      const char* next = reinterpret_cast<const char*>(src + brs);
      for (int64_t off = 0; off < row_bytes; off += 64) __builtin_prefetch(next + off, 0, 3);
    }
    for (int64_t q = 0; q < pb.panels; ++q) {
      const int64_t cols = std::min(pb.nr, pb.nc - q * pb.nr);
      T* out = pb.row(dst, q, p);
      std::memcpy(out, src + q * pb.nr, sizeof(T) * cols);
      std::fill(out + cols, out + pb.nr, T(0));
    }
  }
}

// out[q * ldo + j] = in[j * ldi + q] for q, j < 8: eight 8-float rows transposed in registers
// (unpack, shuffle, then swap 128-bit halves: 24 shuffles for 64 elements). The loops are
// unrolled by pragma: GCC 12 at -O2 kept them rolled and the rows in memory on the stack, each
// row's load split into two 16-byte halves stored there and read back as one 32-byte vector, a
// failed store forwarding every time: pack_b_columns took 13 % of a 256^3 A @ B^T, 6.6 % unrolled
// (perf, 1 thread, Intel Xeon, Sapphire Rapids class).
inline void transpose8x8(const float* in, int64_t ldi, float* out, int64_t ldo) {
  typedef float V8 __attribute__((vector_size(32)));
  V8 r[8], t[8], u[8];
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j) std::memcpy(&r[j], in + j * ldi, sizeof(V8));
#pragma GCC unroll 8
  for (int j = 0; j < 8; j += 2) {
    t[j] = __builtin_shufflevector(r[j], r[j + 1], 0, 8, 1, 9, 4, 12, 5, 13);
    t[j + 1] = __builtin_shufflevector(r[j], r[j + 1], 2, 10, 3, 11, 6, 14, 7, 15);
  }
#pragma GCC unroll 8
  for (int h = 0; h < 8; h += 4) {
    u[h] = __builtin_shufflevector(t[h], t[h + 2], 0, 1, 8, 9, 4, 5, 12, 13);
    u[h + 1] = __builtin_shufflevector(t[h], t[h + 2], 2, 3, 10, 11, 6, 7, 14, 15);
    u[h + 2] = __builtin_shufflevector(t[h + 1], t[h + 3], 0, 1, 8, 9, 4, 5, 12, 13);
    u[h + 3] = __builtin_shufflevector(t[h + 1], t[h + 3], 2, 3, 10, 11, 6, 7, 14, 15);
  }
#pragma GCC unroll 8
  for (int q = 0; q < 4; ++q) {
    const V8 lo = __builtin_shufflevector(u[q], u[q + 4], 0, 1, 2, 3, 8, 9, 10, 11);
    const V8 hi = __builtin_shufflevector(u[q], u[q + 4], 4, 5, 6, 7, 12, 13, 14, 15);
    std::memcpy(out + q * ldo, &lo, sizeof(V8));
    std::memcpy(out + (q + 4) * ldo, &hi, sizeof(V8));
  }
}

// Column-major B (a linear layer's forward, B = W^T, each column of B a row of W, so brs == 1):
// panels [q0, q1), 8 columns at a time, each read front to back (8 streams the prefetcher
// follows), float32 in 8 x 8 blocks transposed in registers. Element by element, one column at a
// time, the packing took 16 % of a 1024^3 product (perf, AVX-512 Xeon).
template <typename T>
void pack_b_columns(const PackedB& pb, int64_t q0, int64_t q1, const T* b, int64_t bcs, T* dst) {
  constexpr int64_t kGroup = 8;
  for (int64_t q = q0; q < q1; ++q) {
    const int64_t cols = std::min(pb.nr, pb.nc - q * pb.nr);
    for (int64_t j0 = 0; j0 < pb.nr; j0 += kGroup) {
      const int64_t g = std::max<int64_t>(0, std::min(kGroup, cols - j0));  // columns of B in this group
      const T* src = b + (q * pb.nr + j0) * bcs;
      int64_t p = 0;
      if constexpr (std::is_same_v<T, float>) {
        // One block of k is packed at a time (pb.k <= kc_max), so its rows are nr apart.
        if (g == kGroup) {
          T* out = pb.row(dst, q, 0) + j0;
          for (; p + 8 <= pb.k; p += 8) transpose8x8(src + p, bcs, out + p * pb.nr, pb.nr);
        }
      }
      for (; p < pb.k; ++p) {
        T* out = pb.row(dst, q, p) + j0;
        for (int64_t j = 0; j < g; ++j) out[j] = src[j * bcs + p];
        for (int64_t j = g; j < std::min(kGroup, pb.nr - j0); ++j) out[j] = T(0);
      }
    }
  }
}

// The whole tiles of a column-major A (ars == 1) under the 6-row micro-kernels copy 6 contiguous
// elements per step as one fixed-size block (two vector moves for float32): the element loop with
// run-time strides took 16 % of a (384, 384, 4096) A^T @ B (perf, 1 thread).
constexpr int64_t kPackAFastMr = 6;

// Column-major A (A^T views: a weight gradient's dY^T): `rows` rows copied into tiles of mr rows,
// each kc steps of mr contiguous elements (zeros past the last row), read by the micro-kernel with
// row stride 1, column stride mr and tile stride mr * kc. Step p of every tile is read at once:
// A's column p is contiguous (a tile's own mr elements of it are 4 KiB from the next step's in a
// 1024-row A, too far apart for the prefetcher).
template <typename T>
void pack_a_tiles(int64_t rows, int64_t kc, int64_t mr, const T* a, int64_t ars, int64_t acs, T* dst) {
  const int64_t tiles = (rows + mr - 1) / mr;
  const int64_t fast = ars == 1 && mr == kPackAFastMr ? rows / mr : 0;
  for (int64_t p = 0; p < kc; ++p) {
    const T* src = a + p * acs;
    for (int64_t t = 0; t < fast; ++t) {
      std::memcpy(dst + t * mr * kc + p * mr, src + t * kPackAFastMr, sizeof(T) * kPackAFastMr);
    }
    for (int64_t t = fast; t < tiles; ++t) {
      T* out = dst + t * mr * kc + p * mr;
      const int64_t h = std::min(mr, rows - t * mr);
      for (int64_t i = 0; i < h; ++i) out[i] = src[(t * mr + i) * ars];
      for (int64_t i = h; i < mr; ++i) out[i] = T(0);
    }
  }
}

// Column-major A is read in place below kPackARowsMinWidth columns of C: a packed element then
// serves too few multiply-adds to repay its copy. Best GFLOP/s of 40, 1 thread, matmul_bench
// --form atb --kernel packed, Intel Xeon (Sapphire Rapids class) under other builds (load 10),
// 3 alternating rounds, packed / in place, as (m, n, k): (1024, 1024, 1024) 140 / 90 (A's
// columns 4 KiB apart, so every step of k lands in the same L1 set), (1024, 256, 1024) 140 /
// 105-130, (1024, 128, 1024) 137 / 140, (384, 128, 768) (the char-level GPT's weight gradient)
// 131 / 157. On 2 threads (384, 384, 4096) runs two column groups of 192, where (same runs, 1
// thread, CPU time, best of 12, 2 rounds, load 10, 2026-12-05 20:02 UTC) packing ran 133-137
// against 115-120 in place, (1152, 192, 4096) 133 / 107-112, (1536, 192, 4096) 126-132 /
// 93-105; so 192. Each of packed_gemm's column groups decides for its own width, at the depth
// packed_gemm chose for the whole product (kDeepPackedAMinWidth).
constexpr int64_t kPackARowsMinWidth = 192;

// A column-major A runs packed_kc_rows deep (packed into row tiles, whatever a column group's
// width) where the whole product is at least kDeepPackedAMinWidth wide, else packed_kc deep
// (packed or read in place by each group's width, kPackARowsMinWidth). The depth is decided once
// for the whole product (packed_gemm) because the blocks of k set the order of each sum: a
// group's own choice made it depend on the thread count (on 2 threads (200, 256, 300) A^T @ B in
// groups of 128 ran 3 blocks of 100 against 1 thread's one of 300:
// PackedGemm.ThreadCountChangesNoBit). Twice kPackARowsMinWidth, so that on 2 threads a product
// run deep splits into groups wide enough to pack anyway; narrower ones (256^3 A^T @ B: groups
// of 128) keep the depth and the in-place reads of before.
constexpr int64_t kDeepPackedAMinWidth = 2 * kPackARowsMinWidth;

// The most a column-major A's row tiles, kept packed for the whole product (packed_product), may
// take: 2048^3 A^T @ B's 16 MiB (four blocks of 512 columns, so A was packed four times, 9 % of
// its samples in perf, 1 thread). matmul_bench --form atb --cpu-time, 1 thread, 3 alternating
// rounds, 2026-12-06 11:30 UTC, load 2.7-2.9, GFLOP/s packed per block / kept: 2048^3
// 182.0-186.8 / 193.3-198.2, (384, 1536, 4096) (3 blocks) 170.3-176.4 / 173.3-182.5, 1024^3 (2
// blocks) 194.4-197.9 / 189.8-200.9. Larger products pack per block as before.
constexpr int64_t kKeptABytes = int64_t{32} << 20;

// The block of B beside a kept A (packed_product): half of kPackedBBytes, so that the block of C
// it is multiplied into (m x nc, passed over once per block of k) stays in L2 beside it at (384,
// 1536, 4096) A^T @ B (the width-384 GPT's second MLP weight gradient): nc 320 (five blocks), C's
// block 480 KiB, B's 470 KiB, where nc 512 (1 MiB or 768 KiB) took 768 and 752 KiB. matmul_bench
// --form atb --cpu-time, 1 thread, A kept, alternating rounds, 2026-12-06 11:36-11:38 UTC, load
// 2.5-2.6, GFLOP/s 512 KiB / 1 MiB: (384, 1536, 4096) 171.2-180.2 / 156.6-176.2 (higher in 4
// rounds of 4; before, 3 rounds, 170.9-175.3 / 164.3-167.8), 2048^3 172.3-184.1 / 168.2-187.7
// (2 of 4), 1024^3 179.0-188.9 / 177.8-188.1 (4 of 4, by 0.2-1.9).
constexpr int64_t kKeptAPackedBBytes = kPackedBBytes / 2;

// The product of all m rows with columns [0, n) of B and C (callers offset b and c to a group of
// columns; a_kc: the depth limit of a column-major A, as packed_gemm decided for the whole product;
// such an A is packed into row tiles where pack_deep_a says so or this product is at least
// kPackARowsMinWidth wide): B packed a block at a time on the calling thread, each block's row
// tiles split over the pool (inside packed_gemm's column groups the pool is busy, so this runs on
// the group's thread).
template <typename T>
void packed_product(const SmallGemmFns<T>& fns, int64_t m, int64_t n, int64_t k, const T* a, int64_t ars,
                    int64_t acs, const T* b, int64_t brs, int64_t bcs, T* c, int64_t ldc, T alpha, T beta,
                    const T* bias, int64_t a_kc, bool pack_deep_a) {
  const bool pack_a = acs != 1 && (pack_deep_a || n >= kPackARowsMinWidth);
  // The blocks' limits: kc_lim deep, nc_limit columns (kPackedBBytes of packed B, or
  // kKeptAPackedBBytes), mc_lim rows (kARowsBytes of A); each dimension is then cut into blocks of
  // equal size under its limit (balanced_block), so that no block is a thin remainder. A row-major
  // A, and a column-major A where packed_gemm chose so (a_kc; pack_deep_a: kDeepPackedAMinWidth,
  // then always copied into row tiles), run packed_kc_rows deep (384 under AVX-512: C passed over
  // a third as often as at 128); a product of k halves' shape runs k_halves_depth deep (384 under
  // both ISAs), its A packed by width; otherwise a column-major A keeps packed_kc (128 under
  // AVX-512), packed or read in place.
  // Packed A at 384 / 128, 1 thread, thread CPU time (matmul_bench --dtype f32 --form atb
  // --cpu-time, trials as benchmarks/matmul_rounds.sh), the k loop unrolled by 4, 3 alternating
  // rounds, 2026-12-06 08:37 UTC, load 2.8-3.4, GFLOP/s as (m, n, k): 1024^3 198.4-201.6 /
  // 184.6-194.5, (384, 1536, 4096) 172.5-186.1 / 171.7-177.9, (1152, 384, 4096) 171.1-195.8 /
  // 163.8-182.1, (1536, 384, 4096) 187.6-198.3 / 176.0-186.1, (384, 384, 4096) 186.7-187.7 /
  // 179.7-180.7, 2048^3 169.9-180.9 / 179.8-185.6, 512^3 179.1-193.9 / 182.3-195.8; at 256 (the
  // panel's 64 KiB streamed from L2 as at 384, C passed over more often) 168.5-200.5, below 384 in
  // 5 of 7. The earlier measurement that kept 128 for packed A (1024^3 138 against 114-118 at 384,
  // load 10, 2026-12-05) was taken with the k loop rolled.
  const int64_t mr = fns.packed_mr, nr = fns.packed_nr;
  const int64_t kc_lim = acs == 1 ? fns.packed_kc_rows : a_kc;
  auto nc_limit = [&](int64_t bytes) {
    return std::max(nr, bytes / (kc_lim * static_cast<int64_t>(sizeof(T))) / nr * nr);
  };
  const int64_t mc_lim = std::max(mr, kARowsBytes / (kc_lim * static_cast<int64_t>(sizeof(T))) / mr * mr);
  // Multiples of 8 deep, so every block but the last is packed in whole 8-step transposes
  // (pack_b_columns; kc_lim is a multiple of 8).
  const int64_t kc_max = balanced_block(k, kc_lim, 8);
  const int64_t row_tiles = (m + mr - 1) / mr;
  // A column-major A packed under several blocks of columns is packed once, during the first,
  // into row tiles kept for the whole product (block pc's at pc * m_pad, the tile of row r0 at r0
  // * kc past that), instead of once per block of columns (kKeptABytes says what it measured).
  // On the calling thread, like `packed`: the pool's threads write and read it between
  // parallel_for's barriers. Its blocks of B are then at most kKeptAPackedBBytes.
  const int64_t m_pad = row_tiles * mr;
  const bool keep_a = pack_a && n > balanced_block(n, nc_limit(kPackedBBytes), nr) &&
                      m_pad * k * static_cast<int64_t>(sizeof(T)) <= kKeptABytes;
  const int64_t nc_max = balanced_block(n, nc_limit(keep_a ? kKeptAPackedBBytes : kPackedBBytes), nr);
  const int64_t nc_alloc = std::min(nc_max, round_up(n, nr));
  // One block of B (kc x nc_alloc elements, at most kPackedBBytes) packed at a time, just before
  // the rows of A pass over it, so it is written into L2 and read there. Every depth of a block of
  // columns at once (k x nc_alloc) the packed copy went out to L3 and came back: at (384, 1536,
  // 4096) A^T @ B a 24 MiB round trip, 9 % of the product in memmove (perf, 1 thread). On the
  // calling thread, kept between calls (a training step repeats its shapes); the workers read it
  // while the caller waits in parallel_for.
  T* packed = align64(thread_scratch<PackedGemmScratch, T, 0>(static_cast<size_t>(kc_max * nc_alloc + 64)));
  T* kept_a = keep_a ? align64(thread_scratch<PackedGemmScratch, T, 2>(static_cast<size_t>(m_pad * k + 64))) : nullptr;
  for (int64_t jc = 0; jc < n; jc += nc_max) {
    const int64_t nc = std::min(nc_max, n - jc);
    const int64_t panels = (nc + nr - 1) / nr;
    for (int64_t pc = 0; pc < k; pc += kc_max) {
      const int64_t kc = std::min(kc_max, k - pc);
      // Rows [pc, pc + kc) of B's columns [jc, jc + nc), split over the pool by rows of B
      // (row-major) or panels (column-major), in pieces of at least 64K elements.
      const PackedB pb{kc, kc_max, nc, nr, panels};
      // The bias goes in with the last block of k, when each element's sum is complete.
      const T* block_bias = bias != nullptr && pc + kc >= k ? bias + jc : nullptr;
      if (bcs == 1) {
        parallel_for(kc, std::max<int64_t>(1, (int64_t{1} << 16) / nc), [&](int64_t p0, int64_t p1) {
          pack_b_rows(pb, p0, p1, b + pc * brs + jc, brs, packed);
        });
      } else {
        parallel_for(panels, std::max<int64_t>(1, (int64_t{1} << 16) / (kc * nr)), [&](int64_t q0, int64_t q1) {
          pack_b_columns(pb, q0, q1, b + pc * brs + jc * bcs, bcs, packed);
        });
      }
      // Chunks of at least ~256K multiply-adds, so each amortises the pool's wake-up.
      const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 18) / (mr * nc * kc));
      parallel_for(row_tiles, grain, [&](int64_t t0, int64_t t1) {
        const int64_t mc = balanced_block(std::min(m, t1 * mr) - t0 * mr, mc_lim, mr);
        for (int64_t r0 = t0 * mr; r0 < std::min(m, t1 * mr); r0 += mc) {
          const int64_t rows = std::min({mc, m - r0, t1 * mr - r0});
          const T* a_block = a + r0 * ars + pc * acs;
          T* c_block = c + r0 * ldc + jc;
          if (pack_a) {
            T* tiles;
            if (keep_a) {
              tiles = kept_a + pc * m_pad + r0 * kc;
              if (jc == 0) pack_a_tiles(rows, kc, mr, a_block, ars, acs, tiles);
            } else {
              tiles = align64(thread_scratch<PackedGemmScratch, T, 1>(static_cast<size_t>(round_up(mc_lim, mr) * kc_max + 64)));
              pack_a_tiles(rows, kc, mr, a_block, ars, acs, tiles);
            }
            fns.packed_rows(rows, nc, kc, tiles, 1, mr, mr * kc, packed, c_block, ldc, alpha, beta, pc == 0,
                            block_bias);
          } else {
            fns.packed_rows(rows, nc, kc, a_block, ars, acs, mr * ars, packed, c_block, ldc, alpha, beta, pc == 0,
                            block_bias);
          }
        }
      });
    }
  }
}

// How many groups of whole panels packed_gemm splits n into, one per thread, each a product of
// its own (B's columns packed by the thread that multiplies them, in its own L2): `threads` where
// the panels share out evenly or at least 8 fall to each thread (then the last group is at most
// 1/8 short), and where each group has at least kMinGroupWork multiply-adds (the row split's grain);
// 1 otherwise (the row split). Sharing one packed block of B between threads splitting the rows
// instead, each block costs two pool wake-ups (packing it, then its rows), the waiting thread idles
// while a block too small to split is packed, and the other core reads the whole block out of the
// packer's L2: on 2 threads that ran 256^3 A @ B^T at 0.72x torch.mm. Split by columns, the same
// product reached 305-347 GFLOP/s in 8 of 11 two-core runs, the row split at most 249 (best of
// 60-2,000 trials, wall clock, load 4-8, docs/benchmarks.md, 2026-12-05 19:35-20:39 UTC).
constexpr int64_t kMinGroupWork = int64_t{1} << 18;

int64_t column_groups(int64_t panels, int64_t threads, int64_t m, int64_t n, int64_t k) {
  if (threads <= 1 || panels < threads) return 1;
  if (panels % threads != 0 && panels < 8 * threads) return 1;
  if (m * n * k < threads * kMinGroupWork) return 1;
  return threads;
}

// How many groups of whole row tiles packed_gemm splits m into, one per thread, each a product of
// its own with all of B packed privately by its thread: `threads` for a product taller than it is
// wide (m > n: a thread's share of A, m / threads x k, then outweighs the copy of B, k x n, that it
// packs, where the column groups read all of A on every thread), with at least kMinGroupTiles row
// tiles and kMinGroupWork multiply-adds per group; 1 otherwise (the column groups, or the shared
// row split). Group g runs on thread g (parallel.cc), as do the rows g of the elementwise passes,
// LayerNorm and attention around it (equal shares of the [B * T, C] rows), so in a transformer's
// step each thread reads the rows of A that it wrote, from its own L2.
// Measured on 2 threads (Intel Xeon, Sapphire Rapids class; matmul_bench, best of 40-200 wall
// clock, SCHED_FIFO under other builds, docs/benchmarks.md, branch gpt2t, 2026-12-06), rows /
// before: the char-level GPT's (768, 128, 512) A @ B and A @ B^T 365-371 / 335-340 GFLOP/s, its
// weight gradient (512, 128, 768) A^T @ B 330-334 / 296-300; (768, 384 | 512, 128) and 1024^3
// even (386-414 / 389-402, 356-363 / 352-358); (96, 64, 512) 284-286 / 139 (one panel: the shared
// row split before), (192, 64, 512) 330 / 225, (300, 200, 300) 288-294 / 270-273; (192, 128, 256)
// 344-346 / 362 (5 % slower); 256^3 A @ B^T 322-330 / 325-363 (m = n: columns stay). The whole
// GPT step on 2 threads: 1.08x tokens/s, 7 % less CPU time. kMinGroupTiles: (96, 64, 512) has 8 a
// group; thinner groups were not measured and keep the other splits.
constexpr int64_t kMinGroupTiles = 8;

int64_t row_groups(int64_t mr, int64_t threads, int64_t m, int64_t n, int64_t k) {
  if (threads <= 1 || m <= n) return 1;
  if (m < threads * kMinGroupTiles * mr || m * n * k < threads * kMinGroupWork) return 1;
  return threads;
}

// A product whose A is column-major (a weight gradient dY^T @ X, k running over the batch's rows)
// and whose k is cut into exactly two blocks at k_halves_depth deep, with C (m x n) at most
// kHalvesMaxBytes, runs in k halves on 2 threads: thread 0 multiplies the first block of k into C
// (with beta), thread 1 the second into a partial product (beta 0), then a pass adds the partial
// to C (add_partial). With alpha = 1 that pass rounds C + S exactly as packed_store does for a
// second block of k, so the result is the 1-thread product's bit for bit, provided the 1-thread
// product also runs these shapes at k_halves_depth deep: packed_gemm then sets that depth for them
// on any thread count. (With another alpha the compiler may fuse packed_store's C + alpha * S into one
// rounding, which a stored partial cannot repeat: PackedGemm.KHalvesOnTwoThreadsChangeNoBit failed
// on the AVX2 copy at alpha -1.25; so other alphas keep the row or column groups. A 6-block
// product at packed_kc 128 has no such split: its blocks are summed one after another into C.)
// Split by rows or columns instead, each thread read every row of dY and X, half of them written
// by the other thread's share of the op before (the elementwise passes, LayerNorm, attention and
// the row-group products all split [B * T, C] rows in halves, thread g the rows g), so half its
// operands came from the other core's L2: traced in the char-level GPT's 2-thread step (an
// uncommitted per-call trace of parallel_for, SCHED_FIFO, 2026-12-06 14:20 UTC), its four weight
// gradients' chunks took 1,369 us a step more CPU time than the same products on 1 thread ((512,
// 128, 768) 2,116 -> 2,558 us, (128, 128, 768) 596 -> 941, (384, 128, 768) 1,638 -> 1,971, (128,
// 512, 768) 2,427 -> 2,676), about 4 % of the step's wall time; in k halves each thread reads the
// rows its own share wrote. docs/benchmarks.md (2026-12-06, branch pool) has the step's figures.
// The limit keeps the partial and the pass over it (3 x m x n elements moved) in L2 and small
// beside the product (2 m n k flops): the GPT's weight gradients have 64-256 KiB of C.
constexpr int64_t kHalvesMaxBytes = int64_t{1} << 20;

// The depth of a k half: packed_kc_rows (384 under AVX-512), at least kHalvesMinDepth. AVX2's
// packed_kc_rows of 256 cut the GPT's k = 768 into three blocks, which have no split that keeps
// 1 thread's bits; at 384 its panel (384 x 16 floats, 24 KiB) still fits L1. matmul_bench --dtype
// f32 --form atb --threads 1 --cpu-time --trials 200, COLONY_CPU_ISA=avx2, 3 alternating rounds
// against main (2026-12-06 14:44 UTC, load 4.5-4.6), GFLOP/s main / 384 deep: (512, 128, 768)
// 106.2-107.1 / 103.3-103.8, (384, 128, 768) 113.7-114.3 / 110.4-111.0, (128, 128, 768)
// 109.8-113.6 / 111.2-115.1, (128, 512, 768) 104.3-107.1 / 103.6-106.7: 1 thread loses up to 3.5 %
// on two of the GPT's four weight gradients, about 0.5 % of its step, where 2 threads gain 1.5-3.4 %
// (docs/benchmarks.md, 2026-12-06, branch pool).
constexpr int64_t kHalvesMinDepth = 384;

template <typename T>
int64_t k_halves_depth(const SmallGemmFns<T>& fns) {
  return std::max(fns.packed_kc_rows, kHalvesMinDepth);
}

// The shapes that run k_halves_depth deep for the k halves, on any thread count and alpha.
bool k_halves_shape(int64_t depth, int64_t m, int64_t n, int64_t k, int64_t acs, int64_t elem_bytes) {
  return acs != 1 && k > depth && k <= 2 * depth && m * n * elem_bytes <= kHalvesMaxBytes;
}

// C(i, j) = C(i, j) + part(i, j) (+ bias[j]) for rows [i0, i1): packed_store's sum for a later block
// of k at alpha = 1 (part holds S), so the k halves round as the blocks in one product do.
template <typename T>
void add_partial(int64_t i0, int64_t i1, int64_t n, const T* part, const T* bias, T* c, int64_t ldc) {
  for (int64_t i = i0; i < i1; ++i) {
    T* ci = c + i * ldc;
    const T* pi = part + i * n;
    if (bias != nullptr) {
      for (int64_t j = 0; j < n; ++j) ci[j] = (ci[j] + pi[j]) + bias[j];
    } else {
      for (int64_t j = 0; j < n; ++j) ci[j] = ci[j] + pi[j];
    }
  }
}

}  // namespace

template <typename T>
bool packed_gemm_k_halves(int64_t m, int64_t n, int64_t k, int64_t a_col_stride, T alpha) {
  return num_threads() == 2 && alpha == T(1) &&
         k_halves_shape(k_halves_depth(active_small_gemm_fns<T>()), m, n, k, a_col_stride,
                        static_cast<int64_t>(sizeof(T)));
}

template <typename T>
int64_t packed_gemm_row_groups(int64_t m, int64_t n, int64_t k) {
  return row_groups(active_small_gemm_fns<T>().packed_mr, num_threads(), m, n, k);
}

template <typename T>
int64_t packed_gemm_column_groups(int64_t m, int64_t n, int64_t k) {
  if (packed_gemm_row_groups<T>(m, n, k) > 1) return 1;
  const int64_t nr = active_small_gemm_fns<T>().packed_nr;
  return column_groups((n + nr - 1) / nr, num_threads(), m, n, k);
}

template <typename T>
void packed_gemm(int64_t m, int64_t n, int64_t k, const T* a, int64_t ars, int64_t acs, const T* b, int64_t brs,
                 int64_t bcs, T* c, int64_t ldc, T alpha, T beta, const T* bias) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        T& y = c[i * ldc + j];
        y = beta == T(0) ? T(0) : beta * y;
        if (bias != nullptr) y += bias[j];
      }
    return;
  }
  const SmallGemmFns<T>& fns = active_small_gemm_fns<T>();
  const int64_t halves_kc = k_halves_depth(fns);
  const bool halves = k_halves_shape(halves_kc, m, n, k, acs, static_cast<int64_t>(sizeof(T)));
  // packed_product; both depend on the shape alone, never on the thread count (k_halves_shape says
  // why).
  const bool pack_deep_a = acs != 1 && n >= kDeepPackedAMinWidth;
  const int64_t a_kc = halves ? halves_kc : pack_deep_a ? fns.packed_kc_rows : fns.packed_kc;
  if (halves && alpha == T(1) && num_threads() == 2) {  // packed_gemm_k_halves
    const int64_t k0 = balanced_block(k, halves_kc, 8);  // packed_product's first block
    // On the calling thread, like packed_product's packed B: thread 1 writes it, then both read it
    // after parallel_for's barrier.
    T* part = align64(thread_scratch<PackedGemmScratch, T, 3>(static_cast<size_t>(m * n + 64)));
    parallel_for(2, 1, [&](int64_t h0, int64_t h1) {
      for (int64_t h = h0; h < h1; ++h) {
        if (h == 0) {
          packed_product(fns, m, n, k0, a, ars, acs, b, brs, bcs, c, ldc, alpha, beta, static_cast<const T*>(nullptr),
                         a_kc, pack_deep_a);
        } else {
          packed_product(fns, m, n, k - k0, a + k0 * acs, ars, acs, b + k0 * brs, brs, bcs, part, n, T(1), T(0),
                         static_cast<const T*>(nullptr), a_kc, pack_deep_a);
        }
      }
    });
    // Rows of at least 8K elements a chunk.
    parallel_for(m, std::max<int64_t>(1, 8192 / n),
                 [&](int64_t i0, int64_t i1) { add_partial(i0, i1, n, part, bias, c, ldc); });
    return;
  }
  const int64_t mr = fns.packed_mr, row_tiles = (m + mr - 1) / mr;
  const int64_t row_split = row_groups(mr, num_threads(), m, n, k);  // packed_gemm_row_groups
  if (row_split > 1) {
    // Group g: row tiles [g * row_tiles / row_split, (g + 1) * row_tiles / row_split), chunk g of
    // one job, so on thread g (parallel.cc). Each element's sum runs over the same blocks of k in
    // the same order as in one group, so the split changes no bit.
    parallel_for(row_split, 1, [&](int64_t g0, int64_t g1) {
      for (int64_t g = g0; g < g1; ++g) {
        const int64_t r0 = std::min(m, g * row_tiles / row_split * mr);
        const int64_t r1 = std::min(m, (g + 1) * row_tiles / row_split * mr);
        if (r1 > r0)
          packed_product(fns, r1 - r0, n, k, a + r0 * ars, ars, acs, b, brs, bcs, c + r0 * ldc, ldc, alpha, beta,
                         bias, a_kc, pack_deep_a);
      }
    });
    return;
  }
  const int64_t nr = fns.packed_nr, panels = (n + nr - 1) / nr;
  const int64_t groups = column_groups(panels, num_threads(), m, n, k);  // packed_gemm_column_groups
  if (groups == 1) {
    packed_product(fns, m, n, k, a, ars, acs, b, brs, bcs, c, ldc, alpha, beta, bias, a_kc, pack_deep_a);
    return;
  }
  // Group g: panels [g * panels / groups, (g + 1) * panels / groups). Each output's sum runs over
  // the same blocks of k in the same order as in one group, so the split changes no bit.
  parallel_for(groups, 1, [&](int64_t g0, int64_t g1) {
    for (int64_t g = g0; g < g1; ++g) {
      const int64_t j0 = g * panels / groups * nr, j1 = std::min(n, (g + 1) * panels / groups * nr);
      packed_product(fns, m, j1 - j0, k, a, ars, acs, b + j0 * bcs, brs, bcs, c + j0, ldc, alpha, beta,
                     bias == nullptr ? nullptr : bias + j0, a_kc, pack_deep_a);
    }
  });
}

template void packed_gemm<float>(int64_t, int64_t, int64_t, const float*, int64_t, int64_t, const float*, int64_t,
                                 int64_t, float*, int64_t, float, float, const float*);
template void packed_gemm<double>(int64_t, int64_t, int64_t, const double*, int64_t, int64_t, const double*, int64_t,
                                  int64_t, double*, int64_t, double, double, const double*);
template int64_t packed_gemm_column_groups<float>(int64_t, int64_t, int64_t);
template int64_t packed_gemm_column_groups<double>(int64_t, int64_t, int64_t);
template int64_t packed_gemm_row_groups<float>(int64_t, int64_t, int64_t);
template int64_t packed_gemm_row_groups<double>(int64_t, int64_t, int64_t);
template bool packed_gemm_k_halves<float>(int64_t, int64_t, int64_t, int64_t, float);
template bool packed_gemm_k_halves<double>(int64_t, int64_t, int64_t, int64_t, double);

}  // namespace colony::kernels::cpu
