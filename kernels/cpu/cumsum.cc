#include "kernels/common/cumsum.h"

#include <algorithm>

#include "kernels/common/dispatch.h"
#include "kernels/cpu/column_blocks.h"

namespace colony::kernels {

void Cumsum::cpu(DType dtype, const void* x, void* y, int64_t outer, int64_t dim, int64_t inner) {
  COLONY_DISPATCH_ALL(dtype, "cumsum", [&] {
    using Acc = cumsum_acc_t<scalar_t>;
    using Out = std::conditional_t<std::is_same_v<Acc, int64_t>, int64_t, scalar_t>;
    const auto* xp = static_cast<const scalar_t*>(x);
    auto* yp = static_cast<Out*>(y);
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
