// resample: y = A x along one dim for the sparse [out, in] matrix A of the taps, so dL/dx = A^T g,
// the adjoint kernel, and the adjoint's gradient (under create_graph) is A again. The taps are kept
// by the backward closures (shared, not copied per call).
#include "autograd/resample.h"

#include <memory>

#include "autograd/op_util.h"

namespace colony {

using autograd::detail::Grads;
using autograd::detail::Needs;
using autograd::detail::record_differentiable;
using Taps = std::shared_ptr<const raw::ResampleTaps>;

namespace {

Tensor resampled(const Tensor& x, int64_t dim, const Taps& taps);

// A^T g, recorded under create_graph: its gradient is A again.
Tensor resampled_adjoint(const Tensor& g, int64_t dim, const Taps& taps) {
  Tensor out = raw::resample_adjoint(g, dim, *taps);
  if (autograd::needs_grad(g)) {
    record_differentiable("ResampleBackwardBackward", {g}, out, {}, [taps, dim](const Grads& gg, const Needs&) -> Grads {
      return {resampled(gg[0], dim, taps)};
    });
  }
  return out;
}

Tensor resampled(const Tensor& x, int64_t dim, const Taps& taps) {
  Tensor out = raw::resample(x, dim, *taps);
  if (autograd::needs_grad(x)) {
    record_differentiable("ResampleBackward", {x}, out, {}, [taps, dim](const Grads& g, const Needs&) -> Grads {
      return {resampled_adjoint(g[0], dim, taps)};
    });
  }
  return out;
}

}  // namespace

Tensor resample(const Tensor& x, int64_t dim, const raw::ResampleTaps& taps) {
  if (!autograd::needs_grad(x)) return raw::resample(x, dim, taps);
  return resampled(x, dim, std::make_shared<const raw::ResampleTaps>(taps));
}

}  // namespace colony
