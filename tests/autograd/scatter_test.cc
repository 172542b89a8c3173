// scatter, scatter_reduce, index_fill, index_copy (autograd/scatter.cc, the ScatterReduce kernels),
// index_put_ with accumulate (autograd/indexing.cc), and the in-place members scatter_,
// scatter_add_, scatter_reduce_, index_fill_, index_copy_, index_add_, masked_fill_ and
// masked_scatter_ with index_add and masked_scatter (autograd/scatter_inplace.cc) against torch's
// values and gradients
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

// The in-place members on a clone of the input, as the torch script runs them, so the gradient
// reaches the input through the rebased history.
template <typename F>
Tensor on_clone(const Tensor& x, F write) {
  Tensor s = clone(x);
  write(s);
  return s;
}

void check_inplace_cases(Device device) {
  check("scatter_/src", device, [](In x) { return on_clone(x[0], [&](Tensor& s) { s.scatter_(0, x[1], x[2]); }); });
  check("scatter_/value", device, [](In x) { return on_clone(x[0], [&](Tensor& s) { s.scatter_(-1, x[1], 7.5); }); });
  check("scatter_/add", device,
        [](In x) { return on_clone(x[0], [&](Tensor& s) { s.scatter_(0, x[1], x[2], "add"); }); });
  check("scatter_/multiply/value", device,
        [](In x) { return on_clone(x[0], [&](Tensor& s) { s.scatter_(0, x[1], 2.0, "multiply"); }); });
  check("scatter_add_", device,
        [](In x) { return on_clone(x[0], [&](Tensor& s) { s.scatter_add_(0, x[1], x[2]); }); });
  check("scatter_add", device, [](In x) { return scatter_add(x[0], 1, x[1], x[2]); });
  check("scatter_reduce_/amax/noself", device, [](In x) {
    return on_clone(x[0], [&](Tensor& s) { s.scatter_reduce_(0, x[1], x[2], "amax", false); });
  });
  check("scatter_reduce_/prod", device,
        [](In x) { return on_clone(x[0], [&](Tensor& s) { s.scatter_reduce_(0, x[1], x[2], "prod"); }); });
  check("index_fill_", device, [](In x) { return on_clone(x[0], [&](Tensor& s) { s.index_fill_(1, x[1], -1.5); }); });
  check("index_copy_", device,
        [](In x) { return on_clone(x[0], [&](Tensor& s) { s.index_copy_(0, x[1], x[2]); }); });
  check("index_add_", device,
        [](In x) { return on_clone(x[0], [&](Tensor& s) { s.index_add_(1, x[1], x[2], 2.5); }); });
  check("index_add", device, [](In x) { return index_add(x[0], 0, x[1], x[2]); });
  check("index_add/i64", device, [](In x) { return x[0].index_add(0, x[1], x[2], 2.0); });
  check("masked_fill_", device, [](In x) { return on_clone(x[0], [&](Tensor& s) { s.masked_fill_(x[1], 0.5); }); });
  check("masked_fill_/broadcast", device,
        [](In x) { return on_clone(x[0], [&](Tensor& s) { s.masked_fill_(x[1], -2.0); }); });
  // 0-D tensor values, which receive the gradient of the filled elements (each once).
  check("masked_fill_/tensor", device,
        [](In x) { return on_clone(x[0], [&](Tensor& s) { s.masked_fill_(x[1], x[2]); }); });
  check("masked_fill/tensor/broadcast", device, [](In x) { return masked_fill(x[0], x[1], x[2]); });
  check("masked_fill/tensor/f32", device, [](In x) { return x[0].masked_fill(x[1], x[2]); });
  check("index_fill_/tensor/repeated", device,
        [](In x) { return on_clone(x[0], [&](Tensor& s) { s.index_fill_(1, x[1], x[2]); }); });
  check("index_fill/tensor/repeated", device, [](In x) { return x[0].index_fill(0, x[1], x[2]); });
  check("masked_scatter_", device,
        [](In x) { return on_clone(x[0], [&](Tensor& s) { s.masked_scatter_(x[1], x[2]); }); });
  check("masked_scatter/broadcast", device, [](In x) { return masked_scatter(x[0], x[1], x[2]); });
  check("masked_scatter/f32", device, [](In x) { return x[0].masked_scatter(x[1], x[2]); });
  check("masked_scatter/none", device, [](In x) { return x[0].masked_scatter(x[1], x[2]); });
}

TEST(Scatter, MatchesTorch) { check_scatter_cases(kCPU); }

TEST(ScatterInplace, MatchesTorch) { check_inplace_cases(kCPU); }

TEST(ScatterInplace, MatchesTorch_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  check_inplace_cases(Device::cuda(0));
}

TEST(ScatterInplace, Gradcheck) {
  const Tensor idx0 = raw::tensor({{0, 2, 1, 0}, {0, 0, 1, 2}}, TensorOptions(kInt64));
  const Tensor rows = raw::tensor({2, 0, 2}, TensorOptions(kInt64));
  const Tensor mask = raw::tensor({{1, 0, 1, 0}, {0, 0, 1, 1}, {1, 1, 0, 0}}, TensorOptions(kBool));
  Tensor self = input({3, 4}, -1.0, 1.0, 3), src = input({2, 4}, -1.0, 1.0, 5), src3 = input({3, 4}, -1.0, 1.0, 7);
  auto inplace = [](const Tensor& x, const std::function<void(Tensor&)>& write) { return on_clone(x, write); };
  EXPECT_TRUE(gradcheck([&](In in) { return inplace(in[0], [&](Tensor& s) { s.scatter_add_(0, idx0, in[1]); }); },
                        {self, src}));
  for (const char* reduce : {"sum", "prod", "mean", "amax", "amin"}) {
    EXPECT_TRUE(gradcheck(
        [&](In in) { return inplace(in[0], [&](Tensor& s) { s.scatter_reduce_(0, idx0, in[1], reduce, false); }); },
        {self, src}))
        << reduce;
  }
  EXPECT_TRUE(gradcheck([&](In in) { return inplace(in[0], [&](Tensor& s) { s.index_add_(0, rows, in[1], -1.5); }); },
                        {self, src3}));
  EXPECT_TRUE(gradcheck([&](In in) { return index_add(in[0], 1, raw::tensor({3, 3}, TensorOptions(kInt64)),
                                                       narrow(in[1], 1, 0, 2), 0.5); },
                        {self, src3}));
  EXPECT_TRUE(gradcheck([&](In in) { return inplace(in[0], [&](Tensor& s) { s.masked_fill_(mask, 2.0); }); }, {self}));
  const Tensor value = input({}, -1.0, 1.0, 9);
  EXPECT_TRUE(gradcheck([&](In in) { return inplace(in[0], [&](Tensor& s) { s.masked_fill_(mask, in[1]); }); },
                        {self, value}));
  EXPECT_TRUE(gradcheck([&](In in) { return inplace(in[0], [&](Tensor& s) { s.index_fill_(0, rows, in[1]); }); },
                        {self, value}));
  EXPECT_TRUE(gradcheck([&](In in) { return inplace(in[0], [&](Tensor& s) { s.masked_scatter_(mask, in[1]); }); },
                        {self, src3}));
  EXPECT_TRUE(gradcheck([&](In in) { return masked_scatter(select(in[0], 0, 1), mask, in[1]); }, {self, src3}));
  EXPECT_TRUE(gradcheck([&](In in) { return inplace(in[0], [&](Tensor& s) { s.index_copy_(1, raw::tensor({1, 0}, TensorOptions(kInt64)), narrow(in[1], 1, 0, 2)); }); },
                        {self, src3}));
}

TEST(ScatterInplace, WritesThroughAViewAndKeepsVersionsAsTorch) {
  // A view's in-place write: the base's gradient outside the view from its old history, inside
  // from the write's (CopySlices), as torch's.
  Tensor x = input({3, 4}, -1.0, 1.0, 11);
  Tensor base = mul(x, 2.0);
  Tensor row = select(base, 0, 1);
  row.index_fill_(0, raw::tensor({0, 3}, TensorOptions(kInt64)), 5.0);
  sum(base).backward();
  Tensor want = raw::full({3, 4}, 2.0, TensorOptions(kFloat64));
  for (int64_t col : {0, 3}) {
    Tensor at = raw::select(raw::select(want, 0, 1), 0, col);
    raw::fill_(at, 0.0);
  }
  EXPECT_TRUE(testing::all_close(x.grad(), want));
  // A tensor a backward formula saved, overwritten in place: backward refuses, as torch's.
  Tensor y = input({4}, -1.0, 1.0, 13);
  Tensor e = exp(y);  // saves its output
  e.masked_fill_(raw::tensor({1, 0, 0, 1}, TensorOptions(kBool)), 0.0);
  EXPECT_TRUE(throws_with([&] { sum(e).backward(); }, "modified by an inplace operation"));
  // Without grad: a plain write, no history.
  Tensor z = raw::zeros({3});
  z.index_add_(0, raw::tensor({0, 0, 2}, TensorOptions(kInt64)), raw::ones({3}), 2.0);
  EXPECT_EQ(testing::values(z), (std::vector<double>{4.0, 0.0, 2.0}));
  EXPECT_FALSE(z.requires_grad());
}

TEST(ScatterInplace, Errors) {
  Tensor leaf = raw::zeros({2, 3}).requires_grad_(true);
  const Tensor idx = raw::tensor({{0, 1}}, TensorOptions(kInt64));
  EXPECT_TRUE(throws_with([&] { leaf.scatter_(0, idx, 1.0); },
                          "scatter_: a leaf Variable that requires grad is being used in an in-place operation."));
  Tensor x = mul(leaf, 1.0);
  EXPECT_TRUE(throws_with([&] { x.scatter_(0, idx, raw::ones({1, 2}), "add"); },
                          "scatter_: the derivative of scatter with reduce is not implemented"));
  Tensor plain = raw::zeros({2, 3});
  EXPECT_TRUE(throws_with([&] { plain.scatter_(0, idx, 1.0, "max"); },
                          "scatter_: reduce argument must be either add or multiply, got 'max'"));
  EXPECT_TRUE(throws_with([&] { plain.masked_fill_(raw::ones({2, 3}, TensorOptions(kInt64)), 1.0); },
                          "masked_fill_ only supports boolean masks, but got mask with dtype int64"));
  EXPECT_TRUE(throws_with([&] { plain.masked_fill_(raw::ones({4, 2, 3}, TensorOptions(kBool)), 1.0); },
                          "masked_fill_: output with shape [2, 3] doesn't match the broadcast shape [4, 2, 3]"));
  EXPECT_TRUE(throws_with([&] { plain.masked_fill_(raw::ones({2, 3}, TensorOptions(kBool)), raw::ones({1})); },
                          "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 dimension(s)."));
  EXPECT_TRUE(throws_with([&] { plain.index_fill_(0, raw::tensor({0}, TensorOptions(kInt64)), raw::ones({2, 1})); },
                          "index_fill_ only supports a 0-dimensional value tensor, but got tensor with 2 dimension(s)."));
  EXPECT_TRUE(throws_with([&] { plain.masked_fill_(raw::ones({2, 3}, TensorOptions(kInt64)), raw::scalar_tensor(1.0)); },
                          "masked_fill_ only supports boolean masks, but got mask with dtype int64"));
  EXPECT_TRUE(throws_with([&] { plain.index_add_(0, raw::tensor({0}, TensorOptions(kInt64)), raw::ones({1, 3}, TensorOptions(kFloat64))); },
                          "index_add(): self (float32) and source (float64) must have the same scalar type"));
  EXPECT_TRUE(throws_with([&] { plain.masked_scatter_(raw::ones({2, 3}, TensorOptions(kBool)), raw::ones({5})); },
                          "masked_scatter: Number of elements of source (5) < number of ones in mask (6)"));
  EXPECT_TRUE(throws_with([&] { plain.masked_scatter_(raw::ones({2, 3}, TensorOptions(kBool)), raw::ones({6}, TensorOptions(kFloat64))); },
                          "masked_scatter: expected self and source to have same dtypes but got float32 and float64"));
  EXPECT_TRUE(throws_with([&] { masked_scatter(plain, raw::ones({2, 3}, TensorOptions(kUInt8)), raw::ones({6})); },
                          "masked_scatter only supports boolean masks, but got mask with dtype uint8"));
}

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
