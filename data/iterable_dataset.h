// Iterable-style datasets (torch.utils.data.IterableDataset): a stream of examples with no size and
// no random access — records read from a file or a socket, examples generated on the fly. The
// DataLoader batches them as it batches a map-style Dataset (the same collation: data [B, ...],
// int64 targets [B]).
//
// Workers, as in PyTorch: with DataLoaderOptions::workers(n) each of the n worker threads calls
// iter() once per pass and reads its own stream, so WITHOUT SHARDING EVERY WORKER YIELDS THE WHOLE
// STREAM and each example arrives n times (PyTorch's documented behaviour). A stream shards itself
// by reading get_worker_info() in iter():
//
//   std::unique_ptr<ExampleStream> iter() const override {
//     int64_t start = 0, step = 1;
//     if (const WorkerInfo* w = get_worker_info()) { start = w->id; step = w->num_workers; }
//     return std::make_unique<MyStream>(start, step);   // records start, start + step, ...
//   }
//
// The loop receives the workers' batches round-robin (worker 0's first batch, worker 1's first, ...),
// skipping a worker once its stream has ended, as PyTorch's loader does; each worker's last batch may
// be short unless drop_last, which drops every worker's short last batch.
//
// Each batch is allocated afresh (its shape is known only once its first example is read), not
// refilled in place as a map-style dataset's buffers are. Stopping a pass early (break) waits for
// each worker's current next() call to return, so a stream that blocks should time out.
//
// Differences from PyTorch: workers are threads sharing this one (const) dataset object rather than
// processes holding copies, so iter() must be safe to call from several threads at once and the
// per-pass state belongs in the ExampleStream it returns.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "data/dataset.h"
#include "data/worker_info.h"

namespace colony::data {

// One pass over an iterable dataset. Used by one thread at a time.
class ExampleStream {
 public:
  virtual ~ExampleStream() = default;
  // The next example, or std::nullopt once the stream has ended.
  virtual std::optional<Example> next() = 0;
};

class IterableDataset {
 public:
  virtual ~IterableDataset() = default;
  // A fresh pass over the stream. The DataLoader calls it at the start of every pass, once in each
  // worker thread (where get_worker_info() describes the worker), or once in the calling thread
  // without workers (where get_worker_info() is null).
  virtual std::unique_ptr<ExampleStream> iter() const = 0;
};

// torch.utils.data.ChainDataset: the streams of datasets[0], datasets[1], ... one after another.
// Each is asked for its stream when the previous one ends (in the same thread, so a dataset that
// shards by get_worker_info() shards inside the chain too).
class ChainDataset : public IterableDataset {
 public:
  explicit ChainDataset(std::vector<std::shared_ptr<const IterableDataset>> datasets);
  std::unique_ptr<ExampleStream> iter() const override;
  const std::vector<std::shared_ptr<const IterableDataset>>& datasets() const { return datasets_; }

 private:
  std::vector<std::shared_ptr<const IterableDataset>> datasets_;
};

}  // namespace colony::data
