// Images held in memory as one uint8 [N, C, H, W] tensor with int64 [N] targets: the storage behind
// CIFAR10, MNIST and FashionMNIST. Copies share the tensors, so a dataset is cheap to copy.
#pragma once

#include "data/dataset.h"

namespace colony::data {

class InMemoryImageDataset : public Dataset {
 public:
  InMemoryImageDataset() = default;
  // images: uint8 [N, C, H, W] contiguous; targets: int64 [N].
  InMemoryImageDataset(Tensor images, Tensor targets);

  int64_t size() const override { return images_.defined() ? images_.size(0) : 0; }
  // data: a uint8 [C, H, W] view of the image (no copy); target: an int64 scalar view.
  Example get(int64_t index) const override;
  Shape example_shape() const override;
  DType example_dtype() const override { return kUInt8; }
  void copy_into(int64_t index, Batch& batch, int64_t row, const ExampleContext& ctx) const override;

  const Tensor& images() const { return images_; }
  const Tensor& targets() const { return targets_; }

 protected:
  Tensor images_;
  Tensor targets_;
};

}  // namespace colony::data
