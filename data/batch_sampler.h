// Batch samplers (torch's batch_sampler): the batches of a pass as lists of dataset indices, for a
// DataLoader given one in place of batch_size / shuffle / sampler / drop_last.
//
//   data::RandomSampler order(train.size(), seed);
//   data::BatchSampler batches(order, 32, /*drop_last=*/false);
//   data::DataLoader loader(train, batches, data::DataLoaderOptions().workers(4));
//
// BatchSampler cuts another sampler's order into batches, as torch's; a batch sampler of one's own
// (batches of similar lengths, a fixed token budget per batch, ...) derives from BatchSamplerBase and
// may give batches of any sizes. Batches of different sizes are collated as the sampler gives them.
#pragma once

#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "data/sampler.h"

namespace colony::data {

class BatchSamplerBase {
 public:
  virtual ~BatchSamplerBase() = default;
  // Batches per pass (DataLoader::size()).
  virtual int64_t size() const = 0;
  // The batches of the next pass: what DataLoader::begin() calls once per pass. None may be empty.
  virtual std::vector<std::vector<int64_t>> next_pass() = 0;
  // The epoch random transforms see (ExampleContext::epoch), and the one set_epoch chooses; a batch
  // sampler over another sampler forwards both to it, so set_epoch reaches a DistributedSampler.
  virtual int64_t epoch() const { return epoch_; }
  virtual void set_epoch(int64_t epoch) { epoch_ = epoch; }

 protected:
  int64_t epoch_ = 0;
};

// torch.utils.data.BatchSampler: the sampler's order in consecutive batches of batch_size; the last
// one is shorter unless drop_last, which leaves it out. The sampler is referenced (it must outlive
// this) or, given by value, owned.
class BatchSampler : public BatchSamplerBase {
 public:
  BatchSampler(Sampler& sampler, int64_t batch_size, bool drop_last);
  template <typename S, typename = std::enable_if_t<std::is_base_of_v<Sampler, std::decay_t<S>> &&
                                                    !std::is_lvalue_reference_v<S>>>
  BatchSampler(S&& sampler, int64_t batch_size, bool drop_last)
      : BatchSampler(std::make_shared<std::decay_t<S>>(std::forward<S>(sampler)), batch_size, drop_last) {}
  BatchSampler(std::shared_ptr<Sampler> sampler, int64_t batch_size, bool drop_last);

  // floor(n / batch_size) with drop_last, else ceil; n = sampler().size().
  int64_t size() const override;
  std::vector<std::vector<int64_t>> next_pass() override;
  int64_t epoch() const override { return sampler_->epoch(); }
  void set_epoch(int64_t epoch) override { sampler_->set_epoch(epoch); }

  Sampler& sampler() const { return *sampler_; }
  int64_t batch_size() const { return batch_size_; }
  bool drop_last() const { return drop_last_; }

 private:
  std::shared_ptr<Sampler> owned_;
  Sampler* sampler_;
  int64_t batch_size_;
  bool drop_last_;
};

}  // namespace colony::data
