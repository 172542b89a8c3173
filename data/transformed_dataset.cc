#include "data/transformed_dataset.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "ops/raw_ops.h"

namespace colony::data {

TransformedDataset::TransformedDataset(std::shared_ptr<const Dataset> base, ToTensor to_tensor,
                                       std::vector<std::shared_ptr<const Transform>> transforms)
    : base_(std::move(base)), to_tensor_(to_tensor), transforms_(std::move(transforms)) {
  if (!base_) throw std::invalid_argument("TransformedDataset: the base dataset is null");
  check_chain();
}

void TransformedDataset::add(ToTensor t) {
  if (!transforms_.empty()) {
    throw std::invalid_argument("transform: ToTensor must come first (it turns the raw images into floats), but " +
                                std::to_string(transforms_.size()) + " transform(s) precede it");
  }
  to_tensor_ = t;
}

void TransformedDataset::check_chain() {
  // An empty dataset has no images to take a shape from; its chain is checked by no one and runs never.
  if (base_->size() == 0) return;
  raw_shape_ = base_->example_shape();
  input_ = to_tensor_.output_shape(raw_shape_);
  ImageShape s = input_;
  scratch_floats_ = s.numel();
  for (const auto& t : transforms_) {
    if (!t) throw std::invalid_argument("transform: a transform is null");
    s = t->output_shape(s);
    scratch_floats_ = std::max(scratch_floats_, s.numel());
  }
  output_ = s;
}

Tensor TransformedDataset::run(int64_t index, const ExampleContext& ctx, float* out) const {
  check_index(index, "TransformedDataset");
  Example raw = base_->get(index);
  if (!raw.data.defined() || raw.data.sizes() != raw_shape_) {
    throw std::invalid_argument("TransformedDataset: example " + std::to_string(index) + " has shape " +
                                (raw.data.defined() ? shape_str(raw.data.sizes()) : std::string("(undefined)")) +
                                ", expected the shape of example 0, " + shape_str(raw_shape_));
  }
  if (transforms_.empty()) {
    to_tensor_.convert(raw.data, out);
    return raw.target;
  }
  // Two scratch images per thread, alternated between transforms; the last one writes `out`.
  thread_local std::vector<float> a, b;
  if (static_cast<int64_t>(a.size()) < scratch_floats_) {
    a.resize(scratch_floats_);
    b.resize(scratch_floats_);
  }
  float* src = a.data();
  float* spare = b.data();
  to_tensor_.convert(raw.data, src);
  ImageShape s = input_;
  for (size_t i = 0; i < transforms_.size(); ++i) {
    ExampleRng rng(ctx.seed, ctx.epoch, index, i);
    float* dst = i + 1 == transforms_.size() ? out : spare;
    transforms_[i]->apply(src, s, dst, rng);
    s = transforms_[i]->output_shape(s);
    std::swap(src, spare);
  }
  return raw.target;
}

Example TransformedDataset::get(int64_t index, const ExampleContext& ctx) const {
  Tensor data = raw::empty(output_.shape(), kFloat32);
  Tensor target = run(index, ctx, data.data_ptr<float>());
  return {data, target};
}

void TransformedDataset::copy_into(int64_t index, Batch& batch, int64_t row, const ExampleContext& ctx) const {
  if (batch.data.dtype() != kFloat32 || !batch.data.is_contiguous() || batch.data.dim() != 4 ||
      ImageShape{batch.data.size(1), batch.data.size(2), batch.data.size(3)} != output_) {
    write_row(get(index, ctx), index, batch, row);
    return;
  }
  Tensor target = run(index, ctx, batch.data.data_ptr<float>() + row * output_.numel());
  write_target(target, index, batch, row);
}

}  // namespace colony::data
