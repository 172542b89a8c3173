// Elementwise front functions: device, shape and dtype checks, type promotion, output allocation,
// and one call through the dispatch seam (run_kernel, runtime/run_kernel.h) to an entry of
// kernels/common/elementwise.h. The math is kernels/common/elementwise_functors.h.
#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/common/elementwise.h"
#include "kernels/common/elementwise_functors.h"
#include "ops/elementwise_detail.h"
#include "ops/kernel_layout.h"
#include "ops/op_checks.h"
#include "ops/raw_ops.h"
#include "runtime/run_kernel.h"

namespace colony::raw {

namespace {

using kernels::op_name;

// "add_", "mul_", ...: the in-place forms' names in errors.
const char* op_name(BinaryOp op, bool in_place) {
  if (!in_place) return op_name(op);
#define COLONY_NAME_CASE(Op, DISPATCH, NAME) \
  case BinaryOp::Op:                         \
    return NAME "_";
  switch (op) { COLONY_FOR_EACH_BINARY_OP(COLONY_NAME_CASE) }
#undef COLONY_NAME_CASE
  return "binary_";
}

bool is_comparison(BinaryOp op) { return kernels::outputs_bool(op); }

void check_same_device(const char* op, const Tensor& a, const Tensor& b) {
  if (a.device() != b.device()) {
    throw std::invalid_argument(std::string(op) + ": expected all tensors on the same device, got " +
                                a.device().str() + " and " + b.device().str());
  }
}

int category(DType t) { return t == kBool ? 0 : is_floating(t) ? 2 : 1; }

bool is_whole(double v) { return std::isfinite(v) && std::floor(v) == v; }

// The dtype the kernel computes in, from the promoted dtype: true division of integers is float32
// (and atan2, copysign, xlogy of integers); hypot and logaddexp(2) refuse them, the integer
// division family refuses bool, as PyTorch does.
DType compute_dtype(BinaryOp op, DType common, const char* name) {
  if (kernels::promotes_integral_to_float(op) && !is_floating(common)) return default_float_dtype();
  if (kernels::refuses_integral_input(op) && !is_floating(common)) {
    throw std::invalid_argument(std::string(name) + ": expected a floating-point tensor, got " + dtype_name(common) +
                                " (PyTorch has no integral kernel for it either)");
  }
  if (kernels::divides_integers(op) && common == kBool) {
    throw std::invalid_argument(std::string(name) + ": not implemented for bool tensors, as in PyTorch");
  }
  if (kernels::integers_only(op) && (is_floating(common) || common == kBool)) {
    throw std::invalid_argument(std::string(name) + ": not implemented for " + dtype_name(common) +
                                " tensors; it takes integer tensors, as in PyTorch");
  }
  if (kernels::shifts_bits(op) && (is_floating(common) || common == kBool)) {
    throw std::invalid_argument(std::string(name) + ": not implemented for " + dtype_name(common) +
                                " tensors; it takes integer tensors, as in PyTorch");
  }
  if (op == BinaryOp::NextAfter && (common == kFloat16 || common == kBFloat16)) {
    throw std::invalid_argument(std::string(name) + ": not implemented for " + dtype_name(common) +
                                " tensors in Colony (float32 and float64 only; PyTorch also steps 16-bit types)");
  }
  if (kernels::is_bitwise(op) && is_floating(common)) {
    throw std::invalid_argument(std::string(name) + ": expected integral or bool tensors, got " + dtype_name(common) +
                                " (bitwise ops are not defined for floating-point types; for masks use bool tensors)");
  }
  if (op == BinaryOp::Sub && common == kBool) {
    throw std::invalid_argument(std::string(name) +
                                ": subtraction, the `-` operator, with two bool tensors is not supported. Use the "
                                "`^` or `logical_xor()` operator instead.");
  }
  return common;
}

using detail::check_castable;

void check_alpha(const char* op, DType common, double alpha) {
  if (common == kBool && alpha != 0.0 && alpha != 1.0) {
    throw std::invalid_argument(std::string(op) + ": for boolean input tensors, argument alpha must be a boolean, got " +
                                std::to_string(alpha));
  }
  if (!is_floating(common) && !is_whole(alpha)) {
    throw std::invalid_argument(std::string(op) +
                                ": for integral input tensors, argument alpha must not be a floating point number, got " +
                                std::to_string(alpha));
  }
}

Tensor as_dtype(const Tensor& t, DType d) { return t.dtype() == d ? t : to(t, t.device(), d); }

// Integer division by zero: an error on the CPU, as torch's ZeroDivisionError (and a crash, SIGFPE,
// if it reached the division), checked before the kernel runs. A CUDA tensor divisor is not read
// back (that would synchronize every call): its kernel gives 0 there, as ATen's does not check either.
[[noreturn]] void throw_zero_division(const char* name) {
  throw std::invalid_argument(std::string(name) + ": ZeroDivisionError (integer division by zero)");
}

void check_integer_divisor(BinaryOp op, DType compute, const Tensor& divisor, const char* name) {
  if (!kernels::divides_integers(op) || is_floating(compute) || !divisor.is_cpu()) return;
  if (sum(binary(BinaryOp::Eq, divisor, 0.0)).item<int64_t>() != 0) throw_zero_division(name);
}

void check_integer_divisor(BinaryOp op, DType compute, double divisor, const char* name) {
  if (kernels::divides_integers(op) && !is_floating(compute) && divisor == 0.0) throw_zero_division(name);
}

Tensor new_output(const Shape& shape, DType dtype, Device device) {
  return empty(shape, TensorOptions(dtype).device(device));
}

// --- dispatch: every layout takes out's shape ---

void run_unary(UnaryOp op, DType dtype, const Tensor& in, const Tensor& out, const UnaryAttrs& attrs) {
  const char* name = op_name(op);
  auto lin = broadcast_layout(in, out.sizes(), name);
  auto lout = kernel_layout(out, name);
  run_kernel<kernels::Unary>(out.device(), op, dtype, in.data_ptr_raw(), lin, out.data_ptr_raw(), lout, attrs);
}

void run_binary(BinaryOp op, DType dtype, const Tensor& a, const Tensor& b, const Tensor& out, double alpha,
                const char* name) {
  auto la = broadcast_layout(a, out.sizes(), name);
  auto lb = broadcast_layout(b, out.sizes(), name);
  auto lout = kernel_layout(out, name);
  run_kernel<kernels::Binary>(out.device(), op, dtype, a.data_ptr_raw(), la, b.data_ptr_raw(), lb, out.data_ptr_raw(),
                              lout, alpha);
}

void run_binary_scalar(BinaryOp op, DType dtype, const Tensor& a, double s, bool scalar_first, const Tensor& out,
                       const char* name) {
  auto la = broadcast_layout(a, out.sizes(), name);
  auto lout = kernel_layout(out, name);
  run_kernel<kernels::BinaryScalar>(out.device(), op, dtype, a.data_ptr_raw(), la, s, scalar_first, out.data_ptr_raw(),
                                    lout);
}

void run_clamp(const Tensor& in, const Tensor& out, std::optional<double> min, std::optional<double> max,
               const char* name) {
  auto lin = broadcast_layout(in, out.sizes(), name);
  auto lout = kernel_layout(out, name);
  bool has_min = min.has_value(), has_max = max.has_value();
  double lo = min.value_or(0.0), hi = max.value_or(0.0);
  run_kernel<kernels::Clamp>(out.device(), out.dtype(), in.data_ptr_raw(), lin, out.data_ptr_raw(), lout, has_min, lo,
                             has_max, hi);
}

// --- out-of-place binary ---

// Scalar exponents with an exact or cheaper unary form, as torch.pow uses them: x^1 is a copy of x
// (pow(x, 2)'s gradient takes x^1: std::pow per element made pow(x, 2)'s forward + backward 45 ms
// on [4096, 1024] against torch's 12, op_sweep, 2026-12-07), x^2 is x*x, and x^0.5, x^-0.5, x^-1
// use sqrt, rsqrt and reciprocal. Returns an undefined tensor otherwise.
Tensor pow_special_case(const Tensor& t, double e, DType dtype) {
  if (e == 1.0) return t.dtype() == dtype ? clone(t) : as_dtype(t, dtype);  // IEEE pow(x, 1) is x, NaN included
  if (e == 2.0) return unary(UnaryOp::Square, as_dtype(t, dtype));
  if (!is_floating(dtype)) return Tensor();
  if (e == 0.5) return unary(UnaryOp::Sqrt, as_dtype(t, dtype));
  if (e == -0.5) return unary(UnaryOp::Rsqrt, as_dtype(t, dtype));
  if (e == -1.0) return unary(UnaryOp::Reciprocal, as_dtype(t, dtype));
  return Tensor();
}

Tensor binary_tensor_tensor(BinaryOp op, const Tensor& a, const Tensor& b, double alpha) {
  const char* name = op_name(op);
  check_defined(a, name);
  check_defined(b, name);
  check_same_device(name, a, b);
  Shape shape = broadcast_shapes(a.sizes(), b.sizes(), name);
  DType common = result_type(a, b);
  if (op == BinaryOp::Add) check_alpha(name, common, alpha);
  DType compute = compute_dtype(op, common, name);
  check_integer_divisor(op, compute, b, name);
  Tensor out = new_output(shape, is_comparison(op) ? kBool : compute, a.device());
  run_binary(op, compute, as_dtype(a, compute), as_dtype(b, compute), out, alpha, name);
  return out;
}

void check_int_pow_exponent(const char* name, DType compute, double exponent) {
  if (!is_floating(compute) && exponent < 0) {
    throw std::invalid_argument(std::string(name) + ": integers to negative integer powers are not allowed");
  }
}

Tensor binary_tensor_scalar(BinaryOp op, const Tensor& t, double s, bool scalar_first) {
  const char* name = op_name(op);
  check_defined(t, name);
  DType compute = compute_dtype(op, scalar_result_type(t.dtype(), s), name);
  if (scalar_first) {
    check_integer_divisor(op, compute, t, name);
  } else {
    check_integer_divisor(op, compute, s, name);
  }
  if (op == BinaryOp::Pow && !scalar_first) {
    check_int_pow_exponent(name, compute, s);
    Tensor special = pow_special_case(t, s, compute);
    if (special.defined()) return special;
  }
  Tensor out = new_output(t.sizes(), is_comparison(op) ? kBool : compute, t.device());
  run_binary_scalar(op, compute, as_dtype(t, compute), s, scalar_first, out, name);
  return out;
}

// --- in place ---

void check_inplace_target(const char* name, const Tensor& a, const Shape& broadcast) {
  if (broadcast != a.sizes()) {
    throw std::invalid_argument(std::string(name) + ": output with shape " + shape_str(a.sizes()) +
                                " doesn't match the broadcast shape " + shape_str(broadcast));
  }
  check_no_internal_overlap(a, name);
}

void binary_inplace(BinaryOp op, Tensor& a, const Tensor& b, double alpha) {
  const char* name = op_name(op, /*in_place=*/true);
  check_defined(a, name);
  check_defined(b, name);
  check_same_device(name, a, b);
  check_inplace_target(name, a, broadcast_shapes(a.sizes(), b.sizes(), name));
  DType common = result_type(a, b);
  if (op == BinaryOp::Add) check_alpha(name, common, alpha);
  DType compute = compute_dtype(op, common, name);
  DType result = is_comparison(op) ? kBool : compute;
  check_castable(name, result, a.dtype());
  check_integer_divisor(op, compute, b, name);
  if (a.dtype() == compute && result == compute) {
    Tensor bb = as_dtype(b, compute);
    if (partially_overlaps(a, bb)) bb = clone(bb);
    run_binary(op, compute, a, bb, a, alpha, name);
  } else {
    Tensor r = binary_tensor_tensor(op, a, b, alpha);
    copy_(a, r);  // converts to a's dtype
  }
  a.storage()->bump_version();
}

}  // namespace

// torch.result_type for two tensors: a zero-dim tensor takes part like a scalar, deciding the result
// only when its category (bool < integral < floating) is higher than the dimensioned tensor's.
DType result_type(const Tensor& a, const Tensor& b) {
  bool za = a.dim() == 0, zb = b.dim() == 0;
  if (za == zb) return promote_types(a.dtype(), b.dtype());
  DType dimmed = za ? b.dtype() : a.dtype();
  DType zero = za ? a.dtype() : b.dtype();
  return category(zero) > category(dimmed) ? promote_types(dimmed, zero) : dimmed;
}

// A scalar keeps the tensor's dtype unless it is of a higher category: a non-integral scalar with an
// integral or bool tensor gives float32, an integral scalar with a bool tensor gives int64.
DType scalar_result_type(DType t, double s) {
  if (is_floating(t)) return t;
  if (!is_whole(s)) return default_float_dtype();
  return t == kBool ? kInt64 : t;
}

namespace detail {

const char* torch_type_name(DType t) {
  switch (t) {
    case DType::Float32: return "Float";
    case DType::Float64: return "Double";
    case DType::Float16: return "Half";
    case DType::BFloat16: return "BFloat16";
    case DType::Int64: return "Long";
    case DType::Int32: return "Int";
    case DType::UInt8: return "Byte";
    case DType::Bool: return "Bool";
  }
  return "?";
}

void check_castable(const char* op, DType result, DType out) {
  const bool castable = !(is_floating(result) && !is_floating(out)) && !(result != kBool && out == kBool);
  if (!castable) {
    throw std::invalid_argument(std::string(op) + ": result type " + torch_type_name(result) +
                                " can't be cast to the desired output type " + torch_type_name(out));
  }
}

void add_(Tensor& a, const Tensor& b, double alpha) { binary_inplace(BinaryOp::Add, a, b, alpha); }

}  // namespace detail

Tensor unary(UnaryOp op, const Tensor& t, const UnaryAttrs& attrs) {
  const char* name = op_name(op);
  check_defined(t, name);
  DType d = t.dtype();
  switch (op) {
    case UnaryOp::Neg:
      if (d == kBool) {
        throw std::invalid_argument("neg: negation, the `-` operator, on a bool tensor is not supported. If you are "
                                    "trying to invert a mask, use the `~` or `logical_not()` operator instead.");
      }
      break;
    case UnaryOp::Abs:
    case UnaryOp::Relu:
      if (d == kBool) throw std::invalid_argument(std::string(name) + ": bool tensors are not supported");
      break;
    case UnaryOp::Hardtanh:  // torch.clamp's integers, not bool
      if (d == kBool) throw std::invalid_argument("Bool inputs not supported for hardtanh");
      break;
    case UnaryOp::Threshold:  // torch.threshold has integer kernels (the dtype kept), not a bool one
      if (d == kBool) throw std::invalid_argument("threshold: not implemented for bool tensors, as in PyTorch");
      break;
    case UnaryOp::Square:
      if (d == kBool) return unary(op, as_dtype(t, kInt64));  // torch.square(bool) is pow(bool, 2): int64
      break;
    case UnaryOp::BitwiseNot:
      if (is_floating(d)) {
        throw std::invalid_argument(std::string(name) + ": expected an integral or bool tensor, got " + dtype_name(d) +
                                    " (the `~` operator is not defined for floating-point types)");
      }
      break;
    case UnaryOp::Sign:
    case UnaryOp::LogicalNot:
    case UnaryOp::IsNan:  // integers and bool: every element a number, finite
    case UnaryOp::IsInf:
    case UnaryOp::IsFinite:
      break;
    case UnaryOp::Trunc:  // torch.trunc has integer kernels, not a bool one
      if (d == kBool) throw std::invalid_argument("trunc: not implemented for bool tensors, as in PyTorch");
      [[fallthrough]];
    case UnaryOp::Floor:
    case UnaryOp::Ceil:
    case UnaryOp::Round:
      if (!is_floating(d)) return clone(t);  // integers are already whole
      break;
    default:
      if (is_floating(d)) break;
      // gelu, silu, elu, ...: refused, as PyTorch refuses them (kernels::refuses_integral_input).
      if (kernels::refuses_integral_input(op)) {
        throw std::invalid_argument(std::string(name) + ": expected a floating-point tensor, got " + dtype_name(d));
      }
      // exp, log, sqrt, ...: integral and bool inputs compute in float32, like torch.exp(int_tensor).
      return unary(op, as_dtype(t, default_float_dtype()), attrs);
  }
  Tensor out = new_output(t.sizes(), kernels::outputs_bool(op) ? kBool : d, t.device());
  run_unary(op, d, t, out, attrs);
  return out;
}

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b) { return binary_tensor_tensor(op, a, b, 1.0); }
Tensor binary(BinaryOp op, const Tensor& a, double b) { return binary_tensor_scalar(op, a, b, false); }
Tensor binary(BinaryOp op, double a, const Tensor& b) { return binary_tensor_scalar(op, b, a, true); }

Tensor add(const Tensor& a, const Tensor& b, double alpha) { return binary_tensor_tensor(BinaryOp::Add, a, b, alpha); }

void binary_(BinaryOp op, Tensor& a, const Tensor& b) { binary_inplace(op, a, b, 1.0); }

void binary_(BinaryOp op, Tensor& a, double b) {
  const char* name = op_name(op, /*in_place=*/true);
  check_defined(a, name);
  check_no_internal_overlap(a, name);
  DType compute = compute_dtype(op, scalar_result_type(a.dtype(), b), name);
  DType result = is_comparison(op) ? kBool : compute;
  check_castable(name, result, a.dtype());
  if (op == BinaryOp::Pow) check_int_pow_exponent(name, compute, b);
  check_integer_divisor(op, compute, b, name);
  if (a.dtype() == compute && result == compute) {
    run_binary_scalar(op, compute, a, b, false, a, name);
  } else {
    Tensor r = binary_tensor_scalar(op, a, b, false);
    copy_(a, r);
  }
  a.storage()->bump_version();
}

namespace {

DType clamp_result_type(const Tensor& t, std::optional<double> min, std::optional<double> max, const char* name) {
  if (!min && !max) throw std::invalid_argument(std::string(name) + ": at least one of 'min' or 'max' must not be None");
  DType r = t.dtype();
  if (min) r = scalar_result_type(r, *min);
  if (max) r = scalar_result_type(r, *max);
  return r;
}

}  // namespace

Tensor clamp(const Tensor& t, std::optional<double> min, std::optional<double> max) {
  check_defined(t, "clamp");
  DType r = clamp_result_type(t, min, max, "clamp");
  Tensor out = new_output(t.sizes(), r, t.device());
  run_clamp(as_dtype(t, r), out, min, max, "clamp");
  return out;
}

Tensor clamp_backward(const Tensor& grad, const Tensor& x, std::optional<double> min, std::optional<double> max) {
  const char* name = "clamp_backward";
  check_defined(grad, name);
  check_defined(x, name);
  check_same_device(name, grad, x);
  if (!min && !max) throw std::invalid_argument("clamp_backward: at least one of 'min' or 'max' must not be None");
  if (grad.dtype() != x.dtype() || !is_floating(x.dtype())) {
    throw std::invalid_argument(std::string(name) + ": expected a gradient and an input of one floating dtype, got " +
                                dtype_name(grad.dtype()) + " and " + dtype_name(x.dtype()));
  }
  Tensor out = new_output(x.sizes(), x.dtype(), x.device());
  auto lg = broadcast_layout(grad, out.sizes(), name), lx = kernel_layout(x, name), lout = kernel_layout(out, name);
  run_kernel<kernels::ClampBackward>(out.device(), x.dtype(), grad.data_ptr_raw(), lg, x.data_ptr_raw(), lx,
                                     out.data_ptr_raw(), lout, min.has_value(), min.value_or(0.0), max.has_value(),
                                     max.value_or(0.0));
  return out;
}

void clamp_(Tensor& t, std::optional<double> min, std::optional<double> max) {
  check_defined(t, "clamp_");
  DType r = clamp_result_type(t, min, max, "clamp_");
  check_castable("clamp_", r, t.dtype());
  check_no_internal_overlap(t, "clamp_");
  if (r == t.dtype()) {
    run_clamp(t, t, min, max, "clamp_");
  } else {
    Tensor c = clamp(t, min, max);
    copy_(t, c);
  }
  t.storage()->bump_version();
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  const char* name = "where";
  check_defined(cond, name);
  check_defined(a, name);
  check_defined(b, name);
  if (cond.dtype() != kBool) {
    throw std::invalid_argument(std::string("where: expected condition to be a bool tensor, got ") +
                                dtype_name(cond.dtype()));
  }
  check_same_device(name, cond, a);
  check_same_device(name, a, b);
  Shape shape = broadcast_shapes(broadcast_shapes(cond.sizes(), a.sizes(), name), b.sizes(), name);
  DType common = result_type(a, b);
  Tensor out = new_output(shape, common, a.device());
  Tensor aa = as_dtype(a, common), bb = as_dtype(b, common);
  auto lc = broadcast_layout(cond, shape, name), la = broadcast_layout(aa, shape, name),
       lb = broadcast_layout(bb, shape, name), lout = kernel_layout(out, name);
  const bool* c = static_cast<const bool*>(cond.data_ptr_raw());
  run_kernel<kernels::Where>(out.device(), common, c, lc, aa.data_ptr_raw(), la, bb.data_ptr_raw(), lb,
                             out.data_ptr_raw(), lout);
  return out;
}

Tensor masked_fill(const Tensor& t, const Tensor& mask, double value) {
  const char* name = "masked_fill";
  check_defined(t, name);
  check_defined(mask, name, "mask");
  if (mask.dtype() != kBool) {
    throw std::invalid_argument(std::string("masked_fill: expected a bool mask, got ") + dtype_name(mask.dtype()));
  }
  // where(mask, value, t) is the one pass: read mask and t, write the result. The value is taken in
  // t's dtype (1.7 fills an int64 tensor with 1), as torch.masked_fill does.
  return where(mask, scalar_tensor(value, TensorOptions(t.dtype()).device(t.device())), t);
}

namespace {

// activation_backward's checks, then the kernel writing into a new tensor, or (in_place) over grad,
// which is returned. Elementwise, so each element is read before it is overwritten, on the CPU and
// the GPU alike.
Tensor run_activation_backward(ActivationGrad op, const Tensor& grad, const Tensor& saved, const UnaryAttrs& attrs,
                               bool in_place) {
  const char* name = op_name(op);
  check_defined(grad, name);
  check_defined(saved, name);
  check_same_device(name, grad, saved);
  if (grad.sizes() != saved.sizes()) {
    throw std::invalid_argument(std::string(name) + ": gradient shape " + shape_str(grad.sizes()) +
                                " does not match the saved tensor's shape " + shape_str(saved.sizes()));
  }
  if (grad.dtype() != saved.dtype() || !is_floating(grad.dtype())) {
    throw std::invalid_argument(std::string(name) + ": expected gradient and saved tensor of one floating dtype, got " +
                                dtype_name(grad.dtype()) + " and " + dtype_name(saved.dtype()));
  }
  if (in_place && !grad.is_contiguous()) {
    throw std::invalid_argument(std::string(name) + "_: expected a contiguous gradient to overwrite, got strides " +
                                shape_str(grad.strides()));
  }
  Tensor out = in_place ? grad : new_output(grad.sizes(), grad.dtype(), grad.device());
  auto lg = kernel_layout(grad, name), ls = kernel_layout(saved, name), lout = kernel_layout(out, name);
  run_kernel<kernels::ActivationBackward>(out.device(), op, grad.dtype(), grad.data_ptr_raw(), lg, saved.data_ptr_raw(),
                                          ls, out.data_ptr_raw(), lout, attrs);
  return out;
}

}  // namespace

Tensor activation_backward(ActivationGrad op, const Tensor& grad, const Tensor& saved, const UnaryAttrs& attrs) {
  return run_activation_backward(op, grad, saved, attrs, /*in_place=*/false);
}

void activation_backward_(ActivationGrad op, const Tensor& grad, const Tensor& saved, const UnaryAttrs& attrs) {
  run_activation_backward(op, grad, saved, attrs, /*in_place=*/true);
}

}  // namespace colony::raw
