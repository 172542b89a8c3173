// scatter, scatter_reduce, index_fill, index_copy (autograd/scatter.cc, the ScatterReduce kernels)
// and index_put_ with accumulate (autograd/indexing.cc) against torch's values and gradients
// (reduce_golden.h, written by reduce_golden.py), float64 gradient checks, and the errors.
#include "tests/autograd/gradcheck.h"
#include "tests/autograd/reduce_golden_check.h"

namespace colony {
namespace {

using testing::gradcheck;
using testing::input;
using testing::throws_with;
using testing::reduce_golden::golden_inputs;
using testing::reduce_golden::golden_multi;
using testing::reduce_golden::matches_golden;
using testing::reduce_golden::MultiCase;
using In = const std::vector<Tensor>&;

template <typename F>
void check(const std::string& name, Device device, F op) {
  const MultiCase& c = golden_multi(name);
  std::vector<Tensor> xs = golden_inputs(c, device);
  EXPECT_TRUE(matches_golden(c, xs, {op(xs)})) << name;
}

void check_scatter_cases(Device device) {
  check("scatter/src/dim1", device, [](In x) { return scatter(x[0], 1, x[1], x[2]); });
  check("scatter/src/dim0/unique", device, [](In x) { return x[0].scatter(0, x[1], x[2]); });
  check("scatter/value", device, [](In x) { return scatter(x[0], -1, x[1], 7.5); });
  check("scatter/i32", device, [](In x) { return scatter(x[0], 1, x[1], x[2]); });
  for (const char* reduce : {"sum", "prod", "mean", "amax", "amin"}) {
    for (bool include_self : {true, false}) {
      const std::string name = std::string("scatter_reduce/") + reduce + (include_self ? "/self" : "/noself");
      check(name, device, [&](In x) { return scatter_reduce(x[0], 0, x[1], x[2], reduce, include_self); });
      check(name + "/dim1", device, [&](In x) { return x[0].scatter_reduce(1, x[1], x[2], reduce, include_self); });
    }
  }
  check("scatter_reduce/prod/zeros/self", device, [](In x) { return scatter_reduce(x[0], 0, x[1], x[2], "prod"); });
  check("scatter_reduce/prod/zeros/noself", device,
        [](In x) { return scatter_reduce(x[0], 0, x[1], x[2], "prod", false); });
  check("scatter_reduce/amax/ties", device, [](In x) { return scatter_reduce(x[0], 0, x[1], x[2], "amax"); });
  check("scatter_reduce/amax/nan", device, [](In x) { return scatter_reduce(x[0], 0, x[1], x[2], "amax"); });
  check("scatter_reduce/amin/nan", device, [](In x) { return scatter_reduce(x[0], 0, x[1], x[2], "amin", false); });
  check("scatter_reduce/mean/i64", device, [](In x) { return scatter_reduce(x[0], 0, x[1], x[2], "mean"); });
  check("scatter_reduce/mean/i64/noself", device,
        [](In x) { return scatter_reduce(x[0], 0, x[1], x[2], "mean", false); });
  check("scatter_reduce/amax/i32/noself", device,
        [](In x) { return scatter_reduce(x[0], 0, x[1], x[2], "amax", false); });
  check("scatter_reduce/sum/f32", device, [](In x) { return scatter_reduce(x[0], 0, x[1], x[2], "sum"); });
  check("scatter_reduce/prod/bool", device, [](In x) { return scatter_reduce(x[0], 0, x[1], x[2], "prod"); });
  check("index_fill/dim1", device, [](In x) { return index_fill(x[0], 1, x[1], -1.5); });
  check("index_fill/dim0/neg", device, [](In x) { return x[0].index_fill(-2, x[1], 0.0); });
  check("index_copy/dim0", device, [](In x) { return index_copy(x[0], 0, x[1], x[2]); });
  check("index_copy/dim1", device, [](In x) { return x[0].index_copy(1, x[1], x[2]); });
  check("index_put/accumulate", device, [](In x) {
    Tensor s = clone(x[0]);
    s.index_put_({x[1]}, x[2], /*accumulate=*/true);
    return s;
  });
  check("index_put/accumulate/slice", device, [](In x) {
    Tensor s = clone(x[0]);
    s.index_put_({indexing::Slice(1, indexing::None)}, x[1], /*accumulate=*/true);
    return s;
  });
}

TEST(Scatter, MatchesTorch) { check_scatter_cases(kCPU); }

TEST(Scatter, MatchesTorch_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  check_scatter_cases(Device::cuda(0));
}

TEST(Scatter, Gradcheck) {
  const Tensor idx0 = raw::tensor({{0, 2, 1, 0}, {0, 0, 1, 2}}, TensorOptions(kInt64));
  const Tensor unique0 = raw::tensor({{2, 0, 1, 1}}, TensorOptions(kInt64));
  Tensor self = input({3, 4}, -1.0, 1.0, 3), src = input({2, 4}, -1.0, 1.0, 5);
  EXPECT_TRUE(gradcheck([&](In in) { return scatter(in[0], 0, unique0, narrow(in[1], 0, 0, 1)); }, {self, src}));
  EXPECT_TRUE(gradcheck([&](In in) { return scatter(in[0], 0, idx0, -2.0); }, {self}));
  for (const char* reduce : {"sum", "prod", "mean", "amax", "amin"}) {
    for (bool include_self : {true, false}) {
      EXPECT_TRUE(gradcheck([&](In in) { return scatter_reduce(in[0], 0, idx0, in[1], reduce, include_self); },
                            {self, src}))
          << reduce << include_self;
    }
  }
  // A zero in self and single and double zeros in src, for prod.
  Tensor zs = raw::tensor({2.0, 0.0, 3.0, 1.0}, TensorOptions(kFloat64)).requires_grad_(true);
  Tensor zsrc = raw::tensor({0.0, 5.0, 0.0, 0.0, 4.0, 2.0}, TensorOptions(kFloat64)).requires_grad_(true);
  Tensor zi = raw::tensor({0, 0, 1, 2, 2, 3}, TensorOptions(kInt64));
  for (bool include_self : {true, false}) {
    EXPECT_TRUE(gradcheck([&](In in) { return scatter_reduce(in[0], 0, zi, in[1], "prod", include_self); }, {zs, zsrc}));
  }
  const Tensor rows = raw::tensor({2, 0}, TensorOptions(kInt64));
  EXPECT_TRUE(gradcheck([&](In in) { return index_fill(in[0], 0, rows, 3.0); }, {self}));
  EXPECT_TRUE(gradcheck([&](In in) { return index_copy(in[0], 0, rows, in[1]); }, {self, src}));
  EXPECT_TRUE(gradcheck(
      [&](In in) {
        Tensor s = clone(in[0]);
        s.index_put_({raw::tensor({0, 2, 0}, TensorOptions(kInt64))}, in[1], /*accumulate=*/true);
        return s;
      },
      {self, input({1, 4})}));
}

TEST(Scatter, Errors) {
  Tensor self = raw::zeros({2, 3}), src = raw::ones({2, 3});
  Tensor idx = raw::tensor({{0, 1}}, TensorOptions(kInt64));
  EXPECT_TRUE(throws_with([&] { scatter_reduce(self, 0, idx, src, "max"); },
                          "scatter_reduce: expected reduce 'sum', 'prod', 'mean', 'amax' or 'amin', got 'max'"));
  EXPECT_TRUE(throws_with([&] { scatter(self, 0, raw::tensor({{0, 1}}, TensorOptions(kInt32)), src); },
                          "scatter: expected an int64 index, got int32"));
  EXPECT_TRUE(throws_with([&] { scatter(self, 0, idx, raw::ones({2, 3}, TensorOptions(kFloat64))); },
                          "scatter: expected src of the input's dtype float32, got float64"));
  EXPECT_TRUE(throws_with([&] { scatter(self, 0, raw::tensor({{0, 2}}, TensorOptions(kInt64)), src); },
                          "scatter: index 2 is out of range for dimension 0 with size 2"));
  EXPECT_TRUE(throws_with([&] { scatter(self, 0, raw::tensor({0, 1}, TensorOptions(kInt64)), src); },
                          "must have the same number of dimensions"));
  EXPECT_TRUE(throws_with([&] { index_copy(self, 1, raw::tensor({0}, TensorOptions(kInt64)), src); },
                          "index_copy: expected source of shape [2, 1]"));
  EXPECT_TRUE(throws_with([&] { index_fill(self, 1, raw::zeros({1, 1}, TensorOptions(kInt64)), 1.0); },
                          "index_fill: expected a 0-D or 1-D index, got 2-D"));
}

}  // namespace
}  // namespace colony
