// searchsorted: the checks and type promotion of torch.searchsorted, then one binary search per
// value (kernels/common/search.h) over its row of the sequence, made contiguous in the dtype both
// promote to.
#include <climits>
#include <stdexcept>
#include <string>

#include "kernels/common/search.h"
#include "ops/op_checks.h"
#include "ops/raw_ops.h"
#include "runtime/run_kernel.h"

namespace colony::raw {
namespace {

const char* const kOp = "searchsorted";

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument(std::string(kOp) + ": " + what); }

void check_same_device(const Tensor& seq, const Tensor& other, const char* what) {
  if (other.device() != seq.device()) {
    fail("sorted_sequence is on " + seq.device().str() + " but " + what + " on " + other.device().str());
  }
}

// The sequence's leading dims must be the values' (an N-D sequence searches row by row).
void check_shapes(const Tensor& seq, const Tensor& values) {
  if (seq.dim() == 0) fail("expected a 1-D or N-D sorted sequence, got 0-D");
  if (seq.dim() == 1) return;
  Shape lead_s(seq.sizes().begin(), seq.sizes().end() - 1);
  Shape lead_v(values.sizes().begin(), values.sizes().end() - (values.dim() > 0 ? 1 : 0));
  if (values.dim() != seq.dim() || lead_s != lead_v) {
    fail("expected values with the sorted sequence's leading dims " + shape_str(lead_s) + " (boundaries " +
         shape_str(seq.sizes()) + "), got " + shape_str(values.sizes()));
  }
}

// torch's sorter: int64, the sequence's shape, each entry a position in its row (checked on the host,
// a synchronization on CUDA, as torch's).
void check_sorter(const Tensor& seq, const Tensor& sorter) {
  check_same_device(seq, sorter, "sorter");
  if (sorter.dtype() != kInt64) fail(std::string("expected an int64 sorter, got ") + dtype_name(sorter.dtype()));
  if (sorter.sizes() != seq.sizes()) {
    fail("expected a sorter of the sorted sequence's shape " + shape_str(seq.sizes()) + ", got " +
         shape_str(sorter.sizes()));
  }
  if (sorter.numel() == 0) return;
  const int64_t lo = amin(sorter).item<int64_t>(), hi = amax(sorter).item<int64_t>();
  const int64_t n = seq.sizes().back();
  if (lo < 0 || hi >= n) {
    fail("sorter index out of range: expected entries in [0, " + std::to_string(n) + "), got " +
         std::to_string(lo < 0 ? lo : hi));
  }
}

}  // namespace

Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& values, bool out_int32, bool right,
                    const Tensor& sorter) {
  check_defined(sorted_sequence, kOp, "sorted sequence");
  check_defined(values, kOp, "values tensor");
  const Tensor& seq = sorted_sequence;
  check_same_device(seq, values, "values");
  check_shapes(seq, values);
  if (sorter.defined()) check_sorter(seq, sorter);
  const DType common = result_type(seq, values);
  if (common == kBool) fail("expected numbers, got bool sequence and values (torch has no bool kernel either)");
  const int64_t n = seq.sizes().back();
  if (out_int32 && n >= INT_MAX) {
    fail("the sorted sequence's last dim (" + std::to_string(n) + ") is too long for out_int32");
  }
  Tensor out = empty(values.sizes(), TensorOptions(out_int32 ? kInt32 : kInt64).device(values.device()));
  if (values.numel() == 0) return out;
  // With n == 0 every position is 0 (the kernel's bisection never starts).
  Tensor s = contiguous(to(seq, seq.device(), common));
  Tensor v = contiguous(to(values, values.device(), common));
  Tensor order = sorter.defined() ? contiguous(sorter) : Tensor();
  const int64_t per_row = seq.dim() == 1 ? v.numel() : v.sizes().back();
  const int64_t rows = seq.dim() == 1 ? 1 : v.numel() / per_row;
  run_kernel<kernels::SearchSorted>(seq.device(), common, s.data_ptr_raw(),
                                    order.defined() ? order.data_ptr<int64_t>() : nullptr, v.data_ptr_raw(),
                                    out.data_ptr_raw(), out_int32, rows, n, per_row, right);
  return out;
}

}  // namespace colony::raw
