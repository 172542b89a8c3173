#include "data/iterable_dataset.h"

#include <stdexcept>
#include <string>

namespace colony::data {
namespace {

// Reads each dataset's stream in turn, opening the next only when the previous one has ended.
class ChainStream : public ExampleStream {
 public:
  explicit ChainStream(std::vector<std::shared_ptr<const IterableDataset>> datasets) : datasets_(std::move(datasets)) {}

  std::optional<Example> next() override {
    while (true) {
      if (!current_) {
        if (next_dataset_ >= datasets_.size()) return std::nullopt;
        current_ = datasets_[next_dataset_++]->iter();
        if (!current_) {
          throw std::logic_error("ChainDataset: dataset " + std::to_string(next_dataset_ - 1) +
                                 "'s iter() returned no stream");
        }
      }
      if (std::optional<Example> ex = current_->next()) return ex;
      current_.reset();
    }
  }

 private:
  const std::vector<std::shared_ptr<const IterableDataset>> datasets_;  // shared handles: the stream may outlive the chain
  size_t next_dataset_ = 0;
  std::unique_ptr<ExampleStream> current_;
};

}  // namespace

ChainDataset::ChainDataset(std::vector<std::shared_ptr<const IterableDataset>> datasets)
    : datasets_(std::move(datasets)) {
  for (size_t i = 0; i < datasets_.size(); ++i) {
    if (!datasets_[i]) throw std::invalid_argument("ChainDataset: dataset " + std::to_string(i) + " is null");
  }
}

std::unique_ptr<ExampleStream> ChainDataset::iter() const { return std::make_unique<ChainStream>(datasets_); }

}  // namespace colony::data
