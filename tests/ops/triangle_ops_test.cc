// tril and triu (ops/triangle_ops.cc): each element against the diagonal rule, for diagonals
// inside and beyond the matrix, batched and strided inputs, every element size, errors, and CUDA
// against the CPU.
#include <gtest/gtest.h>

#include <vector>

#include "ops/raw_ops.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::throws_with;
using testing::values;

// Non-zero values 1..100 repeating, in any dtype (bool: all true).
Tensor iota(const Shape& shape, DType dtype = kFloat32) {
  std::vector<double> v(static_cast<size_t>(shape_numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i % 100 + 1);
  return raw::to(raw::from_vector(v, shape), kCPU, dtype);
}

void expect_triangle(const Tensor& got, const Tensor& x, int64_t diagonal, bool lower) {
  std::vector<double> g = values(got), v = values(raw::contiguous(x));
  const int64_t rows = x.size(-2), cols = x.size(-1);
  for (size_t k = 0; k < v.size(); ++k) {
    int64_t j = static_cast<int64_t>(k) % cols, i = (static_cast<int64_t>(k) / cols) % rows;
    bool keep = lower ? j - i <= diagonal : j - i >= diagonal;
    EXPECT_EQ(g[k], keep ? v[k] : 0.0) << "element " << k << " diagonal " << diagonal;
  }
}

TEST(Triangle, AgainstTheRule) {
  Tensor x = iota({2, 3, 5});
  for (int64_t diagonal : {-4, -1, 0, 1, 2, 6}) {
    expect_triangle(raw::tril(x, diagonal), x, diagonal, true);
    expect_triangle(raw::triu(x, diagonal), x, diagonal, false);
  }
  // torch.tril(torch.ones(3, 3), -1) and torch.triu(torch.ones(2, 3), 1):
  EXPECT_EQ(values(raw::tril(raw::ones({3, 3}), -1)), (std::vector<double>{0, 0, 0, 1, 0, 0, 1, 1, 0}));
  EXPECT_EQ(values(raw::triu(raw::ones({2, 3}), 1)), (std::vector<double>{0, 1, 1, 0, 0, 1}));
}

TEST(Triangle, StridedAndEveryElementSize) {
  Tensor t = raw::transpose(iota({4, 3}), 0, 1);
  expect_triangle(raw::tril(t), t, 0, true);
  for (DType dtype : {kFloat64, kFloat32, kFloat16, kInt64, kInt32, kUInt8, kBool}) {
    Tensor x = iota({3, 4}, dtype);
    Tensor y = raw::triu(x, 1);
    EXPECT_EQ(y.dtype(), dtype);
    expect_triangle(y, x, 1, false);
  }
  EXPECT_EQ(raw::tril(raw::zeros({0, 3})).sizes(), (Shape{0, 3}));
}

TEST(Triangle, Errors) {
  EXPECT_TRUE(throws_with([] { raw::tril(raw::zeros({3})); }, "tril: input tensor must have at least 2 dimensions, got shape [3]"));
  EXPECT_TRUE(throws_with([] { raw::triu(raw::scalar_tensor(1.0)); }, "triu: input tensor must have at least 2 dimensions"));
}

TEST(Triangle, AgainstCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  Device dev = Device::cuda(0);
  for (DType dtype : {kFloat32, kFloat64, kFloat16, kInt64, kUInt8, kBool}) {
    Tensor x = iota({3, 17, 9}, dtype);
    for (int64_t diagonal : {-20, -2, 0, 3, 20}) {
      EXPECT_TRUE(raw::equal(raw::to(raw::tril(raw::to(x, dev, dtype), diagonal), kCPU, dtype), raw::tril(x, diagonal)));
      EXPECT_TRUE(raw::equal(raw::to(raw::triu(raw::to(x, dev, dtype), diagonal), kCPU, dtype), raw::triu(x, diagonal)));
    }
  }
}

}  // namespace
}  // namespace colony
