#include "data/cifar10.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "tests/data/data_test_util.h"
#include "tests/test_util.h"

namespace colony::data {
namespace {

namespace fs = std::filesystem;
using colony::testing::throws_with;
using namespace colony::data::testing;

TEST(CIFAR10, ReadsTheTestBatch) {
  fs::path dir = scratch_dir("cifar_test_split");
  write_cifar_dir(dir, /*train=*/false, /*test=*/true);
  CIFAR10 ds(dir.string(), Split::kTest);
  ASSERT_EQ(ds.size(), 10000);
  EXPECT_EQ(ds.example_shape(), (Shape{3, 32, 32}));
  EXPECT_EQ(ds.example_dtype(), kUInt8);
  for (int64_t r : {0, 1, 4242, 9999}) {
    Example ex = ds.get(r);
    ASSERT_EQ(ex.data.sizes(), (Shape{3, 32, 32}));
    EXPECT_EQ(ex.target.item<int64_t>(), cifar_label(0, r));
    const uint8_t* px = ex.data.data_ptr<uint8_t>();
    // Byte p of the record is channel p / 1024, row (p % 1024) / 32, column p % 32.
    for (int64_t p : {0, 1, 31, 32, 1023, 1024, 2048, 3071}) EXPECT_EQ(px[p], cifar_pixel(0, r, p)) << r << " " << p;
  }
  EXPECT_TRUE(throws_with([&] { ds.get(10000); }, "index 10000 out of range"));
}

TEST(CIFAR10, ReadsTheFiveTrainBatchesInOrder) {
  fs::path dir = scratch_dir("cifar_train_split");
  write_cifar_dir(dir, /*train=*/true, /*test=*/true);
  EXPECT_TRUE(CIFAR10::available(dir.string()));
  CIFAR10 ds(dir.string(), Split::kTrain);
  ASSERT_EQ(ds.size(), 50000);
  for (int f = 1; f <= 5; ++f) {
    const int64_t i = (f - 1) * 10000 + 123;
    EXPECT_EQ(ds.targets().data_ptr<int64_t>()[i], cifar_label(f, 123));
    EXPECT_EQ(ds.images().data_ptr<uint8_t>()[i * 3072 + 77], cifar_pixel(f, 123, 77));
  }
}

TEST(CIFAR10, MissingDirectorySaysWhereItLookedAndHowToGetTheData) {
  fs::path dir = scratch_dir("cifar_missing") / "nowhere";
  auto make = [&] { CIFAR10(dir.string(), Split::kTrain); };
  EXPECT_TRUE(throws_with(make, dir.string()));
  EXPECT_TRUE(throws_with(make, "data_batch_1.bin"));
  EXPECT_TRUE(throws_with(make, "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz"));
  EXPECT_TRUE(throws_with(make, "CIFAR10::download"));
  EXPECT_FALSE(CIFAR10::available(dir.string()));
}

TEST(CIFAR10, MissingFileIsNamed) {
  fs::path dir = scratch_dir("cifar_missing_file");
  write_cifar_dir(dir, /*train=*/false, /*test=*/true);  // no train batches
  EXPECT_TRUE(
      throws_with([&] { CIFAR10(dir.string(), Split::kTrain); }, (dir / "data_batch_1.bin").string() + " is missing"));
  EXPECT_FALSE(CIFAR10::available(dir.string()));
}

// A FIFO (or a directory) where a batch file should be was reported as "missing": it is there, it
// is the wrong kind of file.
TEST(CIFAR10, AFifoOrDirectoryInPlaceOfABatchIsNotARegularFile) {
  fs::path dir = scratch_dir("cifar_fifo");
  write_cifar_dir(dir, /*train=*/false, /*test=*/false);
  ASSERT_EQ(::mkfifo((dir / "test_batch.bin").c_str(), 0600), 0);
  EXPECT_TRUE(throws_with([&] { CIFAR10(dir.string(), Split::kTest); },
                          (dir / "test_batch.bin").string() + " is not a regular file (it is a FIFO)"));
  fs::create_directory(dir / "data_batch_1.bin");
  EXPECT_TRUE(throws_with([&] { CIFAR10(dir.string(), Split::kTrain); },
                          (dir / "data_batch_1.bin").string() + " is not a regular file (it is a directory)"));
  EXPECT_FALSE(CIFAR10::available(dir.string()));
}

TEST(CIFAR10, TruncatedFileIsRejectedWithItsSize) {
  fs::path dir = scratch_dir("cifar_truncated");
  std::vector<uint8_t> bytes = cifar_batch(0);
  bytes.resize(bytes.size() - 1000);
  write_bytes(dir / "test_batch.bin", bytes);
  auto make = [&] { CIFAR10(dir.string(), Split::kTest); };
  EXPECT_TRUE(throws_with(make, (dir / "test_batch.bin").string()));
  EXPECT_TRUE(throws_with(make, "holds 30729000 bytes, expected 30730000"));
  EXPECT_TRUE(throws_with(make, "truncated"));
}

TEST(CIFAR10, OversizedFileIsRejected) {
  fs::path dir = scratch_dir("cifar_oversized");
  std::vector<uint8_t> bytes = cifar_batch(0);
  bytes.resize(bytes.size() + 3073);
  write_bytes(dir / "test_batch.bin", bytes);
  EXPECT_TRUE(throws_with([&] { CIFAR10(dir.string(), Split::kTest); }, "holds 30733073 bytes"));
}

TEST(CIFAR10, LabelOutOfRangeNamesFileAndRecord) {
  fs::path dir = scratch_dir("cifar_bad_label");
  std::vector<uint8_t> bytes = cifar_batch(0);
  bytes[size_t(3073) * 517] = 10;
  write_bytes(dir / "test_batch.bin", bytes);
  auto make = [&] { CIFAR10(dir.string(), Split::kTest); };
  EXPECT_TRUE(throws_with(make, (dir / "test_batch.bin").string() + ": record 517 has label 10, expected 0..9"));
}

TEST(CIFAR10, TransformNormalizeYieldsFloatImages) {
  fs::path dir = scratch_dir("cifar_transform");
  write_cifar_dir(dir, /*train=*/false, /*test=*/true);
  auto ds = CIFAR10(dir.string(), Split::kTest).transform(Normalize({0.5, 0.5, 0.5}, {0.5, 0.5, 0.5}));
  EXPECT_EQ(ds.size(), 10000);
  EXPECT_EQ(ds.example_dtype(), kFloat32);
  Example ex = ds.get(7);
  ASSERT_EQ(ex.data.dtype(), kFloat32);
  EXPECT_EQ(ex.target.item<int64_t>(), cifar_label(0, 7));
  const float* v = ex.data.data_ptr<float>();
  for (int64_t p : {0, 100, 3071}) {
    EXPECT_NEAR(v[p], (cifar_pixel(0, 7, p) / 255.0 - 0.5) / 0.5, 1e-6);
  }
}

TEST(CIFAR10, ClassNames) {
  ASSERT_EQ(CIFAR10::classes().size(), 10u);
  EXPECT_EQ(CIFAR10::classes()[0], "airplane");
  EXPECT_EQ(CIFAR10::classes()[9], "truck");
}

}  // namespace
}  // namespace colony::data
