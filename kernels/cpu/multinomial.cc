#include "kernels/common/multinomial.h"

#include <algorithm>

#include "kernels/common/dispatch.h"
#include "kernels/cpu/parallel.h"

namespace colony::kernels {

void MultinomialSearch::cpu(DType dtype, const void* cdf, const void* u, int64_t rows, int64_t n, int64_t samples,
                            int64_t* out) {
  COLONY_DISPATCH_FLOAT32_64(dtype, "multinomial", [&] {
    const auto* c = static_cast<const scalar_t*>(cdf);
    const auto* up = static_cast<const scalar_t*>(u);
    cpu::parallel_for(rows * samples, 1024, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) out[i] = multinomial_pick(c + (i / samples) * n, n, up[i]);
    });
  });
}

}  // namespace colony::kernels
