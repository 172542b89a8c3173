#include "kernels/cpu/gemm.h"

#include <Eigen/Core>
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common/half.h"
#include "kernels/cpu/amx_gemm.h"
#include "kernels/cpu/bf16_rows.h"
#include "kernels/cpu/packed_gemm.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/scratch.h"
#include "kernels/cpu/small_gemm.h"
#include "kernels/cpu/small_gemm_bf16.h"
#include "kernels/cpu/small_gemm_isa.h"

namespace colony::kernels::cpu {
namespace {

template <typename T, int Order>
using MatMap = Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Order>, Eigen::Unaligned,
                          Eigen::OuterStride<>>;
template <typename T>
using OutMap = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>, Eigen::Unaligned,
                          Eigen::OuterStride<>>;

// Rows [r0, r0 + rows) of one product. A's rows start r0 rows in; B is used whole.
template <typename T, int AOrder, int BOrder>
void gemm_block(const T* a, int64_t lda, const T* b, int64_t ldb, T* c, int64_t ldc, int64_t rows, int64_t n,
                int64_t k, T alpha, T beta) {
  MatMap<T, AOrder> A(a, rows, k, Eigen::OuterStride<>(lda));
  MatMap<T, BOrder> B(b, k, n, Eigen::OuterStride<>(ldb));
  OutMap<T> C(c, rows, n, Eigen::OuterStride<>(ldc));
  if (beta == T(0)) {
    C.noalias() = alpha * (A * B);
  } else {
    if (beta != T(1)) C *= beta;
    C.noalias() += alpha * (A * B);
  }
}

struct GemmScratch;

GemmKernel forced_kernel = GemmKernel::Auto;

// The dot products of `rows` rows of A with the columns of a column-major B, into out (leading
// dimension ldo): a block of rows at a time, so that their `lanes` partial sums per product take
// at most 256 KB, each block of A copied to rows first if A is column-major too. S is the
// operands' element type, Acc the sums'; dot(rb, a, lda, acc) and finish(rb, acc, out) run the
// tiles of one block.
template <typename S, typename Acc, typename Dot, typename Finish>
void dot_products_by_blocks(const S* a_rows, const MatrixArg& a, int64_t rows, int64_t n, int64_t k, int64_t lanes,
                            const Dot& dot, const Finish& finish, Acc* out, int64_t ldo) {
  const int64_t block = std::max<int64_t>(1, (int64_t{256} << 10) / static_cast<int64_t>(sizeof(Acc) * n * lanes));
  for (int64_t i0 = 0; i0 < rows; i0 += block) {
    const int64_t rb = std::min(block, rows - i0);
    const S* a_dense = a.col_major ? a_rows + i0 : a_rows + i0 * a.ld;
    int64_t lda = a.ld;
    if (a.col_major) {
      S* copy = thread_scratch<GemmScratch, S, 6>(rb * k);
      for (int64_t i = 0; i < rb; ++i)
        for (int64_t p = 0; p < k; ++p) copy[i * k + p] = a_dense[i + p * a.ld];
      a_dense = copy;
      lda = k;
    }
    Acc* acc = thread_scratch<GemmScratch, Acc, 7>(rb * n * lanes);
    std::fill(acc, acc + rb * n * lanes, Acc(0));
    dot(rb, a_dense, lda, acc);
    finish(rb, acc, out + i0 * ldo);
  }
}

// Rows [r0, r0 + rows) of one product on small_gemm.h's register tiles: a row-major B runs
// gemm_rows, which reads A in place whichever its order; a column-major B (a linear layer's
// forward, B = W^T) runs the dot products of A's rows with B's columns, which are contiguous
// (dot_products_by_blocks). The tiles write C themselves when alpha = 1 and beta = 0; otherwise
// the product goes to scratch and is scaled into C.
template <typename T>
void gemm_tiles_block(const T* a_rows, const MatrixArg& a, const T* b_mat, const MatrixArg& b,
                      const std::vector<int64_t>& b_offsets, T* c, int64_t ldc, int64_t rows, int64_t n, int64_t k,
                      T alpha, T beta) {
  const bool direct = alpha == T(1) && beta == T(0);
  T* product = direct ? c : thread_scratch<GemmScratch, T, 5>(rows * n);
  const int64_t ldp = direct ? ldc : n;
  if (!b.col_major) {
    int64_t* p_offsets = thread_scratch<GemmScratch, int64_t, 2>(rows);
    for (int64_t i = 0; i < rows; ++i) p_offsets[i] = i * ldp;
    gemm_rows<T>(rows, n, k, a_rows, a.col_major ? 1 : a.ld, a.col_major ? a.ld : 1, b_mat, b_offsets.data(),
                 product, p_offsets, false, nullptr);
  } else {
    dot_products_by_blocks(
        a_rows, a, rows, n, k, dot_lanes<T>(),
        [&](int64_t rb, const T* ad, int64_t lda, T* acc) {
          gemm_dot_rows_lanes<T>(rb, n, k, ad, lda, b_mat, b_offsets.data(), acc);
        },
        [&](int64_t rb, const T* acc, T* out) { gemm_dot_finish<T>(rb, n, acc, out, ldp); }, product, ldp);
  }
  if (direct) return;
  for (int64_t i = 0; i < rows; ++i) {
    T* ci = c + i * ldc;
    const T* pi = product + i * n;
    for (int64_t j = 0; j < n; ++j) ci[j] = beta == T(0) ? alpha * pi[j] : alpha * pi[j] + beta * ci[j];
  }
}

// Offsets of B's rows (gemm_rows) or, when B is column-major, of its columns (the dot products).
std::vector<int64_t> b_line_offsets(const MatrixArg& b, int64_t n, int64_t k) {
  std::vector<int64_t> offsets(b.col_major ? n : k);
  for (size_t i = 0; i < offsets.size(); ++i) offsets[i] = static_cast<int64_t>(i) * b.ld;
  return offsets;
}

template <typename T>
void gemm_typed(int64_t batch, int64_t m, int64_t n, int64_t k, const MatrixArg& a, const MatrixArg& b, T* c,
                int64_t ldc, int64_t c_bs, T alpha, T beta) {
  const GemmKernel kernel = gemm_kernel(dtype_of<T>::value, m, n, k, a.col_major, b.col_major, batch);
  if (kernel == GemmKernel::Packed) {
    // One product after another, each split over the pool by columns or rows (packed_gemm.h).
    for (int64_t p = 0; p < batch; ++p) {
      packed_gemm<T>(m, n, k, static_cast<const T*>(a.data) + p * a.batch_stride, a.col_major ? 1 : a.ld,
                     a.col_major ? a.ld : 1, static_cast<const T*>(b.data) + p * b.batch_stride, b.col_major ? 1 : b.ld,
                     b.col_major ? b.ld : 1, c + p * c_bs, ldc, alpha, beta);
    }
    return;
  }
  const bool tiles = kernel == GemmKernel::Tiles;
  // A column-major B shared by many rows (a linear layer's forward over a [B·T, in] input, B = Wᵀ)
  // is copied row-major once, so the product runs on gemm_rows' tiles instead of the dot
  // products: those keep `lanes` partial sums per output, zeroed and reduced around every block.
  // On the char-level GPT's forward ([768, 128] x [128, 384|512], 1 thread, perf on the AVX-512
  // Xeon) the dot path spent 7.4 % of the step zeroing and reducing and ran at ~70 % of
  // gemm_rows' rate per FLOP; the copy costs k·n element moves against m·n·k multiply-adds. Below
  // kRepackRows rows (LeNet's batch of 32) the dot path stays: the copy would not pay back.
  constexpr int64_t kRepackRows = 256;
  std::vector<T> b_row_major;
  MatrixArg b_used = b;
  if (tiles && b.col_major && batch == 1 && m >= kRepackRows) {
    b_row_major.resize(static_cast<size_t>(k * n));
    const T* src = static_cast<const T*>(b.data);
    for (int64_t j = 0; j < n; ++j)
      for (int64_t kk = 0; kk < k; ++kk) b_row_major[static_cast<size_t>(kk * n + j)] = src[j * b.ld + kk];
    b_used = MatrixArg{b_row_major.data(), n, false, 0};
  }
  const T* ap = static_cast<const T*>(a.data);
  const T* bp = static_cast<const T*>(b_used.data);
  const std::vector<int64_t> b_offsets = tiles ? b_line_offsets(b_used, n, k) : std::vector<int64_t>{};
  // Split the batch's m rows (all products' rows, flattened) into chunks of at least ~256K
  // multiply-adds, so a chunk amortises the pool wake-up and Eigen's packing of B.
  int64_t row_work = std::max<int64_t>(1, n * k);
  int64_t grain = std::max<int64_t>(1, (int64_t{1} << 18) / row_work);
  parallel_for(batch * m, grain, [&](int64_t begin, int64_t end) {
    for (int64_t flat = begin; flat < end;) {
      int64_t p = flat / m, r0 = flat % m;
      int64_t rows = std::min(m - r0, end - flat);
      const T* a_rows = ap + p * a.batch_stride + (a.col_major ? r0 : r0 * a.ld);
      const T* b_mat = bp + p * b_used.batch_stride;
      T* c_rows = c + p * c_bs + r0 * ldc;
      if (tiles) {
        gemm_tiles_block<T>(a_rows, a, b_mat, b_used, b_offsets, c_rows, ldc, rows, n, k, alpha, beta);
      } else if (!a.col_major && !b.col_major) {
        gemm_block<T, Eigen::RowMajor, Eigen::RowMajor>(a_rows, a.ld, b_mat, b.ld, c_rows, ldc, rows, n, k, alpha, beta);
      } else if (!a.col_major) {
        gemm_block<T, Eigen::RowMajor, Eigen::ColMajor>(a_rows, a.ld, b_mat, b.ld, c_rows, ldc, rows, n, k, alpha, beta);
      } else if (!b.col_major) {
        gemm_block<T, Eigen::ColMajor, Eigen::RowMajor>(a_rows, a.ld, b_mat, b.ld, c_rows, ldc, rows, n, k, alpha, beta);
      } else {
        gemm_block<T, Eigen::ColMajor, Eigen::ColMajor>(a_rows, a.ld, b_mat, b.ld, c_rows, ldc, rows, n, k, alpha, beta);
      }
      flat += rows;
    }
  });
}

// The rows [r0, r0 + rows) of one bfloat16 product on small_gemm_bf16.h's tiles, into float32
// scratch, then C = round(alpha * A B + beta * C), or round(alpha * A B + bias) with a bias row
// (gemm_bf16_bias). With B pair-packed (b_pairs, see gemm_bf16) gemm_rows_paired runs with A
// packed in pairs, whichever B's order. Otherwise a row-major B runs gemm_rows, and a
// column-major B (the forward pass's transposed weight) the dot products of A's rows with B's
// columns, which are contiguous (dot_products_by_blocks).
void gemm_bf16_block(const uint16_t* a_rows, const MatrixArg& a, const uint16_t* b_mat, const MatrixArg& b,
                     const uint32_t* b_pairs, const std::vector<int64_t>& b_offsets, BFloat16* c, int64_t ldc,
                     int64_t rows, int64_t n, int64_t k, float alpha, float beta, const BFloat16* bias) {
  float* product = thread_scratch<GemmScratch, float, 0>(rows * n);
  const int64_t stride = (k + 1) / 2;
  int64_t* c_offsets = thread_scratch<GemmScratch, int64_t, 2>(rows);
  for (int64_t i = 0; i < rows; ++i) c_offsets[i] = i * n;
  if (b_pairs != nullptr) {
    uint32_t* pairs = thread_scratch<GemmScratch, uint32_t, 1>(rows * stride);
    if (a.col_major) {
      // A's columns are contiguous (a weight gradient's transposed output gradient): pair-packed
      // down them by whole vectors, the tiles reading pair q of row i at pairs[q * rows + i].
      // Row by row, each pair was a store of its own (pack_bf16_pairs, with the row-major A's
      // packing, took 9.8 % of a bfloat16 GPT step).
      pack_bf16_b_pairs(k, rows, a_rows, a.ld, 1, pairs, rows);
      gemm_rows_paired_bf16(rows, n, k, pairs, 1, rows, b_pairs, b_offsets.data(), product, c_offsets, false, nullptr);
    } else {
      pack_bf16_pairs(rows, k, a_rows, a.ld, 1, pairs);
      gemm_rows_paired_bf16(rows, n, k, pairs, stride, 1, b_pairs, b_offsets.data(), product, c_offsets, false,
                            nullptr);
    }
  } else if (!b.col_major) {
    uint32_t* pairs = thread_scratch<GemmScratch, uint32_t, 1>(rows * stride);
    pack_bf16_pairs(rows, k, a_rows, a.col_major ? 1 : a.ld, a.col_major ? a.ld : 1, pairs);
    gemm_rows_bf16(rows, n, k, pairs, stride, b_mat, b_offsets.data(), product, c_offsets, false, nullptr);
  } else {
    dot_products_by_blocks(
        a_rows, a, rows, n, k, dot_lanes_bf16(),
        [&](int64_t rb, const uint16_t* ad, int64_t lda, float* acc) {
          gemm_dot_rows_lanes_bf16(rb, n, k, ad, lda, b_mat, b_offsets.data(), acc);
        },
        [&](int64_t rb, const float* acc, float* out) { gemm_dot_finish_bf16(rb, n, acc, out, n); }, product, n);
  }
  // Scaled in float32, then rounded by bf16_rows.h's vector loop: BFloat16's own rounding (its NaN
  // branch) stays scalar, and at k = 128 (the char GPT's forward) one output's products cost about
  // as much as rounding it one at a time did.
  for (int64_t i = 0; i < rows; ++i) {
    BFloat16* ci = c + i * ldc;
    float* pi = product + i * n;
    if (bias != nullptr) {
      for (int64_t j = 0; j < n; ++j) pi[j] = alpha * pi[j] + static_cast<float>(bias[j]);
    } else if (beta != 0.0f) {
      for (int64_t j = 0; j < n; ++j) pi[j] = alpha * pi[j] + beta * static_cast<float>(ci[j]);
    } else if (alpha != 1.0f) {
      for (int64_t j = 0; j < n; ++j) pi[j] = alpha * pi[j];
    }
    round_row_to_bf16<false>(pi, n, 0.0f, ci);
  }
}

// The bfloat16 products on AMX tiles (amx_gemm.h): each distinct B packed once, its column tiles
// split over the pool, then blocks of 32 rows of all products split over the pool, each chunk
// one amx_gemm call per product it touches (so a packed panel of B serves all its row blocks).
void gemm_bf16_amx(int64_t batch, int64_t m, int64_t n, int64_t k, const MatrixArg& a, const MatrixArg& b,
                   BFloat16* c, int64_t ldc, int64_t c_bs, float alpha, float beta, const BFloat16* bias) {
  const auto* ap = static_cast<const uint16_t*>(a.data);
  const auto* bp = static_cast<const uint16_t*>(b.data);
  const auto* bias_bits = reinterpret_cast<const uint16_t*>(bias);
  const int64_t b_rs = b.col_major ? 1 : b.ld, b_cs = b.col_major ? b.ld : 1;
  // One thread, and each B used by one product: amx_gemm packs B a panel at a time just before
  // its rows pass over it (AmxGemmArgs::b), so the packed panel is read from L2 where it was
  // written (1024^3 A @ B^T +9 %, docs/benchmarks.md). With more threads each would pack every
  // panel of the B it shares. A row-major B is read a panel's width of each row per panel: at
  // 8 tiles or fewer (k > 2,432) those 256-byte pieces of rows ran (384, 1536, 4096)
  // A^T @ B 5-10 % slower than packing whole rows first, so those keep packing B first.
  const int64_t panel_tiles = amx_panel_tiles(k);
  if (num_threads() == 1 && (batch == 1 || b.batch_stride != 0) &&
      (b.col_major || panel_tiles > 8 || panel_tiles * 16 >= n)) {
    for (int64_t p = 0; p < batch; ++p) {
      AmxGemmArgs args;
      args.m = m;
      args.n = n;
      args.k = k;
      args.a = ap + p * a.batch_stride;
      args.a_row_stride = a.col_major ? 1 : a.ld;
      args.a_col_stride = a.col_major ? a.ld : 1;
      args.b = bp + p * b.batch_stride;
      args.b_row_stride = b_rs;
      args.b_col_stride = b_cs;
      args.c_bf16 = reinterpret_cast<uint16_t*>(c + p * c_bs);
      args.alpha = alpha;
      args.beta = beta;
      args.bias = bias_bits;
      args.ldc = ldc;
      amx_gemm(args);
    }
    return;
  }
  const int64_t packed_size = amx_packed_b_size(k, n);
  const int64_t distinct_b = b.batch_stride == 0 ? 1 : batch;
  // Kept between calls on this (the calling) thread: a training step repeats its shapes.
  // Aligned to 64 bytes, so that no tile row straddles two cache lines (thread_scratch's buffer is
  // only malloc-aligned, 16 bytes).
  uint16_t* packed = thread_scratch<GemmScratch, uint16_t, 8>(static_cast<size_t>(distinct_b * packed_size + 32));
  packed += ((64 - reinterpret_cast<uintptr_t>(packed) % 64) % 64) / 2;
  const int64_t col_tiles = (n + 15) / 16, steps = (k + 31) / 32;
  // Pieces of at least 32 tiles' steps (16K elements). At 2048 the char GPT's packs (n 128-512,
  // k 128-768: 32-192 tile steps in all) never split, and on 2 threads the worker waited through them:
  // 5.7 % of the bf16 step's main-thread samples (perf, tools/pool_profile.py, docs/benchmarks.md).
  parallel_for(distinct_b * col_tiles, std::max<int64_t>(1, 32 / std::max<int64_t>(1, steps)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t flat = begin; flat < end;) {
                   const int64_t p = flat / col_tiles, t0 = flat % col_tiles;
                   const int64_t tiles = std::min(col_tiles - t0, end - flat);
                   const int64_t j0 = t0 * 16;
                   amx_pack_b(k, std::min(n - j0, tiles * 16), bp + p * b.batch_stride + j0 * b_cs, b_rs, b_cs,
                              packed + p * packed_size + t0 * steps * 512);
                   flat += tiles;
                 }
               });
  const int64_t row_blocks = (m + 31) / 32;
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 22) / std::max<int64_t>(1, 32 * n * k));
  parallel_for(batch * row_blocks, grain, [&](int64_t begin, int64_t end) {
    for (int64_t flat = begin; flat < end;) {
      const int64_t p = flat / row_blocks, blk = flat % row_blocks;
      const int64_t blocks = std::min(row_blocks - blk, end - flat);
      const int64_t r0 = blk * 32;
      AmxGemmArgs args;
      args.m = std::min(m - r0, blocks * 32);
      args.n = n;
      args.k = k;
      args.a = ap + p * a.batch_stride + (a.col_major ? r0 : r0 * a.ld);
      args.a_row_stride = a.col_major ? 1 : a.ld;
      args.a_col_stride = a.col_major ? a.ld : 1;
      args.packed_b = packed + (b.batch_stride == 0 ? 0 : p) * packed_size;
      args.c_bf16 = reinterpret_cast<uint16_t*>(c + p * c_bs + r0 * ldc);
      args.alpha = alpha;
      args.beta = beta;
      args.bias = bias_bits;
      args.ldc = ldc;
      amx_gemm(args);
      flat += blocks;
    }
  });
}

void gemm_bf16(int64_t batch, int64_t m, int64_t n, int64_t k, const MatrixArg& a, const MatrixArg& b, BFloat16* c,
               int64_t ldc, int64_t c_bs, float alpha, float beta, const BFloat16* bias = nullptr) {
  if (gemm_bf16_on_amx(m, n, k)) {
    gemm_bf16_amx(batch, m, n, k, a, b, c, ldc, c_bs, alpha, beta, bias);
    return;
  }
  const auto* ap = static_cast<const uint16_t*>(a.data);
  const auto* bp = static_cast<const uint16_t*>(b.data);
  // Each distinct B pair-packed once, before the rows split over the pool (pack_bf16_b_pairs): the
  // tiles then load pairs of rows as they lie. For a column-major B (a linear layer's forward,
  // x @ Wᵀ) this replaces the dot products, whose 16 partial sums per output are summed one by one
  // at the end: [768, 128] x [128, 384] 37.5 -> 95 GFLOP/s before gemm_bf16_block rounded C by
  // vectors, 179 with it; for a row-major B it saves interleaving two rows in registers on every pass of A's
  // rows (2-6 % at 384-768 rows). Below 16 rows the dot products stay: at 2-12 rows they ran
  // 1.1-2.8x the paired tiles' rate (matmul_bench --cpu-time, 1 thread, AMD EPYC Zen 4 with
  // AVX512_BF16 and no AMX, docs/benchmarks.md 2026-12-07).
  constexpr int64_t kPairedRows = 16;
  const bool paired = m >= kPairedRows;
  const int64_t pair_rows = (k + 1) / 2;
  const int64_t distinct_b = b.batch_stride == 0 ? 1 : batch;
  uint32_t* b_pairs = nullptr;
  std::vector<int64_t> b_offsets;
  if (paired) {
    b_pairs = thread_scratch<GemmScratch, uint32_t, 3>(static_cast<size_t>(distinct_b * pair_rows * n));
    const int64_t b_rs = b.col_major ? 1 : b.ld, b_cs = b.col_major ? b.ld : 1;
    parallel_for(distinct_b, 1, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        pack_bf16_b_pairs(k, n, bp + p * b.batch_stride, b_rs, b_cs, b_pairs + p * pair_rows * n, n);
      }
    });
    b_offsets.resize(static_cast<size_t>(pair_rows));
    for (int64_t q = 0; q < pair_rows; ++q) b_offsets[static_cast<size_t>(q)] = q * n;
  } else {
    b_offsets = b_line_offsets(b, n, k);
  }
  const int64_t row_work = std::max<int64_t>(1, n * k);
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 18) / row_work);
  parallel_for(batch * m, grain, [&](int64_t begin, int64_t end) {
    for (int64_t flat = begin; flat < end;) {
      const int64_t p = flat / m, r0 = flat % m;
      const int64_t rows = std::min(m - r0, end - flat);
      gemm_bf16_block(ap + p * a.batch_stride + (a.col_major ? r0 : r0 * a.ld), a, bp + p * b.batch_stride, b,
                      paired ? b_pairs + (b.batch_stride == 0 ? 0 : p) * pair_rows * n : nullptr, b_offsets,
                      c + p * c_bs + r0 * ldc, ldc, rows, n, k, alpha, beta, bias);
      flat += rows;
    }
  });
}

// GemmBias::cpu for float32 and float64: the packed product where gemm would run it (the bias
// added as C is stored), else gemm and a pass adding the bias over C's rows.
template <typename T>
void gemm_bias_typed(int64_t m, int64_t n, int64_t k, const MatrixArg& a, const MatrixArg& b, const T* bias, T* c,
                     int64_t ldc) {
  if (gemm_kernel(dtype_of<T>::value, m, n, k, a.col_major, b.col_major) == GemmKernel::Packed || k <= 0) {
    // (k <= 0: packed_gemm writes the bias rows alone.)
    packed_gemm<T>(m, n, k, static_cast<const T*>(a.data), a.col_major ? 1 : a.ld, a.col_major ? a.ld : 1,
                   static_cast<const T*>(b.data), b.col_major ? 1 : b.ld, b.col_major ? b.ld : 1, c, ldc, T(1), T(0),
                   bias);
    return;
  }
  gemm_typed<T>(1, m, n, k, a, b, c, ldc, 0, T(1), T(0));
  parallel_for(m, std::max<int64_t>(1, (int64_t{1} << 16) / n), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      T* ci = c + i * ldc;
      for (int64_t j = 0; j < n; ++j) ci[j] += bias[j];
    }
  });
}

}  // namespace

bool gemm_native_16bit(DType dtype) { return dtype == DType::BFloat16 && has_bf16_small_gemm(); }

void gemm_bf16_bias(int64_t m, int64_t n, int64_t k, const MatrixArg& a, const MatrixArg& b, const BFloat16* bias,
                    BFloat16* c, int64_t ldc) {
  if (!gemm_native_16bit(DType::BFloat16)) {
    throw std::invalid_argument("gemm_bf16_bias: bfloat16 products run natively only on a CPU with AVX512_BF16 "
                                "(gemm_native_16bit); widen the operands to float32 otherwise");
  }
  if (bias == nullptr) throw std::invalid_argument("gemm_bf16_bias: no bias row given");
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {  // no products: C = round(bias), which a bfloat16 bias already is
    for (int64_t i = 0; i < m; ++i) std::copy(bias, bias + n, c + i * ldc);
    return;
  }
  gemm_bf16(1, m, n, k, a, b, c, ldc, 0, 1.0f, 0.0f, bias);
}

// AMX against the AVX512_BF16 tiles, 1 thread, best of 30 (matmul_bench N's bfloat16 table, Intel
// Xeon, Sapphire Rapids class, 2 cores, 2026-12-05, other builds running): A @ B at 32^3 57.9
// against 32.1 GFLOP/s, 64^3 232 against 57, 128^3 529 against 61, 256^3 793 against 79; A @ B^T
// 49 against 10 at 32^3. So AMX takes every product whose three sizes fill at least one whole
// tile (16); below that (a tile mostly zeros) the AVX512_BF16 tiles keep it, unmeasured.
bool gemm_bf16_on_amx(int64_t m, int64_t n, int64_t k) {
  return has_bf16_small_gemm() && has_amx_gemm() && m >= 16 && n >= 16 && k >= 16;
}

// Tiles against Eigen, on an Intel Xeon with AVX-512, 1 thread (matmul_bench, best GFLOP/s):
// 512^3 A @ B 156 against 98, A @ B^T 113 against 102; 1024^3 A @ B 124 against 115. LeNet's
// linear layers (at most 400 wide) took a third less time and LeNet trained about 4 % faster on
// 1 thread (3 alternating runs). Under AVX2 the two ran LeNet alike, so AVX2 keeps Eigen below
// the packed product's thresholds.
//
// The packed product against the tiles (AVX-512) and Eigen (AVX2), matmul_bench --kernel, best
// GFLOP/s of 50, 1 thread, 2 alternating rounds, Intel Xeon (Sapphire Rapids class) with other
// builds running (load 9-10), 2026-12-05:
// Sizes as (m, n, k).
// - m: packing B costs k * n moves against m * n * k multiply-adds, so few rows do not repay it.
//   A @ B, tiles / packed: (32, 384, 128) 177 / 130, (64, 384, 128) 183 / 164, (128, 384, 128)
//   181 / 172, (256, 384, 128) 185 / 193; (128, 512, 512) 172 / 163, (256, 512, 512) 170 / 172.
//   A @ B^T (the tiles' dot products; B copied row-major only from 256 rows): (64, 384, 128) 66 /
//   101, (128, 384, 128) 68 / 134, (256, 384, 128) 108 / 165; (64, 512, 512) 126 / 107, (128,
//   512, 512) 124 / 135, (256, 512, 512) 82 / 153. A^T @ B (thread CPU time, best of 12-60, 2
//   rounds): 256^3 tiles 172-176 / packed 150-163, (384, 128, 768) 166 / 162-163, 512^3 155-160 /
//   170-177. So kPackedMinRows rows, kPackedMinRowsBt with B transposed, kPackedMinRowsAt with A
//   transposed. Since the packed micro-kernel's k loop is unrolled by 4 and a column-major A
//   runs packed 384 deep (docs/benchmarks.md, gemmgrid), the packed product wins for A^T @ B from
//   128 rows: thread CPU time, best of 12-60, 3 alternating rounds, 2026-12-06 11:20-11:25 UTC,
//   load 1.9-2.0 (float32; float64 keeps the same rule, unmeasured), tiles / packed / torch.mm:
//   256^3 171.4-176.9 / 185.9-187.9 / 187.7-198.5, (128, 512, 768) 170.4-175.7 / 173.4-183.9 /
//   167.6-187.8, (384, 128, 768) 176.8-202.8 / 187.0-219.7 / 183.3-188.7, (128, 128, 768)
//   174.5-206.4 / 190.4-210.3 / 187.6-193.4; below 128 the tiles stay ahead: (64, 128, 768)
//   188.0-209.7 / 178.7-191.1, (64, 512, 768) 199.0-201.0 / 173.1-181.1, (96, 384, 256)
//   210.9-211.4 / 194.8-202.6, (32, 128, 768) 197 / 151-159; (128, 128, 128) 181.2-203.0 /
//   186.7-206.5. On 2 threads (wall clock, the other core mostly busy, so a time-sliced rate)
//   packed ran at or above the tiles in all 12 pairs of the first four shapes.
// - n: a panel is 64 columns under AVX-512, so a narrower B computes zeros: (1024, 32, 256) tiles
//   191 / packed 100, (1024, 64, 256) 187 / 204; (1024, 256, 32) 178 / 178.
// - AVX2 (COLONY_CPU_ISA=avx2), Eigen / packed: A @ B^T (768, 384, 128) 95 / 120, A @ B (768,
//   128, 384) 115 / 123, A^T @ B (384, 128, 768) 103 / 100, 256^3 98 / 119, 128^3 104 / 110.
// Batches of products stay on the tiles or Eigen (attention's many small ones; unmeasured).
// - Against Eigen (AVX2, or past kTilesMaxWidth under AVX-512) from kPackedMinRowsBt rows
//   whatever the layout: AVX-512, Eigen / packed, (4096, 1152, 384) A @ B^T 96 / 175, (1152, 384,
//   4096) A^T @ B 90 / 134, (384, 384, 4096) A^T @ B 90 / 132-149, 2048^3 A @ B 92 / 168.
constexpr int64_t kPackedMinRows = 256, kPackedMinRowsBt = 128, kPackedMinRowsAt = 128, kPackedMinWidth = 64;

GemmKernel gemm_kernel(DType dtype, int64_t m, int64_t n, int64_t k, bool a_col_major, bool b_col_major,
                       int64_t batch) {
  if (dtype != DType::Float32 && dtype != DType::Float64) return GemmKernel::Eigen;
  if (forced_kernel != GemmKernel::Auto) return forced_kernel;
  const bool avx512 = std::strcmp(active_small_gemm_fns<float>().isa, "avx2") != 0;
  const bool tiles = avx512 && n <= kTilesMaxWidth && k <= kTilesMaxWidth;
  const int64_t min_rows = !tiles        ? kPackedMinRowsBt
                           : a_col_major ? kPackedMinRowsAt
                           : b_col_major ? kPackedMinRowsBt
                                         : kPackedMinRows;
  if (batch == 1 && n >= kPackedMinWidth && m >= min_rows) return GemmKernel::Packed;
  return tiles ? GemmKernel::Tiles : GemmKernel::Eigen;
}

ScopedGemmKernel::ScopedGemmKernel(GemmKernel kernel) : saved_(forced_kernel) { forced_kernel = kernel; }
ScopedGemmKernel::~ScopedGemmKernel() { forced_kernel = saved_; }

}  // namespace colony::kernels::cpu

namespace colony::kernels {

using namespace cpu;  // NOLINT(build/namespaces): the helpers above

void Gemm::cpu(DType dtype, int64_t batch, int64_t m, int64_t n, int64_t k, const MatrixArg& a, const MatrixArg& b,
               void* c, int64_t ldc, int64_t c_batch_stride, double alpha, double beta) {
  if (batch <= 0 || m <= 0 || n <= 0) return;
  switch (dtype) {
    case DType::Float32:
      gemm_typed<float>(batch, m, n, k, a, b, static_cast<float*>(c), ldc, c_batch_stride, static_cast<float>(alpha),
                        static_cast<float>(beta));
      return;
    case DType::Float64:
      gemm_typed<double>(batch, m, n, k, a, b, static_cast<double*>(c), ldc, c_batch_stride, alpha, beta);
      return;
    case DType::BFloat16:
      if (!gemm_native_16bit(dtype)) {
        throw std::invalid_argument("gemm: bfloat16 products run natively only on a CPU with AVX512_BF16 "
                                    "(gemm_native_16bit); widen the operands to float32 otherwise");
      }
      gemm_bf16(batch, m, n, k, a, b, static_cast<BFloat16*>(c), ldc, c_batch_stride, static_cast<float>(alpha),
                static_cast<float>(beta));
      return;
    default:
      throw std::invalid_argument(std::string("gemm: CPU matrix products support float32 and float64 (and bfloat16 "
                                              "where gemm_native_16bit allows it), got ") +
                                  dtype_name(dtype));
  }
}

void GemmBias::cpu(DType dtype, int64_t m, int64_t n, int64_t k, const MatrixArg& a, const MatrixArg& b,
                   const void* bias, void* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  switch (dtype) {
    case DType::Float32:
      gemm_bias_typed<float>(m, n, k, a, b, static_cast<const float*>(bias), static_cast<float*>(c), ldc);
      return;
    case DType::Float64:
      gemm_bias_typed<double>(m, n, k, a, b, static_cast<const double*>(bias), static_cast<double*>(c), ldc);
      return;
    default:
      throw std::invalid_argument(std::string("gemm with bias: the CPU kernel takes float32 and float64, got ") +
                                  dtype_name(dtype) + " (raw::addmm copies the bias into C and runs gemm for 16-bit "
                                  "types)");
  }
}

}  // namespace colony::kernels
