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
// - Workers: get_worker_info() (worker_info.h) tells a worker thread which it is, and
//   worker_init_fn(id), if set, runs first in each worker thread, every pass (PyTorch's).
// - Iterable-style datasets (iterable_dataset.h): DataLoader(stream_dataset, options) batches a
//   stream the same way; each worker reads its own copy of the stream (shard it with
//   get_worker_info(), or every worker yields all of it) and the loop takes the workers' batches
//   round-robin. A sampler or shuffle is refused, as in PyTorch, and size() has no answer.
// - batch_sampler (batch_sampler.h): DataLoader(dataset, batch_sampler, options) takes the batches
//   from it, of any sizes (batch_size, shuffle and drop_last must stay unset, as in PyTorch).
// - collate_fn: a function from a batch's examples (Dataset::fetch, in order) to the Batch, in place
//   of the default collation (rows copied straight into reused buffers), so a batch can pad examples
//   of different lengths; it runs in the worker that loaded the examples.
// - persistent_workers: the worker threads live as long as the loader, worker_init_fn runs once in
//   each and WorkerInfo::seed stays the first pass's; starting a pass while the previous one is still
//   being iterated ends that one (its iterator reaches the end), as PyTorch resets its iterator.
// - timeout: seconds the loop waits for a worker's batch before DataLoaderError("DataLoader timed
//   out after T seconds"); 0 waits for ever.
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
#include <vector>

#include <functional>

#include "base/arg.h"
#include "data/batch_sampler.h"
#include "data/dataset.h"
#include "data/iterable_dataset.h"
#include "data/sampler.h"
#include "data/worker_info.h"

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
  // Seeds random transforms (with the epoch and index), the shuffle of an owned RandomSampler, and
  // the workers' WorkerInfo::seed (with the loader's pass count).
  COLONY_ARG(uint64_t, seed) = 0;
  // Called with the worker id in each worker thread at the start of every pass, before it loads
  // anything (get_worker_info() is set); not called without workers. PyTorch's worker_init_fn.
  COLONY_ARG(std::function<void(int)>, worker_init_fn);
  // Keep the worker threads between passes (needs workers > 0); worker_init_fn then runs once per
  // worker. PyTorch's persistent_workers.
  COLONY_ARG(bool, persistent_workers) = false;
  // Seconds to wait for a worker's batch (>= 0); 0: no limit. PyTorch's timeout.
  COLONY_ARG(double, timeout) = 0;
  // Builds a batch from its examples (in the batch's order) in place of the default collation
  // (data stacked into [B, ...], targets into int64 [B]); PyTorch's collate_fn.
  COLONY_ARG(std::function<Batch(std::vector<Example>)>, collate_fn);
};

class DataLoaderError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {
class LoaderPass;
class WorkerPool;
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

  // Batches from a batch sampler; the options' batch_size must stay 1 and shuffle and drop_last
  // false ("batch_sampler option is mutually exclusive with ..."). The batch sampler is referenced.
  template <typename D, typename = std::enable_if_t<std::is_base_of_v<Dataset, std::decay_t<D>>>>
  DataLoader(D dataset, BatchSamplerBase& batch_sampler, DataLoaderOptions options = DataLoaderOptions())
      : DataLoader(std::shared_ptr<const Dataset>(std::make_shared<const std::decay_t<D>>(std::move(dataset))),
                   batch_sampler, options) {}
  DataLoader(std::shared_ptr<const Dataset> dataset, BatchSamplerBase& batch_sampler,
             DataLoaderOptions options = DataLoaderOptions());

  // Iterable-style: the options' shuffle must stay false, and no sampler can be given (the overload
  // taking one exists to refuse it with PyTorch's message).
  template <typename D, typename = std::enable_if_t<std::is_base_of_v<IterableDataset, std::decay_t<D>>>, typename = void>
  DataLoader(D dataset, DataLoaderOptions options)
      : DataLoader(std::shared_ptr<const IterableDataset>(std::make_shared<const std::decay_t<D>>(std::move(dataset))),
                   options) {}
  DataLoader(std::shared_ptr<const IterableDataset> dataset, DataLoaderOptions options);
  template <typename D, typename = std::enable_if_t<std::is_base_of_v<IterableDataset, std::decay_t<D>>>, typename = void>
  DataLoader(D dataset, Sampler& sampler, DataLoaderOptions options)
      : DataLoader(std::shared_ptr<const IterableDataset>(std::make_shared<const std::decay_t<D>>(std::move(dataset))),
                   sampler, options) {}
  DataLoader(std::shared_ptr<const IterableDataset> dataset, Sampler& sampler, DataLoaderOptions options);
  template <typename D, typename = std::enable_if_t<std::is_base_of_v<IterableDataset, std::decay_t<D>>>, typename = void>
  DataLoader(D dataset, BatchSamplerBase& batch_sampler, DataLoaderOptions options = DataLoaderOptions())
      : DataLoader(std::shared_ptr<const IterableDataset>(std::make_shared<const std::decay_t<D>>(std::move(dataset))),
                   batch_sampler, options) {}
  DataLoader(std::shared_ptr<const IterableDataset> dataset, BatchSamplerBase& batch_sampler,
             DataLoaderOptions options = DataLoaderOptions());
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
    explicit Iterator(std::shared_ptr<detail::LoaderPass> pass) : pass_(std::move(pass)) {}
    bool at_end() const;
    std::shared_ptr<detail::LoaderPass> pass_;
  };

  // Starts a pass over the sampler's order for its current epoch (loading the first batch); for an
  // iterable dataset, a pass over fresh streams.
  Iterator begin();
  Iterator end() { return Iterator(); }

  // Batches per pass: ceil(n / batch_size), or floor with drop_last, n = sampler.size(); a batch
  // sampler's size(). An iterable dataset has no length: std::logic_error.
  int64_t size() const;
  const DataLoaderOptions& options() const { return options_; }
  bool iterable() const { return iterable_ != nullptr; }
  // The map-style dataset and its sampler (or batch sampler); std::logic_error for an iterable
  // dataset, and sampler() for a loader given a batch sampler.
  const Dataset& dataset() const;
  Sampler& sampler();
  BatchSamplerBase& batch_sampler();
  bool has_batch_sampler() const { return batch_sampler_ != nullptr; }
  // The iterable dataset; std::logic_error for a map-style one.
  const IterableDataset& iterable_dataset() const;

 private:
  std::shared_ptr<const Dataset> dataset_;
  std::shared_ptr<const IterableDataset> iterable_;
  std::unique_ptr<Sampler> owned_sampler_;
  Sampler* sampler_ = nullptr;
  BatchSamplerBase* batch_sampler_ = nullptr;
  DataLoaderOptions options_;
  std::shared_ptr<detail::BufferCache> buffers_;
  int64_t passes_ = 0;  // passes begun: with the seed, it draws the workers' seeds
  // persistent_workers: the threads, the base of their seeds, and the pass using them now.
  std::shared_ptr<detail::WorkerPool> pool_;
  uint64_t pool_seed_ = 0;
  std::weak_ptr<detail::LoaderPass> last_pass_;
};

}  // namespace colony::data
