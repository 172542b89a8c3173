#include "kernels/common/amp.h"

#include <atomic>

#include "kernels/common/amp_functors.h"
#include "kernels/common/dispatch.h"
#include "kernels/cpu/parallel.h"

namespace colony::kernels {

using namespace cpu;  // NOLINT(build/namespaces): the CPU helpers (parallel.h, strided_loop.h)

void UnscaleAndCheck::cpu(int64_t count, void* const* grads, const int64_t* numel, const DType* dtypes,
                          const float* scale, float* found_inf) {
  const float inv_scale = inverse_scale(scale);
  std::atomic<bool> found{false};
  for (int64_t t = 0; t < count; ++t) {
    COLONY_DISPATCH_FLOATING(dtypes[t], "unscale_and_check", [&] {
      scalar_t* g = static_cast<scalar_t*>(grads[t]);
      parallel_for(numel[t], 1 << 15, [&](int64_t begin, int64_t end) {
        // OR without a branch, so the loop vectorizes.
        bool bad = false;
        for (int64_t i = begin; i < end; ++i) bad |= unscale_element(g[i], inv_scale);
        if (bad) found.store(true, std::memory_order_relaxed);
      });
    });
  }
  if (found.load()) *found_inf = 1.0f;
}

void UpdateScale::cpu(float* scale, int32_t* growth_tracker, const float* found_inf, double growth_factor,
                      double backoff_factor, int64_t growth_interval) {
  kernels::update_scale(scale, growth_tracker, found_inf, growth_factor, backoff_factor, growth_interval);
}

}  // namespace colony::kernels
