// operator<< in PyTorch's layout: tensor([[1.0000, 2.0000], ...], dtype=float64, device=cuda:0).
// Large tensors are summarized with "..." (first and last 3 entries per dim), as torch does past
// 1000 elements. Floating values print with 4 decimals, or in scientific notation (1.0000e-08)
// where torch's formatter switches to it: a finite nonzero magnitude below 1e-4 or above 1e8, or
// largest over smallest beyond 1000 (otherwise a gradient of 1e-8 would print as 0.0000). Integers
// print from their int64 values, exact beyond 2^53.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "ops/raw_ops.h"

namespace colony {
namespace {

constexpr int64_t kSummarizeThreshold = 1000;
constexpr int64_t kEdgeItems = 3;

template <typename T>
void print_value(std::ostream& os, T v, DType t, bool sci) {
  if (t == DType::Bool) {
    os << (v != 0 ? "True" : "False");
  } else if (!is_floating(t)) {
    os << static_cast<int64_t>(v);
  } else if (std::isnan(static_cast<double>(v))) {
    os << "nan";
  } else if (std::isinf(static_cast<double>(v))) {
    os << (v > 0 ? "inf" : "-inf");
  } else if (sci) {
    os << std::scientific << std::setprecision(4) << static_cast<double>(v);
  } else {
    os << std::fixed << std::setprecision(4) << static_cast<double>(v);
  }
}

// torch's _Formatter choice for floating values: scientific when the finite nonzero magnitudes
// span more than 1000x, exceed 1e8, or (values not all integral) fall below 1e-4.
bool wants_scientific(const Tensor& c) {
  const double* p = c.data_ptr<double>();
  double lo = 0, hi = 0;
  bool any = false, integral = true;
  for (int64_t i = 0; i < c.numel(); ++i) {
    const double a = std::fabs(p[i]);
    if (!std::isfinite(a) || a == 0) continue;
    lo = any ? std::min(lo, a) : a;
    hi = any ? std::max(hi, a) : a;
    any = true;
    integral = integral && std::ceil(a) == a;
  }
  if (!any) return false;
  return hi / lo > 1000.0 || hi > 1e8 || (!integral && lo < 1e-4);
}

template <typename T>
void print_rec(std::ostream& os, const T* data, const Shape& sizes, const Shape& strides, size_t d, DType t,
               bool summarize, int indent, bool sci) {
  if (d == sizes.size()) {
    print_value(os, *data, t, sci);
    return;
  }
  os << "[";
  int64_t n = sizes[d];
  for (int64_t i = 0; i < n; ++i) {
    if (summarize && n > 2 * kEdgeItems && i == kEdgeItems) {
      os << "...";
      i = n - kEdgeItems - 1;
      os << (d + 1 == sizes.size() ? ", " : ",\n" + std::string(indent + d + 1, ' '));
      continue;
    }
    print_rec(os, data + i * strides[d], sizes, strides, d + 1, t, summarize, indent, sci);
    if (i + 1 < n) {
      if (d + 1 == sizes.size()) {
        os << ", ";
      } else {
        os << "," << std::string(sizes.size() - d - 1, '\n') << std::string(indent + d + 1, ' ');
      }
    }
  }
  os << "]";
}

}  // namespace

std::string Tensor::str() const {
  std::ostringstream os;
  os << *this;
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "[ undefined Tensor ]";
  std::ostringstream body;
  body << "tensor(";
  const bool summarize = t.numel() > kSummarizeThreshold;
  if (t.numel() == 0) {
    body << "[]";
  } else if (is_floating(t.dtype())) {
    Tensor c = raw::contiguous(raw::to(t, kCPU, kFloat64));
    print_rec(body, c.data_ptr<double>(), c.sizes(), c.strides(), 0, t.dtype(), summarize, 7, wants_scientific(c));
  } else {
    Tensor c = raw::contiguous(raw::to(t, kCPU, kInt64));
    print_rec(body, c.data_ptr<int64_t>(), c.sizes(), c.strides(), 0, t.dtype(), summarize, 7, false);
  }
  if (t.numel() == 0 && t.dim() > 1) body << ", size=" << shape_str(t.sizes());
  if (t.dtype() != DType::Float32 && t.dtype() != DType::Int64 && t.dtype() != DType::Bool) {
    body << ", dtype=" << dtype_name(t.dtype());
  }
  if (t.is_cuda()) body << ", device=" << t.device();
  if (t.requires_grad()) body << (t.grad_fn() ? ", grad_fn" : ", requires_grad=True");
  body << ")";
  return os << body.str();
}

}  // namespace colony
