#include "data/dataset.h"

#include <cstring>
#include <stdexcept>
#include <string>

#include "ops/raw_ops.h"

namespace colony::data {

Shape Dataset::example_shape() const {
  if (size() == 0) throw std::invalid_argument("Dataset::example_shape: the dataset is empty");
  return get(0).data.sizes();
}

DType Dataset::example_dtype() const {
  if (size() == 0) throw std::invalid_argument("Dataset::example_dtype: the dataset is empty");
  return get(0).data.dtype();
}

void Dataset::check_index(int64_t index, const char* name) const {
  if (index < 0 || index >= size()) {
    throw std::out_of_range(std::string(name) + ": index " + std::to_string(index) + " out of range for a dataset of " +
                            std::to_string(size()) + " examples");
  }
}

void Dataset::copy_into(int64_t index, Batch& batch, int64_t row, const ExampleContext&) const {
  write_row(get(index), index, batch, row);
}

Example Dataset::fetch(int64_t index, const ExampleContext&) const { return get(index); }

void Dataset::write_row(const Example& ex, int64_t index, Batch& batch, int64_t row, const char* who) {
  Tensor dst = raw::select(batch.data, 0, row);
  if (!ex.data.defined() || ex.data.sizes() != dst.sizes()) {
    throw std::invalid_argument(std::string(who) + ": example " + std::to_string(index) + " has shape " +
                                (ex.data.defined() ? shape_str(ex.data.sizes()) : std::string("(undefined)")) +
                                ", the batch expects " + shape_str(dst.sizes()) +
                                " (every example of a batch must have one shape)");
  }
  if (ex.data.is_cpu() && ex.data.is_contiguous() && ex.data.dtype() == dst.dtype()) {
    std::memcpy(dst.data_ptr_raw(), ex.data.data_ptr_raw(), static_cast<size_t>(dst.nbytes()));
  } else {
    raw::copy_(dst, ex.data);
  }
  write_target(ex.target, index, batch, row, who);
}

void Dataset::write_target(const Tensor& target, int64_t index, Batch& batch, int64_t row, const char* who) {
  if (!target.defined() || target.numel() != 1 || target.is_floating_point()) {
    throw std::invalid_argument(
        std::string(who) + ": example " + std::to_string(index) + " needs a one-element integral target, got " +
        (target.defined() ? std::string(dtype_name(target.dtype())) + " " + shape_str(target.sizes())
                          : std::string("none")));
  }
  batch.target.data_ptr<int64_t>()[row] = target.item<int64_t>();
}

}  // namespace colony::data
