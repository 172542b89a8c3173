#include "kernels/common/convert.h"
#include "kernels/common/dispatch.h"
#include "kernels/common/elementwise.h"
#include "kernels/cuda/elementwise_launch.cuh"

namespace colony::kernels::cuda {
namespace {

// One kernel per (op, dtype) serves tensor-tensor and both scalar forms (a uniform branch), which
// keeps the number of instantiations nvcc compiles at one per pair.
enum class Operands : int { TensorTensor, TensorScalar, ScalarTensor };

template <BinaryOp Op, typename T>
struct BinaryFn {
  using C = compute_t<T>;
  using Out = binary_out_t<Op, T>;
  Out* out;
  const T* a;
  const T* b;
  C scalar;
  C alpha;
  Operands operands;
  __device__ void operator()(const int64_t* off) const {
    C x, y;
    if (operands == Operands::TensorTensor) {
      x = static_cast<C>(a[off[1]]);
      y = static_cast<C>(b[off[2]]);
    } else if (operands == Operands::TensorScalar) {
      x = static_cast<C>(a[off[1]]);
      y = scalar;
    } else {
      x = scalar;
      y = static_cast<C>(a[off[1]]);
    }
    out[off[0]] = static_cast<Out>(binary_fn<Op>(x, y, alpha));
  }
};

template <BinaryOp Op, typename T>
void binary_typed(const void* a, const StridedLayout& la, const void* b, const StridedLayout& lb, double scalar,
                  Operands operands, void* out, const StridedLayout& lout, double alpha, void* stream,
                  const char* name) {
  using C = compute_t<T>;
  BinaryFn<Op, T> f{static_cast<binary_out_t<Op, T>*>(out), static_cast<const T*>(a), static_cast<const T*>(b),
                    scalar_to<C>(scalar), scalar_to<C>(alpha), operands};
  launch_elementwise<3>({&lout, &la, &lb}, f, stream, name);
}

void binary_any(BinaryOp op, DType dtype, const void* a, const StridedLayout& la, const void* b,
                const StridedLayout& lb, double scalar, Operands operands, void* out, const StridedLayout& lout,
                double alpha, void* stream) {
#define COLONY_BINARY_CASE(OP, DISPATCH, NAME)                                                                \
  case BinaryOp::OP:                                                                                          \
    DISPATCH(dtype, NAME, [&] {                                                                               \
      binary_typed<BinaryOp::OP, scalar_t>(a, la, b, lb, scalar, operands, out, lout, alpha, stream, NAME); \
    });                                                                                                       \
    return;
  switch (op) { COLONY_FOR_EACH_BINARY_OP(COLONY_BINARY_CASE) }
#undef COLONY_BINARY_CASE
}

template <typename T>
struct ClampFn {
  using C = compute_t<T>;
  T* out;
  const T* in;
  bool has_lo, has_hi;
  C lo, hi;
  __device__ void operator()(const int64_t* off) const {
    out[off[0]] = static_cast<T>(clamp_fn<C>(static_cast<C>(in[off[1]]), has_lo, lo, has_hi, hi));
  }
};

template <typename T>
struct ClampGradFn {
  using C = compute_t<T>;
  T* out;
  const T* grad;
  const T* x;
  bool has_lo, has_hi;
  C lo, hi;
  __device__ void operator()(const int64_t* off) const {
    out[off[0]] = static_cast<T>(
        clamp_grad_fn<C>(static_cast<C>(grad[off[1]]), static_cast<C>(x[off[2]]), has_lo, lo, has_hi, hi));
  }
};

template <typename T>
struct WhereFn {
  T* out;
  const bool* cond;
  const T* a;
  const T* b;
  __device__ void operator()(const int64_t* off) const { out[off[0]] = cond[off[1]] ? a[off[2]] : b[off[3]]; }
};

template <ActivationGrad Op, typename T>
struct ActivationGradFn {
  using C = compute_t<T>;
  T* out;
  const T* grad;
  const T* saved;
  UnaryAttrs attrs;
  __device__ void operator()(const int64_t* off) const {
    out[off[0]] = static_cast<T>(
        activation_grad_fn<Op>(static_cast<C>(grad[off[1]]), static_cast<C>(saved[off[2]]), attrs));
  }
};

}  // namespace

}  // namespace colony::kernels::cuda

namespace colony::kernels {

using namespace cuda;  // NOLINT(build/namespaces): the helpers above

void Binary::cuda(BinaryOp op, DType dtype, const void* a, const StridedLayout& la, const void* b,
                  const StridedLayout& lb, void* out, const StridedLayout& lout, double alpha, void* stream) {
  binary_any(op, dtype, a, la, b, lb, 0.0, Operands::TensorTensor, out, lout, alpha, stream);
}

void BinaryScalar::cuda(BinaryOp op, DType dtype, const void* a, const StridedLayout& la, double s, bool scalar_first,
                        void* out, const StridedLayout& lout, void* stream) {
  // The unused third operand repeats a's layout so that it never stops dims from coalescing.
  binary_any(op, dtype, a, la, a, la, s, scalar_first ? Operands::ScalarTensor : Operands::TensorScalar, out, lout,
             1.0, stream);
}

void Clamp::cuda(DType dtype, const void* in, const StridedLayout& lin, void* out, const StridedLayout& lout,
                 bool has_min, double min, bool has_max, double max, void* stream) {
  COLONY_DISPATCH_NUMERIC(dtype, "clamp", [&] {
    using C = compute_t<scalar_t>;
    ClampFn<scalar_t> f{static_cast<scalar_t*>(out), static_cast<const scalar_t*>(in), has_min, has_max,
                        has_min ? scalar_to<C>(min) : C(0), has_max ? scalar_to<C>(max) : C(0)};
    launch_elementwise<2>({&lout, &lin}, f, stream, "clamp");
  });
}

void ClampBackward::cuda(DType dtype, const void* grad, const StridedLayout& lg, const void* x,
                         const StridedLayout& lx, void* out, const StridedLayout& lout, bool has_min, double min,
                         bool has_max, double max, void* stream) {
  COLONY_DISPATCH_FLOATING(dtype, "clamp_backward", [&] {
    using C = compute_t<scalar_t>;
    ClampGradFn<scalar_t> f{static_cast<scalar_t*>(out), static_cast<const scalar_t*>(grad),
                            static_cast<const scalar_t*>(x), has_min, has_max,
                            has_min ? scalar_to<C>(min) : C(0), has_max ? scalar_to<C>(max) : C(0)};
    launch_elementwise<3>({&lout, &lg, &lx}, f, stream, "clamp_backward");
  });
}

void Where::cuda(DType dtype, const bool* cond, const StridedLayout& lc, const void* a, const StridedLayout& la,
                 const void* b, const StridedLayout& lb, void* out, const StridedLayout& lout, void* stream) {
  COLONY_DISPATCH_ALL(dtype, "where", [&] {
    WhereFn<scalar_t> f{static_cast<scalar_t*>(out), cond, static_cast<const scalar_t*>(a),
                        static_cast<const scalar_t*>(b)};
    launch_elementwise<4>({&lout, &lc, &la, &lb}, f, stream, "where");
  });
}

#define COLONY_ACTIVATION_CASE(Op, name, saved)                                                                     \
  case ActivationGrad::Op:                                                                                          \
    return launch_elementwise<3>({&lout, &lg, &ls}, ActivationGradFn<ActivationGrad::Op, T>{o, g, s, attrs}, stream, \
                                 #name "_backward");

void ActivationBackward::cuda(ActivationGrad op, DType dtype, const void* grad, const StridedLayout& lg,
                              const void* saved, const StridedLayout& ls, void* out, const StridedLayout& lout,
                              const UnaryAttrs& attrs, void* stream) {
  COLONY_DISPATCH_FLOATING(dtype, op_name(op), [&] {
    using T = scalar_t;
    T* o = static_cast<T*>(out);
    const T* g = static_cast<const T*>(grad);
    const T* s = static_cast<const T*>(saved);
    switch (op) { COLONY_FOR_EACH_ACTIVATION(COLONY_ACTIVATION_CASE) }
  });
}

#undef COLONY_ACTIVATION_CASE

}  // namespace colony::kernels
