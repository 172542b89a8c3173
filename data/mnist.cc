#include "data/mnist.h"

#include "data/idx.h"

namespace colony::data {

MNIST::MNIST(const std::string& root, Split split) : root_(root) {
  static_cast<InMemoryImageDataset&>(*this) =
      load_idx_dataset(root, split, "MNIST",
                       "Get the four files (gzipped is fine) from https://ossci-datasets.s3.amazonaws.com/mnist/ "
                       "(the mirror torchvision uses) into that directory");
}

const std::vector<std::string>& MNIST::classes() {
  static const std::vector<std::string> names = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};
  return names;
}

FashionMNIST::FashionMNIST(const std::string& root, Split split) : root_(root) {
  static_cast<InMemoryImageDataset&>(*this) = load_idx_dataset(
      root, split, "FashionMNIST",
      std::string("On Debian, `apt-get install dataset-fashion-mnist` puts the files in ") + kDefaultRoot +
          " (the default root); elsewhere get them from "
          "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/");
}

const std::vector<std::string>& FashionMNIST::classes() {
  static const std::vector<std::string> names = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                                 "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
  return names;
}

}  // namespace colony::data
