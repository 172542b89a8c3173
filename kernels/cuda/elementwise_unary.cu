#include "kernels/common/dispatch.h"
#include "kernels/common/elementwise.h"
#include "kernels/cuda/elementwise_launch.cuh"

namespace colony::kernels::cuda {
namespace {

template <UnaryOp Op, typename T>
struct UnaryFn {
  using Out = unary_out_t<Op, T>;
  Out* out;
  const T* in;
  UnaryAttrs attrs;
  __device__ void operator()(const int64_t* off) const {
    out[off[0]] = static_cast<Out>(unary_fn<Op>(static_cast<compute_t<T>>(in[off[1]]), attrs));
  }
};

template <UnaryOp Op, typename T>
void unary_typed(const void* in, const StridedLayout& lin, void* out, const StridedLayout& lout,
                 const UnaryAttrs& attrs, void* stream, const char* name) {
  UnaryFn<Op, T> f{static_cast<unary_out_t<Op, T>*>(out), static_cast<const T*>(in), attrs};
  launch_elementwise<2>({&lout, &lin}, f, stream, name);
}

}  // namespace

}  // namespace colony::kernels::cuda

namespace colony::kernels {

using namespace cuda;  // NOLINT(build/namespaces): the helpers above

void Unary::cuda(UnaryOp op, DType dtype, const void* in, const StridedLayout& lin, void* out,
                 const StridedLayout& lout, const UnaryAttrs& attrs, void* stream) {
#define COLONY_UNARY_CASE(OP, DISPATCH, NAME)                                                                 \
  case UnaryOp::OP:                                                                                           \
    DISPATCH(dtype, NAME, [&] { unary_typed<UnaryOp::OP, scalar_t>(in, lin, out, lout, attrs, stream, NAME); }); \
    return;
  switch (op) { COLONY_FOR_EACH_UNARY_OP(COLONY_UNARY_CASE) }
#undef COLONY_UNARY_CASE
}

}  // namespace colony::kernels
