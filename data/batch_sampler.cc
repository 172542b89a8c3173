#include "data/batch_sampler.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace colony::data {
namespace {

void check_batch_size(int64_t batch_size) {
  if (batch_size <= 0) {
    throw std::invalid_argument("BatchSampler: batch_size should be a positive integer value, but got batch_size=" +
                                std::to_string(batch_size));
  }
}

}  // namespace

BatchSampler::BatchSampler(Sampler& sampler, int64_t batch_size, bool drop_last)
    : sampler_(&sampler), batch_size_(batch_size), drop_last_(drop_last) {
  check_batch_size(batch_size);
}

BatchSampler::BatchSampler(std::shared_ptr<Sampler> sampler, int64_t batch_size, bool drop_last)
    : owned_(std::move(sampler)), sampler_(owned_.get()), batch_size_(batch_size), drop_last_(drop_last) {
  if (!sampler_) throw std::invalid_argument("BatchSampler: the sampler is null");
  check_batch_size(batch_size);
}

int64_t BatchSampler::size() const {
  const int64_t n = sampler_->size();
  return drop_last_ ? n / batch_size_ : (n + batch_size_ - 1) / batch_size_;
}

std::vector<std::vector<int64_t>> BatchSampler::next_pass() {
  const std::vector<int64_t> order = sampler_->next_pass();
  const auto n = static_cast<int64_t>(order.size());
  std::vector<std::vector<int64_t>> batches;
  batches.reserve(static_cast<size_t>(n / batch_size_ + 1));
  for (int64_t start = 0; start < n; start += batch_size_) {
    const int64_t end = std::min(n, start + batch_size_);
    if (drop_last_ && end - start < batch_size_) break;
    batches.emplace_back(order.begin() + start, order.begin() + end);
  }
  return batches;
}

}  // namespace colony::data
