#include "kernels/common/dispatch.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/strided_loop.h"

namespace colony::kernels::cpu {
namespace {

template <UnaryOp Op, typename T>
void unary_typed(const void* in, const StridedLayout& lin, void* out, const StridedLayout& lout) {
  using C = compute_t<T>;
  using Out = unary_out_t<Op, T>;
  map1<Out, T>(out, lout, in, lin, [](T x) { return static_cast<Out>(unary_fn<Op>(static_cast<C>(x))); });
}

}  // namespace

void unary(UnaryOp op, DType dtype, const void* in, const StridedLayout& lin, void* out, const StridedLayout& lout) {
#define COLONY_UNARY_CASE(OP, DISPATCH, NAME)                                                    \
  case UnaryOp::OP:                                                                              \
    DISPATCH(dtype, NAME, [&] { unary_typed<UnaryOp::OP, scalar_t>(in, lin, out, lout); }); \
    return;
  switch (op) {
    COLONY_UNARY_CASE(Neg, COLONY_DISPATCH_NUMERIC, "neg")
    COLONY_UNARY_CASE(Abs, COLONY_DISPATCH_NUMERIC, "abs")
    COLONY_UNARY_CASE(Exp, COLONY_DISPATCH_FLOATING, "exp")
    COLONY_UNARY_CASE(Log, COLONY_DISPATCH_FLOATING, "log")
    COLONY_UNARY_CASE(Sqrt, COLONY_DISPATCH_FLOATING, "sqrt")
    COLONY_UNARY_CASE(Rsqrt, COLONY_DISPATCH_FLOATING, "rsqrt")
    COLONY_UNARY_CASE(Relu, COLONY_DISPATCH_NUMERIC, "relu")
    COLONY_UNARY_CASE(Sigmoid, COLONY_DISPATCH_FLOATING, "sigmoid")
    COLONY_UNARY_CASE(Tanh, COLONY_DISPATCH_FLOATING, "tanh")
    COLONY_UNARY_CASE(Sign, COLONY_DISPATCH_ALL, "sign")
    COLONY_UNARY_CASE(Square, COLONY_DISPATCH_NUMERIC, "square")
    COLONY_UNARY_CASE(Reciprocal, COLONY_DISPATCH_FLOATING, "reciprocal")
    COLONY_UNARY_CASE(LogicalNot, COLONY_DISPATCH_ALL, "logical_not")
    COLONY_UNARY_CASE(Sin, COLONY_DISPATCH_FLOATING, "sin")
    COLONY_UNARY_CASE(Cos, COLONY_DISPATCH_FLOATING, "cos")
    COLONY_UNARY_CASE(Log1p, COLONY_DISPATCH_FLOATING, "log1p")
    COLONY_UNARY_CASE(Expm1, COLONY_DISPATCH_FLOATING, "expm1")
    COLONY_UNARY_CASE(Floor, COLONY_DISPATCH_FLOATING, "floor")
    COLONY_UNARY_CASE(Ceil, COLONY_DISPATCH_FLOATING, "ceil")
    COLONY_UNARY_CASE(Round, COLONY_DISPATCH_FLOATING, "round")
  }
#undef COLONY_UNARY_CASE
}

}  // namespace colony::kernels::cpu
