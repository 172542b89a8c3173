// mode (autograd/mode.cc, ops/mode_ops.cc, kernels/*/mode.*) against torch's values, indices and
// gradients (reduce_golden.h, written by reduce_golden.py), long rows against counting by hand, a
// float64 gradient check, and the errors.
#include <map>
#include <vector>

#include "tests/autograd/gradcheck.h"
#include "tests/autograd/reduce_golden_check.h"

namespace colony {
namespace {

using testing::gradcheck;
using testing::input;
using testing::strided_input;
using testing::throws_with;
using testing::reduce_golden::Case;
using testing::reduce_golden::golden;
using testing::reduce_golden::golden_input;
using testing::reduce_golden::matches_golden;
using In = const std::vector<Tensor>&;

template <typename F>
void check(const char* name, Device device, F op) {
  const Case& c = golden(name);
  Tensor x = golden_input(c, device);
  auto [values, indices] = op(x);
  EXPECT_TRUE(matches_golden(c, x, values, indices));
}

void check_golden(Device device) {
  for (const char* name : {"mode/all_ties", "mode/signed_zero", "mode/distinct", "mode/bool"}) {
    check(name, device, [](const Tensor& x) { return mode(x); });
  }
  for (const char* name : {"mode/dim1", "mode/nan", "mode/f32", "mode/i64", "mode/i32", "mode/u8"}) {
    check(name, device, [](const Tensor& x) { return mode(x, 1); });
  }
  check("mode/dim0", device, [](const Tensor& x) { return mode(x, 0); });
  check("mode/keepdim", device, [](const Tensor& x) { return mode(x, -1, /*keepdim=*/true); });
  check("mode/scalar", device, [](const Tensor& x) { return mode(x, 0); });
}

TEST(Mode, MatchesTorch) { check_golden(kCPU); }

TEST(Mode, MatchesTorch_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  check_golden(Device::cuda(0));
}

// Rows of 1,000 small integers along either dim: the most frequent value (the smallest of a tie)
// counted by hand, and the position of its last occurrence (torch's CPU kernel may name any
// occurrence in rows this long; its value is the same).
void check_long_rows(Device device) {
  const int64_t rows = 6, n = 1000;
  std::vector<double> data(rows * n);
  for (int64_t i = 0; i < rows * n; ++i) data[i] = static_cast<double>((i * 7919 + i / 13) % (5 + i / n));
  Tensor x = raw::to(raw::from_vector(data, {rows, n}, TensorOptions(kFloat64)), device, kFloat32);
  for (bool transposed : {false, true}) {
    Tensor in = transposed ? raw::contiguous(raw::transpose(x, 0, 1)) : x;
    auto [values, indices] = mode(in, transposed ? 0 : 1);
    std::vector<double> v = testing::values(values), idx = testing::values(indices);
    ASSERT_EQ(v.size(), static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) {
      std::map<double, int64_t> count, last;
      for (int64_t j = 0; j < n; ++j) {
        ++count[data[r * n + j]];
        last[data[r * n + j]] = j;
      }
      double best = 0;
      int64_t best_count = 0;
      for (const auto& [value, k] : count) {
        if (k > best_count) best = value, best_count = k;
      }
      EXPECT_EQ(v[r], best) << "row " << r << (transposed ? " (dim 0)" : "");
      EXPECT_EQ(idx[r], static_cast<double>(last[best])) << "row " << r << (transposed ? " (dim 0)" : "");
    }
  }
}

TEST(Mode, LongRowsMatchCounting) { check_long_rows(kCPU); }

TEST(Mode, LongRowsMatchCounting_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  check_long_rows(Device::cuda(0));
}

TEST(Mode, Gradcheck) {
  // input() draws distinct values: each row's mode is its smallest, which finite differences keep.
  for (Tensor x : {input({3, 5}), strided_input({3, 5}), input({2, 3, 4})}) {
    for (int64_t dim : {0, -1}) {
      for (bool keepdim : {false, true}) {
        EXPECT_TRUE(gradcheck([&](In in) { return mode(in[0], dim, keepdim).first; }, {x}));
      }
    }
  }
}

TEST(Mode, Errors) {
  EXPECT_TRUE(throws_with([] { mode(raw::zeros({0})); }, "mode: expected reduction dim 0 to have non-zero size"));
  EXPECT_TRUE(throws_with([] { mode(raw::zeros({2, 3}), 2); }, "mode"));
  EXPECT_TRUE(throws_with([] { mode(Tensor()); }, "mode: expected a defined input tensor"));
  // A zero-size dim that is not reduced is fine: empty results, as torch's.
  auto [values, indices] = mode(raw::zeros({2, 0}), 0);
  EXPECT_EQ(values.sizes(), (Shape{0}));
  EXPECT_EQ(indices.dtype(), kInt64);
}

}  // namespace
}  // namespace colony
