// Datasets made of other datasets (torch.utils.data's Subset, ConcatDataset and random_split):
// a view of some of a dataset's examples, datasets one after another, and a seeded random split
// into subsets (a validation set cut from the training set). They hold the datasets they are made
// of by shared handle, copy no example, and pass copy_into through, so batches are still written
// straight into the DataLoader's buffers and random transforms keep their per-example streams
// (keyed by the underlying dataset's index).
#pragma once

#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "data/dataset.h"

namespace colony::data {

// Examples indices[0], indices[1], ... of `dataset` (any order; repeats allowed; each index must
// lie in the dataset).
class Subset : public Dataset {
 public:
  Subset(std::shared_ptr<const Dataset> dataset, std::vector<int64_t> indices);
  int64_t size() const override { return static_cast<int64_t>(indices_.size()); }
  Example get(int64_t index) const override;
  Shape example_shape() const override { return dataset_->example_shape(); }
  DType example_dtype() const override { return dataset_->example_dtype(); }
  void copy_into(int64_t index, Batch& batch, int64_t row, const ExampleContext& ctx) const override;
  Example fetch(int64_t index, const ExampleContext& ctx) const override;
  const Dataset& dataset() const { return *dataset_; }
  const std::vector<int64_t>& indices() const { return indices_; }

 private:
  std::shared_ptr<const Dataset> dataset_;
  std::vector<int64_t> indices_;
};

// The examples of datasets[0], then datasets[1], ...: their examples must have one shape and
// dtype, as the DataLoader batches them together. As torch's, get accepts a negative index, counted
// from the end (get(-1) is the last example), and refuses one below -size() with torch's message.
class ConcatDataset : public Dataset {
 public:
  explicit ConcatDataset(std::vector<std::shared_ptr<const Dataset>> datasets);
  int64_t size() const override { return offsets_.back(); }
  Example get(int64_t index) const override;
  // torch's cumulative_sizes: the examples in datasets[0..i], for each i.
  std::vector<int64_t> cumulative_sizes() const { return {offsets_.begin() + 1, offsets_.end()}; }
  const std::vector<std::shared_ptr<const Dataset>>& datasets() const { return datasets_; }
  Shape example_shape() const override { return datasets_.front()->example_shape(); }
  DType example_dtype() const override { return datasets_.front()->example_dtype(); }
  void copy_into(int64_t index, Batch& batch, int64_t row, const ExampleContext& ctx) const override;
  Example fetch(int64_t index, const ExampleContext& ctx) const override;

 private:
  // The dataset holding example `index`, and the index there.
  std::pair<const Dataset*, int64_t> locate(int64_t index) const;
  std::vector<std::shared_ptr<const Dataset>> datasets_;
  std::vector<int64_t> offsets_;  // offsets_[i]: examples before datasets_[i]; the last is the total
};

// torch.utils.data.random_split: `lengths` are either counts that add up to the dataset's size, or
// fractions that add up to 1 (each count is then floor(fraction * size), and the remainder goes one
// at a time to the first subsets, as torch distributes it). The examples are a permutation of the
// dataset drawn from `seed` (the same seed, the same split), cut into consecutive pieces.
std::vector<Subset> random_split(std::shared_ptr<const Dataset> dataset, const std::vector<double>& lengths,
                                 uint64_t seed = 0);

// The same for a dataset given by value (moved into a shared handle), as the DataLoader takes one.
template <typename D, typename = std::enable_if_t<std::is_base_of_v<Dataset, std::decay_t<D>>>>
std::vector<Subset> random_split(D&& dataset, const std::vector<double>& lengths, uint64_t seed = 0) {
  return random_split(std::shared_ptr<const Dataset>(std::make_shared<const std::decay_t<D>>(std::forward<D>(dataset))),
                      lengths, seed);
}

}  // namespace colony::data
