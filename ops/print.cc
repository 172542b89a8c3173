// operator<< in PyTorch's layout: tensor([[1.0000, 2.0000], ...], dtype=float64, device=cuda:0).
// Large tensors are summarized with "..." (first and last 3 entries per dim), as torch does past
// 1000 elements.
#include <cmath>
#include <iomanip>
#include <sstream>

#include "ops/raw_ops.h"

namespace colony {
namespace {

constexpr int64_t kSummarizeThreshold = 1000;
constexpr int64_t kEdgeItems = 3;

void print_value(std::ostream& os, double v, DType t) {
  if (t == DType::Bool) {
    os << (v != 0 ? "True" : "False");
  } else if (!is_floating(t)) {
    os << static_cast<int64_t>(v);
  } else if (std::isnan(v)) {
    os << "nan";
  } else if (std::isinf(v)) {
    os << (v > 0 ? "inf" : "-inf");
  } else {
    os << std::fixed << std::setprecision(4) << v;
  }
}

void print_rec(std::ostream& os, const double* data, const Shape& sizes, const Shape& strides, size_t d, DType t,
               bool summarize, int indent) {
  if (d == sizes.size()) {
    print_value(os, *data, t);
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
    print_rec(os, data + i * strides[d], sizes, strides, d + 1, t, summarize, indent);
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
  Tensor c = raw::contiguous(raw::to(t, kCPU, kFloat64));
  std::ostringstream body;
  body << "tensor(";
  if (t.numel() == 0) {
    body << "[]";
  } else {
    print_rec(body, c.data_ptr<double>(), c.sizes(), c.strides(), 0, t.dtype(), t.numel() > kSummarizeThreshold, 7);
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
