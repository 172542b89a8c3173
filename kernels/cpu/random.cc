#include "kernels/cpu/random.h"

#include "kernels/common/dispatch.h"
#include "kernels/common/random_fill.h"
#include "kernels/cpu/parallel.h"

namespace colony::kernels::cpu {

void fill_random(DType dtype, void* out, int64_t n, RandomKind kind, double a, double b, uint64_t seed,
                 uint64_t offset) {
  bool normal = kind == RandomKind::Normal;
  COLONY_DISPATCH_FLOATING(dtype, "random", [&] {
    scalar_t* p = static_cast<scalar_t*>(out);
    parallel_for(n, 1 << 14, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) p[i] = random_value_at<scalar_t>(normal, a, b, seed, offset, i);
    });
  });
}

}  // namespace colony::kernels::cpu
