// Matrix products. Operands are passed to the GEMM kernels with their strides (a transposed view is
// a column-major matrix); only layouts BLAS cannot express (e.g. both strides > 1) are copied.
#include <stdexcept>
#include <string>

#include "kernels/common/gemm.h"
#include "ops/cpu_widen.h"
#include "ops/raw_ops.h"
#include "runtime/run_kernel.h"

namespace colony::raw {
namespace {

// Fills m's layout for a rows x cols matrix with strides (s0, s1); false when the strides are not a
// row- or column-major layout with a valid leading dimension.
bool matrix_layout(int64_t rows, int64_t cols, int64_t s0, int64_t s1, kernels::MatrixArg& m) {
  // A dim of size 1 has no meaningful stride; BLAS only needs ld >= the other extent.
  if ((s1 == 1 || cols == 1) && (rows == 1 || s0 >= std::max<int64_t>(1, cols))) {
    m.col_major = false;
    m.ld = rows == 1 ? std::max<int64_t>(1, cols) : s0;
    return true;
  }
  if ((s0 == 1 || rows == 1) && (cols == 1 || s1 >= std::max<int64_t>(1, rows))) {
    m.col_major = true;
    m.ld = cols == 1 ? std::max<int64_t>(1, rows) : s1;
    return true;
  }
  return false;
}

// t is [..., rows, cols] with at most one batch dim. `keep` holds the tensor whose memory m points at
// (t itself, or a contiguous copy).
kernels::MatrixArg matrix_arg(const Tensor& t, Tensor& keep) {
  int64_t nd = t.dim();
  kernels::MatrixArg m;
  keep = t;
  if (!matrix_layout(t.size(nd - 2), t.size(nd - 1), t.stride(nd - 2), t.stride(nd - 1), m)) {
    keep = contiguous(t);
    matrix_layout(keep.size(nd - 2), keep.size(nd - 1), keep.stride(nd - 2), keep.stride(nd - 1), m);
  }
  m.data = keep.data_ptr_raw();
  m.batch_stride = nd == 3 ? keep.stride(0) : 0;
  return m;
}

void check_pair(const Tensor& a, const Tensor& b, const char* op) {
  if (a.device() != b.device()) {
    throw std::invalid_argument(std::string(op) + ": expected both tensors on the same device, got " +
                                a.device().str() + " and " + b.device().str());
  }
  if (a.dtype() != b.dtype()) {
    throw std::invalid_argument(std::string(op) + ": expected both tensors to have the same dtype, got " +
                                dtype_name(a.dtype()) + " and " + dtype_name(b.dtype()));
  }
  if (!is_floating(a.dtype())) {
    throw std::invalid_argument(std::string(op) + ": expected floating point tensors, got " + dtype_name(a.dtype()));
  }
}

[[noreturn]] void cannot_multiply(const Tensor& a, const Tensor& b, int64_t ka, int64_t kb, const char* op) {
  throw std::invalid_argument(std::string(op) + ": shapes " + shape_str(a.sizes()) + " and " + shape_str(b.sizes()) +
                              " cannot be multiplied (" + std::to_string(ka) + " != " + std::to_string(kb) + ")");
}

// out[p] = beta * out[p] + alpha * a[p] @ b[p] for 2-D (batch 1) or 3-D operands; out is contiguous.
void run_gemm(Tensor& out, const Tensor& a, const Tensor& b, double beta, double alpha) {
  int64_t nd = a.dim();
  int64_t batch = nd == 3 ? a.size(0) : 1;
  int64_t m = a.size(nd - 2), k = a.size(nd - 1), n = b.size(nd - 1);
  if (out.numel() == 0) return;
  if (k == 0) {
    // No products to add: out = beta * out (beta == 0 clears, whatever out held).
    if (beta == 0.0) {
      fill_(out, 0.0);
    } else if (beta != 1.0) {
      binary_(BinaryOp::Mul, out, beta);
    }
    return;
  }
  if (detail::gemm_widened_on_cpu(out)) {
    Tensor out32 = beta == 0.0 ? empty(out.sizes(), TensorOptions(kFloat32)) : detail::widen(out);
    run_gemm(out32, detail::widen(a), detail::widen(b), beta, alpha);
    out.copy_(out32);
    return;
  }
  Tensor keep_a, keep_b;
  kernels::MatrixArg ma = matrix_arg(a, keep_a), mb = matrix_arg(b, keep_b);
  int64_t out_bs = nd == 3 ? m * n : 0;
  run_kernel<kernels::Gemm>(out.device(), out.dtype(), batch, m, n, k, ma, mb, out.data_ptr_raw(), n, out_bs, alpha,
                            beta);
}

}  // namespace

Tensor mm(const Tensor& a, const Tensor& b) {
  if (a.dim() != 2 || b.dim() != 2) {
    throw std::invalid_argument("mm: expected 2-D tensors, got " + shape_str(a.sizes()) + " and " +
                                shape_str(b.sizes()));
  }
  check_pair(a, b, "mm");
  if (a.size(1) != b.size(0)) cannot_multiply(a, b, a.size(1), b.size(0), "mm");
  Tensor out = empty({a.size(0), b.size(1)}, TensorOptions(a.dtype()).device(a.device()));
  run_gemm(out, a, b, 0.0, 1.0);
  return out;
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  if (a.dim() != 3 || b.dim() != 3) {
    throw std::invalid_argument("bmm: expected 3-D tensors, got " + shape_str(a.sizes()) + " and " +
                                shape_str(b.sizes()));
  }
  check_pair(a, b, "bmm");
  if (a.size(0) != b.size(0)) {
    throw std::invalid_argument("bmm: batch sizes differ: " + shape_str(a.sizes()) + " and " + shape_str(b.sizes()));
  }
  if (a.size(2) != b.size(1)) cannot_multiply(a, b, a.size(2), b.size(1), "bmm");
  Tensor out = empty({a.size(0), a.size(1), b.size(2)}, TensorOptions(a.dtype()).device(a.device()));
  run_gemm(out, a, b, 0.0, 1.0);
  return out;
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  const int64_t da = a.dim(), db = b.dim();
  if (da == 0 || db == 0) {
    throw std::invalid_argument("matmul: both arguments need at least 1 dimension, got " + shape_str(a.sizes()) +
                                " and " + shape_str(b.sizes()));
  }
  check_pair(a, b, "matmul");
  int64_t ka = a.size(-1), kb = db == 1 ? b.size(0) : b.size(-2);
  if (ka != kb) cannot_multiply(a, b, ka, kb, "matmul");
  if (da == 1 && db == 1) return reshape(mm(reshape(a, {1, ka}), reshape(b, {kb, 1})), {});
  if (da == 2 && db == 1) return reshape(mm(a, reshape(b, {kb, 1})), {a.size(0)});
  if (da == 1 && db == 2) return reshape(mm(reshape(a, {1, ka}), b), {b.size(1)});
  if (da == 2 && db == 2) return mm(a, b);
  if (db <= 2) {
    // [..., n, k] @ [k, m] (or [k]): one GEMM over all rows of a.
    Shape out_shape(a.sizes().begin(), a.sizes().end() - 1);
    Tensor rows = reshape(a, {-1, ka});
    Tensor rhs = db == 1 ? reshape(b, {kb, 1}) : b;
    if (db == 2) out_shape.push_back(b.size(1));
    return reshape(mm(rows, rhs), out_shape);
  }
  // Batched: a is [..., n, k] (a vector becomes [1, k]), b is [..., k, m] (a vector [k, 1]); batch
  // dims broadcast.
  Tensor a3 = da == 1 ? reshape(a, {1, ka}) : a;
  Tensor b3 = db == 1 ? reshape(b, {kb, 1}) : b;
  Shape batch_a(a3.sizes().begin(), a3.sizes().end() - 2), batch_b(b3.sizes().begin(), b3.sizes().end() - 2);
  Shape batch = broadcast_shapes(batch_a, batch_b, "matmul");
  int64_t n = a3.size(-2), m = b3.size(-1), batch_numel = shape_numel(batch);
  Shape a_full = batch, b_full = batch;
  a_full.insert(a_full.end(), {n, ka});
  b_full.insert(b_full.end(), {kb, m});
  Tensor lhs = reshape(expand(a3, a_full), {batch_numel, n, ka});
  Tensor rhs = reshape(expand(b3, b_full), {batch_numel, kb, m});
  Shape out_shape = batch;
  if (da > 1) out_shape.push_back(n);
  if (db > 1) out_shape.push_back(m);
  return reshape(bmm(lhs, rhs), out_shape);
}

void addmm_(Tensor& out, const Tensor& a, const Tensor& b, double beta, double alpha) {
  if (a.dim() != 2 || b.dim() != 2) {
    throw std::invalid_argument("addmm_: expected 2-D tensors, got " + shape_str(a.sizes()) + " and " +
                                shape_str(b.sizes()));
  }
  check_pair(a, b, "addmm_");
  if (a.size(1) != b.size(0)) cannot_multiply(a, b, a.size(1), b.size(0), "addmm_");
  Shape expected{a.size(0), b.size(1)};
  if (out.sizes() != expected) {
    throw std::invalid_argument("addmm_: out has shape " + shape_str(out.sizes()) + ", expected " +
                                shape_str(expected));
  }
  if (out.dtype() != a.dtype() || out.device() != a.device()) {
    throw std::invalid_argument(std::string("addmm_: out is ") + dtype_name(out.dtype()) + " on " +
                                out.device().str() + ", expected " + dtype_name(a.dtype()) + " on " +
                                a.device().str());
  }
  if (!out.is_contiguous()) throw std::invalid_argument("addmm_: out must be contiguous");
  // GEMM reads its operands while writing out: an operand sharing out's memory is read from a copy.
  Tensor lhs = a.storage() == out.storage() ? clone(a) : a;
  Tensor rhs = b.storage() == out.storage() ? clone(b) : b;
  run_gemm(out, lhs, rhs, beta, alpha);
  out.storage()->bump_version();
}

Tensor addmm(const Tensor& bias, const Tensor& a, const Tensor& b) {
  if (a.dim() != 2 || b.dim() != 2) {
    throw std::invalid_argument("addmm: expected 2-D matrices, got " + shape_str(a.sizes()) + " and " +
                                shape_str(b.sizes()));
  }
  check_pair(a, b, "addmm");
  if (a.size(1) != b.size(0)) cannot_multiply(a, b, a.size(1), b.size(0), "addmm");
  if (bias.dim() != 1 || bias.size(0) != b.size(1)) {
    throw std::invalid_argument("addmm: expected a 1-D bias of the product's " + std::to_string(b.size(1)) +
                                " columns, got " + shape_str(bias.sizes()));
  }
  if (bias.dtype() != a.dtype() || bias.device() != a.device()) {
    throw std::invalid_argument(std::string("addmm: bias is ") + dtype_name(bias.dtype()) + " on " +
                                bias.device().str() + ", expected " + dtype_name(a.dtype()) + " on " +
                                a.device().str() + " as the matrices");
  }
  Tensor out = empty({a.size(0), b.size(1)}, TensorOptions(a.dtype()).device(a.device()));
  if (out.numel() == 0) return out;
  Tensor keep_a, keep_b;
  const Tensor bias_c = contiguous(bias);
  if (a.device().is_cpu() && a.dtype() != kFloat32 && a.dtype() != kFloat64) {
    // 16-bit: the bias goes into the product's float32 sums, out = round(a b + bias), rounded once
    // as PyTorch's CPU linear gives it; adding it to the rounded product rounded twice (a = b = 1 +
    // 2⁻⁷, bias = 2⁻⁸: 1.015625 against PyTorch's 1.0234375). A native bfloat16 product adds the
    // row in its output pass; the others read it from C's rows with beta = 1.
    if (a.dtype() == kBFloat16 && !detail::gemm_widened_on_cpu(out)) {
      kernels::MatrixArg ma = matrix_arg(a, keep_a), mb = matrix_arg(b, keep_b);
      kernels::cpu::gemm_bf16_bias(a.size(0), b.size(1), a.size(1), ma, mb, bias_c.data_ptr<BFloat16>(),
                                   out.data_ptr<BFloat16>(), b.size(1));
      return out;
    }
    copy_(out, expand(bias, out.sizes()));
    run_gemm(out, a, b, /*beta=*/1.0, /*alpha=*/1.0);
    return out;
  }
  kernels::MatrixArg ma = matrix_arg(a, keep_a), mb = matrix_arg(b, keep_b);
  run_kernel<kernels::GemmBias>(out.device(), out.dtype(), a.size(0), b.size(1), a.size(1), ma, mb,
                                bias_c.data_ptr_raw(), out.data_ptr_raw(), b.size(1));
  return out;
}

}  // namespace colony::raw
