#include "data/image_dataset.h"

#include <cstring>
#include <stdexcept>

#include "ops/raw_ops.h"

namespace colony::data {

InMemoryImageDataset::InMemoryImageDataset(Tensor images, Tensor targets)
    : images_(std::move(images)), targets_(std::move(targets)) {
  if (images_.dim() != 4 || images_.dtype() != kUInt8 || !images_.is_contiguous() || !images_.is_cpu()) {
    throw std::invalid_argument(
        "InMemoryImageDataset: images must be a contiguous CPU uint8 [N, C, H, W] tensor, got " +
        std::string(dtype_name(images_.dtype())) + " " + shape_str(images_.sizes()));
  }
  if (targets_.dim() != 1 || targets_.dtype() != kInt64 || targets_.size(0) != images_.size(0) ||
      !targets_.is_contiguous() || !targets_.is_cpu()) {
    throw std::invalid_argument("InMemoryImageDataset: targets must be a contiguous CPU int64 [" +
                                std::to_string(images_.size(0)) + "] tensor, got " +
                                std::string(dtype_name(targets_.dtype())) + " " + shape_str(targets_.sizes()));
  }
}

Example InMemoryImageDataset::get(int64_t index) const {
  check_index(index, "get");
  return {raw::select(images_, 0, index), raw::select(targets_, 0, index)};
}

Shape InMemoryImageDataset::example_shape() const {
  if (!images_.defined()) throw std::invalid_argument("InMemoryImageDataset: the dataset holds no images");
  return {images_.size(1), images_.size(2), images_.size(3)};
}

void InMemoryImageDataset::copy_into(int64_t index, Batch& batch, int64_t row, const ExampleContext& ctx) const {
  const int64_t image_bytes = images_.size(1) * images_.size(2) * images_.size(3);
  if (batch.data.dtype() != kUInt8 || !batch.data.is_contiguous() || batch.data.dim() < 1 ||
      batch.data.numel() != batch.data.size(0) * image_bytes) {
    Dataset::copy_into(index, batch, row, ctx);
    return;
  }
  check_index(index, "copy_into");
  std::memcpy(static_cast<uint8_t*>(batch.data.data_ptr_raw()) + row * image_bytes,
              static_cast<const uint8_t*>(images_.data_ptr_raw()) + index * image_bytes,
              static_cast<size_t>(image_bytes));
  batch.target.data_ptr<int64_t>()[row] = targets_.data_ptr<int64_t>()[index];
}

}  // namespace colony::data
