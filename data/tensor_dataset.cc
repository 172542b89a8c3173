#include "data/tensor_dataset.h"

#include <stdexcept>
#include <string>

#include "ops/raw_ops.h"

namespace colony::data {

TensorDataset::TensorDataset(Tensor data, Tensor targets) : data_(std::move(data)), targets_(std::move(targets)) {
  if (!data_.defined() || data_.dim() < 1) {
    throw std::invalid_argument("TensorDataset: data must have a first dimension indexing the examples");
  }
  if (!targets_.defined() || targets_.dim() != 1 || targets_.size(0) != data_.size(0)) {
    throw std::invalid_argument("TensorDataset: targets must be 1-D with one class index per example: data is " +
                                shape_str(data_.sizes()) + ", targets " +
                                (targets_.defined() ? shape_str(targets_.sizes()) : std::string("undefined")));
  }
  if (is_floating(targets_.dtype()) || targets_.dtype() == kBool) {
    throw std::invalid_argument(std::string("TensorDataset: targets must be integral class indices, got ") +
                                dtype_name(targets_.dtype()));
  }
}

Example TensorDataset::get(int64_t index) const {
  check_index(index, "TensorDataset");
  return {raw::select(data_, 0, index), raw::select(targets_, 0, index)};
}

Shape TensorDataset::example_shape() const { return Shape(data_.sizes().begin() + 1, data_.sizes().end()); }

}  // namespace colony::data
