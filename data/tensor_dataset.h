// TensorDataset: examples from tensors already in memory, indexed along dim 0 (torch's
// TensorDataset for the (data, target) pair the DataLoader batches). Works with every sampler.
#pragma once

#include "data/dataset.h"

namespace colony::data {

class TensorDataset : public Dataset {
 public:
  // data [N, ...] of any dtype; targets [N] integral class indices (int64, int32, uint8).
  TensorDataset(Tensor data, Tensor targets);
  int64_t size() const override { return data_.size(0); }
  Example get(int64_t index) const override;
  Shape example_shape() const override;
  DType example_dtype() const override { return data_.dtype(); }
  const Tensor& data() const { return data_; }
  const Tensor& targets() const { return targets_; }

 private:
  Tensor data_, targets_;
};

}  // namespace colony::data
