// allclose and equal: whole-tensor comparisons that answer on the host.
#include <cmath>
#include <stdexcept>
#include <string>

#include "ops/raw_ops.h"

namespace colony::raw {
namespace {

void check_pair(const Tensor& a, const Tensor& b, const char* op) {
  if (!a.defined() || !b.defined()) throw std::invalid_argument(std::string(op) + ": expected defined tensors");
  if (a.device() != b.device()) {
    throw std::invalid_argument(std::string(op) + ": expected all tensors on the same device, got " +
                                a.device().str() + " and " + b.device().str());
  }
}

}  // namespace

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  check_pair(a, b, "allclose");
  if (a.dtype() != b.dtype()) {
    throw std::invalid_argument(std::string("allclose: expected both tensors to have the same dtype, got ") +
                                dtype_name(a.dtype()) + " and " + dtype_name(b.dtype()));
  }
  if (a.sizes() != b.sizes()) return false;
  // float64 holds every value of the other dtypes exactly (int64 beyond 2^53 aside).
  Tensor x = contiguous(to(a, kCPU, kFloat64)), y = contiguous(to(b, kCPU, kFloat64));
  const double* px = x.data_ptr<double>();
  const double* py = y.data_ptr<double>();
  for (int64_t i = 0, n = x.numel(); i < n; ++i) {
    double u = px[i], v = py[i];
    if (u == v) continue;  // includes equal infinities
    if (std::isnan(u) || std::isnan(v)) {
      if (equal_nan && std::isnan(u) && std::isnan(v)) continue;
      return false;
    }
    if (std::isinf(u) || std::isinf(v)) return false;
    if (!(std::abs(u - v) <= atol + rtol * std::abs(v))) return false;
  }
  return true;
}

bool equal(const Tensor& a, const Tensor& b) {
  check_pair(a, b, "equal");
  if (a.sizes() != b.sizes()) return false;
  if (a.numel() == 0) return true;
  // Compared in the promoted dtype on the tensors' device; NaN is unequal to everything.
  Tensor differ = contiguous(to(binary(BinaryOp::Ne, a, b), kCPU, kBool));
  const bool* p = differ.data_ptr<bool>();
  for (int64_t i = 0, n = differ.numel(); i < n; ++i)
    if (p[i]) return false;
  return true;
}

}  // namespace colony::raw
