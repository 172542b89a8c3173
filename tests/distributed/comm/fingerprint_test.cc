// The fingerprints ranks exchange before a collective, and the words for a disagreement.
#include "distributed/comm/fingerprint.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "distributed/comm/process_group.h"
#include "tensor/dtype.h"

namespace colony::dist::comm_detail {
namespace {

Fingerprint allreduce(int64_t numel, uint32_t layout = 0) {
  Fingerprint f;
  f.kind = static_cast<int32_t>(OpKind::kAllreduce);
  f.seq = 4;
  f.numel = numel;
  f.dtype = static_cast<int32_t>(kFloat32);
  f.reduce_op = static_cast<int32_t>(ReduceOp::kSum);
  f.layout = layout;
  return f;
}

TEST(Fingerprint, TensorLayoutTellsSplitsOfTheSameTotalApart) {
  EXPECT_NE(tensor_layout({100, 50}), tensor_layout({50, 100}));
  EXPECT_NE(tensor_layout({150}), tensor_layout({100, 50}));
  EXPECT_EQ(tensor_layout({100, 50}), tensor_layout({100, 50}));
  EXPECT_EQ(tensor_layout({100, 50}) & 0xFF, 2u);  // the count, readable in messages
  EXPECT_EQ(tensor_layout(std::vector<int64_t>(300, 1)) & 0xFF, 255u);
  EXPECT_NE(tensor_layout({}), 0u);  // 0 means one tensor
}

TEST(Fingerprint, DifferentSplitsOfTheSameTotalAreAMismatchThatSaysSo) {
  const std::vector<Fingerprint> all{allreduce(150, tensor_layout({100, 50})),
                                     allreduce(150, tensor_layout({50, 100}))};
  EXPECT_FALSE(same_call(all[0], all[1]));
  const std::string m = describe_mismatch(all, 1);
  EXPECT_NE(m.find("collective mismatch at #4: rank 0 called allreduce(float32, 150 elements as 2 tensors of sizes #"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("several tensors at once must have the same sizes, in the same order, on every rank"),
            std::string::npos)
      << m;
  EXPECT_EQ(describe_mismatch({all[0], all[0]}, 0), "");
}

TEST(Fingerprint, WorkDescriptionsNameTheTensorCountButNotTheHash) {
  EXPECT_EQ(work_description(allreduce(150, tensor_layout({100, 50}))),
            "allreduce #4 (float32, 150 elements as 2 tensors, sum)");
  EXPECT_EQ(work_description(allreduce(150)), "allreduce #4 (float32, 150 elements, sum)");
  EXPECT_EQ(call_signature(allreduce(150)), "allreduce(float32, 150 elements, sum)");
}

}  // namespace
}  // namespace colony::dist::comm_detail
