// What the textual tile sources (small_gemm_tiles.h, small_gemm_bf16_tiles.h) share: the unroll
// pragma, L1 blocking, and choosing a tile shape at run time among compile-time candidates. Textual
// like them: included once by each, after COLONY_SMALL_GEMM_ISA is defined, its definitions land
// in that copy's namespace with internal linkage.
#if !defined(COLONY_SMALL_GEMM_ISA)
#error "define COLONY_SMALL_GEMM_ISA before including small_gemm_tile_picking.h"
#endif

#include <cstdint>
#include <type_traits>

// Fully unrolled tile loops keep their accumulators in registers (GCC -O2 does not unroll them).
#define COLONY_TILE_UNROLL _Pragma("GCC unroll 16")

namespace colony::kernels::cpu::COLONY_SMALL_GEMM_ISA {
namespace {

inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
inline int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// One pass's operands stay in L1 while its tiles run: 24 KiB of them.
constexpr int64_t kPanelBytes = 24 * 1024;

// A tile shape: MR rows by NV vectors (gemm_rows) or MR by NR dot products (gemm_dot).
struct Tile {
  int mr, nv;
};
// The candidate that pads m x n least (the first on ties); n_unit is the columns per NV unit. Every
// candidate keeps its accumulators and operands in the ISA's vector registers (16 for AVX2, 32 for
// AVX-512) with enough independent chains to cover the FMA latency.
inline int pick_tile(const Tile* tiles, int count, int64_t m, int64_t n, int64_t n_unit) {
  int best = 0;
  int64_t best_work = -1;
  for (int t = 0; t < count; ++t) {
    int64_t work = round_up(m, tiles[t].mr) * round_up(n, tiles[t].nv * n_unit);
    if (best_work < 0 || work < best_work) {
      best = t;
      best_work = work;
    }
  }
  return best;
}

// run(std::integral_constant<int, picked>{}): the candidate tiles are template arguments, so each
// is instantiated and the one picked at run time is called.
template <int... I, typename Run>
inline void run_picked(int picked, Run run) {
  ((picked == I ? run(std::integral_constant<int, I>{}) : void()), ...);
}

}  // namespace
}  // namespace colony::kernels::cpu::COLONY_SMALL_GEMM_ISA
