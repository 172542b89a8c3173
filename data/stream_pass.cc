#include "data/stream_pass.h"

#include <chrono>
#include <utility>

#include "ops/raw_ops.h"

namespace colony::data::detail {

StreamPass::StreamPass(std::shared_ptr<const IterableDataset> dataset, const DataLoaderOptions& opts,
                       uint64_t base_seed, std::shared_ptr<WorkerPool> pool)
    : dataset_(std::move(dataset)), opts_(opts), pool_(std::move(pool)) {
  const int n = pool_ ? pool_->size() : 0;
  for (int w = 0; w < n; ++w) {
    auto worker = std::make_unique<Worker>();
    worker->info = WorkerInfo{w, n, base_seed + static_cast<uint64_t>(w), nullptr, dataset_.get()};
    workers_.push_back(std::move(worker));
  }
  active_ = workers_.size();
  if (n == 0) return;
  workers_running_ = true;
  pool_->start([this](int w) { worker_loop(*workers_[static_cast<size_t>(w)]); });
}

StreamPass::~StreamPass() { stop_workers(); }

void StreamPass::stop_workers() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_.store(true);
  }
  space_cv_.notify_all();
  if (workers_running_) pool_->wait();
  workers_running_ = false;
}

void StreamPass::abandon() {
  stop_workers();
  current_batch_ = Batch{};
  done_ = true;
}

Batch StreamPass::collate(std::vector<Example>& examples, int64_t first) const {
  if (opts_.collate_fn()) return opts_.collate_fn()(std::move(examples));
  const Example& ex0 = examples.front();
  if (!ex0.data.defined()) {
    throw std::invalid_argument("DataLoader: example " + std::to_string(first) + " of the stream has no data");
  }
  Shape shape = ex0.data.sizes();
  shape.insert(shape.begin(), static_cast<int64_t>(examples.size()));
  Batch batch{raw::empty(shape, TensorOptions(ex0.data.dtype()).pinned_memory(opts_.pin_memory())),
              raw::empty({static_cast<int64_t>(examples.size())}, TensorOptions(kInt64).pinned_memory(opts_.pin_memory()))};
  for (size_t r = 0; r < examples.size(); ++r) {
    Dataset::write_row(examples[r], first + static_cast<int64_t>(r), batch, static_cast<int64_t>(r), "DataLoader");
  }
  return batch;
}

std::string StreamPass::Reader::position() const {
  return "batch " + std::to_string(batches) +
         (collating ? std::string() : " (example " + std::to_string(examples) + " of the stream)");
}

bool StreamPass::read_batch(Reader& reader, Batch& out) {
  if (reader.ended) return false;
  std::vector<Example> examples;
  examples.reserve(static_cast<size_t>(opts_.batch_size()));
  const int64_t first = reader.examples;
  while (static_cast<int64_t>(examples.size()) < opts_.batch_size()) {
    if (stop_.load(std::memory_order_relaxed)) return false;
    std::optional<Example> ex = reader.stream->next();
    if (!ex) {
      reader.ended = true;
      break;
    }
    examples.push_back(std::move(*ex));
    ++reader.examples;
  }
  if (examples.empty() || (opts_.drop_last() && static_cast<int64_t>(examples.size()) < opts_.batch_size())) {
    return false;
  }
  reader.collating = true;
  out = collate(examples, first);
  reader.collating = false;
  ++reader.batches;
  return true;
}

void StreamPass::push(Worker& worker, Item item) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    worker.queue.push_back(std::move(item));
  }
  ready_cv_.notify_all();
}

void StreamPass::worker_loop(Worker& worker) {
  WorkerInfoScope scope(worker.info);
  const std::string name = "worker " + std::to_string(worker.info.id);
  std::string stage = "worker_init_fn";
  Reader reader;
  try {
    if (opts_.worker_init_fn() && pool_->first_job(worker.info.id)) {
      try {
        opts_.worker_init_fn()(worker.info.id);
      } catch (...) {
        pool_->set_broken();
        throw;
      }
    }
    stage = "the dataset's iter()";
    reader.stream = dataset_->iter();
    if (!reader.stream) throw std::logic_error("iter() returned no stream");
    stage.clear();
    while (true) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        space_cv_.wait(lock, [&] {
          return stop_.load() || static_cast<int64_t>(worker.queue.size()) < opts_.prefetch();
        });
      }
      if (stop_.load()) return;
      Item item;
      if (!read_batch(reader, item.batch)) break;
      push(worker, std::move(item));
    }
    if (stop_.load()) return;
    Item end;
    end.end = true;
    push(worker, std::move(end));
  } catch (...) {
    Item failed;
    failed.error = std::current_exception();
    failed.where = name + " failed " + (stage.empty() ? "on its " + reader.position() : "in " + stage);
    push(worker, std::move(failed));
  }
}

void StreamPass::advance() {
  if (done_) return;
  current_batch_ = Batch{};
  if (workers_.empty()) {
    try {
      if (!started_) {
        started_ = true;
        reader_.stream = dataset_->iter();
        if (!reader_.stream) throw std::logic_error("iter() returned no stream");
      }
      if (!read_batch(reader_, current_batch_)) done_ = true;
    } catch (...) {
      done_ = true;
      rethrow_as_loader_error(std::current_exception(),
                              reader_.stream ? "loading " + reader_.position() : "the dataset's iter() failed");
    }
    return;
  }
  // Round-robin over the workers whose stream has not ended.
  while (active_ > 0) {
    Worker& worker = *workers_[next_worker_];
    next_worker_ = (next_worker_ + 1) % workers_.size();
    if (worker.ended) continue;
    Item item;
    {
      std::unique_lock<std::mutex> lock(mu_);
      auto ready = [&] { return !worker.queue.empty(); };
      if (!wait_for_batch(ready_cv_, lock, opts_.timeout(), ready)) {
        done_ = true;
        throw DataLoaderError(timed_out_message(opts_.timeout()));
      }
      item = std::move(worker.queue.front());
      worker.queue.pop_front();
    }
    space_cv_.notify_all();
    if (item.error) {
      done_ = true;
      rethrow_as_loader_error(item.error, item.where);
    }
    if (item.end) {
      worker.ended = true;
      --active_;
      continue;
    }
    current_batch_ = std::move(item.batch);
    return;
  }
  done_ = true;
}

}  // namespace colony::data::detail
