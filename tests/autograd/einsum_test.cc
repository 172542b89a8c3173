// einsum and tensordot (autograd/einsum.cc) against torch's results (einsum_golden.h, written by
// einsum_golden.py), their float64 gradients by finite differences, and torch's errors.
#include "tests/autograd/einsum_golden.h"

#include <cmath>

#include "tests/autograd/gradcheck.h"

namespace colony {
namespace {

using testing::gradcheck;
using testing::matches_values;
using testing::throws_with;
using testing::einsum_golden::kEinsumCases;
using testing::einsum_golden::kTensordotCases;
using In = const std::vector<Tensor>&;

// Operand k of a golden case, as einsum_golden.py fills it: element i is sin(0.37 i + 1.1 k + 0.2)
// in float64, (7 i + 5 k) % 11 - 5 in int64.
Tensor operand(const Shape& shape, int k, bool integer) {
  const int64_t n = shape_numel(shape);
  if (integer) {
    std::vector<int64_t> v(n);
    for (int64_t i = 0; i < n; ++i) v[i] = (7 * i + 5 * k) % 11 - 5;
    return raw::reshape(raw::from_vector(v), shape);  // (from_vector's empty shape means 1-D)
  }
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = std::sin(0.37 * static_cast<double>(i) + 1.1 * k + 0.2);
  return raw::reshape(raw::from_vector(v), shape);
}

std::vector<Tensor> operands_of(const testing::einsum_golden::EinsumCase& c, bool requires_grad = false) {
  std::vector<Tensor> ops;
  for (size_t k = 0; k < c.shapes.size(); ++k) {
    Tensor t = operand(c.shapes[k], static_cast<int>(k), c.integer);
    if (requires_grad) t.requires_grad_(true);
    ops.push_back(t);
  }
  return ops;
}

const testing::einsum_golden::EinsumCase& golden(const std::string& equation, bool integer) {
  for (const auto& c : kEinsumCases) {
    if (c.equation == equation && c.integer == integer) return c;
  }
  throw std::logic_error("no golden case " + equation);
}

TEST(Einsum, MatchesTorch) {
  for (const auto& c : kEinsumCases) {
    SCOPED_TRACE(c.equation);
    Tensor out = einsum(c.equation, operands_of(c));
    EXPECT_EQ(out.sizes(), c.out_shape);
    EXPECT_EQ(out.dtype(), c.integer ? kInt64 : kFloat64);
    EXPECT_TRUE(matches_values(out, c.out, 1e-12));
  }
}

TEST(Einsum, GradientsOfEveryFloatCase) {
  for (const auto& c : kEinsumCases) {
    if (c.integer) continue;
    SCOPED_TRACE(c.equation);
    const std::string equation = c.equation;
    EXPECT_TRUE(gradcheck([&](In in) { return einsum(equation, in); }, operands_of(c, true)));
  }
}

TEST(Einsum, GradientsOfStridedOperands) {
  // Operands that are not contiguous (every other element of a wider buffer) and a transposed one.
  using testing::strided_input;
  EXPECT_TRUE(gradcheck([](In in) { return einsum("bij,bkj->bik", in); },
                        {strided_input({2, 3, 4}, -1, 1, 1), strided_input({2, 5, 4}, -1, 1, 2)}));
  EXPECT_TRUE(gradcheck([](In in) { return einsum("ij,jk->ik", {in[0].t(), in[1]}); },
                        {testing::input({3, 2}, -1, 1, 3), strided_input({3, 4}, -1, 1, 4)}));
  EXPECT_TRUE(gradcheck([](In in) { return einsum("...ii,i...->i...", in); },
                        {strided_input({2, 3, 3}, -1, 1, 5), strided_input({3, 2}, -1, 1, 6)}));
}

TEST(Einsum, OperandsInBraces) {
  Tensor a = operand({2, 3}, 0, false), b = operand({3, 4}, 1, false);
  EXPECT_TRUE(matches_values(einsum("ij,jk->ik", {a, b}), golden("ij,jk->ik", false).out, 1e-12));
}

TEST(Einsum, AttentionScoresAreMatmulsBits) {
  // "bhqd,bhkd->bhqk" is one bmm over the same layouts as matmul(q, k^T): the same bits, in float32.
  Generator gen(11);
  Tensor q = raw::randn({2, 3, 17, 8}, kFloat32, &gen), k = raw::randn({2, 3, 19, 8}, kFloat32, &gen);
  Tensor by_einsum = einsum("bhqd,bhkd->bhqk", {q, k});
  Tensor by_matmul = matmul(q, k.transpose(-2, -1));
  ASSERT_EQ(by_einsum.sizes(), by_matmul.sizes());
  EXPECT_EQ(testing::values(by_einsum), testing::values(by_matmul));
}

TEST(Einsum, IntegerDtypesFollowTorch) {
  // A contraction keeps int32 (torch's bmm does); a single operand's sum gives int64 (torch.sum does).
  Tensor a = raw::to(operand({2, 3}, 0, true), kCPU, kInt32), b = raw::to(operand({3, 4}, 1, true), kCPU, kInt32);
  Tensor product = einsum("ij,jk->ik", {a, b});
  EXPECT_EQ(product.dtype(), kInt32);
  EXPECT_TRUE(matches_values(product, golden("ij,jk->ik", true).out));
  EXPECT_EQ(einsum("ij->", {a}).dtype(), kInt64);
  EXPECT_EQ(einsum("ii->i", {raw::zeros({3, 3}, kInt32)}).dtype(), kInt32);
}

TEST(Einsum, AutocastAsTorchOnTheCpu) {
  // torch 2.15 under torch.autocast("cpu", torch.bfloat16) with float32 operands: a contraction is
  // a bmm, which autocasts (bfloat16); a product without a sum is a mul and a single operand's
  // permute a view, which do not (float32); tensordot's mm autocasts.
  Tensor a = raw::randn({3, 4}, kFloat32), b = raw::randn({4, 5}, kFloat32);
  AutocastGuard amp(DeviceType::CPU, kBFloat16);
  EXPECT_EQ(einsum("ij,jk->ik", {a, b}).dtype(), kBFloat16);
  EXPECT_EQ(einsum("i,i->i", {a.select(0, 0), a.select(0, 1)}).dtype(), kFloat32);
  EXPECT_EQ(einsum("ij->ji", {a}).dtype(), kFloat32);
  EXPECT_EQ(tensordot(a, b, 1).dtype(), kBFloat16);
}

TEST(Einsum, Errors) {
  const Tensor m23 = operand({2, 3}, 0, false), m33 = operand({3, 3}, 0, false), m44 = operand({4, 4}, 0, false);
  const auto fails = [](const std::string& equation, std::vector<Tensor> ops, const std::string& needle) {
    return throws_with<std::invalid_argument>([&] { einsum(equation, ops); }, "einsum(): " + needle);
  };
  EXPECT_TRUE(fails("ij", {}, "must provide at least one operand"));
  EXPECT_TRUE(fails("ij,jk", {m23}, "fewer operands were provided than specified in the equation"));
  EXPECT_TRUE(fails("ij", {m23, m23}, "more operands were provided than specified in the equation"));
  EXPECT_TRUE(fails("ijk", {m23},
                    "the number of subscripts in the equation (3) does not match the number of dimensions (2) for "
                    "operand 0 and no ellipsis was given"));
  EXPECT_TRUE(fails("ij,j", {m23, m23}, "the number of subscripts in the equation (1) does not match the number of "
                                        "dimensions (2) for operand 1"));
  EXPECT_TRUE(fails("...ijk", {m23}, "the number of subscripts in the equation (3) is more than the number of "
                                     "dimensions (2) for operand 0"));
  EXPECT_TRUE(fails("ij->k", {m23}, "output subscript k does not appear in the equation for any input operand"));
  EXPECT_TRUE(fails("ij->ii", {m23}, "output subscript i appears more than once in the output"));
  EXPECT_TRUE(fails("ij,jk->ik", {m23, m44},
                    "subscript j has size 4 for operand 1 which does not broadcast with previously seen size 3"));
  EXPECT_TRUE(fails("ii->i", {m23}, "subscript i is repeated for operand 0 but the sizes don't match, 3 != 2"));
  EXPECT_TRUE(fails("...ij,...jk->...ik", {operand({2, 2, 3}, 0, false), operand({3, 3, 4}, 1, false)},
                    "dimension 0 covered by ellipsis in operand 1 has size 3 which does not broadcast with "
                    "previously seen ellipsis with size 2"));
  EXPECT_TRUE(fails("i1->i", {m23}, "invalid subscript given at index 1 in the equation string, subscripts must be "
                                    "in [a-zA-Z]"));
  EXPECT_TRUE(fails("ij->i1", {m23}, "invalid subscript given at index 5 in the equation string"));
  EXPECT_TRUE(fails("ij->i->j", {m23}, "invalid subscript given at index 5 in the equation string"));
  EXPECT_TRUE(fails("ij-", {m23}, "invalid subscript given at index 2 in the equation string"));
  EXPECT_TRUE(fails("i.j->i", {m23}, "found '.' for operand 0 that is not part of any ellipsis"));
  EXPECT_TRUE(fails("ij,i..", {m23, m23}, "found '.' for operand 1 that is not part of any ellipsis"));
  EXPECT_TRUE(fails("...i...->i", {m23}, "found '.' for operand 0 for which an ellipsis was already found"));
  EXPECT_TRUE(fails("...ij->......", {m23}, "found '.' for output but an ellipsis (...) was already found"));
  EXPECT_TRUE(fails("ij->i..", {m23}, "found '.' for output that is not part of any ellipsis (...)"));
  EXPECT_TRUE(fails("ij,jk->ik", {m23, raw::to(m33, kCPU, kFloat32)},
                    "the operands of a contraction must have one dtype (torch's bmm requires it), got float64 and "
                    "float32"));
  const Tensor flags = raw::ones({3}, kBool);
  EXPECT_TRUE(fails("i,i->", {flags, flags}, "contracting bool operands is not supported"));
}

TEST(Tensordot, MatchesTorch) {
  for (const auto& c : kTensordotCases) {
    SCOPED_TRACE(shape_str(c.a) + " . " + shape_str(c.b) + " dims " + std::to_string(c.dims) + " " +
                 shape_str(c.dims_a) + " " + shape_str(c.dims_b));
    Tensor a = operand(c.a, 0, false), b = operand(c.b, 1, false);
    Tensor out = c.dims >= 0 ? tensordot(a, b, c.dims) : tensordot(a, b, c.dims_a, c.dims_b);
    EXPECT_EQ(out.sizes(), c.out_shape);
    EXPECT_TRUE(matches_values(out, c.out, 1e-12));
  }
}

TEST(Tensordot, Gradients) {
  for (const auto& c : kTensordotCases) {
    SCOPED_TRACE(shape_str(c.a) + " . " + shape_str(c.b));
    Tensor a = operand(c.a, 0, false), b = operand(c.b, 1, false);
    a.requires_grad_(true);
    b.requires_grad_(true);
    EXPECT_TRUE(gradcheck(
        [&](In in) { return c.dims >= 0 ? tensordot(in[0], in[1], c.dims) : tensordot(in[0], in[1], c.dims_a, c.dims_b); },
        {a, b}));
  }
}

TEST(Tensordot, Integers) {
  Tensor a = operand({2, 3}, 0, true), b = operand({3, 4}, 1, true);
  Tensor out = tensordot(a, b, 1);
  EXPECT_EQ(out.dtype(), kInt64);
  EXPECT_TRUE(matches_values(out, golden("ij,jk->ik", true).out));  // the same product
}

TEST(Tensordot, Errors) {
  const Tensor a = operand({2, 3, 4}, 0, false), b = operand({4, 3, 5}, 1, false);
  const auto fails = [](const std::function<void()>& f, const std::string& needle) {
    return throws_with<std::exception>(f, "tensordot: " + needle);
  };
  EXPECT_TRUE(fails([&] { tensordot(a, b, {1, 2}, {1}); }, "both dimension lists should have same length"));
  EXPECT_TRUE(fails([&] { tensordot(a, raw::to(b, kCPU, kFloat32), {1}, {1}); },
                    "both inputs should have same dtype, got float64 and float32"));
  EXPECT_TRUE(fails([&] { tensordot(a, b, {1}, {0}); },
                    "contracted dimensions need to match, but first has size 3 in dim 1 and second has size 4 in dim 0"));
  EXPECT_TRUE(fails([&] { tensordot(a, b, {1, 1}, {1, 1}); }, "dim 1 appears more than once"));
  EXPECT_TRUE(fails([&] { tensordot(a, b, {5}, {1}); }, "dim 5 out of range for a 3-D tensor"));
  EXPECT_TRUE(fails([&] { tensordot(a, b, -1); }, "expects dims >= 0, but got dims=-1"));
  EXPECT_TRUE(fails([&] { tensordot(a, b, 4); },
                    "expects dims <= the number of dimensions of both inputs (3 and 3), but got dims=4"));
}

}  // namespace
}  // namespace colony
