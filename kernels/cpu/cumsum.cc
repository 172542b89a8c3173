#include "kernels/common/cumsum.h"

#include <algorithm>
#include <vector>

#include "kernels/common/dispatch.h"
#include "kernels/cpu/parallel.h"

namespace colony::kernels {

void Cumsum::cpu(DType dtype, const void* x, void* y, int64_t outer, int64_t dim, int64_t inner) {
  COLONY_DISPATCH_ALL(dtype, "cumsum", [&] {
    using Acc = cumsum_acc_t<scalar_t>;
    using Out = std::conditional_t<std::is_same_v<Acc, int64_t>, int64_t, scalar_t>;
    const auto* xp = static_cast<const scalar_t*>(x);
    auto* yp = static_cast<Out*>(y);
    // Blocks of up to kWidth adjacent columns, scanned row by row, so every read and write along
    // the axis touches consecutive memory even when the axis is not the last one.
    constexpr int64_t kWidth = 256;
    const int64_t width = std::min(inner, kWidth);
    const int64_t blocks = width == 0 ? 0 : (inner + width - 1) / width;
    const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, dim * width));
    cpu::parallel_for(outer * blocks, grain, [&](int64_t b, int64_t e) {
      Acc acc[kWidth];
      for (int64_t task = b; task < e; ++task) {
        const int64_t o = task / blocks, c0 = (task % blocks) * width, w = std::min(width, inner - c0);
        std::fill(acc, acc + w, Acc(0));
        const int64_t base = o * dim * inner + c0;
        for (int64_t r = 0; r < dim; ++r) {
          const scalar_t* xr = xp + base + r * inner;
          Out* yr = yp + base + r * inner;
          for (int64_t j = 0; j < w; ++j) {
            acc[j] += static_cast<Acc>(static_cast<compute_t<scalar_t>>(xr[j]));
            yr[j] = static_cast<Out>(acc[j]);
          }
        }
      }
    });
  });
}

}  // namespace colony::kernels
