#include <type_traits>

#include "kernels/common/dispatch.h"
#include "kernels/common/elementwise.h"
#include "kernels/cpu/activation_simd.h"
#include "kernels/cpu/bf16_rows.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/strided_loop.h"

namespace colony::kernels::cpu {
namespace {

template <UnaryOp Op, typename T>
void unary_typed(const void* in, const StridedLayout& lin, void* out, const StridedLayout& lout,
                 const UnaryAttrs& attrs) {
  using C = compute_t<T>;
  using Out = unary_out_t<Op, T>;
  if constexpr (std::is_same_v<C, float> && (Op == UnaryOp::Gelu || Op == UnaryOp::Silu)) {
    if (lin.is_contiguous() && lout.is_contiguous()) {  // activation_simd.h's vector loops
      if constexpr (Op == UnaryOp::Gelu) {
        gelu_forward_simd(static_cast<const T*>(in), static_cast<T*>(out), lout.numel(), attrs.gelu_approximate);
      } else {
        silu_forward_simd(static_cast<const T*>(in), static_cast<T*>(out), lout.numel());
      }
      return;
    }
  }
  // sigmoid, tanh, exp and the logarithms: float32 only, so that the 16-bit types keep the scalar
  // functors' roundings.
  if constexpr (std::is_same_v<T, float> && (Op == UnaryOp::Sigmoid || Op == UnaryOp::Tanh || Op == UnaryOp::Exp ||
                                             Op == UnaryOp::Log || Op == UnaryOp::Log2 || Op == UnaryOp::Log10)) {
    if (lin.is_contiguous() && lout.is_contiguous()) {  // activation_simd.h's vector loops
      const ActivationSimdFns& fns = active_activation_simd_fns();
      auto loop = Op == UnaryOp::Sigmoid ? fns.sigmoid_forward
                  : Op == UnaryOp::Tanh  ? fns.tanh_forward
                  : Op == UnaryOp::Exp   ? fns.exp_forward
                  : Op == UnaryOp::Log   ? fns.log_forward
                  : Op == UnaryOp::Log2  ? fns.log2_forward
                                         : fns.log10_forward;
      auto x = static_cast<const float*>(in);
      auto y = static_cast<float*>(out);
      parallel_for(lout.numel(), kElementwiseGrain, [&](int64_t b, int64_t e) { loop(x + b, y + b, e - b); });
      return;
    }
  }
  if constexpr (std::is_same_v<T, BFloat16> && Op == UnaryOp::Relu) {
    if (lin.is_contiguous() && lout.is_contiguous()) {  // on the bits, no float32 round trip (bf16_rows.h)
      auto x = static_cast<const T*>(in);
      auto y = static_cast<T*>(out);
      parallel_for(lout.numel(), kElementwiseGrain, [&](int64_t b, int64_t e) { relu_row_bf16(x + b, e - b, y + b); });
      return;
    }
  }
  map1<Out, T>(out, lout, in, lin, [attrs](T x) { return static_cast<Out>(unary_fn<Op>(static_cast<C>(x), attrs)); });
}

}  // namespace

}  // namespace colony::kernels::cpu

namespace colony::kernels {

using namespace cpu;  // NOLINT(build/namespaces): the helpers above

void Unary::cpu(UnaryOp op, DType dtype, const void* in, const StridedLayout& lin, void* out, const StridedLayout& lout,
                const UnaryAttrs& attrs) {
#define COLONY_UNARY_CASE(OP, DISPATCH, NAME)                                                    \
  case UnaryOp::OP:                                                                              \
    DISPATCH(dtype, NAME, [&] { unary_typed<UnaryOp::OP, scalar_t>(in, lin, out, lout, attrs); }); \
    return;
  switch (op) { COLONY_FOR_EACH_UNARY_OP(COLONY_UNARY_CASE) }
#undef COLONY_UNARY_CASE
}

}  // namespace colony::kernels
