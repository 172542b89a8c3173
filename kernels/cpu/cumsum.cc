#include "kernels/common/cumsum.h"

#include <algorithm>

#include "kernels/common/dispatch.h"
#include "kernels/cpu/column_blocks.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/simd.h"

namespace colony::kernels {
namespace {

// Rows a last-axis scan runs side by side: a running sum is a chain of dependent adds (one add's
// latency per element), so one row at a time leaves the adder mostly idle; eight independent chains
// keep it busy. Each row still adds its elements in order, so the sums are those of one row alone.
constexpr int64_t kRowsTogether = 8;

// Cumsum along the last axis (inner == 1): the kRows contiguous rows of `len` from row r0.
template <typename Acc, typename T, typename Out, int64_t kRows>
void cumsum_rows(const T* x, Out* y, int64_t len, int64_t r0) {
  Acc acc[kRows] = {};
  const T* xr = x + r0 * len;
  Out* yr = y + r0 * len;
  for (int64_t i = 0; i < len; ++i) {
    COLONY_UNROLL
    for (int64_t k = 0; k < kRows; ++k) {
      acc[k] += static_cast<Acc>(static_cast<compute_t<T>>(xr[k * len + i]));
      yr[k * len + i] = static_cast<Out>(acc[k]);
    }
  }
}

}  // namespace

void Cumsum::cpu(DType dtype, const void* x, void* y, int64_t outer, int64_t dim, int64_t inner) {
  COLONY_DISPATCH_ALL(dtype, "cumsum", [&] {
    using Acc = cumsum_acc_t<scalar_t>;
    using Out = std::conditional_t<std::is_same_v<Acc, int64_t>, int64_t, scalar_t>;
    const auto* xp = static_cast<const scalar_t*>(x);
    auto* yp = static_cast<Out*>(y);
    if (inner == 1) {
      const int64_t groups = (outer + kRowsTogether - 1) / kRowsTogether;
      const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, dim * kRowsTogether));
      cpu::parallel_for(groups, grain, [&](int64_t b, int64_t e) {
        for (int64_t g = b; g < e; ++g) {
          const int64_t r0 = g * kRowsTogether;
          if (r0 + kRowsTogether <= outer) {
            cumsum_rows<Acc, scalar_t, Out, kRowsTogether>(xp, yp, dim, r0);
          } else {
            for (int64_t r = r0; r < outer; ++r) cumsum_rows<Acc, scalar_t, Out, 1>(xp, yp, dim, r);
          }
        }
      });
      return;
    }
    cpu::for_each_column_block(outer, dim, inner, [&](int64_t base, int64_t w) {
      Acc acc[cpu::kScanWidth];
      std::fill(acc, acc + w, Acc(0));
      for (int64_t r = 0; r < dim; ++r) {
        const scalar_t* xr = xp + base + r * inner;
        Out* yr = yp + base + r * inner;
        for (int64_t j = 0; j < w; ++j) {
          acc[j] += static_cast<Acc>(static_cast<compute_t<scalar_t>>(xr[j]));
          yr[j] = static_cast<Out>(acc[j]);
        }
      }
    });
  });
}

}  // namespace colony::kernels
