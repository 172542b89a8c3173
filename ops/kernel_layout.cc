#include "ops/kernel_layout.h"

#include <stdexcept>
#include <string>

namespace colony {
namespace {

void check_ndim(size_t ndim, const char* op) {
  if (ndim > static_cast<size_t>(kernels::kMaxDims)) {
    throw std::invalid_argument(std::string(op) + ": tensors with more than " + std::to_string(kernels::kMaxDims) +
                                " dimensions are not supported, got " + std::to_string(ndim));
  }
}

}  // namespace

kernels::StridedLayout kernel_layout(const Tensor& t, const char* op) {
  check_ndim(t.sizes().size(), op);
  kernels::StridedLayout l;
  l.ndim = static_cast<int>(t.dim());
  for (int d = 0; d < l.ndim; ++d) {
    l.sizes[d] = t.sizes()[d];
    l.strides[d] = t.strides()[d];
  }
  return l;
}

kernels::StridedLayout broadcast_layout(const Tensor& t, const Shape& shape, const char* op) {
  check_ndim(shape.size(), op);
  const Shape& sizes = t.sizes();
  if (sizes.size() > shape.size()) {
    throw std::invalid_argument(std::string(op) + ": cannot broadcast shape " + shape_str(sizes) + " to " +
                                shape_str(shape));
  }
  kernels::StridedLayout l;
  l.ndim = static_cast<int>(shape.size());
  size_t lead = shape.size() - sizes.size();
  for (size_t d = 0; d < shape.size(); ++d) {
    l.sizes[d] = shape[d];
    if (d < lead) {
      l.strides[d] = 0;
      continue;
    }
    int64_t s = sizes[d - lead];
    if (s != shape[d] && s != 1) {
      throw std::invalid_argument(std::string(op) + ": cannot broadcast shape " + shape_str(sizes) + " to " +
                                  shape_str(shape));
    }
    l.strides[d] = (s == shape[d]) ? t.strides()[d - lead] : 0;
  }
  return l;
}

void check_no_internal_overlap(const Tensor& t, const char* op) {
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.sizes()[d] > 1 && t.strides()[d] == 0) {
      throw std::invalid_argument(std::string(op) +
                                  ": unsupported operation: more than one element of the written-to tensor refers to "
                                  "a single memory location. Please clone() the tensor before performing the "
                                  "operation.");
    }
  }
}

bool partially_overlaps(const Tensor& a, const Tensor& b) {
  if (a.storage() != b.storage()) return false;
  bool identical = a.storage_offset() == b.storage_offset() && a.sizes() == b.sizes() && a.strides() == b.strides() &&
                   a.dtype() == b.dtype();
  return !identical;
}

}  // namespace colony
