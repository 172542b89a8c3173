#include "data/mnist.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "data/idx.h"
#include "tests/data/data_test_util.h"
#include "tests/test_util.h"

namespace colony::data {
namespace {

namespace fs = std::filesystem;
using colony::testing::throws_with;
using namespace colony::data::testing;

void expect_mnist_contents(const Dataset& ds, int64_t n) {
  ASSERT_EQ(ds.size(), n);
  EXPECT_EQ(ds.example_shape(), (Shape{1, 28, 28}));
  EXPECT_EQ(ds.example_dtype(), kUInt8);
  for (int64_t i : {int64_t(0), n / 2, n - 1}) {
    Example ex = ds.get(i);
    EXPECT_EQ(ex.target.item<int64_t>(), mnist_label(i));
    const uint8_t* px = ex.data.data_ptr<uint8_t>();
    for (int64_t p : {0, 27, 28, 783}) EXPECT_EQ(px[p], mnist_pixel(i, p));
  }
}

TEST(MNIST, ReadsPlainIdxFiles) {
  fs::path dir = scratch_dir("mnist_plain");
  write_mnist(dir, "train", 120, /*gz=*/false);
  write_mnist(dir, "t10k", 30, /*gz=*/false);
  expect_mnist_contents(MNIST(dir.string(), Split::kTrain), 120);
  expect_mnist_contents(MNIST(dir.string(), Split::kTest), 30);
}

TEST(MNIST, ReadsGzippedIdxFiles) {
  fs::path dir = scratch_dir("mnist_gz");
  write_mnist(dir, "train", 77, /*gz=*/true);
  expect_mnist_contents(MNIST(dir.string(), Split::kTrain), 77);
  expect_mnist_contents(FashionMNIST(dir.string(), Split::kTrain), 77);
}

TEST(MNIST, MissingFilesSayWhereAndHow) {
  fs::path dir = scratch_dir("mnist_missing");
  auto make = [&] { MNIST(dir.string(), Split::kTest); };
  EXPECT_TRUE(throws_with(make, "neither " + (dir / "t10k-images-idx3-ubyte").string() + " nor " +
                                    (dir / "t10k-images-idx3-ubyte.gz").string() + " exists"));
  EXPECT_TRUE(throws_with(make, "https://"));
  auto fashion = [&] { FashionMNIST((dir / "absent").string(), Split::kTrain); };
  EXPECT_TRUE(throws_with(fashion, "FashionMNIST: no directory"));
  EXPECT_TRUE(throws_with(fashion, "dataset-fashion-mnist"));
}

TEST(MNIST, BadMagicNumberIsNamed) {
  fs::path dir = scratch_dir("mnist_magic");
  write_mnist(dir, "train", 10, /*gz=*/false);
  // The labels file where the images belong: magic 0x801, one dimension.
  fs::copy_file(dir / "train-labels-idx1-ubyte", dir / "train-images-idx3-ubyte", fs::copy_options::overwrite_existing);
  EXPECT_TRUE(
      throws_with([&] { MNIST(dir.string(), Split::kTrain); },
                  (dir / "train-images-idx3-ubyte").string() + " has magic number 0x00000801, expected 0x00000803"));
}

TEST(MNIST, TruncatedPlainFileIsRejected) {
  fs::path dir = scratch_dir("mnist_trunc_plain");
  write_mnist(dir, "train", 10, /*gz=*/false);
  fs::resize_file(dir / "train-images-idx3-ubyte", 16 + 10 * 784 - 5);
  EXPECT_TRUE(throws_with([&] { MNIST(dir.string(), Split::kTrain); },
                          "is truncated: its header promises [10, 28, 28] = 7840 bytes of data, found 7835"));
  fs::resize_file(dir / "train-images-idx3-ubyte", 6);
  EXPECT_TRUE(throws_with([&] { MNIST(dir.string(), Split::kTrain); }, "too short to hold its 3 dimension sizes"));
}

TEST(MNIST, TruncatedGzipFileIsRejected) {
  fs::path dir = scratch_dir("mnist_trunc_gz");
  write_mnist(dir, "train", 200, /*gz=*/true);
  const auto size = fs::file_size(dir / "train-images-idx3-ubyte.gz");
  fs::resize_file(dir / "train-images-idx3-ubyte.gz", size / 2);
  EXPECT_TRUE(throws_with([&] { MNIST(dir.string(), Split::kTrain); }, (dir / "train-images-idx3-ubyte.gz").string()));
  EXPECT_TRUE(throws_with([&] { MNIST(dir.string(), Split::kTrain); }, "truncated"));
}

TEST(MNIST, TrailingDataIsRejected) {
  fs::path dir = scratch_dir("mnist_trailing");
  write_mnist(dir, "train", 10, /*gz=*/false);
  std::vector<uint8_t> labels = idx_file({10}, std::vector<uint8_t>(11, 1));
  write_bytes(dir / "train-labels-idx1-ubyte", labels);
  EXPECT_TRUE(throws_with([&] { MNIST(dir.string(), Split::kTrain); }, "holds more data than its header's shape [10]"));
}

TEST(MNIST, CountMismatchAndLabelRange) {
  fs::path dir = scratch_dir("mnist_counts");
  write_mnist(dir, "train", 10, /*gz=*/false);
  write_bytes(dir / "train-labels-idx1-ubyte", idx_file({9}, std::vector<uint8_t>(9, 1)));
  EXPECT_TRUE(throws_with([&] { MNIST(dir.string(), Split::kTrain); }, "holds 10 images but"));
  std::vector<uint8_t> labels(10, 3);
  labels[6] = 12;
  write_bytes(dir / "train-labels-idx1-ubyte", idx_file({10}, labels));
  EXPECT_TRUE(throws_with([&] { MNIST(dir.string(), Split::kTrain); }, "label 6 is 12, expected 0..9"));
}

TEST(MNIST, PlainFileWinsOverGzip) {
  fs::path dir = scratch_dir("mnist_both");
  write_mnist(dir, "t10k", 5, /*gz=*/false);
  write_gz(dir / "t10k-images-idx3-ubyte.gz", {0, 0});  // corrupt, but not read
  EXPECT_EQ(find_idx_file(dir.string(), "t10k-images-idx3-ubyte"), (dir / "t10k-images-idx3-ubyte").string());
  EXPECT_EQ(MNIST(dir.string(), Split::kTest).size(), 5);
}

TEST(MNIST, TransformToFloat) {
  fs::path dir = scratch_dir("mnist_transform");
  write_mnist(dir, "t10k", 4, /*gz=*/true);
  auto ds = MNIST(dir.string(), Split::kTest).transform(Normalize({0.1307}, {0.3081}));
  Example ex = ds.get(2);
  EXPECT_EQ(ex.data.sizes(), (Shape{1, 28, 28}));
  EXPECT_NEAR(ex.data.data_ptr<float>()[9], (mnist_pixel(2, 9) / 255.0 - 0.1307) / 0.3081, 1e-5);
}

// Debian's dataset-fashion-mnist package, when installed (./bazelw installs it).
TEST(FashionMNIST, ReadsTheDebianPackageFiles) {
  if (!fs::exists(fs::path(FashionMNIST::kDefaultRoot) / "train-images-idx3-ubyte.gz")) {
    GTEST_SKIP() << "dataset-fashion-mnist is not installed at " << FashionMNIST::kDefaultRoot;
  }
  FashionMNIST train(Split::kTrain), test(Split::kTest);
  EXPECT_EQ(train.size(), 60000);
  EXPECT_EQ(test.size(), 10000);
  EXPECT_EQ(train.example_shape(), (Shape{1, 28, 28}));
  // The classes are balanced: 6,000 train and 1,000 test images each.
  std::vector<int64_t> counts(10, 0);
  for (int64_t i = 0; i < test.size(); ++i) ++counts[test.targets().data_ptr<int64_t>()[i]];
  for (int c = 0; c < 10; ++c) EXPECT_EQ(counts[c], 1000) << FashionMNIST::classes()[c];
  // Real images are neither blank nor saturated: the mean pixel lies well inside (0, 255).
  double sum = 0;
  const uint8_t* px = train.images().data_ptr<uint8_t>();
  for (int64_t i = 0; i < train.images().numel(); ++i) sum += px[i];
  const double mean = sum / static_cast<double>(train.images().numel());
  EXPECT_GT(mean, 40.0);  // torchvision's Fashion-MNIST mean is 0.2860 * 255 = 72.9
  EXPECT_LT(mean, 110.0);
}

}  // namespace
}  // namespace colony::data
