// Samplers: the order in which a DataLoader visits a dataset's indices, one list per epoch.
//
// A sampler's order is a function of its state (seed, epoch), which state()/load_state() save and
// restore for checkpoints: a resumed run replays the same orders.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace colony::data {

struct SamplerState {
  uint64_t seed = 0;
  int64_t epoch = 0;
};

class Sampler {
 public:
  virtual ~Sampler() = default;
  // Indices per epoch.
  virtual int64_t size() const = 0;
  // The order of the current epoch; calling it twice gives the same list.
  virtual std::vector<int64_t> indices() const = 0;
  // What a DataLoader calls once at the start of each pass: indices() by default. RandomSampler
  // also moves on to the next epoch here, so that it reshuffles every pass like PyTorch's.
  virtual std::vector<int64_t> next_pass() { return indices(); }

  virtual void set_epoch(int64_t epoch) { epoch_ = epoch; }
  int64_t epoch() const { return epoch_; }
  virtual SamplerState state() const { return {0, epoch_}; }
  virtual void load_state(const SamplerState& s) { epoch_ = s.epoch; }

 protected:
  int64_t epoch_ = 0;
};

// 0, 1, ..., size - 1.
class SequentialSampler : public Sampler {
 public:
  explicit SequentialSampler(int64_t size);
  int64_t size() const override { return size_; }
  std::vector<int64_t> indices() const override;

 private:
  int64_t size_;
};

// Exactly the given indices, in the given order (no shuffling, no padding). Sharding evaluation
// across ranks with it counts every test sample once:
//   SubsetSampler::strided(test.size(), rank, world)  ->  rank, rank + world, ...
class SubsetSampler : public Sampler {
 public:
  explicit SubsetSampler(std::vector<int64_t> indices);
  static SubsetSampler strided(int64_t dataset_size, int64_t start, int64_t step);
  int64_t size() const override { return static_cast<int64_t>(indices_.size()); }
  std::vector<int64_t> indices() const override { return indices_; }

 private:
  std::vector<int64_t> indices_;
};

// The samplers whose order is drawn from a generator seeded with seed + epoch (pass_seed()): their
// state is (seed, epoch). One that reshuffles each pass moves to the next epoch after every pass, as
// PyTorch's RandomSampler draws a new order each time it is iterated; DistributedSampler does not
// (its epoch is set_epoch's, as PyTorch's).
class SeededSampler : public Sampler {
 public:
  std::vector<int64_t> next_pass() override;
  SamplerState state() const override { return {seed_, epoch_}; }
  void load_state(const SamplerState& s) override;

 protected:
  SeededSampler(uint64_t seed, bool reshuffles_each_pass) : seed_(seed), reshuffles_each_pass_(reshuffles_each_pass) {}
  uint64_t pass_seed() const { return seed_ + static_cast<uint64_t>(epoch_); }

 private:
  uint64_t seed_;
  bool reshuffles_each_pass_;
};

// A permutation of 0..size-1 drawn from a generator seeded with seed + epoch (the epoch advances
// by one after each pass; set_epoch chooses it, as for DistributedSampler).
class RandomSampler : public SeededSampler {
 public:
  explicit RandomSampler(int64_t size, uint64_t seed = 0);
  int64_t size() const override { return size_; }
  std::vector<int64_t> indices() const override;

 private:
  int64_t size_;
};

// torch's SubsetRandomSampler: the given indices in a random order, drawn from a generator seeded
// with seed + epoch; the epoch advances after each pass, as RandomSampler's.
class SubsetRandomSampler : public SeededSampler {
 public:
  explicit SubsetRandomSampler(std::vector<int64_t> indices, uint64_t seed = 0);
  int64_t size() const override { return static_cast<int64_t>(indices_.size()); }
  std::vector<int64_t> indices() const override;

 private:
  std::vector<int64_t> indices_;
};

// num_samples indices drawn with probability proportional to `weights` (torch's
// WeightedRandomSampler: oversampling rare classes), with replacement or without (then num_samples
// <= the number of nonzero weights). Drawn from a generator seeded with seed + epoch; the epoch
// advances after each pass, as RandomSampler's. Weights must be finite, non-negative, and not all 0.
class WeightedRandomSampler : public SeededSampler {
 public:
  WeightedRandomSampler(std::vector<double> weights, int64_t num_samples, bool replacement = true, uint64_t seed = 0);
  int64_t size() const override { return num_samples_; }
  std::vector<int64_t> indices() const override;

 private:
  std::vector<double> weights_;
  int64_t num_samples_;
  bool replacement_;
};

struct DistributedSamplerOptions {
  // Unset: from the environment, WORLD_SIZE (default 1) and RANK (default 0), which the launcher
  // (colonyrun) and dist::init_process_group set.
  DistributedSamplerOptions& num_replicas(int64_t n) {
    num_replicas_ = n;
    return *this;
  }
  DistributedSamplerOptions& rank(int64_t r) {
    rank_ = r;
    return *this;
  }
  DistributedSamplerOptions& shuffle(bool s) {
    shuffle_ = s;
    return *this;
  }
  DistributedSamplerOptions& seed(uint64_t s) {
    seed_ = s;
    return *this;
  }
  DistributedSamplerOptions& drop_last(bool d) {
    drop_last_ = d;
    return *this;
  }

  const std::optional<int64_t>& num_replicas() const { return num_replicas_; }
  const std::optional<int64_t>& rank() const { return rank_; }
  bool shuffle() const { return shuffle_; }
  uint64_t seed() const { return seed_; }
  bool drop_last() const { return drop_last_; }

 private:
  std::optional<int64_t> num_replicas_;
  std::optional<int64_t> rank_;
  bool shuffle_ = true;
  uint64_t seed_ = 0;
  bool drop_last_ = false;
};

// PyTorch's DistributedSampler: each of num_replicas ranks gets num_samples indices.
//  - shuffle: a permutation drawn from a generator seeded with seed + epoch (call set_epoch every
//    epoch, or every epoch has the same order), else 0..size-1;
//  - drop_last = false: num_samples = ceil(size / num_replicas) and the list is padded to
//    total_size = num_samples * num_replicas by repeating it from the start;
//  - drop_last = true: num_samples = floor(size / num_replicas) and the tail is dropped;
//  - rank r takes list[r], list[r + num_replicas], ... (indices[rank:total_size:num_replicas]).
// The permutations differ from PyTorch's (another generator); the semantics are the same.
//
// Resuming mid-epoch (what torchdata's StatefulDistributedSampler does, counted for the whole job):
// after k samples of the epoch's list were taken by all ranks together (any number of ranks, any
// batch size: they took list[0, k)), set_start(k) makes this sampler hand out list[k, total_size)
// the same strided way: rank r takes list[k + r], list[k + r + num_replicas], ... The list up to
// the dataset's size is the permutation itself, the same for every num_replicas, so a run resumed
// with another world size sees exactly the samples that were left.
class DistributedSampler : public SeededSampler {
 public:
  explicit DistributedSampler(int64_t dataset_size, DistributedSamplerOptions options = {});
  int64_t size() const override { return num_samples_ - start_ / num_replicas_; }
  std::vector<int64_t> indices() const override;
  // Starts the epoch from its beginning (set_start(0)), as a new epoch does.
  void set_epoch(int64_t epoch) override;
  // The current epoch from sample `position` of its list (above). std::invalid_argument unless
  // 0 <= position <= total_size() and position is a multiple of num_replicas (each rank then
  // gets the same number of samples, as DDP needs).
  void set_start(int64_t position);
  int64_t start() const { return start_; }

  int64_t num_replicas() const { return num_replicas_; }
  int64_t rank() const { return rank_; }
  int64_t num_samples() const { return num_samples_; }
  int64_t total_size() const { return total_size_; }
  bool shuffle() const { return shuffle_; }
  bool drop_last() const { return drop_last_; }

 private:
  int64_t dataset_size_;
  int64_t num_replicas_;
  int64_t rank_;
  bool shuffle_;
  bool drop_last_;
  int64_t num_samples_;
  int64_t total_size_;
  int64_t start_ = 0;
};

// A permutation of 0..n-1 that depends only on `seed` (Colony's randperm with a generator seeded so).
std::vector<int64_t> seeded_permutation(int64_t n, uint64_t seed);

}  // namespace colony::data
