// searchsorted and bucketize: positions with no gradient (as torch's), from raw::searchsorted's
// binary search; here only the side / right arguments and scalar values are resolved.
#include <optional>
#include <stdexcept>
#include <string>

#include "autograd/ops.h"
#include "ops/raw_ops.h"

namespace colony {
namespace {

// right, or side "right"; side and right may not disagree.
bool searches_right(bool right, const std::optional<std::string>& side) {
  if (side && *side != "left" && *side != "right") {
    throw std::invalid_argument("searchsorted: expected side 'left' or 'right', got '" + *side + "'");
  }
  if (side && right && *side == "left") {
    throw std::invalid_argument("searchsorted: side and right can't be set to opposites, got side 'left' and "
                                "right true");
  }
  return right || (side && *side == "right");
}

// A scalar as torch wraps one: a 0-D tensor of the dtype the scalar promotes with the sequence to.
Tensor wrapped_scalar(double value, const Tensor& like, const char* op) {
  if (!like.defined()) throw std::invalid_argument(std::string(op) + ": expected a defined sorted sequence");
  return raw::scalar_tensor(value, TensorOptions(raw::scalar_result_type(like.dtype(), value)).device(like.device()));
}

void check_1d_boundaries(const Tensor& boundaries) {
  if (boundaries.defined() && boundaries.dim() != 1) {
    throw std::invalid_argument("bucketize: expected 1-D boundaries, got " + shape_str(boundaries.sizes()));
  }
}

}  // namespace

Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& values, bool out_int32, bool right,
                    const std::optional<std::string>& side, const Tensor& sorter) {
  return raw::searchsorted(sorted_sequence, values, out_int32, searches_right(right, side), sorter);
}

Tensor searchsorted(const Tensor& sorted_sequence, double value, bool out_int32, bool right,
                    const std::optional<std::string>& side, const Tensor& sorter) {
  return searchsorted(sorted_sequence, wrapped_scalar(value, sorted_sequence, "searchsorted"), out_int32, right, side,
                      sorter);
}

Tensor bucketize(const Tensor& values, const Tensor& boundaries, bool out_int32, bool right) {
  check_1d_boundaries(boundaries);
  return raw::searchsorted(boundaries, values, out_int32, right);
}

Tensor bucketize(double value, const Tensor& boundaries, bool out_int32, bool right) {
  check_1d_boundaries(boundaries);
  return raw::searchsorted(boundaries, wrapped_scalar(value, boundaries, "bucketize"), out_int32, right);
}

}  // namespace colony
