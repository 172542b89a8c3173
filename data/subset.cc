#include "data/subset.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

#include "data/sampler.h"

namespace colony::data {

Subset::Subset(std::shared_ptr<const Dataset> dataset, std::vector<int64_t> indices)
    : dataset_(std::move(dataset)), indices_(std::move(indices)) {
  if (!dataset_) throw std::invalid_argument("Subset: the dataset is null");
  const int64_t n = dataset_->size();
  for (size_t i = 0; i < indices_.size(); ++i) {
    if (indices_[i] < 0 || indices_[i] >= n) {
      throw std::out_of_range("Subset: index " + std::to_string(indices_[i]) + " (position " + std::to_string(i) +
                              ") out of range for a dataset of " + std::to_string(n) + " examples");
    }
  }
}

Example Subset::get(int64_t index) const {
  check_index(index, "Subset");
  return dataset_->get(indices_[index]);
}

void Subset::copy_into(int64_t index, Batch& batch, int64_t row, const ExampleContext& ctx) const {
  check_index(index, "Subset");
  dataset_->copy_into(indices_[index], batch, row, ctx);
}

Example Subset::fetch(int64_t index, const ExampleContext& ctx) const {
  check_index(index, "Subset");
  return dataset_->fetch(indices_[index], ctx);
}

ConcatDataset::ConcatDataset(std::vector<std::shared_ptr<const Dataset>> datasets) : datasets_(std::move(datasets)) {
  if (datasets_.empty()) {
    throw std::invalid_argument("ConcatDataset: datasets should not be an empty iterable (needs at least one dataset)");
  }
  offsets_.push_back(0);
  for (size_t i = 0; i < datasets_.size(); ++i) {
    if (!datasets_[i]) throw std::invalid_argument("ConcatDataset: dataset " + std::to_string(i) + " is null");
    if (i > 0 && datasets_[i]->size() > 0 && datasets_[0]->size() > 0 &&
        (datasets_[i]->example_shape() != datasets_[0]->example_shape() ||
         datasets_[i]->example_dtype() != datasets_[0]->example_dtype())) {
      throw std::invalid_argument("ConcatDataset: dataset " + std::to_string(i) + " has examples " +
                                  shape_str(datasets_[i]->example_shape()) + " " +
                                  dtype_name(datasets_[i]->example_dtype()) + ", dataset 0 " +
                                  shape_str(datasets_[0]->example_shape()) + " " +
                                  dtype_name(datasets_[0]->example_dtype()) +
                                  "; a batch needs one shape and dtype");
    }
    offsets_.push_back(offsets_.back() + datasets_[i]->size());
  }
}

std::pair<const Dataset*, int64_t> ConcatDataset::locate(int64_t index) const {
  if (index < 0) {
    if (-index > size()) {
      throw std::invalid_argument("ConcatDataset: absolute value of index should not exceed dataset length (index " +
                                  std::to_string(index) + ", " + std::to_string(size()) + " examples)");
    }
    index += size();
  }
  check_index(index, "ConcatDataset");
  // The last offset <= index whose dataset is not empty: upper_bound skips empty datasets' offsets.
  const size_t i = std::upper_bound(offsets_.begin(), offsets_.end(), index) - offsets_.begin() - 1;
  return {datasets_[i].get(), index - offsets_[i]};
}

Example ConcatDataset::get(int64_t index) const {
  auto [dataset, local] = locate(index);
  return dataset->get(local);
}

void ConcatDataset::copy_into(int64_t index, Batch& batch, int64_t row, const ExampleContext& ctx) const {
  auto [dataset, local] = locate(index);
  dataset->copy_into(local, batch, row, ctx);
}

Example ConcatDataset::fetch(int64_t index, const ExampleContext& ctx) const {
  auto [dataset, local] = locate(index);
  return dataset->fetch(local, ctx);
}

std::vector<Subset> random_split(std::shared_ptr<const Dataset> dataset, const std::vector<double>& lengths,
                                 uint64_t seed) {
  if (!dataset) throw std::invalid_argument("random_split: the dataset is null");
  if (lengths.empty()) throw std::invalid_argument("random_split: needs at least one length");
  const int64_t n = dataset->size();
  const double total = std::accumulate(lengths.begin(), lengths.end(), 0.0);
  std::vector<int64_t> counts;
  // torch's rule: fractions when they add up to 1 (and not more), counts otherwise.
  if (std::abs(total - 1.0) <= 1e-9 && total <= 1.0) {
    for (size_t i = 0; i < lengths.size(); ++i) {
      if (!(lengths[i] >= 0 && lengths[i] <= 1)) {
        throw std::invalid_argument("random_split: fraction " + std::to_string(i) + " is " +
                                    std::to_string(lengths[i]) + ", expected a value in [0, 1]");
      }
      counts.push_back(static_cast<int64_t>(std::floor(static_cast<double>(n) * lengths[i])));
    }
    const int64_t remainder = n - std::accumulate(counts.begin(), counts.end(), int64_t{0});
    for (int64_t i = 0; i < remainder; ++i) ++counts[static_cast<size_t>(i) % counts.size()];
  } else {
    for (size_t i = 0; i < lengths.size(); ++i) {
      if (!(lengths[i] >= 0) || lengths[i] != std::floor(lengths[i])) {
        throw std::invalid_argument("random_split: length " + std::to_string(i) + " is " + std::to_string(lengths[i]) +
                                    ", expected a non-negative count (or fractions that add up to 1)");
      }
      counts.push_back(static_cast<int64_t>(lengths[i]));
    }
    if (std::accumulate(counts.begin(), counts.end(), int64_t{0}) != n) {
      throw std::invalid_argument("random_split: the lengths add up to " + std::to_string(total) +
                                  ", expected the dataset's size " + std::to_string(n) +
                                  " (or fractions that add up to 1)");
    }
  }
  const std::vector<int64_t> order = seeded_permutation(n, seed);
  std::vector<Subset> out;
  int64_t start = 0;
  for (int64_t count : counts) {
    out.emplace_back(dataset, std::vector<int64_t>(order.begin() + start, order.begin() + start + count));
    start += count;
  }
  return out;
}

}  // namespace colony::data
