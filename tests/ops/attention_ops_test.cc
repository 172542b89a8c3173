// The fused attention kernels (raw::scaled_dot_product_attention and its backward) against the
// unfused formula computed here in float64: scores = q k^T * scale + mask, softmax, dropout, times
// v, and the gradients of that composition written out. Shapes cover L != S, sizes that are not
// multiples of the kernels' tiles, broadcast and strided operands, every mask kind, causal, fully
// masked rows, dropout (the reference regenerates the kernel's mask from the same Philox draw),
// and the 16-bit dtypes; CUDA against the CPU.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/common/attention.h"
#include "kernels/cpu/parallel.h"
#include "ops/raw_nn_ops.h"
#include "ops/raw_ops.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::all_close;
using testing::throws_with;

struct Case {
  Shape q, k, v;
  Shape mask;             // empty: no mask
  bool bool_mask = true;  // else an additive float mask
  bool causal = false;
  std::optional<double> scale;
  double dropout = 0.0;
  bool strided = false;  // q, k, v as non-contiguous views
};

// Random values in [-2, 2), in `dtype`; a strided view of a wider buffer when asked.
Tensor make(const Shape& shape, uint64_t seed, DType dtype, bool strided) {
  Generator gen(seed);
  if (!strided) return raw::to(raw::mul(raw::add(raw::rand(shape, kFloat64, &gen), -0.5), 4.0), kCPU, dtype);
  Shape wide = shape;
  wide.back() *= 2;
  Tensor buffer = raw::to(raw::mul(raw::add(raw::rand(wide, kFloat64, &gen), -0.5), 4.0), kCPU, dtype);
  return raw::slice(buffer, -1, 0, wide.back(), 2);
}

// A mask with about a quarter of the entries masked out and, when it has at least two rows, its
// second row masked entirely (PyTorch then gives zeros).
Tensor make_mask(const Shape& shape, bool as_bool, uint64_t seed) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> u = testing::random_values(n, static_cast<uint32_t>(seed), 0.0, 1.0);
  for (double& x : u) x = x > 0.25 ? 1.0 : 0.0;
  Tensor keep = raw::to(raw::from_vector(u, shape), kCPU, kBool);
  Generator gen(seed);
  if (shape.size() >= 2 && shape[shape.size() - 2] >= 2) {
    Tensor row = raw::select(keep, -2, 1);
    raw::fill_(row, 0.0);
  }
  if (as_bool) return keep;
  // Finite offsets where kept, -inf where not.
  Tensor offsets = raw::mul(raw::rand(shape, kFloat64, &gen), 3.0);
  return raw::to(raw::where(keep, offsets, raw::scalar_tensor(-std::numeric_limits<double>::infinity(), kFloat64)),
                 kCPU, kFloat32);
}

struct Reference {
  Tensor out, dq, dk, dv;
};

// The unfused formula in float64 over the broadcast batch, with the dropout factors the kernel
// draws (kernels/common/attention.h) and the gradients for the incoming gradient `go`.
Reference reference(const Tensor& q_in, const Tensor& k_in, const Tensor& v_in, const Tensor& mask_in, bool causal,
                    double scale, double dropout, const kernels::PhiloxArgs& philox, const Tensor& go_in) {
  auto lead = [](const Tensor& t) { return Shape(t.sizes().begin(), t.sizes().end() - 2); };
  Shape batch = broadcast_shapes(broadcast_shapes(lead(q_in), lead(k_in), "ref"), lead(v_in), "ref");
  const int64_t L = q_in.size(-2), E = q_in.size(-1), S = k_in.size(-2), Ev = v_in.size(-1);
  auto full = [&](const Tensor& t, int64_t r, int64_t c) {
    Shape s = batch;
    s.push_back(r);
    s.push_back(c);
    return raw::contiguous(raw::to(raw::expand(t, s), kCPU, kFloat64));
  };
  Tensor q = full(q_in, L, E), k = full(k_in, S, E), v = full(v_in, S, Ev);
  Tensor go = full(go_in, L, Ev);
  Tensor mask;
  if (mask_in.defined()) {
    Tensor m = mask_in.dtype() == kBool
                   ? raw::where(mask_in, raw::scalar_tensor(0.0, kFloat64),
                                raw::scalar_tensor(-std::numeric_limits<double>::infinity(), kFloat64))
                   : mask_in;
    mask = full(m, L, S);
  }
  int64_t BH = 1;
  for (int64_t b : batch) BH *= b;
  Reference r;
  Shape os = batch;
  os.push_back(L);
  os.push_back(Ev);
  r.out = raw::zeros(os, kFloat64);
  r.dq = raw::zeros(q.sizes(), kFloat64);
  r.dk = raw::zeros(k.sizes(), kFloat64);
  r.dv = raw::zeros(v.sizes(), kFloat64);
  uint64_t seed = 0, offset = 0;
  kernels::philox_unpack(philox, seed, offset);
  const float keep = static_cast<float>(1.0 - dropout), inv_keep = 1.0f / keep;
  const double* Q = q.data_ptr<double>();
  const double* K = k.data_ptr<double>();
  const double* V = v.data_ptr<double>();
  const double* G = go.data_ptr<double>();
  const double* M = mask.defined() ? mask.data_ptr<double>() : nullptr;
  double* O = r.out.data_ptr<double>();
  double *dQ = r.dq.data_ptr<double>(), *dK = r.dk.data_ptr<double>(), *dV = r.dv.data_ptr<double>();
  std::vector<double> s(S), p(S), z(S), dp(S);
  for (int64_t bh = 0; bh < BH; ++bh) {
    for (int64_t i = 0; i < L; ++i) {
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < S; ++j) {
        double acc = 0;
        for (int64_t e = 0; e < E; ++e) acc += Q[(bh * L + i) * E + e] * K[(bh * S + j) * E + e];
        s[j] = acc * scale + (M ? M[(bh * L + i) * S + j] : 0.0);
        if (causal && j > i) s[j] = -std::numeric_limits<double>::infinity();
        mx = std::max(mx, s[j]);
      }
      double sum = 0;
      for (int64_t j = 0; j < S; ++j) {
        p[j] = std::isinf(mx) ? 0.0 : std::exp(s[j] - mx);
        sum += p[j];
      }
      for (int64_t j = 0; j < S; ++j) {
        p[j] = sum > 0 ? p[j] / sum : 0.0;
        z[j] = dropout > 0 ? kernels::attention_dropout_factor(seed, offset, bh, i, j, L, S, keep, inv_keep) : 1.0;
      }
      double dsum = 0;
      for (int64_t j = 0; j < S; ++j) {
        double acc = 0;
        for (int64_t e = 0; e < Ev; ++e) {
          O[(bh * L + i) * Ev + e] += p[j] * z[j] * V[(bh * S + j) * Ev + e];
          dV[(bh * S + j) * Ev + e] += p[j] * z[j] * G[(bh * L + i) * Ev + e];
          acc += G[(bh * L + i) * Ev + e] * V[(bh * S + j) * Ev + e];
        }
        dp[j] = acc * z[j];
        dsum += p[j] * dp[j];
      }
      for (int64_t j = 0; j < S; ++j) {
        const double ds = p[j] * (dp[j] - dsum) * scale;
        for (int64_t e = 0; e < E; ++e) {
          dQ[(bh * L + i) * E + e] += ds * K[(bh * S + j) * E + e];
          dK[(bh * S + j) * E + e] += ds * Q[(bh * L + i) * E + e];
        }
      }
    }
  }
  r.dq = raw::sum_to(r.dq, q_in.sizes());
  r.dk = raw::sum_to(r.dk, k_in.sizes());
  r.dv = raw::sum_to(r.dv, v_in.sizes());
  return r;
}

void check_case(const Case& c, DType dtype, double tol, Device device = kCPU) {
  Tensor q = make(c.q, 1, dtype, c.strided), k = make(c.k, 2, dtype, c.strided), v = make(c.v, 3, dtype, c.strided);
  Tensor mask = c.mask.empty() ? Tensor() : make_mask(c.mask, c.bool_mask, 4);
  Generator gen(99);
  raw::AttentionResult r = raw::scaled_dot_product_attention(raw::to(q, device, dtype), raw::to(k, device, dtype),
                                                             raw::to(v, device, dtype),
                                                             mask.defined() ? raw::to(mask, device, mask.dtype()) : mask,
                                                             c.dropout, c.causal, c.scale, &gen);
  ASSERT_EQ(r.output.dtype(), dtype);
  Tensor go = make(r.output.sizes(), 5, dtype, false);
  raw::AttentionGrads g = raw::scaled_dot_product_attention_backward(
      raw::to(go, device, dtype), raw::to(q, device, dtype), raw::to(k, device, dtype), raw::to(v, device, dtype),
      mask.defined() ? raw::to(mask, device, mask.dtype()) : mask, r, c.dropout, c.causal);
  const double scale = c.scale.value_or(1.0 / std::sqrt(static_cast<double>(c.q.back())));
  Reference ref = reference(q, k, v, mask, c.causal, scale, c.dropout, r.philox, go);
  EXPECT_TRUE(all_close(r.output, ref.out, tol, tol)) << "output";
  EXPECT_TRUE(all_close(g.grad_q, ref.dq, tol, tol)) << "grad q";
  EXPECT_TRUE(all_close(g.grad_k, ref.dk, tol, tol)) << "grad k";
  EXPECT_TRUE(all_close(g.grad_v, ref.dv, tol, tol)) << "grad v";
}

std::vector<Case> cases() {
  std::vector<Case> cs;
  cs.push_back({{2, 3, 5, 4}, {2, 3, 7, 4}, {2, 3, 7, 3}});
  cs.push_back({{1, 2, 33, 8}, {1, 2, 65, 8}, {1, 2, 65, 8}});
  cs.push_back({{3, 40, 16}, {3, 40, 16}, {3, 40, 24}, {}, true, true});
  cs.push_back({{2, 70, 5}, {2, 31, 5}, {2, 31, 7}, {}, true, true});            // causal, L > S
  cs.push_back({{2, 17, 9}, {2, 50, 9}, {2, 50, 6}, {}, true, true});            // causal, L < S
  cs.push_back({{2, 2, 64, 32}, {2, 2, 64, 32}, {2, 2, 64, 32}, {}, true, true});  // the GPT's small shape
  cs.push_back({{6, 3}, {9, 3}, {9, 2}});                                        // no batch dims
  cs.push_back({{2, 3, 5, 4}, {3, 7, 4}, {1, 1, 7, 3}});                         // broadcast k, v
  cs.push_back({{2, 1, 2, 5, 4}, {1, 3, 2, 7, 4}, {2, 3, 1, 7, 4}});             // 3 batch dims broadcast
  cs.push_back({{2, 3, 6, 4}, {2, 3, 37, 4}, {2, 3, 37, 5}, {6, 37}});           // bool mask [L, S]
  cs.push_back({{2, 3, 6, 4}, {2, 3, 37, 4}, {2, 3, 37, 5}, {2, 1, 1, 37}});     // key padding mask
  cs.push_back({{2, 3, 6, 4}, {2, 3, 9, 4}, {2, 3, 9, 5}, {3, 6, 9}, false});    // float mask
  cs.push_back({{2, 3, 35, 4}, {2, 3, 9, 4}, {2, 3, 9, 5}, {2, 3, 35, 9}, false});
  Case scaled{{2, 2, 11, 6}, {2, 2, 13, 6}, {2, 2, 13, 6}};
  scaled.scale = 0.3;
  cs.push_back(scaled);
  Case strided{{2, 3, 19, 6}, {2, 3, 23, 6}, {2, 3, 23, 5}, {}, true, true};
  strided.strided = true;
  cs.push_back(strided);
  Case drop{{2, 2, 37, 8}, {2, 2, 41, 8}, {2, 2, 41, 5}};
  drop.dropout = 0.3;
  cs.push_back(drop);
  Case drop_causal{{2, 50, 8}, {2, 50, 8}, {2, 50, 8}, {}, true, true};
  drop_causal.dropout = 0.5;
  cs.push_back(drop_causal);
  Case drop_mask{{1, 2, 9, 4}, {1, 2, 33, 4}, {1, 2, 33, 4}, {9, 33}};
  drop_mask.dropout = 0.2;
  cs.push_back(drop_mask);
  return cs;
}

TEST(AttentionOps, Float64MatchesTheUnfusedFormula) {
  int n = 0;
  for (const Case& c : cases()) {
    SCOPED_TRACE("case " + std::to_string(n++));
    check_case(c, kFloat64, 1e-10);
  }
}

TEST(AttentionOps, Float32MatchesTheUnfusedFormula) {
  int n = 0;
  for (const Case& c : cases()) {
    SCOPED_TRACE("case " + std::to_string(n++));
    check_case(c, kFloat32, 2e-5);
  }
}

TEST(AttentionOps, SixteenBitInputsAccumulateInFloat32) {
  // The reference sees the same rounded inputs; what remains is the rounding of the outputs and of
  // the 16-bit gradient buffers.
  for (DType dtype : {kBFloat16, kFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    int n = 0;
    for (const Case& c : cases()) {
      SCOPED_TRACE("case " + std::to_string(n++));
      check_case(c, dtype, dtype == kBFloat16 ? 3e-2 : 4e-3);
    }
  }
}

TEST(AttentionOps, FullyMaskedRowsGiveZeros) {
  // PyTorch 2.15's CPU result: the row of a query that sees no key is 0, and so is its gradient.
  Tensor q = make({1, 4, 8}, 1, kFloat32, false), k = make({1, 5, 8}, 2, kFloat32, false);
  Tensor v = make({1, 5, 3}, 3, kFloat32, false);
  Tensor mask = raw::full({4, 5}, 1.0, kBool);
  Tensor masked_row = raw::select(mask, 0, 2);
  raw::fill_(masked_row, 0.0);
  raw::AttentionResult r = raw::scaled_dot_product_attention(q, k, v, mask);
  std::vector<double> row = testing::values(raw::select(raw::select(r.output, 0, 0), 0, 2));
  for (double x : row) EXPECT_EQ(x, 0.0);
  EXPECT_TRUE(std::isinf(testing::values(r.lse)[2]));
  raw::AttentionGrads g = raw::scaled_dot_product_attention_backward(raw::full({1, 4, 3}, 1.0, kFloat32), q, k, v,
                                                                     mask, r, 0.0, false);
  for (double x : testing::values(raw::select(raw::select(g.grad_q, 0, 0), 0, 2))) EXPECT_EQ(x, 0.0);
}

TEST(AttentionOps, DropoutOneGivesZerosAndDropoutDiffersPerCall) {
  Tensor q = make({2, 6, 4}, 1, kFloat32, false);
  raw::AttentionResult all = raw::scaled_dot_product_attention(q, q, q, Tensor(), 1.0);
  for (double x : testing::values(all.output)) EXPECT_EQ(x, 0.0);
  Generator gen(3);
  Tensor a = raw::scaled_dot_product_attention(q, q, q, Tensor(), 0.5, false, std::nullopt, &gen).output;
  Tensor b = raw::scaled_dot_product_attention(q, q, q, Tensor(), 0.5, false, std::nullopt, &gen).output;
  EXPECT_FALSE(all_close(a, b, 1e-6, 1e-6));
}

TEST(AttentionOps, BadInputsSayWhatWasExpected) {
  Tensor q = make({2, 5, 4}, 1, kFloat32, false), k = make({2, 7, 4}, 2, kFloat32, false);
  Tensor v = make({2, 7, 3}, 3, kFloat32, false);
  auto run = [](const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& m = Tensor(), bool causal = false,
                double p = 0.0) { raw::scaled_dot_product_attention(q, k, v, m, p, causal); };
  EXPECT_TRUE(throws_with([&] { run(q, k, v, raw::full({5, 7}, 1.0, kBool), true); }, "is_causal"));
  EXPECT_TRUE(throws_with([&] { run(q, make({2, 7, 3}, 2, kFloat32, false), v); }, "same last dim"));
  EXPECT_TRUE(throws_with([&] { run(q, k, make({2, 6, 3}, 3, kFloat32, false)); }, "same sequence length"));
  EXPECT_TRUE(throws_with([&] { run(q, raw::to(k, kCPU, kFloat64), v); }, "same dtype"));
  EXPECT_TRUE(throws_with([&] { run(q, k, v, raw::full({5, 6}, 1.0, kBool)); }, "does not broadcast"));
  EXPECT_TRUE(throws_with([&] { run(q, k, v, raw::full({5, 7}, 1.0, kInt64)); }, "bool or floating"));
  EXPECT_TRUE(throws_with([&] { run(q, k, v, Tensor(), false, 1.5); }, "dropout_p"));
  EXPECT_TRUE(throws_with([&] { run(make({4}, 1, kFloat32, false), k, v); }, "at least 2 dims"));
  EXPECT_TRUE(throws_with([&] { run(q, make({3, 7, 4}, 2, kFloat32, false), v); }, "broadcast"));
}

TEST(AttentionOps, ResultsDoNotDependOnTheThreadCount) {
  // Every (b, h, query tile) and, backward, every (b, h) is one task with its own sums, so the
  // bits are the same whatever the split.
  Tensor q = make({3, 2, 45, 16}, 1, kFloat32, false), k = make({3, 2, 45, 16}, 2, kFloat32, false);
  Tensor v = make({3, 2, 45, 8}, 3, kFloat32, false), go = make({3, 2, 45, 8}, 4, kFloat32, false);
  const int saved = kernels::cpu::num_threads();
  std::vector<std::vector<double>> runs;
  for (int threads : {1, 2, 3}) {
    kernels::cpu::set_num_threads(threads);
    raw::AttentionResult r = raw::scaled_dot_product_attention(q, k, v, Tensor(), 0.0, true);
    raw::AttentionGrads g = raw::scaled_dot_product_attention_backward(go, q, k, v, Tensor(), r, 0.0, true);
    std::vector<double> all = testing::values(r.output);
    for (const Tensor& t : {g.grad_q, g.grad_k, g.grad_v}) {
      std::vector<double> x = testing::values(t);
      all.insert(all.end(), x.begin(), x.end());
    }
    runs.push_back(all);
  }
  kernels::cpu::set_num_threads(saved);
  EXPECT_EQ(runs[0], runs[1]);
  EXPECT_EQ(runs[0], runs[2]);
}

TEST(AttentionOps, FourDimOutputsAreStoredSequenceMajorAndReadInPlace) {
  // A GPT's heads: q, k, v views [B, H, T, D] of one packed [B, T, 3 * H * D] projection, and the
  // output's gradient arriving as the transpose of a contiguous [B, T, H, D]. On the CPU
  // the output is stored [B, T, H, D] (as PyTorch's CPU flash attention stores it),
  // the gradient is read in place, and dq, dk, dv are written into one buffer laid out as the
  // projection (what split's backward then takes whole); from contiguous inputs they are stored
  // [B, T, H, D] like the output. The values must equal those of the same call on contiguous
  // copies of everything, which the tests above check against the formula. The same in bfloat16
  // and float16 (on an AMX CPU bfloat16 takes the whole-head kernels at T = 37 and attention.cc's
  // key blocks at T = 300; elsewhere the widened path).
  const int64_t B = 2, H = 3, D = 8;
  for (auto [dtype, T] : {std::pair{kFloat32, 37}, {kFloat64, 37}, {kBFloat16, 37}, {kBFloat16, 300}, {kFloat16, 37}}) {
    SCOPED_TRACE(std::string(dtype_name(dtype)) + " T=" + std::to_string(T));
    Tensor packed = make({B, T, 3 * H * D}, 1, dtype, false);
    auto heads = [&](int64_t i) {
      return raw::transpose(raw::view(raw::narrow(packed, 2, i * H * D, H * D), {B, T, H, D}), 1, 2);
    };
    Tensor q = heads(0), k = heads(1), v = heads(2);
    Tensor go = raw::transpose(make({B, T, H, D}, 2, dtype, false), 1, 2);
    raw::AttentionResult r = raw::scaled_dot_product_attention(q, k, v, Tensor(), 0.0, true);
    raw::AttentionGrads g = raw::scaled_dot_product_attention_backward(go, q, k, v, Tensor(), r, 0.0, true);
    EXPECT_TRUE(raw::transpose(r.output, 1, 2).is_contiguous());
    const Tensor* grads[3] = {&g.grad_q, &g.grad_k, &g.grad_v};
    const Tensor* inputs[3] = {&q, &k, &v};
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(grads[i]->strides(), q.strides());
      EXPECT_EQ(grads[i]->storage().get(), g.grad_q.storage().get());
      EXPECT_EQ(grads[i]->storage_offset() - g.grad_q.storage_offset(),
                inputs[i]->storage_offset() - q.storage_offset());
    }
    Tensor qc = raw::contiguous(q), kc = raw::contiguous(k), vc = raw::contiguous(v);
    raw::AttentionResult rc = raw::scaled_dot_product_attention(qc, kc, vc, Tensor(), 0.0, true);
    raw::AttentionGrads gc =
        raw::scaled_dot_product_attention_backward(raw::contiguous(go), qc, kc, vc, Tensor(), rc, 0.0, true);
    for (const Tensor& t : {gc.grad_q, gc.grad_k, gc.grad_v}) EXPECT_TRUE(raw::transpose(t, 1, 2).is_contiguous());
    EXPECT_NE(gc.grad_q.storage().get(), gc.grad_k.storage().get());
    EXPECT_TRUE(all_close(r.output, rc.output, 0.0, 0.0));
    EXPECT_TRUE(all_close(g.grad_q, gc.grad_q, 0.0, 0.0));
    EXPECT_TRUE(all_close(g.grad_k, gc.grad_k, 0.0, 0.0));
    EXPECT_TRUE(all_close(g.grad_v, gc.grad_v, 0.0, 0.0));
  }
}

TEST(AttentionOps, CudaMatchesTheFormula_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  int n = 0;
  for (const Case& c : cases()) {
    SCOPED_TRACE("case " + std::to_string(n++));
    check_case(c, kFloat32, 2e-5, Device(DeviceType::CUDA, 0));
    check_case(c, kFloat64, 1e-10, Device(DeviceType::CUDA, 0));
    check_case(c, kBFloat16, 3e-2, Device(DeviceType::CUDA, 0));
  }
}

}  // namespace
}  // namespace colony
