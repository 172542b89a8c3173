// The composed shape and math ops (autograd/compose_shape.cc, compose_math.cc): every case of
// composed_golden.h (torch's outputs and gradients, written by composed_golden.py) run through
// Colony's op of the same name; gradchecks in float64; the errors; a `_CUDA` test of the same cases.
#include <cmath>
#include <map>
#include <string>

#include "tests/autograd/composed_golden.h"
#include "tests/autograd/gradcheck.h"
#include "tests/golden_check.h"

namespace colony {
namespace {

using testing::gradcheck;
using testing::input;
using testing::throws_with;
using testing::values;
using In = const std::vector<Tensor>&;
using V = std::vector<double>;
namespace golden = testing::golden;

constexpr double kInf = std::numeric_limits<double>::infinity();

Tensor cat_scaled(const std::vector<Tensor>& pieces, int64_t dim, bool sum_each) {
  std::vector<Tensor> scaled;
  for (size_t i = 0; i < pieces.size(); ++i) {
    Tensor p = sum_each ? sum(pieces[i], {1}, true) : pieces[i];
    scaled.push_back(mul(p, static_cast<double>(i + 1)));
  }
  return cat(scaled, dim);
}

Tensor ints(const std::vector<int64_t>& v, const Shape& shape, Device device) {
  return raw::to(raw::from_vector<int64_t>(v, shape, TensorOptions(kInt64)), device, kInt64);
}

// Colony's call for each case of composed_golden.py, on the inputs given there.
const std::map<std::string, golden::Op>& ops() {
  static const std::map<std::string, golden::Op> table = {
      {"tile", [](In x, Device) { return tile(x[0], {2, 1, 3}); }},
      {"broadcast_to", [](In x, Device) { return x[0].broadcast_to({4, -1, 3}); }},
      {"tensor_split_sections", [](In x, Device) { return cat_scaled(tensor_split(x[0], 3, 1), 1, true); }},
      {"tensor_split_indices", [](In x, Device) { return cat_scaled(x[0].tensor_split({1, 5, 3, 9, -2}), 0, false); }},
      {"hstack", [](In x, Device) { return hstack({x[0], x[1]}); }},
      {"vstack", [](In x, Device) { return vstack({x[0], x[1]}); }},
      {"dstack", [](In x, Device) { return dstack({x[0], x[1]}); }},
      {"column_stack", [](In x, Device) { return column_stack({x[0], x[1], x[2]}); }},
      {"rot90_1", [](In x, Device) { return rot90(x[0], 1, {0, 1}); }},
      {"rot90_2", [](In x, Device) { return rot90(x[0], 2, {1, 2}); }},
      {"rot90_-1", [](In x, Device) { return x[0].rot90(-1, {-1, 0}); }},
      {"rot90_5", [](In x, Device) { return rot90(x[0], 5, {1, 0}); }},
      {"take_along_dim", [](In x, Device d) { return take_along_dim(x[0], ints({0, 2, 2, 3, 1, 0}, {2, 3}, d), 1); }},
      {"take_along_dim_broadcast", [](In x, Device d) { return take_along_dim(x[0], ints({1, 0}, {1, 2, 1}, d), 2); }},
      {"take_along_dim_flat", [](In x, Device d) { return x[0].take_along_dim(ints({5, 0, 5}, {3}, d)); }},
      {"diag_embed", [](In x, Device) { return diag_embed(x[0]); }},
      {"diag_embed_offset", [](In x, Device) { return x[0].diag_embed(1); }},
      {"diag_embed_negative", [](In x, Device) { return diag_embed(x[0], -2, 0, 2); }},
      {"cartesian_prod", [](In x, Device) { return cartesian_prod({x[0], x[1]}); }},
      {"combinations", [](In x, Device) { return combinations(x[0], 3); }},
      {"combinations_replacement", [](In x, Device) { return combinations(x[0], 2, true); }},
      {"fliplr", [](In x, Device) { return fliplr(x[0]); }},
      {"flipud", [](In x, Device) { return x[0].flipud(); }},
      {"diff", [](In x, Device) { return diff(x[0]); }},
      {"diff_n2_dim0", [](In x, Device) { return x[0].diff(2, 0); }},
      {"diff_prepend_append", [](In x, Device) { return diff(x[0], 1, -1, x[1], x[2]); }},
      {"diff_too_far", [](In x, Device) { return diff(x[0], 5); }},
      {"aminmax_min", [](In x, Device) { return aminmax(x[0]).first; }},
      {"aminmax_dim_max", [](In x, Device) { return x[0].aminmax(1, true).second; }},
      {"std_mean_std", [](In x, Device) { return std_mean(x[0], {1}).first; }},
      {"var_mean_mean", [](In x, Device) { return var_mean(x[0], {0}, false).second; }},
      {"var_mean_var", [](In x, Device) { return var_mean(x[0], {0}, false).first; }},
      {"kron", [](In x, Device) { return kron(x[0], x[1]); }},
      {"kron_ranks", [](In x, Device) { return x[0].kron(x[1]); }},
      {"cdist_p2.0", [](In x, Device) { return cdist(x[0], x[1]); }},
      {"cdist_p1.0", [](In x, Device) { return cdist(x[0], x[1], 1.0); }},
      {"cdist_p0.0", [](In x, Device) { return cdist(x[0], x[1], 0.0); }},
      {"cdist_pinf", [](In x, Device) { return cdist(x[0], x[1], kInf); }},
      {"cdist_p3.0", [](In x, Device) { return cdist(x[0], x[1], 3.0); }},
      {"cdist_p0.5", [](In x, Device) { return cdist(x[0], x[1], 0.5); }},
      {"cdist_mm", [](In x, Device) { return cdist(x[0], x[1], 2.0, "use_mm_for_euclid_dist"); }},
      {"cdist_many_rows", [](In x, Device) { return cdist(x[0], x[1]); }},
      {"cdist_batched", [](In x, Device) { return cdist(x[0], x[1]); }},
      {"pdist_p2.0", [](In x, Device) { return pdist(x[0]); }},
      {"pdist_p1.0", [](In x, Device) { return pdist(x[0], 1.0); }},
      {"pdist_pinf", [](In x, Device) { return pdist(x[0], kInf); }},
      {"pdist_p1.5", [](In x, Device) { return pdist(x[0], 1.5); }},
      {"dot", [](In x, Device) { return dot(x[0], x[1]); }},
      {"inner", [](In x, Device) { return x[0].inner(x[1]); }},
      {"mv", [](In x, Device) { return x[0].mv(x[1]); }},
      {"addmm", [](In x, Device) { return addmm(x[0], x[1], x[2], 0.5, -2); }},
      {"addmm_beta0", [](In x, Device) { return x[0].addmm(x[1], x[2], 0.0); }},
      {"addmv", [](In x, Device) { return addmv(x[0], x[1], x[2], 1.0, 3.0); }},
      {"addr", [](In x, Device) { return x[0].addr(x[1], x[2], 2.0); }},
      {"baddbmm", [](In x, Device) { return baddbmm(x[0], x[1], x[2], 0.25, 1.5); }},
      {"addbmm", [](In x, Device) { return x[0].addbmm(x[1], x[2]); }},
      {"signbit", [](In x, Device) { return signbit(x[0]); }},
      {"heaviside", [](In x, Device) { return x[0].heaviside(x[1]); }},
      {"float_power", [](In x, Device) { return float_power(x[0], x[1]); }},
      {"trapezoid", [](In x, Device) { return trapezoid(x[0]); }},
      {"trapezoid_dx", [](In x, Device) { return trapezoid(x[0], 0.5, 0); }},
      {"trapezoid_x", [](In x, Device) { return trapezoid(x[0], x[1]); }},
      {"trapezoid_x_nd", [](In x, Device) { return trapezoid(x[0], x[1], 0); }},
      {"cumulative_trapezoid", [](In x, Device) { return cumulative_trapezoid(x[0], 2.0); }},
      {"cumulative_trapezoid_x", [](In x, Device) { return cumulative_trapezoid(x[0], x[1]); }},
      {"cov", [](In x, Device) { return cov(x[0]); }},
      {"cov_weights",
       [](In x, Device d) {
         return x[0].cov(2, ints({1, 2, 1, 3}, {4}, d), raw::to(raw::tensor({0.5, 1.0, 1.0, 2.0}, kFloat64), d, kFloat64));
       }},
      {"cov_correction0_fweights", [](In x, Device d) { return cov(x[0], 0, ints({1, 2, 1, 3}, {4}, d)); }},
      {"cov_vector", [](In x, Device) { return cov(x[0]); }},
      {"corrcoef", [](In x, Device) { return x[0].corrcoef(); }},
      {"isclose", [](In x, Device) { return isclose(x[0], x[1]); }},
      {"isclose_equal_nan", [](In x, Device) { return x[0].isclose(x[1], 0.1, 0, true); }},
      {"isclose_int", [](In x, Device) { return isclose(x[0], x[1], 0.3); }},
      {"logspace", [](In, Device d) { return logspace(-1, 2, 5, 10.0, TensorOptions(kFloat64).device(d)); }},
      {"logspace_base2_f32", [](In, Device d) { return logspace(0, 3, 4, 2.0, TensorOptions(kFloat32).device(d)); }},
  };
  return table;
}

TEST(ComposedOps, EveryGoldenCaseAsTorch) {
  EXPECT_EQ(testing::composed_golden::kCases.size(), ops().size()) << "a case without a call, or a call without a case";
  for (const golden::Case& c : testing::composed_golden::kCases) EXPECT_TRUE(golden::matches(c, ops(), kCPU));
}

TEST(ComposedOps, GradchecksInFloat64) {
  EXPECT_TRUE(gradcheck([](In in) { return tile(in[0], {2, 2}); }, {input({2, 3})}));
  EXPECT_TRUE(gradcheck([](In in) { return rot90(in[0], 3, {0, 1}); }, {input({2, 3})}));
  EXPECT_TRUE(gradcheck([](In in) { return diag_embed(in[0], -1, 1, 0); }, {input({2, 3})}));
  EXPECT_TRUE(gradcheck([](In in) { return diff(in[0], 2, 0, in[1]); }, {input({3, 4}), input({1, 4}, -1, 1, 8)}));
  EXPECT_TRUE(gradcheck([](In in) { return kron(in[0], in[1]); }, {input({2, 3}), input({3, 2}, -1, 1, 8)}));
  for (double p : {2.0, 1.0, 3.0, 0.7, kInf}) {
    EXPECT_TRUE(gradcheck([p](In in) { return cdist(in[0], in[1], p); }, {input({3, 4}), input({2, 4}, -1, 1, 8)}))
        << "p = " << p;
  }
  EXPECT_TRUE(gradcheck([](In in) { return cdist(in[0], in[1], 2.0, "use_mm_for_euclid_dist"); },
                        {input({2, 3, 4}), input({3, 4}, -1, 1, 8)}));
  EXPECT_TRUE(gradcheck([](In in) { return pdist(in[0], 1.5); }, {input({4, 3})}));
  EXPECT_TRUE(gradcheck([](In in) { return baddbmm(in[0], in[1], in[2], 0.5, 2.0); },
                        {input({3}), input({2, 2, 4}, -1, 1, 8), input({2, 4, 3}, -1, 1, 9)}));
  EXPECT_TRUE(gradcheck([](In in) { return addbmm(in[0], in[1], in[2], 0.5, 2.0); },
                        {input({2, 3}), input({2, 2, 4}, -1, 1, 8), input({2, 4, 3}, -1, 1, 9)}));
  EXPECT_TRUE(gradcheck([](In in) { return float_power(in[0], in[1]); }, {input({4}, 0.5, 2), input({4}, -1, 1, 8)}));
  EXPECT_TRUE(gradcheck([](In in) { return trapezoid(in[0], in[1], 0); }, {input({4, 3}), input({4, 3}, -1, 1, 8)}));
  EXPECT_TRUE(gradcheck([](In in) { return cumulative_trapezoid(in[0], in[1]); }, {input({2, 4}), input({4}, -1, 1, 8)}));
  EXPECT_TRUE(gradcheck([](In in) { return cov(in[0], 1, Tensor(), in[1]); }, {input({3, 5}), input({5}, 0.5, 2, 8)}));
  EXPECT_TRUE(gradcheck([](In in) { return corrcoef(in[0]); }, {input({3, 5})}));
  EXPECT_TRUE(gradcheck([](In in) { return take_along_dim(in[0], raw::tensor({{2.0, 0.0}}, kInt64), 1); },
                        {input({3, 4})}));
}

TEST(ComposedOps, ShapesDtypesAndFactories) {
  EXPECT_EQ(tile(raw::tensor({5.0}), {}).sizes(), (Shape{1}));
  EXPECT_EQ(broadcast_shapes({{2, 1}, {1, 3}, {3}}), (Shape{2, 3}));
  std::vector<Tensor> b = broadcast_tensors({raw::ones({2, 1}), raw::ones({3})});
  EXPECT_EQ(b[0].sizes(), (Shape{2, 3}));
  EXPECT_EQ(b[1].sizes(), (Shape{2, 3}));
  EXPECT_EQ(swapaxes(raw::ones({2, 3, 4}), 0, 2).sizes(), (Shape{4, 3, 2}));
  EXPECT_EQ(raw::ones({6}).reshape_as(raw::ones({2, 3})).sizes(), (Shape{2, 3}));
  EXPECT_EQ(atleast_3d(raw::ones({2})).sizes(), (Shape{1, 2, 1}));
  EXPECT_EQ(atleast_3d(raw::ones({2, 3})).sizes(), (Shape{2, 3, 1}));
  EXPECT_EQ(atleast_2d(raw::scalar_tensor(1.0)).sizes(), (Shape{1, 1}));
  EXPECT_EQ(hsplit(raw::ones({2, 6}), 3).size(), 3u);
  EXPECT_EQ(vsplit(raw::ones({4, 2}), std::vector<int64_t>{1})[1].sizes(), (Shape{3, 2}));
  EXPECT_EQ(dsplit(raw::ones({1, 1, 4}), 2)[0].sizes(), (Shape{1, 1, 2}));
  // torch.tril_indices(3, 4, 1) and torch.triu_indices(4, 3, -1).
  EXPECT_EQ(values(tril_indices(3, 4, 1)), V({0, 0, 1, 1, 1, 2, 2, 2, 2, 0, 1, 0, 1, 2, 0, 1, 2, 3}));
  EXPECT_EQ(values(triu_indices(4, 3, -1)), V({0, 0, 0, 1, 1, 1, 2, 2, 3, 0, 1, 2, 0, 1, 2, 1, 2, 2}));
  EXPECT_EQ(tril_indices(0, 3).sizes(), (Shape{2, 0}));
  EXPECT_EQ(tril_indices(2, 2, 0, TensorOptions(kInt32)).dtype(), kInt32);
  EXPECT_EQ(values(argwhere(raw::tensor({{0.0, 1.0}, {1.0, 0.0}}))), V({0, 1, 1, 0}));
  EXPECT_EQ(values(msort(raw::tensor({{3.0, 1.0}, {2.0, 4.0}}))), V({2, 1, 3, 4}));
  EXPECT_EQ(combinations(raw::tensor({1.0, 2.0}), 0).sizes(), (Shape{0}));
  EXPECT_EQ(combinations(raw::tensor({1.0, 2.0}), 3).sizes(), (Shape{0, 3}));
  EXPECT_EQ(values(diff(raw::tensor({1.0, 0.0, 0.0}).to(kBool))), V({1, 0}));
  EXPECT_EQ(values(trapezoid(raw::tensor({1.0, 2.0, 4.0}, kInt64))), V({4.5}));
  EXPECT_EQ(trapezoid(raw::empty({0})).dim(), 0);
  EXPECT_EQ(values(sgn(raw::tensor({-2.0, 0.0, 3.0}))), V({-1, 0, 1}));
  EXPECT_EQ(values(clamp_min(raw::tensor({-2.0, 0.0, 3.0}), 1.0)), V({1, 1, 3}));
  EXPECT_EQ(values(raw::tensor({-2.0, 0.0, 3.0}).clamp_max(1.0)), V({-2, 0, 1}));
  EXPECT_EQ(float_power(raw::tensor({2.0, 3.0}, kInt64), 2.0).dtype(), kFloat64);
  EXPECT_EQ(values(dot(raw::tensor({1.0, 2.0}, kInt64), raw::tensor({3.0, 4.0}, kInt64))), V({11}));
  EXPECT_EQ(dot(raw::tensor({1.0, 2.0}, kInt64), raw::tensor({3.0, 4.0}, kInt64)).dtype(), kInt64);
  Tensor like = raw::ones({2}, TensorOptions(kFloat64));
  EXPECT_EQ(like.new_zeros({3, 1}).dtype(), kFloat64);
  EXPECT_EQ(values(like.new_full({2}, 7.0)), V({7, 7}));
  EXPECT_EQ(values(like.new_ones({1})), V({1}));
  EXPECT_EQ(like.new_empty({4}).sizes(), (Shape{4}));
  Tensor r = rand_like(like);
  EXPECT_EQ(r.dtype(), kFloat64);
  EXPECT_FALSE(r.requires_grad());
  EXPECT_EQ(randn_like(raw::ones({3, 2})).sizes(), (Shape{3, 2}));
  Tensor ri = randint_like(raw::ones({50}, TensorOptions(kInt64)), 2, 5);
  for (double v : values(ri)) EXPECT_TRUE(v >= 2 && v < 5);
  // broadcast_to is a view: it shares the input's storage.
  Tensor base = raw::ones({3});
  EXPECT_EQ(broadcast_to(base, {2, 3}).data_ptr_raw(), base.data_ptr_raw());
}

TEST(ComposedOps, ErrorsSayWhatWasExpected) {
  Tensor m = raw::ones({2, 3});
  EXPECT_TRUE(throws_with([&] { tensor_split(m, 0); }, "number of sections must be larger than 0, got 0"));
  EXPECT_TRUE(throws_with([&] { tensor_split(raw::scalar_tensor(1.0), 2); }, "at least a 1-dimensional"));
  EXPECT_TRUE(throws_with([&] { hsplit(raw::ones({7}), 2); },
                          "split along dimension 0, but the size of the dimension 7 is not divisible by the split_size 2"));
  EXPECT_TRUE(throws_with([&] { vsplit(raw::ones({6}), 2); }, "requires a tensor with at least 2 dimension"));
  EXPECT_TRUE(throws_with([&] { dsplit(m, 2); }, "requires a tensor with at least 3 dimension"));
  EXPECT_TRUE(throws_with([&] { fliplr(raw::ones({3})); }, "Input must be >= 2-d"));
  EXPECT_TRUE(throws_with([&] { flipud(raw::scalar_tensor(1.0)); }, "Input must be >= 1-d"));
  EXPECT_TRUE(throws_with([&] { rot90(m, 1, {0, 0}); }, "expected rotation dims to be different"));
  EXPECT_TRUE(throws_with([&] { rot90(m, 1, {0}); }, "expected total rotation dims == 2"));
  EXPECT_TRUE(throws_with([&] { rot90(raw::ones({3}), 1, {0, 1}); }, "expected total dims >= 2"));
  EXPECT_TRUE(throws_with([&] { take_along_dim(m, raw::zeros({1, 1}), 0); }, "dtype of indices should be Long"));
  EXPECT_TRUE(throws_with([&] { take_along_dim(m, raw::zeros({1, 1, 1}, TensorOptions(kInt64)), 0); },
                          "should have the same number of dimensions, but got 2 dimensions for input, and 3"));
  EXPECT_TRUE(throws_with([&] { diag_embed(m, 0, 1, 1); }, "diagonal dimensions cannot be identical"));
  EXPECT_TRUE(throws_with([&] { cartesian_prod({m}); }, "expect a 1D vector"));
  EXPECT_TRUE(throws_with([&] { combinations(raw::ones({3}), -1); }, "Expect a non-negative number"));
  EXPECT_TRUE(throws_with([&] { tril_indices(-1, 2); }, "row and col must be non-negative"));
  EXPECT_TRUE(throws_with([&] { isclose(m, m.to(kFloat64)); }, "float32 did not match float64"));
  EXPECT_TRUE(throws_with([&] { isclose(m, m, -1); }, "rtol must be greater than or equal to zero"));
  EXPECT_TRUE(throws_with([&] { diff(raw::scalar_tensor(1.0)); }, "expects input to be at least one-dimensional"));
  EXPECT_TRUE(throws_with([&] { aminmax(raw::empty({0})); }, "cannot compute aminmax over an empty dimension"));
  EXPECT_TRUE(throws_with([&] { cdist(m, raw::ones({2, 4})); }, "X1 and X2 must have the same number of columns. X1: 3 X2: 4"));
  EXPECT_TRUE(throws_with([&] { cdist(m, m, -1); }, "cdist only supports non-negative p values"));
  EXPECT_TRUE(throws_with([&] { cdist(m.to(kInt64), m.to(kInt64)); }, "cdist only supports floating-point dtypes"));
  EXPECT_TRUE(throws_with([&] { cdist(m, m, 2, "fast"); }, "compute_mode must be"));
  EXPECT_TRUE(throws_with([&] { pdist(raw::ones({3})); }, "pdist only supports 2D tensors, got: 1D"));
  EXPECT_TRUE(throws_with([&] { dot(raw::ones({2}), raw::ones({3})); }, "inconsistent tensor size"));
  EXPECT_TRUE(throws_with([&] { dot(m, m); }, "1D tensors expected, but got 2D and 2D tensors"));
  EXPECT_TRUE(throws_with([&] { dot(raw::ones({2}), raw::ones({2}, TensorOptions(kInt64))); }, "same dtype"));
  EXPECT_TRUE(throws_with([&] { inner(m, raw::ones({3, 2})); }, "the last dimension must match"));
  EXPECT_TRUE(throws_with([&] { mv(m, raw::ones({4})); }, "size mismatch"));
  EXPECT_TRUE(throws_with([&] { addmm(raw::ones({3, 3}), m, raw::ones({3, 2})); }, "cannot be broadcast"));
  EXPECT_TRUE(throws_with([&] { addmm(raw::ones({2, 2, 2}), m, raw::ones({3, 2})); },
                          "does not broadcast to the product's shape [2, 2]"));
  EXPECT_TRUE(throws_with([&] { baddbmm(m, m, m); }, "expected batch1 to be a 3-D tensor"));
  EXPECT_TRUE(throws_with([&] { heaviside(m, m.to(kFloat64)); }, "different dtypes"));
  EXPECT_TRUE(throws_with([&] { trapezoid(m, raw::ones({2})); }, "There must be one `x` value for each sample point"));
  EXPECT_TRUE(throws_with([&] { cov(raw::ones({2, 2, 2})); }, "expected input to have two or fewer dimensions"));
  EXPECT_TRUE(throws_with([&] { cov(m, 1, raw::ones({3})); }, "expected fweights to be an integer 1-D tensor with 3"));
  EXPECT_TRUE(throws_with([&] { cov(m, 1, raw::tensor({1.0, -1.0, 1.0}, kInt64)); }, "fweights cannot be negative"));
}

TEST(ComposedOps, EveryGoldenCaseOnCuda_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  for (const golden::Case& c : testing::composed_golden::kCases) EXPECT_TRUE(golden::matches(c, ops(), Device::cuda(0)));
}

}  // namespace
}  // namespace colony
