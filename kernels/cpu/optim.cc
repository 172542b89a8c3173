#include "kernels/cpu/optim.h"

#include "kernels/common/dispatch.h"
#include "kernels/cpu/parallel.h"

namespace colony::kernels::cpu {

void sgd_step(DType dtype, int64_t n, void* param, const void* grad, void* buf, const SgdParams& s) {
  COLONY_DISPATCH_FLOATING(dtype, "sgd_step", [&] {
    scalar_t* p = static_cast<scalar_t*>(param);
    const scalar_t* g = static_cast<const scalar_t*>(grad);
    scalar_t* b = static_cast<scalar_t*>(buf);
    parallel_for(n, 1 << 15, [&](int64_t begin, int64_t end) {
      scalar_t unused{};
      for (int64_t i = begin; i < end; ++i) sgd_update(p[i], g[i], b ? b[i] : unused, s);
    });
  });
}

void adam_step(DType dtype, int64_t n, void* param, const void* grad, void* m, void* v, void* vmax, const AdamParams& a) {
  COLONY_DISPATCH_FLOATING(dtype, "adam_step", [&] {
    scalar_t* p = static_cast<scalar_t*>(param);
    const scalar_t* g = static_cast<const scalar_t*>(grad);
    scalar_t* mm = static_cast<scalar_t*>(m);
    scalar_t* vv = static_cast<scalar_t*>(v);
    scalar_t* vx = static_cast<scalar_t*>(vmax);
    parallel_for(n, 1 << 14, [&](int64_t begin, int64_t end) {
      scalar_t unused{};
      for (int64_t i = begin; i < end; ++i) adam_update(p[i], g[i], mm[i], vv[i], vx ? vx[i] : unused, a);
    });
  });
}

}  // namespace colony::kernels::cpu
