// The Gloo backend's elementwise reductions (distributed/gloo/reduce.h): the fused
// last-sum-and-divide of an average gives exactly the bytes of the sum followed by the division.
#include "distributed/gloo/reduce.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "ops/raw_ops.h"

namespace colony::dist::gloo_detail {
namespace {

const std::vector<DType> kDtypes = {kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64, kUInt8};

// n values of `dtype` that exercise rounding: fractions with many bits, negatives, large ones.
Tensor values(DType dtype, int64_t n, int salt) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const double x = static_cast<double>((i * 7919 + salt * 104729) % 2001 - 1000);
    v[static_cast<size_t>(i)] = dtype == kUInt8 ? static_cast<double>((i * 31 + salt * 17) % 256)
                                : (dtype == kInt32 || dtype == kInt64) ? x * 1000003.0
                                                                       : x / 7.0 + 1e-3 * salt;
  }
  return raw::to(raw::from_vector(v, {n}), kCPU, dtype);
}

TEST(GlooReduce, FusedAverageEqualsSumThenDivideBitForBit) {
  const int64_t n = 1037;
  for (DType dt : kDtypes)
    for (int divisor : {2, 3, 4, 7}) {
      Tensor a = values(dt, n, 1), b = values(dt, n, 2);
      Tensor two_step = raw::clone(a);
      reduce_function(dt, ReduceOp::kAvg)(two_step.data_ptr_raw(), a.data_ptr_raw(), b.data_ptr_raw(), n);
      finish_average(two_step.data_ptr_raw(), n, dt, divisor);
      // In place, as the allreduce runs it: out aliases a.
      Tensor fused = raw::clone(a);
      sum_and_average_function(dt)(fused.data_ptr_raw(), fused.data_ptr_raw(), b.data_ptr_raw(), n, divisor);
      EXPECT_EQ(std::memcmp(fused.data_ptr_raw(), two_step.data_ptr_raw(), static_cast<size_t>(a.nbytes())), 0)
          << dtype_name(dt) << " / " << divisor;
    }
}

// As NCCL's ncclAvg (C's division), so that both backends average an integer tensor alike.
TEST(GlooReduce, IntegerAverageTruncatesTowardsZero) {
  Tensor a = raw::from_vector(std::vector<int64_t>{-3, 3, -4, 5}, {4});
  Tensor b = raw::from_vector(std::vector<int64_t>{0, 0, 1, 0}, {4});
  sum_and_average_function(kInt64)(a.data_ptr_raw(), a.data_ptr_raw(), b.data_ptr_raw(), 4, 2);
  const int64_t* p = a.data_ptr<int64_t>();
  EXPECT_EQ(p[0], -1);
  EXPECT_EQ(p[1], 1);
  EXPECT_EQ(p[2], -1);
  EXPECT_EQ(p[3], 2);
}

TEST(GlooReduce, BoolCannotBeAveraged) {
  EXPECT_THROW(sum_and_average_function(kBool), std::invalid_argument);
}

}  // namespace
}  // namespace colony::dist::gloo_detail
