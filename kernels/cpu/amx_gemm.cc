// amx_gemm.h's packing and dispatch; the tiles are in amx_gemm_tiles.h.
#include "kernels/cpu/amx_gemm.h"

#include <algorithm>
#include <atomic>
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

}  // namespace

int64_t amx_packed_b_size(int64_t k, int64_t n) { return steps_of(k) * ((n + kCols - 1) / kCols) * kTile; }

int64_t amx_scratch_size(int64_t k) { return 2 * 16 * std::max<int64_t>(1, steps_of(k)) * kDepth; }

void amx_pack_b(int64_t k, int64_t n, const uint16_t* b, int64_t b_row_stride, int64_t b_col_stride,
                uint16_t* packed) {
  const int64_t steps = steps_of(k), col_tiles = (n + kCols - 1) / kCols;
  for (int64_t t = 0; t < col_tiles; ++t) {
    const int64_t j0 = t * kCols, cols = std::min(kCols, n - j0);
    for (int64_t q = 0; q < steps; ++q) {
      uint16_t* tile = packed + (t * steps + q) * kTile;
      for (int64_t r = 0; r < kDepth / 2; ++r) {
        uint16_t* out = tile + r * kDepth;
        const int64_t p0 = q * kDepth + 2 * r;
        // Rows p0 and p0 + 1 of B, interleaved; zeros past k and n.
        const uint16_t* row0 = b + p0 * b_row_stride + j0 * b_col_stride;
        const uint16_t* row1 = row0 + b_row_stride;
        const bool has0 = p0 < k, has1 = p0 + 1 < k;
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
