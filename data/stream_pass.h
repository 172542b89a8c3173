// Internal to the DataLoader: a pass over an IterableDataset (see iterable_dataset.h for what the
// user sees). Without workers the calling thread reads one stream; with n workers, worker thread w
// (get_worker_info() set, worker_init_fn(w) run first) reads its own stream into a queue of at most
// `prefetch` batches, and the loop takes the workers' batches round-robin, skipping a worker whose
// stream has ended, as PyTorch's _MultiProcessingDataLoaderIter does. The worker threads come from a
// WorkerPool (the loader's own, with persistent_workers).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "data/dataloader.h"
#include "data/iterable_dataset.h"
#include "data/loader_pass.h"
#include "data/worker_pool.h"

namespace colony::data::detail {

class StreamPass : public LoaderPass {
 public:
  // Starts the workers on `pool` (null: none); worker w's WorkerInfo::seed is base_seed + w.
  StreamPass(std::shared_ptr<const IterableDataset> dataset, const DataLoaderOptions& opts, uint64_t base_seed,
             std::shared_ptr<WorkerPool> pool);
  ~StreamPass() override;

  bool done() const override { return done_; }
  Batch& current() override { return current_batch_; }
  void advance() override;
  void abandon() override;

 private:
  // What a worker hands the loop: a batch, the end of its stream, or the error that stopped it.
  struct Item {
    Batch batch;
    bool end = false;
    std::exception_ptr error;
    std::string where;  // for an error: what the worker was doing
  };
  struct Worker {
    WorkerInfo info;
    std::deque<Item> queue;  // guarded by mu_
    bool ended = false;      // the loop's view: the end (or an error) was taken from the queue
  };
  // One reader of a stream: where it is, for error messages and for stopping after a short batch.
  struct Reader {
    std::unique_ptr<ExampleStream> stream;
    int64_t examples = 0;  // read so far
    int64_t batches = 0;   // collated so far
    bool ended = false;
    bool collating = false;  // reading is done for the batch; collation names its failing example itself
    // Where reading failed, e.g. "batch 2 (example 17 of the stream)".
    std::string position() const;
  };

  // The next batch of `reader`'s stream, or false at its end (nothing left, or a short batch under
  // drop_last). Once a batch comes out short the stream is not read again, as PyTorch's fetcher.
  bool read_batch(Reader& reader, Batch& out);
  Batch collate(std::vector<Example>& examples, int64_t first) const;
  void worker_loop(Worker& worker);
  void push(Worker& worker, Item item);
  // Stops the workers and waits until they have left this pass.
  void stop_workers();

  std::shared_ptr<const IterableDataset> dataset_;
  const DataLoaderOptions opts_;
  bool done_ = false;
  Batch current_batch_;

  Reader reader_;  // without workers
  bool started_ = false;

  std::shared_ptr<WorkerPool> pool_;
  bool workers_running_ = false;
  std::vector<std::unique_ptr<Worker>> workers_;
  size_t next_worker_ = 0;
  size_t active_ = 0;  // workers whose end the loop has not yet taken
  std::mutex mu_;
  std::condition_variable ready_cv_, space_cv_;
  std::atomic<bool> stop_{false};
};

}  // namespace colony::data::detail
