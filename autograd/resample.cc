// resample: y = A x along one dim for the sparse [out, in] matrix A of the taps, so dL/dx = A^T g,
// the adjoint kernel. The taps are kept by the backward closure (shared, not copied per call).
#include "autograd/resample.h"

#include <memory>

#include "autograd/op_util.h"

namespace colony {

using autograd::record;
using autograd::detail::Grads;
using autograd::detail::Needs;

Tensor resample(const Tensor& x, int64_t dim, const raw::ResampleTaps& taps) {
  Tensor out = raw::resample(x, dim, taps);
  if (autograd::needs_grad(x)) {
    auto kept = std::make_shared<const raw::ResampleTaps>(taps);
    record("ResampleBackward", {x}, out, {}, [kept, dim](const Grads& g, const Needs&) -> Grads {
      return {raw::resample_adjoint(g[0], dim, *kept)};
    });
  }
  return out;
}

}  // namespace colony
