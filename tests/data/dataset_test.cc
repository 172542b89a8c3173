#include "data/dataset.h"

#include <gtest/gtest.h>

#include "data/image_dataset.h"
#include "tests/test_util.h"

namespace colony::data {
namespace {

using colony::testing::throws_with;

// int32 [2, 3] examples with a ragged one at index 3; float targets at index 4.
class Odd : public Dataset {
 public:
  int64_t size() const override { return 5; }
  Example get(int64_t i) const override {
    check_index(i, "Odd");
    Tensor data = raw::full(i == 3 ? Shape{3, 2} : Shape{2, 3}, static_cast<double>(i), kInt32);
    Tensor target = raw::scalar_tensor(static_cast<double>(i), i == 4 ? kFloat32 : kInt64);
    return {data, target};
  }
};

TEST(Dataset, DefaultShapeDtypeAndCollationGoThroughGet) {
  Odd ds;
  EXPECT_EQ(ds.example_shape(), (Shape{2, 3}));
  EXPECT_EQ(ds.example_dtype(), kInt32);
  Batch batch{raw::zeros({3, 2, 3}, kFloat32), raw::zeros({3}, kInt64)};  // converts int32 to float32
  ds.copy_into(2, batch, 1, {});
  EXPECT_EQ(colony::testing::values(raw::select(batch.data, 0, 1)), std::vector<double>(6, 2.0));
  EXPECT_EQ(colony::testing::values(raw::select(batch.data, 0, 0)), std::vector<double>(6, 0.0));
  EXPECT_EQ(batch.target.data_ptr<int64_t>()[1], 2);
  EXPECT_TRUE(
      throws_with([&] { ds.copy_into(3, batch, 0, {}); }, "example 3 has shape [3, 2], the batch expects [2, 3]"));
  EXPECT_TRUE(throws_with([&] { ds.copy_into(4, batch, 0, {}); }, "needs a one-element integral target"));
  EXPECT_TRUE(throws_with([&] { ds.get(5); }, "Odd: index 5 out of range for a dataset of 5 examples"));
}

TEST(InMemoryImageDataset, ViewsAndMemcpyCollation) {
  Tensor images = raw::empty({3, 1, 2, 2}, kUInt8);
  for (int i = 0; i < 12; ++i) images.data_ptr<uint8_t>()[i] = static_cast<uint8_t>(i);
  Tensor targets = raw::arange(0, 3, 1, TensorOptions(kInt64));
  InMemoryImageDataset ds(images, targets);
  EXPECT_EQ(ds.get(1).data.data_ptr<uint8_t>()[0], 4);  // a view: no copy
  EXPECT_EQ(ds.get(1).data.storage().get(), images.storage().get());
  Batch batch{raw::zeros({2, 1, 2, 2}, kUInt8), raw::zeros({2}, kInt64)};
  ds.copy_into(2, batch, 0, {});
  EXPECT_EQ(colony::testing::values(raw::select(batch.data, 0, 0)), (std::vector<double>{8, 9, 10, 11}));
  EXPECT_EQ(batch.target.data_ptr<int64_t>()[0], 2);
  EXPECT_TRUE(throws_with([&] { InMemoryImageDataset(raw::zeros({3, 4}, kUInt8), targets); }, "uint8 [N, C, H, W]"));
  EXPECT_TRUE(throws_with([&] { InMemoryImageDataset(images, raw::zeros({2}, kInt64)); }, "int64 [3] tensor"));
}

}  // namespace
}  // namespace colony::data
