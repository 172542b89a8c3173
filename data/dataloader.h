// DataLoader: batches of a dataset in the order a sampler gives, assembled by worker threads into
// preallocated (optionally pinned) buffers.
//
//   data::DataLoader loader(train, sampler, data::DataLoaderOptions(32).workers(4).pin_memory(true));
//   for (auto& batch : loader) { ... batch.data, batch.target ... }
//
// - Order: batch k holds sampler indices [k*B, (k+1)*B) whatever the number of workers; with 0
//   workers the calling thread loads each batch when the loop asks for it.
// - Workers: each builds whole batches (Dataset::copy_into row by row) into one of
//   workers * prefetch buffers, so up to that many batches are loaded ahead of the loop.
// - Buffers are reused: the Batch a loop iteration sees stays valid until the loop moves on. A batch
//   (or a view of it) the caller still holds then is left to the caller and the loader allocates a
//   fresh buffer instead, so keeping batches is safe, only slower. Page-locked batches (pin_memory(true)
//   where a GPU exists) are never refilled in place: each returns to the pinned caching allocator,
//   which reuses it only after the non_blocking copies that read it have finished, so
//   `batch.data.to(device, true)` needs no synchronization.
// - Errors: an exception thrown while loading a batch is rethrown from the loop (begin() or ++) as
//   a DataLoaderError with the original message and the failing dataset index, nesting the original
//   (std::rethrow_if_nested).
// - Stopping early (break, an exception, destroying the iterator) stops the workers and joins them.
// - Random transforms see ExampleContext{options.seed, sampler.epoch()} (the epoch of the pass).
//
// The dataset is copied into the loader (datasets are cheap handles to shared data; pass a
// shared_ptr to share one); the sampler is referenced and must outlive the loader, so that
// set_epoch on it takes effect.
#pragma once

#include <cstdint>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <type_traits>

#include "base/arg.h"
#include "data/dataset.h"
#include "data/sampler.h"

namespace colony::data {

struct DataLoaderOptions {
  explicit DataLoaderOptions(int64_t batch_size = 1) : batch_size_(batch_size) {}
  COLONY_ARG(int64_t, batch_size);
  // Loader threads; 0 loads in the calling thread.
  COLONY_ARG(int, workers) = 0;
  // Batches each worker may load ahead (PyTorch's prefetch_factor).
  COLONY_ARG(int, prefetch) = 2;
  COLONY_ARG(bool, pin_memory) = false;
  COLONY_ARG(bool, drop_last) = false;
  // Without a sampler of the caller's: RandomSampler(seed) when true, else SequentialSampler.
  COLONY_ARG(bool, shuffle) = false;
  // Seeds random transforms (with the epoch and index) and the shuffle of an owned RandomSampler.
  COLONY_ARG(uint64_t, seed) = 0;
};

class DataLoaderError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {
class Pass;
struct BufferCache;
}  // namespace detail

class DataLoader {
 public:
  template <typename D, typename = std::enable_if_t<std::is_base_of_v<Dataset, std::decay_t<D>>>>
  DataLoader(D dataset, Sampler& sampler, DataLoaderOptions options)
      : DataLoader(std::shared_ptr<const Dataset>(std::make_shared<const std::decay_t<D>>(std::move(dataset))), sampler,
                   options) {}
  template <typename D, typename = std::enable_if_t<std::is_base_of_v<Dataset, std::decay_t<D>>>>
  DataLoader(D dataset, DataLoaderOptions options)
      : DataLoader(std::shared_ptr<const Dataset>(std::make_shared<const std::decay_t<D>>(std::move(dataset))),
                   options) {}
  DataLoader(std::shared_ptr<const Dataset> dataset, Sampler& sampler, DataLoaderOptions options);
  DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options);
  ~DataLoader();
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Batch;
    using difference_type = std::ptrdiff_t;
    using pointer = Batch*;
    using reference = Batch&;

    Iterator() = default;  // the end
    Batch& operator*() const;
    Batch* operator->() const { return &**this; }
    Iterator& operator++();
    bool operator==(const Iterator& other) const;
    bool operator!=(const Iterator& other) const { return !(*this == other); }

   private:
    friend class DataLoader;
    explicit Iterator(std::shared_ptr<detail::Pass> pass) : pass_(std::move(pass)) {}
    bool at_end() const;
    std::shared_ptr<detail::Pass> pass_;
  };

  // Starts a pass over the sampler's order for its current epoch (loading the first batch).
  Iterator begin();
  Iterator end() { return Iterator(); }

  // Batches per pass: ceil(n / batch_size), or floor with drop_last, n = sampler.size().
  int64_t size() const;
  const DataLoaderOptions& options() const { return options_; }
  const Dataset& dataset() const { return *dataset_; }
  Sampler& sampler() { return *sampler_; }

 private:
  std::shared_ptr<const Dataset> dataset_;
  std::unique_ptr<Sampler> owned_sampler_;
  Sampler* sampler_;
  DataLoaderOptions options_;
  std::shared_ptr<detail::BufferCache> buffers_;
};

}  // namespace colony::data
