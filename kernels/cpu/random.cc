#include "kernels/common/random.h"

#include <stdexcept>

#include "kernels/common/dispatch.h"
#include "kernels/common/random_fill.h"
#include "kernels/cpu/parallel.h"

namespace colony::kernels {

void FillRandom::cpu(DType dtype, void* out, int64_t n, bool normal, double a, double b, const PhiloxArgs& philox) {
  if (philox.seed_ptr != nullptr) {  // Generator::philox_args never hands these to the CPU
    throw std::logic_error("fill_random: a Philox state in device memory reached the CPU kernel");
  }
  const uint64_t seed = philox.seed, offset = philox.offset;
  COLONY_DISPATCH_FLOATING(dtype, "random", [&] {
    scalar_t* p = static_cast<scalar_t*>(out);
    cpu::parallel_for(n, 1 << 14, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) p[i] = random_value_at<scalar_t>(normal, a, b, seed, offset, i);
    });
  });
}

}  // namespace colony::kernels
