#include "data/dataloader.h"

#include <cxxabi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <typeinfo>
#include <vector>

#include "data/example_rng.h"
#include "data/loader_pass.h"
#include "data/stream_pass.h"
#include "data/worker_pool.h"
#include "ops/raw_ops.h"
#include "runtime/allocator.h"

namespace colony::data {
namespace detail {

std::string timed_out_message(double seconds) {
  char text[64];
  std::snprintf(text, sizeof text, "%g", seconds);
  return std::string("DataLoader timed out after ") + text + " seconds";
}

void rethrow_as_loader_error(const std::exception_ptr& error, const std::string& where) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    std::throw_with_nested(DataLoaderError("DataLoader: " + where + ": " + e.what()));
  } catch (...) {
    std::throw_with_nested(DataLoaderError("DataLoader: " + where + ": an exception not derived from std::exception"));
  }
}

// Buffers a finished pass hands back, so the next pass (the next epoch) need not allocate (pinned
// allocation is slow).
struct BufferCache {
  std::mutex mu;
  std::vector<Batch> free;
};

namespace {

bool referenced_elsewhere(const Tensor& t) { return t.impl_ptr().use_count() > 1 || t.storage().use_count() > 1; }

}  // namespace

// A pass over a map-style dataset: the batches are order_[offsets_[k], offsets_[k + 1]), in the
// sampler's (or batch sampler's) order.
class MapPass : public LoaderPass {
 public:
  // `pool`: the threads to run the workers on (null without workers).
  MapPass(std::shared_ptr<const Dataset> dataset, std::vector<int64_t> order, std::vector<int64_t> offsets,
          const DataLoaderOptions& opts, ExampleContext ctx, std::shared_ptr<BufferCache> cache, uint64_t base_seed,
          std::shared_ptr<WorkerPool> pool)
      : dataset_(std::move(dataset)),
        order_(std::move(order)),
        offsets_(std::move(offsets)),
        opts_(opts),
        ctx_(ctx),
        cache_(std::move(cache)),
        base_seed_(base_seed),
        pool_(std::move(pool)) {
    num_batches_ = static_cast<int64_t>(offsets_.size()) - 1;
    if (num_batches_ <= 0) {
      num_batches_ = 0;
      return;
    }
    for (int64_t k = 0; k < num_batches_; ++k) rows_ = std::max(rows_, rows_in(k));
    const int workers = pool_ ? pool_->size() : 0;
    const int64_t wanted = workers > 0 ? int64_t(workers) * opts_.prefetch() : 1;
    slots_ = std::vector<Slot>(static_cast<size_t>(std::min(wanted, num_batches_)));
    if (!opts_.collate_fn()) {
      try {
        data_shape_ = dataset_->example_shape();
        data_dtype_ = dataset_->example_dtype();
      } catch (const std::exception& e) {
        std::throw_with_nested(
            DataLoaderError(std::string("DataLoader: finding the batch shape (example_shape) failed: ") + e.what()));
      }
      data_shape_.insert(data_shape_.begin(), rows_);
      take_buffers();
    }
    if (workers == 0) return;
    for (int64_t k = 0; k < static_cast<int64_t>(slots_.size()); ++k) queue_.push_back(k);
    inits_pending_ = workers;
    workers_running_ = true;
    pool_->start([this](int w) { worker_loop(w); });
  }

  ~MapPass() override {
    stop_workers();
    current_batch_ = Batch{};
    give_back_buffers();
  }

  bool done() const override { return failed_ || current_ >= num_batches_; }
  Batch& current() override { return current_batch_; }

  void abandon() override {
    stop_workers();
    current_batch_ = Batch{};
    failed_ = true;
  }

  // Moves to the next batch: hands the current buffer back for the batch `slots` ahead, then waits
  // for the next one (or loads it, without workers).
  void advance() override {
    if (done()) return;
    if (current_ >= 0) release(current_);
    ++current_;
    if (current_ >= num_batches_) return;
    Slot& slot = slot_of(current_);
    if (!pool_) {
      slot.error = nullptr;
      fill(current_, slot);
    } else {
      std::unique_lock<std::mutex> lock(mu_);
      auto ready = [&] { return inits_pending_ == 0 && (slot.ready_batch == current_ || init_error_); };
      if (!wait_for_batch(ready_cv_, lock, opts_.timeout(), ready)) {
        failed_ = true;
        throw DataLoaderError(timed_out_message(opts_.timeout()));
      }
    }
    if (init_error_) {
      failed_ = true;
      rethrow_as_loader_error(init_error_, init_failure_);
    }
    if (slot.error) {
      failed_ = true;
      rethrow(slot);
    }
    const int64_t count = rows_in(current_);
    if (opts_.collate_fn() || count == rows_) {
      current_batch_ = slot.buffer;
    } else {
      current_batch_ = Batch{raw::narrow(slot.buffer.data, 0, 0, count), raw::narrow(slot.buffer.target, 0, 0, count), {}};
    }
  }

 private:
  struct Slot {
    Batch buffer;
    int64_t ready_batch = -1;  // the batch the buffer holds once loaded
    std::exception_ptr error;
    int64_t failed_index = -1;  // -1: the error came from collate_fn
    int worker = -1;
  };

  Slot& slot_of(int64_t batch) { return slots_[static_cast<size_t>(batch % static_cast<int64_t>(slots_.size()))]; }
  int64_t rows_in(int64_t batch) const {
    return offsets_[static_cast<size_t>(batch) + 1] - offsets_[static_cast<size_t>(batch)];
  }

  Batch allocate() const {
    TensorOptions o = TensorOptions(data_dtype_).pinned_memory(opts_.pin_memory());
    return {raw::empty(data_shape_, o), raw::empty({rows_}, TensorOptions(kInt64).pinned_memory(opts_.pin_memory())),
            {}};
  }

  bool async_copies_possible() const { return opts_.pin_memory() && pinned_memory_is_page_locked(); }

  bool fits(const Batch& b) const {
    return b.data.sizes() == data_shape_ && b.data.dtype() == data_dtype_ && b.target.size(0) == rows_;
  }

  // Stops the workers and waits until they have left this pass (the pool's threads may go on to
  // serve another pass).
  void stop_workers() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_.store(true);
      queue_.clear();
    }
    work_cv_.notify_all();
    if (workers_running_) pool_->wait();
    workers_running_ = false;
  }

  void take_buffers() {
    {
      std::lock_guard<std::mutex> lock(cache_->mu);
      for (auto& slot : slots_) {
        while (!cache_->free.empty() && !slot.buffer.data.defined()) {
          Batch b = std::move(cache_->free.back());
          cache_->free.pop_back();
          if (fits(b)) slot.buffer = std::move(b);
        }
      }
    }
    for (auto& slot : slots_) {
      if (!slot.buffer.data.defined()) slot.buffer = allocate();
    }
  }

  void give_back_buffers() {
    if (opts_.collate_fn()) return;  // collate_fn's batches are its own
    std::lock_guard<std::mutex> lock(cache_->mu);
    for (auto& slot : slots_) {
      if (slot.buffer.data.defined() && !async_copies_possible() && !referenced_elsewhere(slot.buffer.data) &&
          !referenced_elsewhere(slot.buffer.target)) {
        cache_->free.push_back(std::move(slot.buffer));
      }
    }
  }

  // The caller is done with `batch`: its buffer goes to the batch slots_.size() ahead. A buffer the
  // caller still holds (a kept batch, a saved view) is left to the caller.
  void release(int64_t batch) {
    current_batch_ = Batch{};
    Slot& slot = slot_of(batch);
    if (opts_.collate_fn()) {
      slot.buffer = Batch{};  // collate_fn makes each batch anew
    } else if (async_copies_possible() || referenced_elsewhere(slot.buffer.data) ||
               referenced_elsewhere(slot.buffer.target)) {
      // A page-locked buffer may still be read by a non_blocking copy the loop queued: it goes back
      // to the pinned caching allocator, which hands it out again only after that copy has finished
      // (runtime/caching_host_allocator.h), and the slot takes a fresh block, from that cache too.
      slot.buffer = allocate();
    }
    const int64_t next = batch + static_cast<int64_t>(slots_.size());
    if (!pool_ || next >= num_batches_) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      slot.error = nullptr;
      queue_.push_back(next);
    }
    work_cv_.notify_one();
  }

  void fill(int64_t batch, Slot& slot) {
    const int64_t start = offsets_[static_cast<size_t>(batch)];
    const int64_t rows = rows_in(batch);
    try {
      if (opts_.collate_fn()) {
        std::vector<Example> examples;
        examples.reserve(static_cast<size_t>(rows));
        for (int64_t r = 0; r < rows; ++r) {
          if (stop_.load(std::memory_order_relaxed)) return;
          slot.failed_index = order_[static_cast<size_t>(start + r)];
          examples.push_back(dataset_->fetch(slot.failed_index, ctx_));
        }
        slot.failed_index = -1;
        slot.buffer = opts_.collate_fn()(std::move(examples));
        return;
      }
      for (int64_t r = 0; r < rows; ++r) {
        if (stop_.load(std::memory_order_relaxed)) return;
        slot.failed_index = order_[static_cast<size_t>(start + r)];
        dataset_->copy_into(slot.failed_index, slot.buffer, r, ctx_);
      }
    } catch (...) {
      slot.error = std::current_exception();
    }
  }

  void worker_loop(int worker) {
    const WorkerInfo info{worker, pool_->size(), base_seed_ + static_cast<uint64_t>(worker), dataset_.get(), nullptr};
    WorkerInfoScope scope(info);
    // Every worker runs worker_init_fn before any loads a batch, so that a failure in one is always
    // what the loop's first batch reports. Persistent workers run it on their first pass only.
    std::exception_ptr error;
    if (opts_.worker_init_fn() && pool_->first_job(worker)) {
      try {
        opts_.worker_init_fn()(worker);
      } catch (...) {
        error = std::current_exception();
        pool_->set_broken();
      }
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (error && !init_error_) {
        init_error_ = error;
        init_failure_ = "worker " + std::to_string(worker) + " failed in worker_init_fn";
      }
      --inits_pending_;
    }
    work_cv_.notify_all();
    ready_cv_.notify_all();
    if (error) return;
    while (true) {
      int64_t batch;
      {
        std::unique_lock<std::mutex> lock(mu_);
        work_cv_.wait(lock, [&] { return stop_.load() || init_error_ || (inits_pending_ == 0 && !queue_.empty()); });
        if (stop_.load() || init_error_) return;
        batch = queue_.front();
        queue_.pop_front();
      }
      Slot& slot = slot_of(batch);
      slot.worker = worker;
      fill(batch, slot);
      {
        std::lock_guard<std::mutex> lock(mu_);
        slot.ready_batch = batch;
      }
      ready_cv_.notify_all();
    }
  }

  [[noreturn]] void rethrow(const Slot& slot) const {
    const std::string what =
        slot.failed_index >= 0 ? " (dataset index " + std::to_string(slot.failed_index) + ")" : " in collate_fn";
    const std::string where = (slot.worker >= 0 ? "worker " + std::to_string(slot.worker) + " failed on batch "
                                                : std::string("loading batch ")) +
                              std::to_string(current_) + what;
    rethrow_as_loader_error(slot.error, where);
  }

  std::shared_ptr<const Dataset> dataset_;
  const std::vector<int64_t> order_;
  const std::vector<int64_t> offsets_;
  const DataLoaderOptions opts_;
  const ExampleContext ctx_;
  std::shared_ptr<BufferCache> cache_;
  const uint64_t base_seed_;
  std::shared_ptr<WorkerPool> pool_;
  Shape data_shape_;
  DType data_dtype_ = kFloat32;
  int64_t rows_ = 0;  // rows of a buffer: the largest batch of the pass

  int64_t num_batches_ = 0;
  int64_t current_ = -1;
  bool failed_ = false;
  Batch current_batch_;
  std::vector<Slot> slots_;

  std::mutex mu_;
  std::condition_variable work_cv_, ready_cv_;
  std::deque<int64_t> queue_;
  std::atomic<bool> stop_{false};
  bool workers_running_ = false;  // the pool runs this pass's worker_loop
  // Guarded by mu_: workers yet to run worker_init_fn, and the first one's failure.
  int inits_pending_ = 0;
  std::exception_ptr init_error_;
  std::string init_failure_;
};

}  // namespace detail

namespace {

void check_options(const DataLoaderOptions& o) {
  if (o.batch_size() < 1)
    throw std::invalid_argument("DataLoader: batch_size must be >= 1, got " + std::to_string(o.batch_size()));
  if (o.workers() < 0)
    throw std::invalid_argument("DataLoader: workers must be >= 0, got " + std::to_string(o.workers()));
  if (o.prefetch() < 1)
    throw std::invalid_argument("DataLoader: prefetch must be >= 1, got " + std::to_string(o.prefetch()));
  if (!(o.timeout() >= 0)) throw std::invalid_argument("DataLoader: timeout option should be non-negative");
  if (o.persistent_workers() && o.workers() == 0)
    throw std::invalid_argument("DataLoader: persistent_workers option needs num_workers > 0");
}

// A name for the sampler in the refusals below, as PyTorch prints the object it got.
template <typename T>
std::string type_name(const T& sampler) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(typeid(sampler).name(), nullptr, nullptr, &status);
  std::string name = status == 0 && demangled ? demangled : typeid(sampler).name();
  std::free(demangled);
  return name;
}

// The base of the workers' WorkerInfo::seed: a new one each pass, the same in every run.
uint64_t worker_base_seed(uint64_t seed, int64_t pass) {
  constexpr uint64_t kWorkerSeedStream = 0x574F524B45525331ULL;
  return ExampleRng(seed, pass, 0, kWorkerSeedStream).next_u64();
}

}  // namespace

DataLoader::DataLoader(std::shared_ptr<const Dataset> dataset, Sampler& sampler, DataLoaderOptions options)
    : dataset_(std::move(dataset)),
      sampler_(&sampler),
      options_(options),
      buffers_(std::make_shared<detail::BufferCache>()) {
  if (!dataset_) throw std::invalid_argument("DataLoader: the dataset is null");
  check_options(options_);
  if (options_.shuffle()) throw std::invalid_argument("DataLoader: sampler option is mutually exclusive with shuffle");
}

DataLoader::DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options)
    : dataset_(std::move(dataset)),
      sampler_(nullptr),
      options_(options),
      buffers_(std::make_shared<detail::BufferCache>()) {
  if (!dataset_) throw std::invalid_argument("DataLoader: the dataset is null");
  check_options(options_);
  if (options_.shuffle()) {
    owned_sampler_ = std::make_unique<RandomSampler>(dataset_->size(), options_.seed());
  } else {
    owned_sampler_ = std::make_unique<SequentialSampler>(dataset_->size());
  }
  sampler_ = owned_sampler_.get();
}

DataLoader::DataLoader(std::shared_ptr<const Dataset> dataset, BatchSamplerBase& batch_sampler,
                       DataLoaderOptions options)
    : dataset_(std::move(dataset)),
      batch_sampler_(&batch_sampler),
      options_(options),
      buffers_(std::make_shared<detail::BufferCache>()) {
  if (!dataset_) throw std::invalid_argument("DataLoader: the dataset is null");
  check_options(options_);
  if (options_.batch_size() != 1 || options_.shuffle() || options_.drop_last()) {
    throw std::invalid_argument(
        "DataLoader: batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last");
  }
}

// PyTorch checks shuffle before the sampler; so do these.
DataLoader::DataLoader(std::shared_ptr<const IterableDataset> dataset, DataLoaderOptions options)
    : iterable_(std::move(dataset)), options_(options) {
  if (!iterable_) throw std::invalid_argument("DataLoader: the dataset is null");
  check_options(options_);
  if (options_.shuffle()) {
    throw std::invalid_argument(
        "DataLoader with IterableDataset: expected unspecified shuffle option, but got shuffle=true");
  }
}

DataLoader::DataLoader(std::shared_ptr<const IterableDataset> dataset, Sampler& sampler, DataLoaderOptions options)
    : DataLoader(std::move(dataset), options) {
  throw std::invalid_argument("DataLoader with IterableDataset: expected unspecified sampler option, but got sampler=" +
                              type_name(sampler));
}

DataLoader::DataLoader(std::shared_ptr<const IterableDataset> dataset, BatchSamplerBase& batch_sampler,
                       DataLoaderOptions options)
    : DataLoader(std::move(dataset), options) {
  throw std::invalid_argument(
      "DataLoader with IterableDataset: expected unspecified batch_sampler option, but got batch_sampler=" +
      type_name(batch_sampler));
}

DataLoader::~DataLoader() = default;

int64_t DataLoader::size() const {
  if (iterable_) {
    throw std::logic_error("DataLoader::size: an IterableDataset has no length (a stream's number of batches is "
                           "known only once it has ended)");
  }
  if (batch_sampler_) return batch_sampler_->size();
  const int64_t n = sampler_->size(), b = options_.batch_size();
  return options_.drop_last() ? n / b : (n + b - 1) / b;
}

const Dataset& DataLoader::dataset() const {
  if (!dataset_) throw std::logic_error("DataLoader::dataset: this loader reads an IterableDataset (iterable_dataset())");
  return *dataset_;
}

Sampler& DataLoader::sampler() {
  if (batch_sampler_) throw std::logic_error("DataLoader::sampler: this loader takes its batches from batch_sampler()");
  if (!sampler_) throw std::logic_error("DataLoader::sampler: a loader of an IterableDataset has no sampler");
  return *sampler_;
}

BatchSamplerBase& DataLoader::batch_sampler() {
  if (!batch_sampler_) throw std::logic_error("DataLoader::batch_sampler: this loader was given no batch sampler");
  return *batch_sampler_;
}

const IterableDataset& DataLoader::iterable_dataset() const {
  if (!iterable_) throw std::logic_error("DataLoader::iterable_dataset: this loader reads a map-style Dataset");
  return *iterable_;
}

namespace {

// The pass's batches as one list of indices and where each batch starts in it (offsets, one more
// than there are batches), checked against the dataset.
void check_order(const std::vector<int64_t>& order, int64_t n, const char* who) {
  for (int64_t i : order) {
    if (i < 0 || i >= n) {
      throw std::out_of_range(std::string("DataLoader: the ") + who + " yields index " + std::to_string(i) +
                              " but the dataset holds " + std::to_string(n) + " examples");
    }
  }
}

}  // namespace

DataLoader::Iterator DataLoader::begin() {
  uint64_t base_seed = worker_base_seed(options_.seed(), passes_++);
  std::shared_ptr<detail::WorkerPool> pool;
  if (options_.workers() > 0) {
    if (options_.persistent_workers()) {
      // PyTorch resets the live iterator when a new one is asked for; its workers are needed here.
      if (auto previous = last_pass_.lock()) previous->abandon();
      if (!pool_ || pool_->broken()) {
        pool_ = std::make_shared<detail::WorkerPool>(options_.workers());
        pool_seed_ = base_seed;
      }
      pool = pool_;
      base_seed = pool_seed_;  // a persistent worker keeps its seed, as PyTorch's
    } else {
      pool = std::make_shared<detail::WorkerPool>(options_.workers());
    }
  }
  std::shared_ptr<detail::LoaderPass> pass;
  if (iterable_) {
    pass = std::make_shared<detail::StreamPass>(iterable_, options_, base_seed, std::move(pool));
  } else {
    const int64_t n = dataset_->size();
    std::vector<int64_t> order, offsets{0};
    ExampleContext ctx{options_.seed(), 0};
    if (batch_sampler_) {
      ctx.epoch = batch_sampler_->epoch();
      const std::vector<std::vector<int64_t>> batches = batch_sampler_->next_pass();
      for (size_t k = 0; k < batches.size(); ++k) {
        if (batches[k].empty()) {
          throw std::invalid_argument("DataLoader: batch " + std::to_string(k) +
                                      " of the batch sampler is empty (every batch needs at least one index)");
        }
        order.insert(order.end(), batches[k].begin(), batches[k].end());
        offsets.push_back(static_cast<int64_t>(order.size()));
      }
      check_order(order, n, "batch sampler");
    } else {
      ctx.epoch = sampler_->epoch();
      order = sampler_->next_pass();
      check_order(order, n, "sampler");
      const auto total = static_cast<int64_t>(order.size());
      const int64_t b = options_.batch_size();
      const int64_t batches = options_.drop_last() ? total / b : (total + b - 1) / b;
      for (int64_t k = 1; k <= batches; ++k) offsets.push_back(std::min(total, k * b));
    }
    pass = std::make_shared<detail::MapPass>(dataset_, std::move(order), std::move(offsets), options_, ctx, buffers_,
                                             base_seed, std::move(pool));
  }
  if (options_.persistent_workers()) last_pass_ = pass;
  pass->advance();
  return Iterator(std::move(pass));
}

bool DataLoader::Iterator::at_end() const { return !pass_ || pass_->done(); }

Batch& DataLoader::Iterator::operator*() const {
  if (at_end()) throw std::out_of_range("DataLoader::Iterator: dereferencing the end of a pass");
  return pass_->current();
}

DataLoader::Iterator& DataLoader::Iterator::operator++() {
  if (!at_end()) pass_->advance();
  return *this;
}

bool DataLoader::Iterator::operator==(const Iterator& other) const {
  if (at_end() || other.at_end()) return at_end() == other.at_end();
  return pass_ == other.pass_;
}

}  // namespace colony::data
