// Fused attention on CUDA (kernels/common/attention.h has the algorithm), FlashAttention-2 style:
// operand tiles staged in shared memory in the compute type, an online softmax per query row with
// one warp per row, lse saved. Forward: one block per (b, h, tile of kBr query rows) streams the
// key/value tiles. Backward: one block per (b, h, tile of kBc keys) walks the query tiles,
// accumulating dK and dV in shared memory and adding its share of dQ into a compute-type buffer
// with atomics (FlashAttention-2's split), which a last kernel converts to the input dtype.
// Plain FMA loops over shared memory, no tensor-core MMA: correct on every architecture the build
// targets, sm_90 included.
#include "kernels/common/attention.h"

#include <cuda_runtime.h>

#include <limits>
#include <stdexcept>
#include <string>

#include "kernels/common/dispatch.h"
#include "runtime/cuda/cuda_check.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/row_reduce.cuh"

namespace colony::kernels::cuda {
namespace {

constexpr int kBr = 16;       // query rows per tile
constexpr int kBc = 32;       // keys per tile: one warp's lanes across a row of scores
constexpr int kThreads = 128;  // 4 warps
constexpr int kWarps = kThreads / 32;

template <typename C>
__device__ __forceinline__ C neg_inf() {
  return -std::numeric_limits<C>::infinity();
}

struct HeadOffsets {
  int64_t q, k, v, m;
};

__device__ __forceinline__ HeadOffsets head_offsets(const AttentionArgs& a, int64_t bh) {
  const int64_t b = bh / a.heads, h = bh % a.heads;
  return {b * a.qs.b + h * a.qs.h, b * a.ks.b + h * a.ks.h, b * a.vs.b + h * a.vs.h, b * a.ms.b + h * a.ms.h};
}

// Score (i, j) plus mask; -inf where causal or beyond S.
template <typename C>
__device__ __forceinline__ C masked_score(const AttentionArgs& a, const C* mask, int64_t i, int64_t j, C s) {
  if (j >= a.S || i >= a.L || (a.causal && j > i)) return neg_inf<C>();
  if (mask != nullptr) s += mask[i * a.ms.row + j * a.ms.col];
  return s;
}

// Copies rows [r0, r0 + n) of a [rows, cols] operand (row stride `stride`) into shared [n][cols],
// scaled, zero beyond `rows`.
template <typename T, typename C>
__device__ __forceinline__ void stage(const T* src, int64_t stride, int64_t r0, int64_t rows, int n, int64_t cols,
                                      C scale, C* dst) {
  for (int64_t idx = threadIdx.x; idx < n * cols; idx += blockDim.x) {
    const int64_t r = idx / cols, c = idx % cols;
    dst[idx] = r0 + r < rows ? scale * static_cast<C>(src[(r0 + r) * stride + c]) : C(0);
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads) forward_kernel(AttentionArgs a, int64_t q_tiles) {
  using C = compute_t<T>;
  extern __shared__ unsigned char smem_raw[];
  C* sq = reinterpret_cast<C*>(smem_raw);  // [kBr][E], scaled
  C* sk = sq + kBr * a.E;                  // [kBc][E]
  C* sv = sk + kBc * a.E;                  // [kBc][Ev]
  C* so = sv + kBc * a.Ev;                 // [kBr][Ev]
  C* ss = so + kBr * a.Ev;                 // [kBr][kBc] scores, then weights
  C* sm = ss + kBr * kBc;                  // [kBr] running max
  C* sl = sm + kBr;                        // [kBr] running sum
  C* salpha = sl + kBr;                    // [kBr] this tile's rescale
  const int64_t bh = blockIdx.x / q_tiles, i0 = (blockIdx.x % q_tiles) * kBr;
  const HeadOffsets off = head_offsets(a, bh);
  const T* q = static_cast<const T*>(a.q) + off.q;
  const T* k = static_cast<const T*>(a.k) + off.k;
  const T* v = static_cast<const T*>(a.v) + off.v;
  const C* mask = a.mask ? static_cast<const C*>(a.mask) + off.m : nullptr;
  uint64_t seed = 0, offset = 0;
  if (a.dropout_p > 0) philox_unpack(a.philox, seed, offset);
  const float keep = static_cast<float>(1.0 - a.dropout_p), inv_keep = 1.0f / keep;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  stage(q, a.qs.row, i0, a.L, kBr, a.E, static_cast<C>(a.scale), sq);
  for (int64_t idx = threadIdx.x; idx < kBr * a.Ev; idx += blockDim.x) so[idx] = C(0);
  if (threadIdx.x < kBr) {
    sm[threadIdx.x] = neg_inf<C>();
    sl[threadIdx.x] = C(0);
  }
  const int64_t s_end = a.causal ? min(a.S, i0 + kBr) : a.S;
  for (int64_t j0 = 0; j0 < s_end; j0 += kBc) {
    __syncthreads();  // the previous tile's readers are done with sk, sv, ss
    stage(k, a.ks.row, j0, a.S, kBc, a.E, C(1), sk);
    stage(v, a.vs.row, j0, a.S, kBc, a.Ev, C(1), sv);
    __syncthreads();
    for (int idx = threadIdx.x; idx < kBr * kBc; idx += blockDim.x) {
      const int r = idx / kBc, c = idx % kBc;
      C acc = 0;
      for (int64_t e = 0; e < a.E; ++e) acc += sq[r * a.E + e] * sk[c * a.E + e];
      ss[idx] = masked_score(a, mask, i0 + r, j0 + c, acc);
    }
    __syncthreads();
    // One warp per row, a lane per key.
    for (int r = warp; r < kBr; r += kWarps) {
      const C s = ss[r * kBc + lane];
      C mx = warp_allreduce(s, [](C x, C y) { return x > y ? x : y; });
      const C m_old = sm[r];
      mx = m_old > mx ? m_old : mx;
      const C shift = mx == neg_inf<C>() ? C(0) : mx;  // nothing unmasked yet: every p is 0
      C p = device_exp(s - shift);
      const C sum = warp_allreduce(p, [](C x, C y) { return x + y; });
      if (a.dropout_p > 0 && j0 + lane < a.S && i0 + r < a.L) {
        p *= attention_dropout_factor(seed, offset, bh, i0 + r, j0 + lane, a.L, a.S, keep, inv_keep);
      }
      ss[r * kBc + lane] = p;
      if (lane == 0) {
        const C alpha = m_old == neg_inf<C>() ? C(0) : device_exp(m_old - mx);
        salpha[r] = alpha;
        sl[r] = sl[r] * alpha + sum;
        sm[r] = mx;
      }
    }
    __syncthreads();
    for (int64_t idx = threadIdx.x; idx < kBr * a.Ev; idx += blockDim.x) {
      const int64_t r = idx / a.Ev, e = idx % a.Ev;
      C acc = so[idx] * salpha[r];
      for (int c = 0; c < kBc; ++c) acc += ss[r * kBc + c] * sv[c * a.Ev + e];
      so[idx] = acc;
    }
  }
  __syncthreads();
  T* out = static_cast<T*>(a.out) + (bh * a.L + i0) * a.Ev;
  for (int64_t idx = threadIdx.x; idx < kBr * a.Ev; idx += blockDim.x) {
    const int64_t r = idx / a.Ev;
    if (i0 + r >= a.L) continue;
    const C l = sl[r];
    out[idx] = static_cast<T>(l == C(0) ? C(0) : so[idx] / l);
  }
  if (threadIdx.x < kBr && i0 + threadIdx.x < a.L) {
    const C l = sl[threadIdx.x];
    static_cast<C*>(a.lse)[bh * a.L + i0 + threadIdx.x] = l == C(0) ? neg_inf<C>() : sm[threadIdx.x] + device_log(l);
  }
}

// D = rowsum(dO * O), one thread per row.
template <typename T>
__global__ void delta_kernel(AttentionArgs a, int64_t rows) {
  using C = compute_t<T>;
  const T* go = static_cast<const T*>(a.grad_out);
  const T* o = static_cast<const T*>(a.out);
  COLONY_GRID_LOOP(i, rows) {
    C acc = 0;
    for (int64_t e = 0; e < a.Ev; ++e) acc += static_cast<C>(go[i * a.Ev + e]) * static_cast<C>(o[i * a.Ev + e]);
    static_cast<C*>(a.delta)[i] = acc;
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads) backward_kernel(AttentionArgs a, int64_t k_tiles) {
  using C = compute_t<T>;
  extern __shared__ unsigned char smem_raw[];
  C* sk = reinterpret_cast<C*>(smem_raw);  // [kBc][E]
  C* sv = sk + kBc * a.E;                  // [kBc][Ev]
  C* sdk = sv + kBc * a.Ev;                // [kBc][E]
  C* sdv = sdk + kBc * a.E;                // [kBc][Ev]
  C* sq = sdv + kBc * a.Ev;                // [kBr][E], scaled
  C* sdo = sq + kBr * a.E;                 // [kBr][Ev]
  C* sp = sdo + kBr * a.Ev;                // [kBr][kBc] dropped weights P~
  C* sds = sp + kBr * kBc;                 // [kBr][kBc] dS
  const int64_t bh = blockIdx.x / k_tiles, j0 = (blockIdx.x % k_tiles) * kBc;
  const HeadOffsets off = head_offsets(a, bh);
  const T* q = static_cast<const T*>(a.q) + off.q;
  const T* k = static_cast<const T*>(a.k) + off.k;
  const T* v = static_cast<const T*>(a.v) + off.v;
  const T* go = static_cast<const T*>(a.grad_out) + bh * a.L * a.Ev;
  const C* mask = a.mask ? static_cast<const C*>(a.mask) + off.m : nullptr;
  const C* lse = static_cast<const C*>(a.lse) + bh * a.L;
  const C* delta = static_cast<const C*>(a.delta) + bh * a.L;
  C* dq = static_cast<C*>(a.dq_accum) + bh * a.L * a.E;
  uint64_t seed = 0, offset = 0;
  if (a.dropout_p > 0) philox_unpack(a.philox, seed, offset);
  const float keep = static_cast<float>(1.0 - a.dropout_p), inv_keep = 1.0f / keep;
  const C scale = static_cast<C>(a.scale);

  stage(k, a.ks.row, j0, a.S, kBc, a.E, C(1), sk);
  stage(v, a.vs.row, j0, a.S, kBc, a.Ev, C(1), sv);
  for (int64_t idx = threadIdx.x; idx < kBc * a.E; idx += blockDim.x) sdk[idx] = C(0);
  for (int64_t idx = threadIdx.x; idx < kBc * a.Ev; idx += blockDim.x) sdv[idx] = C(0);
  // Causal: query rows before j0 see none of these keys.
  for (int64_t i0 = a.causal ? j0 / kBr * kBr : 0; i0 < a.L; i0 += kBr) {
    __syncthreads();
    stage(q, a.qs.row, i0, a.L, kBr, a.E, scale, sq);
    stage(go, a.Ev, i0, a.L, kBr, a.Ev, C(1), sdo);
    __syncthreads();
    for (int idx = threadIdx.x; idx < kBr * kBc; idx += blockDim.x) {
      const int r = idx / kBc, c = idx % kBc;
      const int64_t i = i0 + r, j = j0 + c;
      C s = 0, dp = 0;
      for (int64_t e = 0; e < a.E; ++e) s += sq[r * a.E + e] * sk[c * a.E + e];
      for (int64_t e = 0; e < a.Ev; ++e) dp += sdo[r * a.Ev + e] * sv[c * a.Ev + e];
      s = masked_score(a, mask, i, j, s);
      const C li = i < a.L ? lse[i] : neg_inf<C>();
      const C p = (s == neg_inf<C>() || li == neg_inf<C>()) ? C(0) : device_exp(s - li);
      C pd = p;
      if (a.dropout_p > 0 && p != C(0)) {
        const C z = attention_dropout_factor(seed, offset, bh, i, j, a.L, a.S, keep, inv_keep);
        pd *= z;
        dp *= z;
      }
      sp[idx] = pd;
      sds[idx] = p == C(0) ? C(0) : p * (dp - delta[i]);
    }
    __syncthreads();
    for (int64_t idx = threadIdx.x; idx < kBc * a.Ev; idx += blockDim.x) {
      const int64_t c = idx / a.Ev, e = idx % a.Ev;
      C acc = 0;
      for (int r = 0; r < kBr; ++r) acc += sp[r * kBc + c] * sdo[r * a.Ev + e];
      sdv[idx] += acc;
    }
    for (int64_t idx = threadIdx.x; idx < kBc * a.E; idx += blockDim.x) {
      const int64_t c = idx / a.E, e = idx % a.E;
      C acc = 0;
      for (int r = 0; r < kBr; ++r) acc += sds[r * kBc + c] * sq[r * a.E + e];
      sdk[idx] += acc;
    }
    for (int64_t idx = threadIdx.x; idx < kBr * a.E; idx += blockDim.x) {
      const int64_t r = idx / a.E, e = idx % a.E;
      if (i0 + r >= a.L) continue;
      C acc = 0;
      for (int c = 0; c < kBc; ++c) acc += sds[r * kBc + c] * sk[c * a.E + e];
      if (acc != C(0)) atomic_add(dq + (i0 + r) * a.E + e, scale * acc);
    }
  }
  __syncthreads();
  T* dk = static_cast<T*>(a.dk) + (bh * a.S + j0) * a.E;
  T* dv = static_cast<T*>(a.dv) + (bh * a.S + j0) * a.Ev;
  for (int64_t idx = threadIdx.x; idx < kBc * a.E; idx += blockDim.x) {
    if (j0 + idx / a.E < a.S) dk[idx] = static_cast<T>(sdk[idx]);
  }
  for (int64_t idx = threadIdx.x; idx < kBc * a.Ev; idx += blockDim.x) {
    if (j0 + idx / a.Ev < a.S) dv[idx] = static_cast<T>(sdv[idx]);
  }
}

template <typename T>
__global__ void convert_kernel(const compute_t<T>* src, T* dst, int64_t n) {
  COLONY_GRID_LOOP(i, n) dst[i] = static_cast<T>(src[i]);
}

// Opts the kernel into `bytes` of dynamic shared memory, or says why the shapes do not fit.
template <typename K>
void allow_shared(K kernel, size_t bytes, const char* op, const AttentionArgs& a) {
  int device = 0, limit = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  check_cuda(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device), "cudaDeviceGetAttribute");
  if (bytes > static_cast<size_t>(limit)) {
    throw std::invalid_argument(std::string(op) + ": head dims E=" + std::to_string(a.E) + ", Ev=" +
                                std::to_string(a.Ev) + " need " + std::to_string(bytes) +
                                " bytes of shared memory per block, more than this device's " +
                                std::to_string(limit));
  }
  check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)),
             "cudaFuncSetAttribute");
}

}  // namespace
}  // namespace colony::kernels::cuda

namespace colony::kernels {

void AttentionForward::cuda(const AttentionArgs& args, void* stream) {
  using namespace cuda;  // NOLINT: the kernels above
  const char* op = "scaled_dot_product_attention";
  const int64_t q_tiles = (args.L + kBr - 1) / kBr;
  if (args.batch * args.heads * q_tiles == 0) return;
  COLONY_DISPATCH_FLOATING(args.dtype, op, [&] {
    using C = compute_t<scalar_t>;
    const size_t bytes = sizeof(C) * ((kBr + kBc) * args.E + (kBc + kBr) * args.Ev + kBr * kBc + 3 * kBr);
    allow_shared(forward_kernel<scalar_t>, bytes, op, args);
    forward_kernel<scalar_t><<<args.batch * args.heads * q_tiles, kThreads, bytes, as_stream(stream)>>>(args, q_tiles);
  });
  after_launch(op);
}

void AttentionBackward::cuda(const AttentionArgs& args, void* stream) {
  using namespace cuda;  // NOLINT: the kernels above
  const char* op = "scaled_dot_product_attention_backward";
  const int64_t k_tiles = (args.S + kBc - 1) / kBc, rows = args.batch * args.heads * args.L;
  if (args.batch * args.heads * k_tiles == 0 || rows == 0) return;
  auto s = as_stream(stream);
  COLONY_DISPATCH_FLOATING(args.dtype, op, [&] {
    using C = compute_t<scalar_t>;
    delta_kernel<scalar_t><<<grid_blocks(rows, 256), 256, 0, s>>>(args, rows);
    const size_t bytes = sizeof(C) * (2 * kBc * (args.E + args.Ev) + kBr * (args.E + args.Ev) + 2 * kBr * kBc);
    allow_shared(backward_kernel<scalar_t>, bytes, op, args);
    backward_kernel<scalar_t><<<args.batch * args.heads * k_tiles, kThreads, bytes, s>>>(args, k_tiles);
    convert_kernel<scalar_t><<<grid_blocks(rows * args.E, 256), 256, 0, s>>>(
        static_cast<const C*>(args.dq_accum), static_cast<scalar_t*>(args.dq), rows * args.E);
  });
  after_launch(op);
}

}  // namespace colony::kernels
