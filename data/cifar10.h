// CIFAR-10 from the official binary distribution (cifar-10-binary.tar.gz): data_batch_1.bin ..
// data_batch_5.bin (train, 50,000 images) and test_batch.bin (test, 10,000). Each file holds 10,000
// records of 1 label byte followed by 3,072 pixel bytes (1,024 red, 1,024 green, 1,024 blue, rows
// top to bottom), i.e. exactly the CHW layout kept in memory: uint8 [N, 3, 32, 32].
#pragma once

#include <string>
#include <vector>

#include "data/image_dataset.h"
#include "data/transformed_dataset.h"

namespace colony::data {

class CIFAR10 : public Transformable<CIFAR10, InMemoryImageDataset> {
 public:
  static constexpr const char* kUrl = "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz";
  static constexpr int64_t kRecordsPerFile = 10000;
  static constexpr int64_t kImageBytes = 3 * 32 * 32;
  static constexpr int64_t kRecordBytes = 1 + kImageBytes;

  // `root` is the directory holding the .bin files (the archive's cifar-10-batches-bin/). Every file
  // is checked: its size, and each label in 0..9. A missing directory or file gives an error that
  // says where it looked and how to get the data.
  CIFAR10(const std::string& root, Split split);

  const std::string& root() const { return root_; }
  Split split() const { return split_; }
  static const std::vector<std::string>& classes();  // "airplane", "automobile", ...
  static std::vector<std::string> file_names(Split split);
  // True when `root` holds every file of both splits, each of the right size.
  static bool available(const std::string& root);
  // Makes `root` hold the dataset: downloads `url` (the official archive by default) with libcurl,
  // unpacks it into `root` (dropping the archive's top directory), deletes the archive and checks
  // the files. Does nothing when available(root) already.
  static void download(const std::string& root, const std::string& url = kUrl);

 private:
  std::string root_;
  Split split_;
};

}  // namespace colony::data
