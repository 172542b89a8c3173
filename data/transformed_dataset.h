// dataset.transform(t1, t2, ...): a dataset whose examples are the base dataset's images passed
// through ToTensor (implicit unless given first) and then the transforms, as float32 [C, H, W].
// Chainable: ds.transform(a).transform(b) == ds.transform(a, b).
#pragma once

#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "data/dataset.h"
#include "data/transforms.h"

namespace colony::data {

class TransformedDataset : public Dataset {
 public:
  TransformedDataset(std::shared_ptr<const Dataset> base, ToTensor to_tensor,
                     std::vector<std::shared_ptr<const Transform>> transforms);

  int64_t size() const override { return base_->size(); }
  // The example as the loader would produce it in epoch 0 with seed 0.
  Example get(int64_t index) const override { return get(index, ExampleContext{}); }
  Example get(int64_t index, const ExampleContext& ctx) const;
  Example fetch(int64_t index, const ExampleContext& ctx) const override { return get(index, ctx); }
  Shape example_shape() const override { return output_.shape(); }
  DType example_dtype() const override { return kFloat32; }
  void copy_into(int64_t index, Batch& batch, int64_t row, const ExampleContext& ctx) const override;

  template <typename... T>
  TransformedDataset transform(T... t) const {
    TransformedDataset out = *this;
    (out.add(std::move(t)), ...);
    out.check_chain();
    return out;
  }

  const Dataset& base() const { return *base_; }
  const std::vector<std::shared_ptr<const Transform>>& transforms() const { return transforms_; }

 private:
  void add(ToTensor t);
  void add(std::shared_ptr<const Transform> t) { transforms_.push_back(std::move(t)); }
  template <typename T, typename = std::enable_if_t<std::is_base_of_v<Transform, T>>>
  void add(T t) {
    transforms_.push_back(std::make_shared<T>(std::move(t)));
  }
  // Computes the output shape, so a chain that does not fit the images fails when it is built.
  void check_chain();
  // Writes the transformed example to `out`; returns its target.
  Tensor run(int64_t index, const ExampleContext& ctx, float* out) const;

  std::shared_ptr<const Dataset> base_;
  ToTensor to_tensor_;
  std::vector<std::shared_ptr<const Transform>> transforms_;
  Shape raw_shape_;      // the base dataset's example shape
  ImageShape input_{};   // after ToTensor
  ImageShape output_{};  // after the last transform
  int64_t scratch_floats_ = 0;
};

// Base class of the concrete datasets (CIFAR10, MNIST, ...) that gives them .transform(): the
// dataset is copied (cheaply: their data lives in shared tensors) into the new dataset.
template <typename Self, typename Base = Dataset>
class Transformable : public Base {
 public:
  using Base::Base;
  template <typename... T>
  TransformedDataset transform(T... t) const {
    TransformedDataset plain(std::make_shared<Self>(static_cast<const Self&>(*this)), ToTensor(), {});
    return plain.transform(std::move(t)...);
  }
};

}  // namespace colony::data
