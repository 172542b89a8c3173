// amx_gemm.h's packing and dispatch; the tiles are in amx_gemm_tiles.h.
#include "kernels/cpu/amx_gemm.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/scratch.h"

namespace colony::kernels::cpu {
namespace {

constexpr int64_t kDepth = 32, kCols = 16, kTile = 512;

int64_t steps_of(int64_t k) { return (k + kDepth - 1) / kDepth; }

// An override to "no copy" is stored as this sentinel; null means no override.
const AmxGemmFns kNoCopy{};

std::atomic<const AmxGemmFns*>& override_fns() {
  static std::atomic<const AmxGemmFns*> fns{nullptr};
  return fns;
}

struct AmxScratch;

// out[2j] = r0[j], out[2j + 1] = r1[j] for j < 16, in AVX2 (the baseline ISA): a 1024 x 1024 B
// packed in 0.65 ms element by element, a third of the AMX product's time.
void interleave_rows(const uint16_t* r0, const uint16_t* r1, uint16_t* out) {
  const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r0));
  const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r1));
  const __m256i lo = _mm256_unpacklo_epi16(a, b);  // pairs 0-3 | 8-11
  const __m256i hi = _mm256_unpackhi_epi16(a, b);  // pairs 4-7 | 12-15
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm256_permute2x128_si256(lo, hi, 0x20));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 16), _mm256_permute2x128_si256(lo, hi, 0x31));
}

}  // namespace

int64_t amx_packed_b_size(int64_t k, int64_t n) { return steps_of(k) * ((n + kCols - 1) / kCols) * kTile; }

int64_t amx_scratch_size(int64_t k) { return 2 * 16 * std::max<int64_t>(1, steps_of(k)) * kDepth; }

void amx_pack_b(int64_t k, int64_t n, const uint16_t* b, int64_t b_row_stride, int64_t b_col_stride,
                uint16_t* packed) {
  const int64_t steps = steps_of(k), col_tiles = (n + kCols - 1) / kCols;
  // Row pairs outer, column tiles inner: a row-major B is read once, front to back.
  for (int64_t q = 0; q < steps; ++q) {
    for (int64_t r = 0; r < kDepth / 2; ++r) {
      const int64_t p0 = q * kDepth + 2 * r;
      const bool has0 = p0 < k, has1 = p0 + 1 < k;
      for (int64_t t = 0; t < col_tiles; ++t) {
        uint16_t* out = packed + (t * steps + q) * kTile + r * kDepth;
        const int64_t j0 = t * kCols, cols = std::min(kCols, n - j0);
        // Rows p0 and p0 + 1 of B, interleaved; zeros past k and n.
        const uint16_t* row0 = has0 ? b + p0 * b_row_stride + j0 * b_col_stride : nullptr;
        const uint16_t* row1 = has1 ? row0 + b_row_stride : nullptr;
        if (has1 && cols == kCols && b_col_stride == 1) {
          interleave_rows(row0, row1, out);
          continue;
        }
        if (has1 && b_row_stride == 1) {  // column-major B (a linear layer's W^T): pairs are adjacent
          for (int64_t j = 0; j < cols; ++j) std::memcpy(out + 2 * j, row0 + j * b_col_stride, 4);
          for (int64_t j = cols; j < kCols; ++j) out[2 * j] = out[2 * j + 1] = 0;
          continue;
        }
        for (int64_t j = 0; j < cols; ++j) {
          out[2 * j] = has0 ? row0[j * b_col_stride] : 0;
          out[2 * j + 1] = has1 ? row1[j * b_col_stride] : 0;
        }
        for (int64_t j = cols; j < kCols; ++j) out[2 * j] = out[2 * j + 1] = 0;
      }
    }
  }
}

const AmxGemmFns* active_amx_gemm_fns() {
  const AmxGemmFns* o = override_fns().load(std::memory_order_acquire);
  if (o != nullptr) return o == &kNoCopy ? nullptr : o;
  static const AmxGemmFns* best = active_cpu_isa() >= CpuIsa::AmxBf16 ? &amx_bf16::amx_gemm_fns() : nullptr;
  return best;
}

ScopedAmxGemmFns::ScopedAmxGemmFns(const AmxGemmFns* fns)
    : saved_(override_fns().exchange(fns != nullptr ? fns : &kNoCopy)) {}

ScopedAmxGemmFns::~ScopedAmxGemmFns() { override_fns().store(saved_); }

bool has_amx_gemm() { return active_amx_gemm_fns() != nullptr; }

void amx_gemm(const AmxGemmArgs& args) {
  const AmxGemmFns* fns = active_amx_gemm_fns();
  if (fns == nullptr) {
    throw std::logic_error(std::string("amx_gemm: AMX is not active (") +
                           (amx_usable() ? "capped by COLONY_CPU_ISA" : amx_unusable_reason()) +
                           "); callers must check has_amx_gemm()");
  }
  if ((args.c_f32 == nullptr) == (args.c_bf16 == nullptr)) {
    throw std::invalid_argument("amx_gemm: give exactly one of c_f32 and c_bf16");
  }
  fns->gemm(args, thread_scratch<AmxScratch, uint16_t, 0>(amx_scratch_size(args.k)));
}

}  // namespace colony::kernels::cpu
