// get_worker_info() (torch.utils.data.get_worker_info): inside a DataLoader worker thread, which
// worker this is, so that an IterableDataset's stream can shard itself and a worker_init_fn can
// seed per-worker state; null in any other thread (the loop's thread, and a loader without workers).
#pragma once

#include <cstdint>

namespace colony::data {

class Dataset;
class IterableDataset;

struct WorkerInfo {
  int id = 0;           // 0 .. num_workers - 1
  int num_workers = 0;
  // base_seed + id, as PyTorch's; base_seed is drawn from DataLoaderOptions::seed and the loader's
  // pass count, so it changes every pass and is the same in every run with the same seed.
  uint64_t seed = 0;
  // The dataset the worker loads from (one of the two is set). Workers are threads, so this is the
  // loader's one shared dataset, not a per-worker copy as in PyTorch.
  const Dataset* dataset = nullptr;
  const IterableDataset* iterable_dataset = nullptr;
};

// The calling thread's WorkerInfo while it runs as a DataLoader worker; nullptr elsewhere.
const WorkerInfo* get_worker_info();

namespace detail {
// Sets the calling thread's WorkerInfo for the scope's lifetime (the DataLoader's worker threads).
class WorkerInfoScope {
 public:
  explicit WorkerInfoScope(const WorkerInfo& info);
  ~WorkerInfoScope();
  WorkerInfoScope(const WorkerInfoScope&) = delete;
  WorkerInfoScope& operator=(const WorkerInfoScope&) = delete;

 private:
  const WorkerInfo* previous_;
};
}  // namespace detail

}  // namespace colony::data
