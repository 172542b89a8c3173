// The device-side index error record (kernels/common/device_error.h), exercised on the host with
// a plain struct standing in for the mapped pinned page the CUDA kernels write.
#include "kernels/common/device_error.h"

#include <gtest/gtest.h>

#include <string>

namespace colony::kernels {
namespace {

TEST(DeviceError, EmptyRecordReportsNothing) {
  DeviceErrorRecord r{0, 0, 0};
  EXPECT_EQ(take_device_error(&r), "");
}

TEST(DeviceError, RecordNamesTheOpTheIndexAndTheBoundThenClears) {
  DeviceErrorRecord r{0, 0, 0};
  record_bad_index(&r, CheckedOp::Gather, 7, 5);
  std::string m = take_device_error(&r);
  EXPECT_NE(m.find("gather: index 7 is out of range for a dimension of size 5"), std::string::npos) << m;
  EXPECT_NE(m.find("COLONY_CUDA_SYNC=1"), std::string::npos) << m;
  EXPECT_EQ(r.op, 0);
  EXPECT_EQ(take_device_error(&r), "");  // reported once
}

TEST(DeviceError, FirstFailingOpKeepsTheRecord) {
  DeviceErrorRecord r{0, 0, 0};
  record_bad_index(&r, CheckedOp::ScatterAdd, -1, 4);
  record_bad_index(&r, CheckedOp::IndexSelect, 100, 3);
  std::string m = take_device_error(&r);
  EXPECT_EQ(m.rfind("scatter_add: index -1 is out of range for a dimension of size 4", 0), 0u) << m;
  // Once taken, the next failure is recorded again.
  record_bad_index(&r, CheckedOp::IndexAdd, 9, 2);
  EXPECT_EQ(take_device_error(&r).rfind("index_add: index 9", 0), 0u);
}

TEST(DeviceError, TargetsAreWordedAsClasses) {
  DeviceErrorRecord r{0, 0, 0};
  record_bad_index(&r, CheckedOp::CrossEntropy, 10, 10);
  EXPECT_EQ(take_device_error(&r).rfind("cross_entropy: target 10 is out of bounds for 10 classes", 0), 0u);
  record_bad_index(&r, CheckedOp::NllLoss, -3, 10);
  EXPECT_EQ(take_device_error(&r).rfind("nll_loss: target -3 is out of bounds for 10 classes", 0), 0u);
  record_bad_index(&r, CheckedOp::CtcLoss, 30, 30);
  EXPECT_EQ(take_device_error(&r).rfind("ctc_loss: target 30 is out of bounds for 30 classes", 0), 0u);
  record_bad_index(&r, CheckedOp::EmbeddingBag, 9, 4);
  EXPECT_EQ(take_device_error(&r).rfind("embedding_bag: index 9 is out of range for a dimension of size 4", 0), 0u);
}

TEST(DeviceError, IndexInRange) {
  EXPECT_TRUE(index_in_range(0, 1));
  EXPECT_TRUE(index_in_range(4, 5));
  EXPECT_FALSE(index_in_range(5, 5));
  EXPECT_FALSE(index_in_range(-1, 5));
  EXPECT_FALSE(index_in_range(0, 0));
}

TEST(DeviceError, EveryOpHasAName) {
  for (auto op : {CheckedOp::IndexSelect, CheckedOp::IndexAdd, CheckedOp::Gather, CheckedOp::ScatterAdd,
                  CheckedOp::NllLoss, CheckedOp::CrossEntropy, CheckedOp::Scatter, CheckedOp::CtcLoss,
                  CheckedOp::EmbeddingBag}) {
    EXPECT_STRNE(checked_op_name(op), "unknown op");
    EXPECT_STRNE(checked_op_name(op), "none");
  }
}

}  // namespace
}  // namespace colony::kernels
