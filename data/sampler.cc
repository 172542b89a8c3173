#include "data/sampler.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <stdexcept>
#include <string>

#include "ops/raw_ops.h"
#include "tensor/random.h"

namespace colony::data {
namespace {

void check_size(int64_t size, const char* who) {
  if (size < 0) throw std::invalid_argument(std::string(who) + ": size must be >= 0, got " + std::to_string(size));
}

int64_t env_int(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  errno = 0;
  const long long x = std::strtoll(v, &end, 10);
  if (errno != 0 || *end != '\0') {
    throw std::invalid_argument(std::string("DistributedSampler: environment variable ") + name + "='" + v +
                                "' is not an integer");
  }
  return x;
}

}  // namespace

std::vector<int64_t> seeded_permutation(int64_t n, uint64_t seed) {
  Generator gen(seed);
  Tensor perm = raw::randperm(n, TensorOptions(kInt64), &gen);
  const int64_t* p = perm.data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + n);
}

SequentialSampler::SequentialSampler(int64_t size) : size_(size) { check_size(size, "SequentialSampler"); }

std::vector<int64_t> SequentialSampler::indices() const {
  std::vector<int64_t> out(size_);
  std::iota(out.begin(), out.end(), 0);
  return out;
}

SubsetSampler::SubsetSampler(std::vector<int64_t> indices) : indices_(std::move(indices)) {
  for (int64_t i : indices_) {
    if (i < 0) throw std::invalid_argument("SubsetSampler: index " + std::to_string(i) + " is negative");
  }
}

SubsetSampler SubsetSampler::strided(int64_t dataset_size, int64_t start, int64_t step) {
  check_size(dataset_size, "SubsetSampler");
  if (step < 1 || start < 0) {
    throw std::invalid_argument("SubsetSampler::strided: need start >= 0 and step >= 1, got start " +
                                std::to_string(start) + ", step " + std::to_string(step));
  }
  std::vector<int64_t> idx;
  for (int64_t i = start; i < dataset_size; i += step) idx.push_back(i);
  return SubsetSampler(std::move(idx));
}

std::vector<int64_t> SeededSampler::next_pass() {
  std::vector<int64_t> out = indices();
  if (reshuffles_each_pass_) ++epoch_;
  return out;
}

void SeededSampler::load_state(const SamplerState& s) {
  seed_ = s.seed;
  epoch_ = s.epoch;
}

RandomSampler::RandomSampler(int64_t size, uint64_t seed) : SeededSampler(seed, /*reshuffles_each_pass=*/true), size_(size) {
  check_size(size, "RandomSampler");
}

std::vector<int64_t> RandomSampler::indices() const {
  return seeded_permutation(size_, pass_seed());
}

SubsetRandomSampler::SubsetRandomSampler(std::vector<int64_t> indices, uint64_t seed)
    : SeededSampler(seed, /*reshuffles_each_pass=*/true), indices_(std::move(indices)) {
  for (int64_t i : indices_) {
    if (i < 0) throw std::invalid_argument("SubsetRandomSampler: index " + std::to_string(i) + " is negative");
  }
}

std::vector<int64_t> SubsetRandomSampler::indices() const {
  std::vector<int64_t> out;
  out.reserve(indices_.size());
  for (int64_t k : seeded_permutation(size(), pass_seed())) out.push_back(indices_[static_cast<size_t>(k)]);
  return out;
}

WeightedRandomSampler::WeightedRandomSampler(std::vector<double> weights, int64_t num_samples, bool replacement,
                                             uint64_t seed)
    : SeededSampler(seed, /*reshuffles_each_pass=*/true),
      weights_(std::move(weights)),
      num_samples_(num_samples),
      replacement_(replacement) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("WeightedRandomSampler: " + what); };
  if (num_samples <= 0) fail("num_samples should be a positive integer value, but got num_samples=" + std::to_string(num_samples));
  if (weights_.empty()) fail("weights must not be empty");
  int64_t nonzero = 0;
  for (size_t i = 0; i < weights_.size(); ++i) {
    if (!(weights_[i] >= 0) || !std::isfinite(weights_[i])) {
      fail("weight " + std::to_string(i) + " is " + std::to_string(weights_[i]) + ", expected a finite value >= 0");
    }
    nonzero += weights_[i] > 0;
  }
  if (nonzero == 0) fail("the weights are all 0; at least one must be positive");
  if (!replacement && num_samples > nonzero) {
    fail("cannot draw " + std::to_string(num_samples) + " samples without replacement from " +
         std::to_string(nonzero) + " nonzero weights");
  }
}

std::vector<int64_t> WeightedRandomSampler::indices() const {
  Generator gen(pass_seed());
  Tensor probs = raw::from_vector(weights_, {static_cast<int64_t>(weights_.size())});
  Tensor drawn = raw::multinomial(probs, num_samples_, replacement_, &gen);
  drawn = raw::to(drawn, kCPU, kInt64);
  const int64_t* p = drawn.data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + num_samples_);
}

DistributedSampler::DistributedSampler(int64_t dataset_size, DistributedSamplerOptions o)
    : SeededSampler(o.seed(), /*reshuffles_each_pass=*/false),
      dataset_size_(dataset_size),
      num_replicas_(o.num_replicas() ? *o.num_replicas() : env_int("WORLD_SIZE", 1)),
      rank_(o.rank() ? *o.rank() : env_int("RANK", 0)),
      shuffle_(o.shuffle()),
      drop_last_(o.drop_last()) {
  check_size(dataset_size, "DistributedSampler");
  if (num_replicas_ < 1) {
    throw std::invalid_argument("DistributedSampler: num_replicas must be >= 1, got " + std::to_string(num_replicas_));
  }
  if (rank_ < 0 || rank_ >= num_replicas_) {
    throw std::invalid_argument("DistributedSampler: invalid rank " + std::to_string(rank_) +
                                ", rank should be in the interval [0, " + std::to_string(num_replicas_ - 1) + "]");
  }
  if (drop_last_ && dataset_size_ % num_replicas_ != 0) {
    // PyTorch: ceil((len - num_replicas) / num_replicas), i.e. floor(len / num_replicas).
    num_samples_ = dataset_size_ / num_replicas_;
  } else {
    num_samples_ = (dataset_size_ + num_replicas_ - 1) / num_replicas_;
  }
  total_size_ = num_samples_ * num_replicas_;
}

std::vector<int64_t> DistributedSampler::indices() const {
  std::vector<int64_t> all;
  if (shuffle_) {
    all = seeded_permutation(dataset_size_, pass_seed());
  } else {
    all.resize(dataset_size_);
    std::iota(all.begin(), all.end(), 0);
  }
  // Padding repeats the list from its start (cycling when more than one copy is needed, which
  // happens when the dataset is smaller than num_replicas); drop_last truncates.
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(size()));
  for (int64_t i = start_ + rank_; i < total_size_; i += num_replicas_) out.push_back(all[i % dataset_size_]);
  return out;
}

void DistributedSampler::set_epoch(int64_t epoch) {
  epoch_ = epoch;
  start_ = 0;
}

void DistributedSampler::set_start(int64_t position) {
  if (position < 0 || position > total_size_) {
    throw std::invalid_argument("DistributedSampler::set_start: position " + std::to_string(position) +
                                " is outside the epoch's " + std::to_string(total_size_) + " samples");
  }
  if (position % num_replicas_ != 0) {
    throw std::invalid_argument("DistributedSampler::set_start: position " + std::to_string(position) +
                                " is not a multiple of num_replicas " + std::to_string(num_replicas_) +
                                ": the ranks would get different numbers of samples");
  }
  start_ = position;
}

}  // namespace colony::data
