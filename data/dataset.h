// Dataset: random access to examples, and the collation path the DataLoader uses to write an example
// straight into one row of a preallocated (optionally pinned) batch buffer.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "tensor/tensor.h"

namespace colony::data {

enum class Split { kTrain, kTest };

// One example: `data` (any shape and dtype; the same for every example of a dataset, unless the
// DataLoader is given a collate_fn that batches examples of different shapes) and its class.
struct Example {
  Tensor data;
  Tensor target;  // one element, an integral class index
};

// A batch: data [B, ...] and int64 targets [B], as the default collation stacks them. A collate_fn
// (DataLoaderOptions) builds its own: any data and target, and `extra` for whatever else it returns
// (the sequence lengths of a padded batch, a mask, ...); the default collation leaves it empty.
struct Batch {
  Tensor data;
  Tensor target;
  std::vector<Tensor> extra;
  // Examples in the batch: target's first dimension (data's when there is no target).
  int64_t size() const {
    if (target.defined()) return target.dim() > 0 ? target.size(0) : 1;
    return data.defined() && data.dim() > 0 ? data.size(0) : 0;
  }
};

// What random transforms draw from: the stream of example `index` is keyed by (seed, epoch, index),
// so it does not depend on which worker thread loads the example, nor on how many there are.
struct ExampleContext {
  uint64_t seed = 0;
  int64_t epoch = 0;
};

// Implementations must be safe to call from several threads at once (get and copy_into are const;
// the DataLoader's workers share one dataset).
class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual int64_t size() const = 0;
  virtual Example get(int64_t index) const = 0;

  // Shape and dtype of one example's data. Defaults read example 0.
  virtual Shape example_shape() const;
  virtual DType example_dtype() const;

  // Writes example `index` into row `row` of batch.data ([B, example_shape()...], contiguous, of
  // example_dtype()) and batch.target (int64 [B]). The default goes through get(); in-memory
  // datasets override it with a plain memcpy.
  virtual void copy_into(int64_t index, Batch& batch, int64_t row, const ExampleContext& ctx) const;

  // Example `index` as a pass with context `ctx` sees it: what the DataLoader hands a collate_fn.
  // get(index) by default; datasets whose examples depend on the pass (random transforms) and
  // those that wrap other datasets override it, as they do copy_into.
  virtual Example fetch(int64_t index, const ExampleContext& ctx) const;

  // The collation of an example already fetched, shared by every dataset and by the DataLoader's
  // iterable-dataset path: its data into batch.data[row] (converting dtype when needed), its target
  // into batch.target[row]. Errors start with `who` and name the example `index`.
  static void write_row(const Example& ex, int64_t index, Batch& batch, int64_t row,
                        const char* who = "Dataset::copy_into");
  static void write_target(const Tensor& target, int64_t index, Batch& batch, int64_t row,
                           const char* who = "Dataset::copy_into");

 protected:
  // Throws "<name>: index I out of range for a dataset of N examples".
  void check_index(int64_t index, const char* name) const;
};

}  // namespace colony::data
