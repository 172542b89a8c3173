#include "kernels/common/elementwise.h"

#include <type_traits>

#include "kernels/common/convert.h"
#include "kernels/common/dispatch.h"
#include "kernels/cpu/activation_simd.h"
#include "kernels/cpu/bf16_rows.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/strided_loop.h"

namespace colony::kernels::cpu {
namespace {

template <BinaryOp Op, typename T>
void binary_typed(const void* a, const StridedLayout& la, const void* b, const StridedLayout& lb, void* out,
                  const StridedLayout& lout, double alpha) {
  using C = compute_t<T>;
  using Out = binary_out_t<Op, T>;
  const C al = scalar_to<C>(alpha);
  map2<Out, T, T>(out, lout, a, la, b, lb, [al](T x, T y) {
    return static_cast<Out>(binary_fn<Op>(static_cast<C>(x), static_cast<C>(y), al));
  });
}

// The scalar stays in the compute type (float for float16), as PyTorch keeps it in opmath.
template <BinaryOp Op, typename T>
void binary_scalar_typed(const void* a, const StridedLayout& la, double s, bool scalar_first, void* out,
                         const StridedLayout& lout) {
  using C = compute_t<T>;
  using Out = binary_out_t<Op, T>;
  const C sc = scalar_to<C>(s);
  const C one = scalar_to<C>(1.0);
  if (scalar_first) {
    map1<Out, T>(out, lout, a, la, [sc, one](T x) { return static_cast<Out>(binary_fn<Op>(sc, static_cast<C>(x), one)); });
  } else {
    map1<Out, T>(out, lout, a, la, [sc, one](T x) { return static_cast<Out>(binary_fn<Op>(static_cast<C>(x), sc, one)); });
  }
}

}  // namespace

}  // namespace colony::kernels::cpu

namespace colony::kernels {

using namespace cpu;  // NOLINT(build/namespaces): the helpers above

void Binary::cpu(BinaryOp op, DType dtype, const void* a, const StridedLayout& la, const void* b,
                 const StridedLayout& lb, void* out, const StridedLayout& lout, double alpha) {
#define COLONY_BINARY_CASE(OP, DISPATCH, NAME)                                                          \
  case BinaryOp::OP:                                                                                    \
    DISPATCH(dtype, NAME, [&] { binary_typed<BinaryOp::OP, scalar_t>(a, la, b, lb, out, lout, alpha); }); \
    return;
  switch (op) { COLONY_FOR_EACH_BINARY_OP(COLONY_BINARY_CASE) }
#undef COLONY_BINARY_CASE
}

void BinaryScalar::cpu(BinaryOp op, DType dtype, const void* a, const StridedLayout& la, double s, bool scalar_first,
                       void* out, const StridedLayout& lout) {
#define COLONY_BINARY_CASE(OP, DISPATCH, NAME)                                                                \
  case BinaryOp::OP:                                                                                          \
    DISPATCH(dtype, NAME, [&] { binary_scalar_typed<BinaryOp::OP, scalar_t>(a, la, s, scalar_first, out, lout); }); \
    return;
  switch (op) { COLONY_FOR_EACH_BINARY_OP(COLONY_BINARY_CASE) }
#undef COLONY_BINARY_CASE
}

void Clamp::cpu(DType dtype, const void* in, const StridedLayout& lin, void* out, const StridedLayout& lout,
                bool has_min, double min, bool has_max, double max) {
  COLONY_DISPATCH_NUMERIC(dtype, "clamp", [&] {
    using C = compute_t<scalar_t>;
    const C lo = has_min ? scalar_to<C>(min) : C(0), hi = has_max ? scalar_to<C>(max) : C(0);
    map1<scalar_t, scalar_t>(out, lout, in, lin, [=](scalar_t x) {
      return static_cast<scalar_t>(clamp_fn<C>(static_cast<C>(x), has_min, lo, has_max, hi));
    });
  });
}

void ClampBackward::cpu(DType dtype, const void* grad, const StridedLayout& lg, const void* x,
                        const StridedLayout& lx, void* out, const StridedLayout& lout, bool has_min, double min,
                        bool has_max, double max) {
  COLONY_DISPATCH_FLOATING(dtype, "clamp_backward", [&] {
    using C = compute_t<scalar_t>;
    const C lo = has_min ? scalar_to<C>(min) : C(0), hi = has_max ? scalar_to<C>(max) : C(0);
    map2<scalar_t, scalar_t, scalar_t>(out, lout, grad, lg, x, lx, [=](scalar_t g, scalar_t v) {
      return static_cast<scalar_t>(clamp_grad_fn<C>(static_cast<C>(g), static_cast<C>(v), has_min, lo, has_max, hi));
    });
  });
}

void Where::cpu(DType dtype, const bool* cond, const StridedLayout& lc, const void* a, const StridedLayout& la,
                const void* b, const StridedLayout& lb, void* out, const StridedLayout& lout) {
  // The mask read as bytes (a bool tensor holds 0 or 1): GCC vectorizes the select of a uint8_t
  // load and not of a bool one. [4096, 1024] float32 forward 16.6 -> 2.0 ms in a standalone copy
  // of the loop (op_sweep's where, 2026-12-07).
  const auto* mask = reinterpret_cast<const uint8_t*>(cond);
  COLONY_DISPATCH_ALL(dtype, "where", [&] {
    map3<scalar_t, uint8_t, scalar_t, scalar_t>(out, lout, mask, lc, a, la, b, lb,
                                               [](uint8_t c, scalar_t x, scalar_t y) { return c ? x : y; });
  });
}

// One case per COLONY_FOR_EACH_ACTIVATION entry (defined outside the dispatch macro's argument, where
// a directive may not stand).
#define COLONY_ACTIVATION_CASE(Op, name, saved) \
  case ActivationGrad::Op:                      \
    return run([attrs](C g, C s) { return activation_grad_fn<ActivationGrad::Op>(g, s, attrs); });

void ActivationBackward::cpu(ActivationGrad op, DType dtype, const void* grad, const StridedLayout& lg,
                             const void* saved, const StridedLayout& ls, void* out, const StridedLayout& lout,
                             const UnaryAttrs& attrs) {
  COLONY_DISPATCH_FLOATING(dtype, op_name(op), [&] {
    using T = scalar_t;
    using C = compute_t<T>;
    if constexpr (std::is_same_v<C, float>) {
      if ((op == ActivationGrad::Gelu || op == ActivationGrad::Silu) && lg.is_contiguous() && ls.is_contiguous() &&
          lout.is_contiguous()) {  // activation_simd.h's vector loops
        auto g = static_cast<const T*>(grad), s = static_cast<const T*>(saved);
        if (op == ActivationGrad::Gelu) {
          gelu_backward_simd(g, s, static_cast<T*>(out), lout.numel(), attrs.gelu_approximate);
        } else {
          silu_backward_simd(g, s, static_cast<T*>(out), lout.numel());
        }
        return;
      }
    }
    if constexpr (std::is_same_v<T, BFloat16>) {
      if (op == ActivationGrad::Relu && lg.is_contiguous() && ls.is_contiguous() && lout.is_contiguous()) {
        // On the bits, no float32 round trip (bf16_rows.h).
        auto g = static_cast<const BFloat16*>(grad), s = static_cast<const BFloat16*>(saved);
        auto o = static_cast<BFloat16*>(out);
        parallel_for(lout.numel(), kElementwiseGrain,
                     [&](int64_t b, int64_t e) { relu_grad_row_bf16(g + b, s + b, e - b, o + b); });
        return;
      }
    }
    auto run = [&](auto fn) {
      map2<T, T, T>(out, lout, grad, lg, saved, ls, [fn](T g, T s) { return static_cast<T>(fn(static_cast<C>(g), static_cast<C>(s))); });
    };
    switch (op) { COLONY_FOR_EACH_ACTIVATION(COLONY_ACTIVATION_CASE) }
  });
}

#undef COLONY_ACTIVATION_CASE

}  // namespace colony::kernels
