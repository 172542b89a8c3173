// Images per second through the DataLoader at batch 32 for LeNet-CIFAR10's pipelines: in-memory
// CIFAR-shaped uint8 images (what CIFAR10 holds) with Normalize, the same with the usual
// augmentation (RandomCrop(32, 4), RandomHorizontalFlip), and SyntheticCIFAR10 (rendered per
// image) with Normalize; 0, 1, 2 and 4 worker threads, pinned buffers. Best of three passes over
// 20,000 images each (the least disturbed by other work).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>

#include "data/data.h"
#include "ops/raw_ops.h"

namespace {

using namespace colony;
using namespace colony::data;

double images_per_s(const std::shared_ptr<const Dataset>& ds, int workers) {
  const int64_t n = 20000;
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    RandomSampler sampler(ds->size(), rep);
    DataLoader loader(ds, sampler, DataLoaderOptions(32).workers(workers).pin_memory(true));
    int64_t seen = 0;
    double checksum = 0;
    auto start = std::chrono::steady_clock::now();
    for (auto& batch : loader) {
      checksum += static_cast<double>(batch.target.data_ptr<int64_t>()[0]);  // touch the batch
      seen += batch.size();
      if (seen >= n) break;
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, static_cast<double>(seen) / s);
    if (checksum < 0) std::printf("impossible\n");
  }
  return best;
}

}  // namespace

int main() {
  Tensor images = raw::randint(0, 256, {50000, 3, 32, 32}, TensorOptions(kUInt8));
  Tensor targets = raw::randint(0, 10, {50000});
  auto raw = std::make_shared<InMemoryImageDataset>(images, targets);
  const Normalize norm({0.5, 0.5, 0.5}, {0.5, 0.5, 0.5});
  struct Case {
    const char* name;
    std::shared_ptr<const Dataset> ds;
  } cases[] = {
      {"cifar-shaped uint8 (no transform)", raw},
      {"cifar-shaped + Normalize",
       std::make_shared<TransformedDataset>(TransformedDataset(raw, ToTensor(), {}).transform(norm))},
      {"cifar-shaped + RandomCrop(32,4) + Flip + Normalize",
       std::make_shared<TransformedDataset>(
           TransformedDataset(raw, ToTensor(), {}).transform(RandomCrop(32, 4), RandomHorizontalFlip(), norm))},
      {"SyntheticCIFAR10 + Normalize",
       std::make_shared<TransformedDataset>(SyntheticCIFAR10(Split::kTrain).transform(norm))},
  };
  for (const auto& c : cases) {
    std::printf("%-52s", c.name);
    for (int workers : {0, 1, 2, 4}) std::printf("  %d workers: %8.0f", workers, images_per_s(c.ds, workers));
    std::printf("  images/s\n");
  }
}
