#include "kernels/cpu/conv.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/common/half.h"
#include "kernels/common/matrix.h"
#include "kernels/cpu/amx_gemm.h"
#include "kernels/cpu/bf16_rows.h"
#include "kernels/cpu/conv_channels.h"
#include "kernels/cpu/conv_parts.h"
#include "kernels/cpu/conv_pixels.h"
#include "kernels/cpu/conv_weight_rows.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/scratch.h"
#include "kernels/cpu/simd.h"
#include "kernels/cpu/small_gemm.h"
#include "kernels/cpu/small_gemm_bf16.h"

namespace colony::kernels::cpu {
namespace {

// Per-thread scratch (scratch.h): after a training step's first, no convolution allocates.
struct ConvScratch;
template <typename T, int Slot>
T* scratch(size_t n) {
  return thread_scratch<ConvScratch, T, Slot>(n);
}

using conv_parts::col_major;
using conv_parts::for_each_part;
using conv_parts::PartialGrads;
using conv_parts::row_major;
using conv_parts::valid_outputs;
using conv_parts::ValidRange;

int64_t choose_parts(const Conv2dGeometry& g) {
  return conv_parts::choose_parts(
      g.batch, static_cast<double>(g.batch) * g.out_channels * g.out_h * g.out_w * g.patch_size());
}

// ---------- Direct (stride 1) ----------

struct DirectPlan {
  int64_t hp, wp;       // padded input size; the pitch of every pixel grid below
  int64_t nq;           // grid positions computed per output plane: (Ho - 1) * Wp + Wo
  bool padded, dense;   // dense: Wo == Wp, so grid rows are the output rows
  std::vector<int64_t> window;  // K offsets of implicit-im2col row (c, i, j) in a padded group
  std::vector<int64_t> planes;  // Og offsets of the output planes in the pitched grid
};

DirectPlan plan_direct(const Conv2dGeometry& g) {
  if (g.stride_h != 1 || g.stride_w != 1) {
    throw std::invalid_argument("conv2d: the direct algorithm needs stride 1, got stride (" +
                                std::to_string(g.stride_h) + ", " + std::to_string(g.stride_w) + ")");
  }
  DirectPlan p;
  p.hp = g.in_h + 2 * g.pad_h;
  p.wp = g.in_w + 2 * g.pad_w;
  p.nq = (g.out_h - 1) * p.wp + g.out_w;
  p.padded = g.pad_h != 0 || g.pad_w != 0;
  p.dense = g.out_w == p.wp;
  for (int64_t c = 0; c < g.group_in_channels(); ++c)
    for (int64_t i = 0; i < g.kernel_h; ++i)
      for (int64_t j = 0; j < g.kernel_w; ++j)
        p.window.push_back(c * p.hp * p.wp + i * g.dilation_h * p.wp + j * g.dilation_w);
  for (int64_t o = 0; o < g.group_out_channels(); ++o) p.planes.push_back(o * g.out_h * p.wp);
  return p;
}

// dst[i] = src[i] in dst's type (bfloat16 <- float32 rounds to nearest even).
template <typename Src, typename Dst>
void convert_row(const Src* src, int64_t n, Dst* dst) {
  if constexpr (std::is_same_v<Src, Dst>) {
    std::memcpy(dst, src, sizeof(Src) * n);
  } else if constexpr (std::is_same_v<Src, float> && std::is_same_v<Dst, BFloat16>) {
    round_row_to_bf16<false>(src, n, 0.0f, dst);
  } else if constexpr (std::is_same_v<Src, BFloat16> && std::is_same_v<Dst, float>) {
    widen_row_from_bf16(src, n, dst);
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i] = Dst(static_cast<float>(src[i]));
  }
}

// dst[c] = src[c] surrounded by pad_h rows and pad_w columns of zeros, in dst's type (convert_row).
template <typename Src, typename T>
void pad_planes(const Src* src, int64_t planes, int64_t h, int64_t w, int64_t pad_h, int64_t pad_w, T* dst) {
  int64_t hp = h + 2 * pad_h, wp = w + 2 * pad_w;
  if (pad_h != 0 || pad_w != 0) std::fill(dst, dst + planes * hp * wp, T(0.0f));
  for (int64_t c = 0; c < planes; ++c)
    for (int64_t y = 0; y < h; ++y) convert_row(src + (c * h + y) * w, w, dst + (c * hp + y + pad_h) * wp + pad_w);
}

// Image n of x, or its zero-padded copy in `padded` where the plan pads.
template <typename T>
const T* padded_image(const Conv2dGeometry& g, const DirectPlan& p, const T* x, int64_t n, T* padded) {
  const T* image = x + n * g.in_channels * g.in_h * g.in_w;
  if (!p.padded) return image;
  pad_planes(image, g.in_channels, g.in_h, g.in_w, g.pad_h, g.pad_w, padded);
  return padded;
}

// The interior of padded planes (pad_planes' inverse), in dst's type.
template <typename A, typename S>
void crop_planes(const A* src, int64_t planes, int64_t h, int64_t w, int64_t pad_h, int64_t pad_w, S* dst) {
  int64_t hp = h + 2 * pad_h, wp = w + 2 * pad_w;
  for (int64_t c = 0; c < planes; ++c)
    for (int64_t y = 0; y < h; ++y) convert_row(src + (c * hp + y + pad_h) * wp + pad_w, w, dst + (c * h + y) * w);
}

// Output planes [planes, ho, wo] <-> grids [planes, ho, wp]; to_grid zeroes the extra columns.
template <typename A, typename S>
void grid_to_planes(const A* grid, int64_t planes, int64_t ho, int64_t wo, int64_t wp, S* out) {
  for (int64_t r = 0; r < planes * ho; ++r) convert_row(grid + r * wp, wo, out + r * wo);
}
template <typename T>
void planes_to_grid(const T* in, int64_t planes, int64_t ho, int64_t wo, int64_t wp, T* grid) {
  for (int64_t r = 0; r < planes * ho; ++r) {
    std::memcpy(grid + r * wp, in + r * wo, sizeof(T) * wo);
    std::fill(grid + r * wp + wo, grid + (r + 1) * wp, T(0.0f));
  }
}

template <typename T>
compute_t<T> sum_row(const T* p, int64_t n) {
  if constexpr (std::is_same_v<T, compute_t<T>>) {
    return simd::sum(p, n);
  } else {
    compute_t<T> s = 0;
    for (int64_t i = 0; i < n; ++i) s += static_cast<compute_t<T>>(p[i]);
    return s;
  }
}

// The direct algorithm's two products for storage type S, accumulated in A = compute_t<S>: the
// float32 and float64 tiles of small_gemm.h, or the bfloat16 ones of small_gemm_bf16.h (which
// read the broadcast matrix packed in pairs, and bfloat16 as its bits).
template <typename S>
struct DirectProducts {
  // `groups` row-major m x k matrices, the broadcast operand of rows().
  DirectProducts(const S* a, int64_t groups, int64_t m, int64_t k) : a_(a), m_(m), k_(k) {}
  // C(i, j) (+)= bias[i] + sum_p A_grp(i, p) * B(p, j), as small_gemm.h's gemm_rows.
  void rows(int64_t grp, int64_t n, const S* b, const int64_t* b_rows, S* c, const int64_t* c_rows, bool accumulate,
            const S* bias) const {
    gemm_rows<S>(m_, n, k_, a_ + grp * m_ * k_, k_, 1, b, b_rows, c, c_rows, accumulate, bias);
  }
  static int64_t lanes() { return dot_lanes<S>(); }
  static void dot(int64_t m, int64_t n, int64_t k, const S* a, int64_t lda, const S* b, const int64_t* b_rows,
                  S* acc, DotBatch batch) {
    gemm_dot_rows_lanes<S>(m, n, k, a, lda, b, b_rows, acc, batch);
  }
  static void finish(int64_t m, int64_t n, const S* acc, S* c) { gemm_dot_finish<S>(m, n, acc, c, n); }

 private:
  const S* a_;
  int64_t m_, k_;
};

template <>
struct DirectProducts<BFloat16> {
  DirectProducts(const BFloat16* a, int64_t groups, int64_t m, int64_t k)
      : m_(m), k_(k), stride_((k + 1) / 2), pairs_(groups * m * stride_) {
    for (int64_t grp = 0; grp < groups; ++grp)
      pack_bf16_pairs(m, k, bits(a + grp * m * k), k, 1, pairs_.data() + grp * m * stride_);
  }
  void rows(int64_t grp, int64_t n, const BFloat16* b, const int64_t* b_rows, float* c, const int64_t* c_rows,
            bool accumulate, const float* bias) const {
    gemm_rows_bf16(m_, n, k_, pairs_.data() + grp * m_ * stride_, stride_, bits(b), b_rows, c, c_rows, accumulate,
                   bias);
  }
  static int64_t lanes() { return dot_lanes_bf16(); }
  static void dot(int64_t m, int64_t n, int64_t k, const BFloat16* a, int64_t lda, const BFloat16* b,
                  const int64_t* b_rows, float* acc, DotBatch batch) {
    gemm_dot_rows_lanes_bf16(m, n, k, bits(a), lda, bits(b), b_rows, acc, batch);
  }
  static void finish(int64_t m, int64_t n, const float* acc, float* c) { gemm_dot_finish_bf16(m, n, acc, c, n); }

 private:
  static const uint16_t* bits(const BFloat16* p) { return reinterpret_cast<const uint16_t*>(p); }
  int64_t m_, k_, stride_;
  std::vector<uint32_t> pairs_;
};

template <typename S>
void forward_direct(const Conv2dGeometry& g, const S* x, const S* w, const S* bias, S* y) {
  using A = compute_t<S>;
  constexpr bool kNarrow = !std::is_same_v<S, A>;  // products land in a float32 grid, rounded once
  const DirectPlan p = plan_direct(g);
  const int64_t C = g.in_channels, O = g.out_channels;
  const int64_t Cg = g.group_in_channels(), Og = g.group_out_channels(), K = g.patch_size();
  const int64_t plane_out = g.out_h * g.out_w, plane_pad = p.hp * p.wp;
  const DirectProducts<S> products(w, g.groups, Og, K);
  std::vector<A> bias_wide;
  if constexpr (kNarrow) {
    if (bias != nullptr) {
      bias_wide.resize(O);
      convert_row(bias, O, bias_wide.data());
    }
  }
  const A* bias_a = kNarrow ? (bias != nullptr ? bias_wide.data() : nullptr) : reinterpret_cast<const A*>(bias);
  const bool in_place = p.dense && !kNarrow;  // products written straight into y
  for_each_part(g.batch, choose_parts(g), [&](int64_t, int64_t n0, int64_t n1) {
    S* padded = p.padded ? scratch<S, 0>(C * plane_pad) : nullptr;
    A* grid = in_place ? nullptr : scratch<A, 1>(Og * g.out_h * p.wp);
    for (int64_t n = n0; n < n1; ++n) {
      const S* image = padded_image(g, p, x, n, padded);
      for (int64_t grp = 0; grp < g.groups; ++grp) {
        S* out = y + (n * O + grp * Og) * plane_out;
        products.rows(grp, p.nq, image + grp * Cg * plane_pad, p.window.data(),
                      in_place ? reinterpret_cast<A*>(out) : grid, p.planes.data(), false,
                      bias_a != nullptr ? bias_a + grp * Og : nullptr);
        if (!in_place) grid_to_planes(grid, Og, g.out_h, g.out_w, p.wp, out);
      }
    }
  });
}

// Images per weight-gradient call (small_gemm.h's DotBatch): the AVX-512 dot tiles fold and store
// their partial sums once per call, which for LeNet's second layer (136 pixels per dot product)
// cost about a fifth of an image's products. Two images took its weight gradient from 6.7 to
// 5.6-5.8 us per image and the first layer's from 6.3 to 4.9 (small_gemm_bench, Intel Xeon);
// four gained no more, and grow the tiles' rows past L1. AVX2's tiles take the images one after
// another (small_gemm_tiles.h says why).
constexpr int64_t kDotImages = 2;

// In: the storage type of grad_y and x. In = BFloat16 with S = float (backward_widened) widens an
// image block at a time into the part's scratch, the weight and bias gradients only: the same
// values as on widened tensors, in the same order.
template <typename S, typename In = S>
void backward_direct(const Conv2dGeometry& g, const In* gy, const In* x, const S* w, S* gx, S* gw, S* gb) {
  using A = compute_t<S>;
  constexpr bool kNarrow = !std::is_same_v<S, A>;  // gradients accumulate in float32, rounded once
  constexpr bool kWiden = !std::is_same_v<In, S>;
  if (kWiden && gx != nullptr) throw std::logic_error("conv2d_backward: the input gradient is not computed widened per block");
  const DirectPlan p = plan_direct(g);
  const int64_t C = g.in_channels, H = g.in_h, W = g.in_w, O = g.out_channels, G = g.groups;
  const int64_t Cg = g.group_in_channels(), Og = g.group_out_channels(), K = g.patch_size();
  const int64_t KK = g.kernel_h * g.kernel_w;
  const int64_t plane_out = g.out_h * g.out_w, plane_pad = p.hp * p.wp;

  // The input gradient is C += W^T * grad_grid with the rows of W^T scattered to their windows.
  // Rows run kernel position-major (all channels of (i, j), then the next position), so the rows
  // of one register tile land in different planes: consecutive tiles' stores never partially
  // overlap the next loads, which would stall store-to-load forwarding.
  std::vector<S> wt;
  std::vector<int64_t> scatter_rows, grid_rows;
  if (gx != nullptr) {
    wt.resize(G * K * Og);
    for (int64_t grp = 0; grp < G; ++grp)
      for (int64_t ij = 0; ij < KK; ++ij)
        for (int64_t c = 0; c < Cg; ++c)
          for (int64_t o = 0; o < Og; ++o)
            wt[((grp * KK + ij) * Cg + c) * Og + o] = w[((grp * Og + o) * Cg + c) * KK + ij];
    for (int64_t ij = 0; ij < KK; ++ij)
      for (int64_t c = 0; c < Cg; ++c) scatter_rows.push_back(p.window[c * KK + ij]);
    for (int64_t o = 0; o < Og; ++o) grid_rows.push_back(o * g.out_h * p.wp);
  }
  const DirectProducts<S> products(gx != nullptr ? wt.data() : nullptr, gx != nullptr ? G : 0, K, Og);

  const int64_t parts = choose_parts(g);
  PartialGrads<A> partial(parts, (gw != nullptr ? G * Og * K : 0) + (gb != nullptr ? O : 0));
  const int64_t gb_offset = gw != nullptr ? G * Og * K : 0;
  // The input gradient accumulates in a separate (padded, or float32) image unless it can be y's.
  const bool gx_in_place = !p.padded && !kNarrow;
  const int64_t image_size = C * H * W, image_pad = C * plane_pad, grid_size = Og * g.out_h * p.wp;
  for_each_part(g.batch, parts, [&](int64_t part, int64_t n0, int64_t n1) {
    A* gw_part = partial.part(part);
    A* gb_part = partial.part(part) + gb_offset;
    S* padded = (p.padded || kWiden) && gw != nullptr ? scratch<S, 0>(kDotImages * image_pad) : nullptr;
    // grad_y's planes of the block widened (kWiden), as the tensor's would be.
    S* wide = kWiden ? scratch<S, 4>(kDotImages * O * plane_out) : nullptr;
    S* grid = p.dense ? nullptr : scratch<S, 1>(kDotImages * grid_size);
    A* gx_scratch = gx != nullptr && !gx_in_place ? scratch<A, 2>(kDotImages * image_pad) : nullptr;
    // The weight gradient's lane partial sums over all of this part's images (small_gemm.h).
    const int64_t lanes = DirectProducts<S>::lanes();
    A* gw_lanes = gw != nullptr ? scratch<A, 3>(G * Og * K * lanes) : nullptr;
    if (gw_lanes != nullptr) std::fill(gw_lanes, gw_lanes + G * Og * K * lanes, A(0));
    // kDotImages images at a time: image t of the block at images + t * image_stride (x itself,
    // or padded copies), its grad_y grids at gy_grids + t * grid_stride.
    for (int64_t n = n0; n < n1; n += kDotImages) {
      const int64_t count = std::min(kDotImages, n1 - n);
      const S* images = nullptr;
      if constexpr (!kWiden) images = x != nullptr ? x + n * image_size : nullptr;
      int64_t image_stride = image_size;
      if (padded != nullptr) {
        for (int64_t t = 0; t < count; ++t)
          pad_planes(x + (n + t) * image_size, C, H, W, g.pad_h, g.pad_w, padded + t * image_pad);
        images = padded;
        image_stride = image_pad;
      }
      auto gx_image = [&](int64_t t) {
        return gx_in_place ? reinterpret_cast<A*>(gx + (n + t) * image_size) : gx_scratch + t * image_pad;
      };
      if (gx != nullptr) {
        for (int64_t t = 0; t < count; ++t) std::fill(gx_image(t), gx_image(t) + image_pad, A(0));
      }
      const S* gy_block = nullptr;
      if constexpr (kWiden) {
        convert_row(gy + n * O * plane_out, count * O * plane_out, wide);
        gy_block = wide;
      } else {
        gy_block = gy + n * O * plane_out;
      }
      for (int64_t grp = 0; grp < G; ++grp) {
        const S* gy_planes = gy_block + grp * Og * plane_out;
        const S* gy_grids = gy_planes;
        int64_t grid_stride = O * plane_out;
        if (!p.dense) {
          for (int64_t t = 0; t < count; ++t)
            planes_to_grid(gy_planes + t * O * plane_out, Og, g.out_h, g.out_w, p.wp, grid + t * grid_size);
          gy_grids = grid;
          grid_stride = grid_size;
        }
        if (gw != nullptr) {
          DirectProducts<S>::dot(Og, K, p.nq, gy_grids, g.out_h * p.wp, images + grp * Cg * plane_pad,
                                 p.window.data(), gw_lanes + grp * Og * K * lanes,
                                 DotBatch{count, grid_stride, image_stride});
        }
        for (int64_t t = 0; t < count; ++t) {
          if (gx != nullptr) {
            products.rows(grp, p.nq, gy_grids + t * grid_stride, grid_rows.data(), gx_image(t) + grp * Cg * plane_pad,
                          scatter_rows.data(), true, nullptr);
          }
          if (gb != nullptr) {
            const S* planes = gy_planes + t * O * plane_out;
            for (int64_t o = 0; o < Og; ++o) gb_part[grp * Og + o] += sum_row(planes + o * plane_out, plane_out);
          }
        }
      }
      if (gx != nullptr && !gx_in_place) {
        for (int64_t t = 0; t < count; ++t)
          crop_planes(gx_image(t), C, H, W, g.pad_h, g.pad_w, gx + (n + t) * image_size);
      }
    }
    if (gw_lanes != nullptr) DirectProducts<S>::finish(G * Og, K, gw_lanes, gw_part);
  });
  if (gw != nullptr) partial.reduce_into(gw, 0, G * Og * K, parts);
  if (gb != nullptr) partial.reduce_into(gb, gb_offset, O, parts);
}

// ---------- bfloat16 on AMX tiles (amx_gemm.h) ----------
//
// The direct algorithm's implicit im2col (the same padded images, grids and windows) fed to the
// AMX products, whose operand B must be packed in VNNI tiles first:
//  - forward: Y_grid[Og, nq] = W[Og, K] X[K, nq], row r of X the padded image from window r on
//    (amx_pack_b_rows, per image); y = round(Y_grid + bias), the output rounded once.
//  - weight gradient: dW[Og, K] += dY_grid[Og, nq] X^T, column r of X^T the same window
//    (amx_pack_b_cols), summed over a part's images in float32 (the tiles continue from the sums,
//    accumulate) and rounded once after the parts are added.
//  - input gradient: D[K, nq] = W^T dY_grid into float32 scratch, then row r of D added to the
//    padded float32 gradient from window r on (the windows overlap, so the tiles cannot store
//    there), rows kernel position-major as backward_direct scatters them; cropped and rounded once.
struct ConvAmxScratch;
template <typename T, int Slot>
T* amx_scratch(size_t n) {
  return thread_scratch<ConvAmxScratch, T, Slot>(n);
}

// Packed B on a 64-byte boundary (amx_gemm_tiles.h: tile rows straddling two cache lines run at
// half speed): scratch for `elements` plus the alignment.
uint16_t* aligned_packed_b(int64_t elements) {
  uint16_t* p = amx_scratch<uint16_t, 0>(elements + 32);
  return p + ((64 - reinterpret_cast<uintptr_t>(p) % 64) % 64) / 2;
}

const uint16_t* bf16_bits(const BFloat16* p) { return reinterpret_cast<const uint16_t*>(p); }

// Columns of the implicit im2col packed and multiplied at a time: packed B of at most 24 KB, half
// of L1, written and read there. Packed whole per image (171 KB for LeNet's conv1), B's stores went
// to L2 and the packing ran at a seventh of its instruction rate: 39 % of the forward's time
// (perf, 1 thread, Intel Xeon).
constexpr int64_t kAmxChunkBytes = 24 << 10;

// The weights as A of the forward's product read in place (AmxGemmArgs::a_rows_padded): each
// group's rows padded to a whole 16 with zeros, a stride of whole 32-deep steps (zeros past K),
// on a 64-byte boundary.
struct PaddedWeights {
  int64_t rows, stride;
  std::vector<uint16_t> storage;
  uint16_t* data;
  PaddedWeights(const BFloat16* w, int64_t groups, int64_t og, int64_t k)
      : rows((og + 15) / 16 * 16), stride((k + 31) / 32 * 32), storage(groups * rows * stride + 32, 0) {
    data = storage.data() + ((64 - reinterpret_cast<uintptr_t>(storage.data()) % 64) % 64) / 2;
    for (int64_t grp = 0; grp < groups; ++grp)
      for (int64_t o = 0; o < og; ++o)
        std::memcpy(data + (grp * rows + o) * stride, w + (grp * og + o) * k, k * sizeof(uint16_t));
  }
  const uint16_t* group(int64_t grp) const { return data + grp * rows * stride; }
};

void forward_amx(const Conv2dGeometry& g, const BFloat16* x, const BFloat16* w, const BFloat16* bias, BFloat16* y) {
  const DirectPlan p = plan_direct(g);
  const int64_t C = g.in_channels, O = g.out_channels;
  const int64_t Cg = g.group_in_channels(), Og = g.group_out_channels(), K = g.patch_size();
  const int64_t plane_out = g.out_h * g.out_w, plane_pad = p.hp * p.wp, pitch = g.out_h * p.wp;
  const PaddedWeights weights(w, g.groups, Og, K);
  const int64_t steps = weights.stride / 32;
  const int64_t chunk = std::max<int64_t>(2, kAmxChunkBytes / (steps * 1024) / 2 * 2) * 16;  // whole tile pairs
  for_each_part(g.batch, choose_parts(g), [&](int64_t, int64_t n0, int64_t n1) {
    BFloat16* padded = p.padded ? amx_scratch<BFloat16, 1>(C * plane_pad) : nullptr;
    float* grid = amx_scratch<float, 2>(Og * pitch);
    uint16_t* packed = aligned_packed_b(amx_packed_b_size(K, chunk));
    bool zeros_kept = false;  // the packed rows past K, written by the first call
    for (int64_t n = n0; n < n1; ++n) {
      const BFloat16* image = padded_image(g, p, x, n, padded);
      for (int64_t grp = 0; grp < g.groups; ++grp) {
        for (int64_t j0 = 0; j0 < p.nq; j0 += chunk) {
          const int64_t cols = std::min(chunk, p.nq - j0);
          amx_pack_b_rows(K, cols, bf16_bits(image + grp * Cg * plane_pad) + j0, p.window.data(), packed, zeros_kept);
          zeros_kept = true;
          AmxGemmArgs args;
          args.m = Og;
          args.n = cols;
          args.k = weights.stride;  // zeros past K on both sides
          args.a = weights.group(grp);
          args.a_row_stride = weights.stride;
          args.a_rows_padded = true;
          args.packed_b = packed;
          args.c_f32 = grid + j0;
          args.ldc = pitch;
          amx_gemm(args);
        }
        BFloat16* out = y + (n * O + grp * Og) * plane_out;
        for (int64_t o = 0; o < Og; ++o) {
          const float b = bias != nullptr ? static_cast<float>(bias[grp * Og + o]) : 0.0f;
          for (int64_t r = 0; r < g.out_h; ++r)
            round_row_to_bf16<true>(grid + o * pitch + r * p.wp, g.out_w, b, out + o * plane_out + r * g.out_w);
        }
      }
    }
  });
}

// grad_y's planes of image n, group grp, as the pitched grid the products read (zeros in the
// extra columns), in `grid` unless they are that already (dense).
const BFloat16* grad_grid(const Conv2dGeometry& g, const DirectPlan& p, const BFloat16* gy, int64_t n, int64_t grp,
                          BFloat16* grid) {
  const BFloat16* planes = gy + (n * g.out_channels + grp * g.group_out_channels()) * g.out_h * g.out_w;
  if (p.dense) return planes;
  planes_to_grid(planes, g.group_out_channels(), g.out_h, g.out_w, p.wp, grid);
  return grid;
}

void backward_weight_amx(const Conv2dGeometry& g, const BFloat16* gy, const BFloat16* x, BFloat16* gw,
                         BFloat16* gb) {
  const DirectPlan p = plan_direct(g);
  const int64_t C = g.in_channels, O = g.out_channels, G = g.groups;
  const int64_t Cg = g.group_in_channels(), Og = g.group_out_channels(), K = g.patch_size();
  const int64_t plane_out = g.out_h * g.out_w, plane_pad = p.hp * p.wp, pitch = g.out_h * p.wp;
  const int64_t parts = choose_parts(g);
  PartialGrads<float> partial(parts, G * Og * K + (gb != nullptr ? O : 0));
  for_each_part(g.batch, parts, [&](int64_t part, int64_t n0, int64_t n1) {
    float* gw_part = partial.part(part);
    float* gb_part = gw_part + G * Og * K;
    BFloat16* padded = p.padded ? amx_scratch<BFloat16, 1>(C * plane_pad) : nullptr;
    BFloat16* grid = p.dense ? nullptr : amx_scratch<BFloat16, 2>(Og * pitch);
    uint16_t* packed = aligned_packed_b(amx_packed_b_size(p.nq, K));
    for (int64_t n = n0; n < n1; ++n) {
      const BFloat16* image = padded_image(g, p, x, n, padded);
      for (int64_t grp = 0; grp < G; ++grp) {
        amx_pack_b_cols(p.nq, K, bf16_bits(image + grp * Cg * plane_pad), p.window.data(), packed);
        AmxGemmArgs args;
        args.m = Og;
        args.n = K;
        args.k = p.nq;
        args.a = bf16_bits(grad_grid(g, p, gy, n, grp, grid));
        args.a_row_stride = pitch;
        args.packed_b = packed;
        args.c_f32 = gw_part + grp * Og * K;
        args.accumulate = true;  // PartialGrads starts at zero
        args.ldc = K;
        amx_gemm(args);
        if (gb != nullptr) {
          const BFloat16* planes = gy + (n * O + grp * Og) * plane_out;
          for (int64_t o = 0; o < Og; ++o) gb_part[grp * Og + o] += sum_row(planes + o * plane_out, plane_out);
        }
      }
    }
  });
  partial.reduce_into(gw, 0, G * Og * K, parts);
  if (gb != nullptr) partial.reduce_into(gb, G * Og * K, O, parts);
}

// The weight gradient on conv_weight_rows.h's product, a part's images at a time; the bias gradient
// as backward_widened's (each plane widened, then summed by simd::sum: the values of before, and a
// scalar float sum of bfloat16 would be a chain of 784 dependent additions per plane); the parts
// summed in order and rounded once.
void backward_weight_rows(const Conv2dGeometry& g, const BFloat16* gy, const BFloat16* x, BFloat16* gw,
                          BFloat16* gb) {
  const int64_t O = g.out_channels, nw = gw != nullptr ? O * g.patch_size() : 0, plane_out = g.out_h * g.out_w;
  const int64_t parts = choose_parts(g);
  PartialGrads<float> partial(parts, nw + (gb != nullptr ? O : 0));
  for_each_part(g.batch, parts, [&](int64_t part, int64_t n0, int64_t n1) {
    if (gw != nullptr) conv_weight_rows_accumulate(g, gy, x, n0, n1, partial.part(part));
    float* gb_part = partial.part(part) + nw;
    float* plane = gb != nullptr ? scratch<float, 0>(plane_out) : nullptr;
    for (int64_t n = n0; gb != nullptr && n < n1; ++n) {
      for (int64_t o = 0; o < O; ++o) {
        convert_row(gy + (n * O + o) * plane_out, plane_out, plane);
        gb_part[o] += sum_row(plane, plane_out);
      }
    }
  });
  if (gw != nullptr) partial.reduce_into(gw, 0, nw, parts);
  if (gb != nullptr) partial.reduce_into(gb, nw, O, parts);
}

void backward_input_amx(const Conv2dGeometry& g, const BFloat16* gy, const BFloat16* w, BFloat16* gx) {
  const DirectPlan p = plan_direct(g);
  const int64_t C = g.in_channels, H = g.in_h, W = g.in_w, G = g.groups;
  const int64_t Cg = g.group_in_channels(), Og = g.group_out_channels(), K = g.patch_size();
  const int64_t KK = g.kernel_h * g.kernel_w, plane_pad = p.hp * p.wp, pitch = g.out_h * p.wp;
  // W^T row-major per group (A of the product, packed by the tiles per call).
  std::vector<BFloat16> wt(G * K * Og);
  for (int64_t grp = 0; grp < G; ++grp)
    for (int64_t o = 0; o < Og; ++o)
      for (int64_t r = 0; r < K; ++r) wt[(grp * K + r) * Og + o] = w[(grp * Og + o) * K + r];
  // D's rows kernel position-major: the rows added one after another lie in different planes, so
  // a row's loads never partially overlap the previous row's stores still in flight.
  std::vector<int64_t> order;
  for (int64_t ij = 0; ij < KK; ++ij)
    for (int64_t c = 0; c < Cg; ++c) order.push_back(c * KK + ij);
  const int64_t ldd = (p.nq + 15) / 16 * 16;  // D's rows on 64-byte boundaries
  for_each_part(g.batch, choose_parts(g), [&](int64_t, int64_t n0, int64_t n1) {
    float* gx_pad = amx_scratch<float, 1>(C * plane_pad);
    BFloat16* grid = p.dense ? nullptr : amx_scratch<BFloat16, 2>(Og * pitch);
    uint16_t* packed = aligned_packed_b(amx_packed_b_size(Og, p.nq));
    float* d = amx_scratch<float, 3>(K * ldd);
    for (int64_t n = n0; n < n1; ++n) {
      std::fill(gx_pad, gx_pad + C * plane_pad, 0.0f);
      for (int64_t grp = 0; grp < G; ++grp) {
        amx_pack_b(Og, p.nq, bf16_bits(grad_grid(g, p, gy, n, grp, grid)), pitch, 1, packed);
        AmxGemmArgs args;
        args.m = K;
        args.n = p.nq;
        args.k = Og;
        args.a = bf16_bits(wt.data() + grp * K * Og);
        args.a_row_stride = Og;
        args.packed_b = packed;
        args.c_f32 = d;
        args.ldc = ldd;
        amx_gemm(args);
        float* target = gx_pad + grp * Cg * plane_pad;
        for (int64_t r : order) {
          const float* row = d + r * ldd;
          float* dst = target + p.window[r];
          for (int64_t q = 0; q < p.nq; ++q) dst[q] += row[q];
        }
      }
      crop_planes(gx_pad, C, H, W, g.pad_h, g.pad_w, gx + n * C * H * W);
    }
  });
}

// ---------- Im2col + Eigen ----------

// im2col blocks of at most this many elements (1 MiB of floats): big images are done a band of
// output rows at a time, so the buffer stays in L2 and small.
constexpr int64_t kColBudget = 1 << 18;

int64_t rows_per_block(const Conv2dGeometry& g) {
  return std::max<int64_t>(1, std::min<int64_t>(g.out_h, kColBudget / std::max<int64_t>(1, g.patch_size() * g.out_w)));
}

// col[(c * kh + i) * kw + j][(y - y0) * Wo + x] = image[c][y * sh - ph + i * dh][x * sw - pw + j * dw],
// zero outside the image, for output rows [y0, y1) of one group's channels.
template <typename T>
void im2col(const T* image, const Conv2dGeometry& g, int64_t y0, int64_t y1, T* col) {
  const int64_t H = g.in_h, W = g.in_w, Wo = g.out_w, cols = (y1 - y0) * Wo;
  for (int64_t c = 0; c < g.group_in_channels(); ++c) {
    for (int64_t i = 0; i < g.kernel_h; ++i) {
      for (int64_t j = 0; j < g.kernel_w; ++j) {
        T* row = col + ((c * g.kernel_h + i) * g.kernel_w + j) * cols;
        const int64_t off_w = j * g.dilation_w - g.pad_w;
        const ValidRange xr = valid_outputs(W, Wo, g.stride_w, off_w);
        for (int64_t y = y0; y < y1; ++y) {
          T* dst = row + (y - y0) * Wo;
          const int64_t ih = y * g.stride_h - g.pad_h + i * g.dilation_h;
          if (ih < 0 || ih >= H) {
            std::fill(dst, dst + Wo, T(0));
            continue;
          }
          const T* src = image + (c * H + ih) * W + off_w;
          std::fill(dst, dst + xr.lo, T(0));
          if (g.stride_w == 1) {
            std::memcpy(dst + xr.lo, src + xr.lo, sizeof(T) * (xr.hi - xr.lo));
          } else {
            for (int64_t xo = xr.lo; xo < xr.hi; ++xo) dst[xo] = src[xo * g.stride_w];
          }
          std::fill(dst + xr.hi, dst + Wo, T(0));
        }
      }
    }
  }
}

// image[c][...] += col[...]: im2col's adjoint, for the input gradient.
template <typename T>
void col2im(const T* col, const Conv2dGeometry& g, int64_t y0, int64_t y1, T* image) {
  const int64_t H = g.in_h, W = g.in_w, Wo = g.out_w, cols = (y1 - y0) * Wo;
  for (int64_t c = 0; c < g.group_in_channels(); ++c) {
    for (int64_t i = 0; i < g.kernel_h; ++i) {
      for (int64_t j = 0; j < g.kernel_w; ++j) {
        const T* row = col + ((c * g.kernel_h + i) * g.kernel_w + j) * cols;
        const int64_t off_w = j * g.dilation_w - g.pad_w;
        const ValidRange xr = valid_outputs(W, Wo, g.stride_w, off_w);
        for (int64_t y = y0; y < y1; ++y) {
          const int64_t ih = y * g.stride_h - g.pad_h + i * g.dilation_h;
          if (ih < 0 || ih >= H) continue;
          const T* src = row + (y - y0) * Wo;
          T* dst = image + (c * H + ih) * W + off_w;
          for (int64_t xo = xr.lo; xo < xr.hi; ++xo) dst[xo * g.stride_w] += src[xo];
        }
      }
    }
  }
}

template <typename T>
void forward_im2col(const Conv2dGeometry& g, const T* x, const T* w, const T* bias, T* y) {
  const DType dt = dtype_of<T>::value;
  const int64_t C = g.in_channels, H = g.in_h, W = g.in_w, O = g.out_channels;
  const int64_t Cg = g.group_in_channels(), Og = g.group_out_channels(), K = g.patch_size();
  const int64_t P = g.out_h * g.out_w, rows = rows_per_block(g);
  for_each_part(g.batch, choose_parts(g), [&](int64_t, int64_t n0, int64_t n1) {
    T* col = scratch<T, 0>(K * rows * g.out_w);
    for (int64_t n = n0; n < n1; ++n) {
      for (int64_t grp = 0; grp < g.groups; ++grp) {
        const T* image = x + (n * C + grp * Cg) * H * W;
        T* out = y + (n * O + grp * Og) * P;
        for (int64_t y0 = 0; y0 < g.out_h; y0 += rows) {
          const int64_t y1 = std::min(g.out_h, y0 + rows), cols = (y1 - y0) * g.out_w;
          im2col(image, g, y0, y1, col);
          gemm(dt, 1, Og, cols, K, row_major(w + grp * Og * K, K), row_major(col, cols), out + y0 * g.out_w, P, 0,
               1.0, 0.0);
        }
        if (bias != nullptr) {
          for (int64_t o = 0; o < Og; ++o) {
            const T b = bias[grp * Og + o];
            for (int64_t i = 0; i < P; ++i) out[o * P + i] += b;
          }
        }
      }
    }
  });
}

template <typename T>
void backward_im2col(const Conv2dGeometry& g, const T* gy, const T* x, const T* w, T* gx, T* gw, T* gb) {
  const DType dt = dtype_of<T>::value;
  const int64_t C = g.in_channels, H = g.in_h, W = g.in_w, O = g.out_channels, G = g.groups;
  const int64_t Cg = g.group_in_channels(), Og = g.group_out_channels(), K = g.patch_size();
  const int64_t P = g.out_h * g.out_w, rows = rows_per_block(g);
  const int64_t parts = choose_parts(g);
  PartialGrads<T> partial(parts, (gw != nullptr ? G * Og * K : 0) + (gb != nullptr ? O : 0));
  const int64_t gb_offset = gw != nullptr ? G * Og * K : 0;
  for_each_part(g.batch, parts, [&](int64_t part, int64_t n0, int64_t n1) {
    T* gw_part = partial.part(part);
    T* gb_part = partial.part(part) + gb_offset;
    T* col = scratch<T, 0>(K * rows * g.out_w);
    for (int64_t n = n0; n < n1; ++n) {
      if (gx != nullptr) std::fill(gx + n * C * H * W, gx + (n + 1) * C * H * W, T(0));
      for (int64_t grp = 0; grp < G; ++grp) {
        const T* gy_planes = gy + (n * O + grp * Og) * P;
        for (int64_t y0 = 0; y0 < g.out_h; y0 += rows) {
          const int64_t y1 = std::min(g.out_h, y0 + rows), cols = (y1 - y0) * g.out_w;
          const T* gy_block = gy_planes + y0 * g.out_w;
          if (gw != nullptr) {
            im2col(x + (n * C + grp * Cg) * H * W, g, y0, y1, col);
            // grad_w[Og, K] += grad_y[Og, cols] * col^T
            gemm(dt, 1, Og, K, cols, row_major(gy_block, P), col_major(col, cols), gw_part + grp * Og * K, K, 0, 1.0,
                 1.0);
          }
          if (gx != nullptr) {
            // col[K, cols] = w^T * grad_y, then scattered back to the image
            gemm(dt, 1, K, cols, Og, col_major(w + grp * Og * K, K), row_major(gy_block, P), col, cols, 0, 1.0, 0.0);
            col2im(col, g, y0, y1, gx + (n * C + grp * Cg) * H * W);
          }
        }
        if (gb != nullptr) {
          for (int64_t o = 0; o < Og; ++o) gb_part[grp * Og + o] += simd::sum(gy_planes + o * P, P);
        }
      }
    }
  });
  if (gw != nullptr) partial.reduce_into(gw, 0, G * Og * K, parts);
  if (gb != nullptr) partial.reduce_into(gb, gb_offset, O, parts);
}

// Each wanted gradient by its pass's algorithm: one call when they agree (or only one kind of
// gradient is wanted), else two passes over grad_y, each by the faster algorithm.
template <typename T>
void backward_both_ways(const Conv2dGeometry& g, const T* gy, const T* x, const T* w, T* gx, T* gw, T* gb,
                        bool direct_x, bool direct_w) {
  if (direct_x == direct_w || gx == nullptr || (gw == nullptr && gb == nullptr)) {
    const bool direct = gx != nullptr ? direct_x : direct_w;
    if (direct) {
      backward_direct<T>(g, gy, x, w, gx, gw, gb);
    } else {
      backward_im2col<T>(g, gy, x, w, gx, gw, gb);
    }
    return;
  }
  auto input_pass = direct_x ? backward_direct<T> : backward_im2col<T>;
  auto weight_pass = direct_w ? backward_direct<T> : backward_im2col<T>;
  input_pass(g, gy, x, w, gx, nullptr, nullptr);
  weight_pass(g, gy, x, w, nullptr, gw, gb);
}

ConvAlgorithm resolve(ConvAlgorithm algo, const Conv2dGeometry& g, ConvPass pass) {
  return algo == ConvAlgorithm::Auto ? choose_conv_algorithm(g, pass) : algo;
}

[[noreturn]] void bad_dtype(const char* op, DType dtype) {
  throw std::invalid_argument(std::string(op) + ": CPU convolution supports float32 and float64 (and bfloat16 where " +
                              "conv2d_native_16bit allows it), got " + dtype_name(dtype));
}

// Whether bfloat16 tiles can run this shape: stride 1 and AMX or AVX512_BF16 active.
bool bf16_tiles_run(const Conv2dGeometry& g) {
  return g.stride_h == 1 && g.stride_w == 1 && (has_bf16_small_gemm() || has_amx_gemm());
}

// bfloat16 runs the direct algorithm's products, on AMX tiles or small_gemm_bf16.h's, or not at all.
void check_bf16(const char* op, const Conv2dGeometry& g, ConvAlgorithm algo) {
  if (!bf16_tiles_run(g) || algo == ConvAlgorithm::Im2col) {
    throw std::invalid_argument(std::string(op) + ": bfloat16 convolution runs natively only with stride 1 on a CPU " +
                                "with AVX512_BF16 or AMX (conv2d_native_16bit); widen the operands to float32 " +
                                "otherwise");
  }
  if (algo == ConvAlgorithm::Amx && !has_amx_gemm()) {
    throw std::invalid_argument(std::string(op) + ": ConvAlgorithm::Amx needs AMX-BF16 (has_amx_gemm()), which is " +
                                "absent or capped by COLONY_CPU_ISA here");
  }
  if (algo == ConvAlgorithm::Direct && !has_bf16_small_gemm()) {
    throw std::invalid_argument(std::string(op) + ": bfloat16 with ConvAlgorithm::Direct needs AVX512_BF16 " +
                                "(has_bf16_small_gemm()), which is absent or capped by COLONY_CPU_ISA here");
  }
}

// The AMX tiles multiply bfloat16 only.
void check_amx_dtype(const char* op, DType dtype, ConvAlgorithm algo) {
  if ((algo == ConvAlgorithm::Amx || algo == ConvAlgorithm::AmxPixels || algo == ConvAlgorithm::AmxChannels) &&
      dtype != DType::BFloat16) {
    const char* name = algo == ConvAlgorithm::Amx ? "Amx" : algo == ConvAlgorithm::AmxPixels ? "AmxPixels" : "AmxChannels";
    throw std::invalid_argument(std::string(op) + ": ConvAlgorithm::" + name + " takes bfloat16 operands, got " +
                                dtype_name(dtype));
  }
}

// Whether this bfloat16 pass runs on AMX tiles; check_bf16 passed.
bool bf16_pass_on_amx(const Conv2dGeometry& g, ConvPass pass, ConvAlgorithm algo) {
  return algo == ConvAlgorithm::Amx || (algo == ConvAlgorithm::Auto && conv2d_bf16_on_amx(g, pass));
}

// Whether Auto computes this bfloat16 convolution from operands widened to float32 inside the
// kernels (forward_widened, backward_widened): with both tile sets, fewer than 16 output channels
// per group (conv2d_native_16bit says why).
bool bf16_widened_here(const Conv2dGeometry& g) {
  return has_amx_gemm() && has_bf16_small_gemm() && g.group_out_channels() < 16;
}

// Grids [planes * ho rows, wp] (forward_direct's) into bfloat16 planes [planes * ho, wo], each output
// rounded once. Rows are rounded in whole 8s (round_row_to_bf16's vector loop): the few past a
// row's end land on the next rows, which are written after it; only where that would pass the
// planes' end (or the grid's) does a row take round_row_to_bf16's scalar tail.
void round_grid_to_planes(const float* grid, int64_t planes, int64_t ho, int64_t wo, int64_t wp, BFloat16* out) {
  const int64_t rows = planes * ho, whole = (wo + 7) / 8 * 8;
  for (int64_t r = 0; r < rows; ++r) {
    const bool spill = r * wo + whole <= rows * wo && r * wp + whole <= rows * wp;
    round_row_to_bf16<false>(grid + r * wp, spill ? whole : wo, 0.0f, out + r * wo);
  }
}

// y = conv(x, w) + bias for bfloat16 operands on the float32 direct tiles: each image widened (and
// padded) into the part's float32 scratch, where it stays in L1/L2, the products into a float32
// grid with the bias, each output rounded once straight from the grid. The same values as widening
// the tensors around the float32 kernel (ops/cpu_widen.h), without its two full passes over the
// float32 output (stored, then read back and rounded) and the image's widened copy in memory.
void forward_widened(const Conv2dGeometry& g, const BFloat16* x, const BFloat16* w, const BFloat16* bias,
                     BFloat16* y) {
  const DirectPlan p = plan_direct(g);
  const int64_t C = g.in_channels, H = g.in_h, W = g.in_w, O = g.out_channels;
  const int64_t Cg = g.group_in_channels(), Og = g.group_out_channels(), K = g.patch_size();
  const int64_t plane_out = g.out_h * g.out_w, plane_pad = p.hp * p.wp;
  std::vector<float> w32(O * K), bias32(bias != nullptr ? O : 0);
  widen_row_from_bf16(w, O * K, w32.data());
  if (bias != nullptr) widen_row_from_bf16(bias, O, bias32.data());
  const DirectProducts<float> products(w32.data(), g.groups, Og, K);
  for_each_part(g.batch, choose_parts(g), [&](int64_t, int64_t n0, int64_t n1) {
    float* image = scratch<float, 0>(C * plane_pad);
    float* grid = scratch<float, 1>(Og * g.out_h * p.wp);
    if (p.padded) std::fill(image, image + C * plane_pad, 0.0f);  // the border, zero for every image
    for (int64_t n = n0; n < n1; ++n) {
      const BFloat16* src = x + n * C * H * W;
      for (int64_t c = 0; c < C; ++c)
        for (int64_t r = 0; r < H; ++r)
          widen_row_from_bf16(src + (c * H + r) * W, W, image + (c * p.hp + r + g.pad_h) * p.wp + g.pad_w);
      for (int64_t grp = 0; grp < g.groups; ++grp) {
        products.rows(grp, p.nq, image + grp * Cg * plane_pad, p.window.data(), grid, p.planes.data(), false,
                      bias != nullptr ? bias32.data() + grp * Og : nullptr);
        round_grid_to_planes(grid, Og, g.out_h, g.out_w, p.wp, y + (n * O + grp * Og) * plane_out);
      }
    }
  });
}

void forward_bf16(const Conv2dGeometry& g, const BFloat16* x, const BFloat16* w, const BFloat16* bias, BFloat16* y,
                  ConvAlgorithm algo) {
  if (algo == ConvAlgorithm::AmxChannels || (algo == ConvAlgorithm::Auto && conv2d_bf16_channels(g))) {
    conv2d_forward_channels(g, x, w, bias, y);
  } else if (algo == ConvAlgorithm::Auto && bf16_widened_here(g)) {
    forward_widened(g, x, w, bias, y);
  } else if (algo == ConvAlgorithm::AmxPixels || (algo == ConvAlgorithm::Auto && conv2d_bf16_pixels(g))) {
    conv2d_forward_pixels(g, x, w, bias, y);
  } else if (bf16_pass_on_amx(g, ConvPass::Forward, algo)) {
    forward_amx(g, x, w, bias, y);
  } else {
    forward_direct<BFloat16>(g, x, w, bias, y);
  }
}

// Gradients (any of grad_x, grad_w, grad_b; null: not wanted) from operands widened to float32, on
// the float32 direct tiles, each rounded once: where AMX is active but no AMX path takes the pass,
// the AVX-512 float32 tiles beat the AVX512_BF16 ones, widening included. LeNet's conv2 input
// gradient (6 -> 16, 5 x 5, 14 x 14, batch 32; conv_bench, 1 thread, CPU us; Intel Xeon, Sapphire
// Rapids class, 2026-12-05, load ~8): 214 in float32 against 326 on the AVX512_BF16 tiles; conv1's
// weight gradient (3 -> 6, 32 x 32): 222 against 376 (and 564 on AMX); the whole `--amp bf16` step:
// docs/benchmarks.md, "LeNet under bfloat16 autocast on AMX".
void backward_widened(const Conv2dGeometry& g, const BFloat16* gy, const BFloat16* x, const BFloat16* w,
                      BFloat16* gx, BFloat16* gw, BFloat16* gb) {
  const int64_t ny = g.batch * g.out_channels * g.out_h * g.out_w;
  const int64_t nw = g.out_channels * g.patch_size(), nx = g.batch * g.in_channels * g.in_h * g.in_w;
  // The calling thread's scratch (its own tag: backward_direct's parts take ConvScratch's slots).
  struct WidenedScratch;
  auto widened = [](const BFloat16* src, int64_t n, float* dst) {
    widen_from_bf16_parallel(src, n, dst);
    return dst;
  };
  float* gw32 = gw != nullptr ? thread_scratch<WidenedScratch, float, 4>(nw) : nullptr;
  float* gb32 = gb != nullptr ? thread_scratch<WidenedScratch, float, 5>(g.out_channels) : nullptr;
  if (gx == nullptr) {
    // The weight and bias gradients alone (a first layer: LeNet's conv1) widen grad_y and x an
    // image block at a time inside backward_direct's parts, in cache, rather than into whole
    // float32 copies (3 % of LeNet's `--amp bf16` step, nearly all stores; docs/benchmarks.md,
    // "LeNet bf16: conv1 widened inside the kernels").
    backward_direct<float, BFloat16>(g, gy, x, nullptr, nullptr, gw32, gb32);
  } else {
    float* gy32 = widened(gy, ny, thread_scratch<WidenedScratch, float, 0>(ny));
    float* w32 = widened(w, nw, thread_scratch<WidenedScratch, float, 1>(nw));
    float* x32 = gw != nullptr ? widened(x, nx, thread_scratch<WidenedScratch, float, 2>(nx)) : nullptr;
    float* gx32 = thread_scratch<WidenedScratch, float, 3>(nx);
    backward_direct<float>(g, gy32, x32, w32, gx32, gw32, gb32);
    round_to_bf16_parallel(gx32, nx, gx);
  }
  if (gw != nullptr) round_to_bf16_parallel(gw32, nw, gw);
  if (gb != nullptr) round_to_bf16_parallel(gb32, g.out_channels, gb);
}

// The input gradient and the weight (and bias) gradient each on the tiles chosen for its pass: one
// pass over grad_y when both take the AVX512_BF16 tiles, else one per gradient. With both tile sets
// (Auto), a gradient off AMX is computed widened (backward_widened), both in one pass.
void backward_bf16(const Conv2dGeometry& g, const BFloat16* gy, const BFloat16* x, const BFloat16* w, BFloat16* gx,
                   BFloat16* gw, BFloat16* gb, ConvAlgorithm algo) {
  if (gx != nullptr && (algo == ConvAlgorithm::AmxPixels || (algo == ConvAlgorithm::Auto && conv2d_bf16_pixels_input(g)))) {
    conv2d_backward_input_pixels(g, gy, w, gx);
    gx = nullptr;
  }
  if (algo == ConvAlgorithm::AmxPixels) algo = ConvAlgorithm::Auto;  // the weight gradient as Auto's
  if ((gw != nullptr || gb != nullptr) && algo == ConvAlgorithm::Auto && conv2d_bf16_weight_rows(g)) {
    backward_weight_rows(g, gy, x, gw, gb);
    gw = gb = nullptr;
  }
  const bool amx_x = gx != nullptr && bf16_pass_on_amx(g, ConvPass::BackwardInput, algo);
  const bool amx_w = gw != nullptr && bf16_pass_on_amx(g, ConvPass::BackwardWeight, algo);
  const bool widen = algo == ConvAlgorithm::Auto && has_amx_gemm() && has_bf16_small_gemm();
  const bool widened_x = gx != nullptr && !amx_x && widen;
  const bool widened_w = (gw != nullptr || gb != nullptr) && !amx_w && widen;
  if (amx_x) backward_input_amx(g, gy, w, gx);
  if (amx_w) backward_weight_amx(g, gy, x, gw, gb);
  if (widened_x || widened_w) {
    backward_widened(g, gy, x, w, widened_x ? gx : nullptr, widened_w ? gw : nullptr, widened_w ? gb : nullptr);
  }
  BFloat16* direct_gx = amx_x || widened_x ? nullptr : gx;
  BFloat16* direct_gw = amx_w || widened_w ? nullptr : gw;
  BFloat16* direct_gb = amx_w || widened_w ? nullptr : gb;
  if (direct_gx != nullptr || direct_gw != nullptr || direct_gb != nullptr) {
    backward_direct<BFloat16>(g, gy, x, w, direct_gx, direct_gw, direct_gb);
  }
}

}  // namespace

bool conv2d_native_16bit(DType dtype, const Conv2dGeometry& g) {
  // With both tile sets, fewer than 16 output channels per group are computed in float32 from
  // operands widened inside the kernels (bf16_widened_here: forward_widened, backward_widened):
  // there the AMX forward and the AVX512_BF16 weight gradient lose to the AVX-512 float32 direct
  // tiles, widening included. LeNet's conv1 (3 -> 6, 5 x 5, 32 x 32, batch 32; conv_bench, 1
  // thread, CPU us; Intel Xeon, Sapphire Rapids class, 2026-12-05, load ~8): forward 317 on AMX
  // against 185 in float32, weight gradient 376 on the AVX512_BF16 tiles against 222; LeNet `--amp
  // bf16` whole step with every convolution widened (COLONY_CPU_ISA=avx512) took 0.93x the CPU time
  // of the native one (docs/benchmarks.md, "LeNet under bfloat16 autocast on AMX"). conv1 native
  // with its forward on the pixel-major product (conv2d_bf16_pixels: 193 against 283 on the other
  // AMX path) did not pay either: CPU ms of the whole step, 5 alternating rounds, 1,841-1,927
  // against 1,799-1,889 widened (docs/benchmarks.md, "LeNet bf16: the pixels on the AMX tiles'
  // rows"). Those shapes were widened by the callers (ops/cpu_widen.h) until the kernels did it
  // themselves: forward_widened rounds each output straight from its float32 grid and widens an
  // image at a time in scratch (docs/benchmarks.md, "LeNet bf16: conv1 widened inside the kernels").
  // Their forward now takes the channel-major AMX product first (conv2d_bf16_channels), which beat
  // forward_widened there.
  // Without AMX the AVX512_BF16 tiles keep every shape, as measured before. 16 output channels
  // (LeNet's conv2) stay on the bfloat16 tiles: 1 thread, batch 32, CPU us, load ~8, its forward
  // on AMX 144-163 against 141-151 in float32 and its weight gradient 193 against 218-226, before
  // the casts; with conv2 widened whole the `--amp bf16` step was even (CPU ms, medians of 3
  // alternating rounds: 1,885 against 1,889; docs/benchmarks.md, "LeNet bf16: conv2 widened whole
  // does not pay").
  return dtype == DType::BFloat16 && bf16_tiles_run(g);
}

bool conv2d_bf16_on_amx(const Conv2dGeometry& g, ConvPass pass) {
  if (!has_amx_gemm() || g.stride_h != 1 || g.stride_w != 1) return false;
  if (!has_bf16_small_gemm()) return true;  // the only tiles here (a test's emulated AMX copy)
  // The tiles' 16 rows are output channels (forward, weight gradient) and their 32-deep steps the
  // output channels again (input gradient), so the AMX products pay where those fill them; below,
  // the per-image packing and float32 round trip cost more than the AVX512_BF16 tiles' products.
  // Measured with `conv_bench --bf16` (batch 32 and 128, 2 threads, CPU time of both; Intel Xeon,
  // Sapphire Rapids class, 2026-12-05, load average 8-9): the forward with 6 output channels
  // (LeNet's conv1) 1.1-1.2x faster on AMX (once B was packed 24 KB at a time; 1.1x slower
  // before), with 16 (conv2, 16 -> 16 3 x 3) 1.6-2.0x, with 32 and 64 2.7-5x; the weight gradient
  // 1.4x slower with 6, 1.8x faster with 16, 3-5x with 32 and 64; the input gradient slower with 6
  // and 16 (3.2x, 1.4x, 1.5x: a half-empty step, then D's rows added into the image), faster with
  // 32 (1.4x) and 64 (2.4x). Fewer than 6 output channels, and 7 to 15, were not measured.
  const int64_t og = g.group_out_channels();
  switch (pass) {
    case ConvPass::Forward: return og >= 6;
    case ConvPass::BackwardWeight: return og >= 16;
    default: return og >= 32;
  }
}

bool conv2d_bf16_pixels(const Conv2dGeometry& g) {
  // LeNet's layers, the forward alone (`conv_bench --pixels`: 1 thread, batch 32, CPU us, 3
  // alternating rounds; Intel Xeon, Sapphire Rapids class, 2026-12-05, load 7-9): conv2 (6 -> 16,
  // 5 x 5, 14 x 14) 85 with the pixels on the rows against 155-175 on conv2d_bf16_on_amx's tiles
  // and 146-153 in float32; conv1 (3 -> 6, 5 x 5, 32 x 32) 200 against 290-315 and 173-190 (its C
  // tiles are 6/16 full, its steps 20/32 deep: the tiles alone took 120), yet faster than the
  // other bfloat16 paths (conv2d_native_16bit widens it all the same). 3 x 3 layers with 16, 32
  // and 64 channels: 1.4-1.8x faster than the other AMX path (`conv_bench --bf16 --one-thread`);
  // fewer than 6 output channels not measured. docs/benchmarks.md, "LeNet bf16: the pixels on
  // the AMX tiles' rows".
  return active_conv_pixels_fns() != nullptr && conv_pixels_fit(g) && g.group_out_channels() >= 6;
}

bool conv2d_bf16_weight_rows(const Conv2dGeometry& g) {
  // Faster than every other bfloat16 weight gradient on every shape measured (`conv_bench
  // --weight-rows`: batch 32, 1 thread, no bias, us per call, 3 alternating rounds; Intel Xeon,
  // Sapphire Rapids class, 2026-12-06 03:08, load 4.1-4.3): LeNet's conv1 (3 -> 6, 5 x 5, 32 x 32)
  // 96-100 against 260-263 widened to float32 (backward_widened); conv2 (6 -> 16, 5 x 5, 14 x 14)
  // 68-70 against 188-193 on the AMX tiles with the output channels on the rows
  // (backward_weight_amx); 3 x 3, padding 1: 16 -> 16 on 16 x 16 127-134 against 297-302, on 28 x 28
  // 370-385 against 776-788, 32 -> 32 on 16 x 16 387-434 against 665-723, 64 -> 64 1,360-1,372
  // against 1,677-1,852 (2 rounds). docs/benchmarks.md, "LeNet bf16: the weight gradients on AMX
  // with the image read by strided tile loads".
  return active_conv_weight_rows_fns() != nullptr && conv_weight_rows_fit(g);
}

bool conv2d_bf16_pixels_input(const Conv2dGeometry& g) {
  // The transposed convolution's output channels are the layer's input channels, its depth the
  // output channels: `conv_bench --bf16 --one-thread` (batch 32, CPU us; Intel Xeon, Sapphire
  // Rapids class, 2026-12-05, load 8-9): LeNet's conv2 194 against 214 widened (before the casts)
  // and 519 on conv2d_bf16_on_amx's tiles; 3 x 3 layers of 16, 32, 64 channels 180 / 448 / 1,493
  // against 953 / 1,519 / 3,079 there. Fewer than 16 output channels not measured.
  return active_conv_pixels_fns() != nullptr && conv_pixels_input_fit(g) && g.group_out_channels() >= 16;
}

bool conv2d_bf16_channels(const Conv2dGeometry& g) {
  // Fewer than 16 output channels, where Auto otherwise widens the forward (forward_widened):
  // `conv_bench --channels 3` (batch 32, 1 thread, best wall us, 3 alternating rounds; Intel Xeon,
  // Sapphire Rapids class, 2026-12-06 03:17, load 0.9-1.9), channel-major against widened: LeNet's
  // conv1 (3 -> 6, 5 x 5, 32 x 32) 156-182 against 238-258 (the pixel path 223-237), 3 -> 8 3 x 3
  // 32 x 32 padding 1 186-189 against 207-217. From 16 output channels the pixel path's C tiles are
  // full and it wins: LeNet's conv2 (6 -> 16) 100-104 against 91-97, 16 -> 16 3 x 3 202-213
  // against 195-197, 32 -> 32 527-529 against 492-498. docs/benchmarks.md, "LeNet bf16: conv1's
  // forward with the output channels on the AMX tiles' rows".
  return active_conv_channels_fns() != nullptr && conv_channels_fit(g) && g.group_out_channels() < 16;
}

ConvAlgorithm choose_conv_algorithm(const Conv2dGeometry& g, ConvPass pass) {
  if (g.stride_h != 1 || g.stride_w != 1) return ConvAlgorithm::Im2col;
  // Direct reads its operands in place and never packs them. Measured with
  // benchmarks/conv_bench.cc (batch 32, float32): its forward and input gradient beat im2col +
  // Eigen from LeNet's layers up to a 64 -> 64 3 x 3 layer (1.3x there, 2.5x on LeNet's first);
  // its weight gradient wins on LeNet's layers (3.6x and 1.1x) but loses 1.3x already at 32 -> 32
  // 3 x 3, where Eigen's packed GEMM reduces over the pixels better than the dot-product tiles.
  const int64_t weights = g.patch_size() * g.group_out_channels();
  const int64_t limit = pass == ConvPass::BackwardWeight ? 4096 : 64 * 64 * 9;
  return weights <= limit ? ConvAlgorithm::Direct : ConvAlgorithm::Im2col;
}

void conv2d_forward(DType dtype, const Conv2dGeometry& g, const void* x, const void* w, const void* bias, void* y,
                    ConvAlgorithm algo) {
  check_amx_dtype("conv2d", dtype, algo);
  if (g.batch == 0) return;
  const bool direct = resolve(algo, g, ConvPass::Forward) == ConvAlgorithm::Direct;
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T* xp = static_cast<const T*>(x);
    const T* wp = static_cast<const T*>(w);
    const T* bp = static_cast<const T*>(bias);
    T* yp = static_cast<T*>(y);
    if constexpr (std::is_same_v<T, BFloat16>) {
      forward_bf16(g, xp, wp, bp, yp, algo);  // check_bf16 passed
    } else if (direct) {
      forward_direct<T>(g, xp, wp, bp, yp);
    } else {
      forward_im2col<T>(g, xp, wp, bp, yp);
    }
  };
  switch (dtype) {
    case DType::Float32: run(float{}); return;
    case DType::Float64: run(double{}); return;
    case DType::BFloat16: check_bf16("conv2d", g, algo); run(BFloat16{}); return;
    default: bad_dtype("conv2d", dtype);
  }
}

void conv2d_backward(DType dtype, const Conv2dGeometry& g, const void* grad_y, const void* x, const void* w,
                     void* grad_x, void* grad_w, void* grad_b, ConvAlgorithm algo) {
  check_amx_dtype("conv2d_backward", dtype, algo);
  if (algo == ConvAlgorithm::AmxChannels) algo = ConvAlgorithm::Auto;  // a forward-only product
  const bool direct_x = resolve(algo, g, ConvPass::BackwardInput) == ConvAlgorithm::Direct;
  const bool direct_w = resolve(algo, g, ConvPass::BackwardWeight) == ConvAlgorithm::Direct;
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T* gy = static_cast<const T*>(grad_y);
    const T* xp = static_cast<const T*>(x);
    const T* wp = static_cast<const T*>(w);
    T* gx = static_cast<T*>(grad_x);
    T* gw = static_cast<T*>(grad_w);
    T* gb = static_cast<T*>(grad_b);
    if (g.batch == 0) {
      if (gw != nullptr) std::fill(gw, gw + g.out_channels * g.patch_size(), T(0.0f));
      if (gb != nullptr) std::fill(gb, gb + g.out_channels, T(0.0f));
      return;
    }
    if constexpr (std::is_same_v<T, BFloat16>) {
      backward_bf16(g, gy, xp, wp, gx, gw, gb, algo);  // check_bf16 passed
      return;
    } else {
      backward_both_ways<T>(g, gy, xp, wp, gx, gw, gb, direct_x, direct_w);
    }
  };
  switch (dtype) {
    case DType::Float32: run(float{}); return;
    case DType::Float64: run(double{}); return;
    case DType::BFloat16: check_bf16("conv2d_backward", g, algo); run(BFloat16{}); return;
    default: bad_dtype("conv2d_backward", dtype);
  }
}

}  // namespace colony::kernels::cpu
