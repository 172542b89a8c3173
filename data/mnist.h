// MNIST and Fashion-MNIST from their IDX files (train-images-idx3-ubyte, train-labels-idx1-ubyte,
// t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte), each plain or gzipped (.gz). Images are kept as
// uint8 [N, 1, 28, 28], labels as int64 in 0..9.
#pragma once

#include <string>
#include <vector>

#include "data/image_dataset.h"
#include "data/transformed_dataset.h"

namespace colony::data {

class MNIST : public Transformable<MNIST, InMemoryImageDataset> {
 public:
  MNIST(const std::string& root, Split split);
  const std::string& root() const { return root_; }
  static const std::vector<std::string>& classes();  // "0" .. "9"

 private:
  std::string root_;
};

class FashionMNIST : public Transformable<FashionMNIST, InMemoryImageDataset> {
 public:
  // Where Debian's dataset-fashion-mnist package installs the gzipped files (./bazelw installs it).
  static constexpr const char* kDefaultRoot = "/usr/share/datasets/fashion-mnist";
  explicit FashionMNIST(Split split) : FashionMNIST(kDefaultRoot, split) {}
  FashionMNIST(const std::string& root, Split split);
  const std::string& root() const { return root_; }
  static const std::vector<std::string>& classes();  // "T-shirt/top", "Trouser", ...

 private:
  std::string root_;
};

}  // namespace colony::data
