// kernels/cpu/attention_head.h's whole-row float32 kernels, each ISA copy this CPU runs (AVX2
// always, AVX-512 where the CPU has it), against attention written out in float64 from the same
// float32 inputs: outputs, lse and the three gradients. Shapes: T not a multiple of any tile or
// of the 64-row panels, head dims 32, 64, 128 and odd ones (read in place where whole vectors,
// packed otherwise), L != S both ways under causal (keys no query sees), an additive mask with a
// fully masked row (-inf lse, zero output and dq), a mask read by columns, strided q and out. The
// entry (AttentionForward::cpu) must take this path and give the active copy's bits, and bfloat16
// and float16 inputs without AMX must give the float32 path's bits on them, rounded.
#include "kernels/cpu/attention_head.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/common/half.h"
#include "kernels/cpu/amx_gemm.h"
#include "kernels/cpu/cpu_isa.h"
#include "tests/kernels/attention_reference.h"

namespace colony::kernels::cpu {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

using testing::AttentionInputs;
using testing::AttentionOutputs;
using testing::relative_error;
using Case = testing::AttentionProblem;

// The padding of out's and the gradients' rows: a strided output must not be written past its row.
constexpr float kSentinel = 12345.0f;

// Rows of `width` elements `row` apart (count of them) into `to`, checking that the padding after
// each still holds kSentinel.
template <typename T>
void unpad(const std::vector<T>& from, int64_t count, int64_t width, int64_t row, const char* name,
           std::vector<double>& to) {
  for (int64_t i = 0; i < count; ++i) {
    for (int64_t e = 0; e < width; ++e) to.push_back(static_cast<float>(from[i * row + e]));
    for (int64_t e = width; e < row; ++e) {
      EXPECT_EQ(static_cast<float>(from[i * row + e]), static_cast<float>(T(kSentinel))) << "written past " << name << "'s row";
    }
  }
}

template <typename T>
constexpr DType kDType = std::is_same_v<T, float> ? DType::Float32
                         : std::is_same_v<T, BFloat16> ? DType::BFloat16
                                                        : DType::Float16;

// Forward then backward on `fns` (or, fns null, through the kernel entry points). R (float32 inputs
// only): out rounded through R before the backward reads it, as a 16-bit forward stores it.
template <typename T, typename R = T>
AttentionOutputs run(const AttentionHeadFns* fns, const Case& c, const AttentionInputs<T>& in) {
  const int64_t bh = c.batch * c.heads;
  const int64_t dq_row = c.E + c.grad_pad, dv_row = c.Ev + c.grad_pad;
  const T sentinel(kSentinel);
  std::vector<T> out(bh * c.L * in.o_row, sentinel), dq(bh * c.L * dq_row, sentinel), dk(bh * c.S * dq_row, sentinel),
      dv(bh * c.S * dv_row, sentinel);
  std::vector<float> lse(bh * c.L), mask_t;
  AttentionArgs a = testing::attention_args(c, in, kDType<T>, mask_t);
  a.out = out.data();
  a.lse = lse.data();
  a.grad_out = in.go.data();
  a.dq = dq.data();
  a.dk = dk.data();
  a.dv = dv.data();
  if (fns != nullptr) {
    head_attention_forward(a, *fns);
  } else {
    AttentionForward::cpu(a);
  }
  for (int64_t i = 0; i < bh * c.L; ++i) {
    for (int64_t e = 0; e < c.Ev; ++e) {
      T& o = out[i * in.o_row + e];
      o = static_cast<T>(static_cast<float>(R(static_cast<float>(o))));
    }
  }
  if (fns != nullptr) {
    head_attention_backward(a, *fns);
  } else {
    AttentionBackward::cpu(a);
  }
  AttentionOutputs r;
  unpad(out, bh * c.L, c.Ev, in.o_row, "out", r.out);
  r.lse.assign(lse.begin(), lse.end());
  unpad(dq, bh * c.L, c.E, dq_row, "dq", r.dq);
  unpad(dk, bh * c.S, c.E, dq_row, "dk", r.dk);
  unpad(dv, bh * c.S, c.Ev, dv_row, "dv", r.dv);
  return r;
}

// float32 keeps 24 significant bits (2^-24 = 6e-8). Relative to each output's largest entry the
// copies' errors were at most 1.05e-6 on these cases (AVX2 and AVX-512, 2026-12-06: sums of up to
// 256 products, exp within 1-2 ulp); 1e-5 is ~10x that. Starting a causal block of dK and dV one
// query row late gave 0.04-0.49 (tried once).
constexpr double kFloat32Tolerance = 1e-5;

std::vector<Case> cases() {
  std::vector<Case> cs;
  cs.push_back({2, 2, 64, 64, 32, 32, true});     // the character GPT's CPU shape (context 64, head dim 32)
  cs.push_back({1, 2, 256, 256, 64, 64, true});   // width 384: context 256, head dim 64, four panels
  cs.push_back({1, 1, 70, 70, 128, 128, true});   // head dim 128, T past a panel
  cs.push_back({2, 1, 45, 37, 40, 24});           // L != S, head dims not whole AVX-512 vectors
  cs.push_back({1, 2, 33, 50, 7, 5, false, true});  // additive mask, a fully masked row, odd head dims
  cs.push_back({1, 1, 130, 100, 32, 48, true});   // causal, L > S: the last rows see every key
  cs.push_back({1, 1, 90, 200, 64, 32, true});    // causal, L < S: keys past L seen by no query
  Case strided{1, 2, 41, 41, 64, 64, true, true};
  strided.q_pad = 24;
  strided.out_pad = 8;
  cs.push_back(strided);
  // Gradients written into rows of a wider tensor (as dq, dk, dv into the [B, T, 3C] gradient of
  // c_attn's output), head dims whole vectors and not.
  Case strided_grads{1, 2, 130, 130, 64, 64, true};
  strided_grads.grad_pad = 3;
  cs.push_back(strided_grads);
  Case strided_odd_grads{2, 1, 45, 37, 40, 24};
  strided_odd_grads.grad_pad = 5;
  cs.push_back(strided_odd_grads);
  Case by_columns{2, 1, 50, 45, 32, 32, true, true};
  by_columns.mask_by_columns = true;
  cs.push_back(by_columns);
  cs.push_back({1, 1, 1, 1, 1, 1});               // one query, one key
  cs.push_back({1, 1, 17, 256, 17, 33});          // as many keys as the path takes, odd head dims
  return cs;
}

std::vector<const AttentionHeadFns*> runnable_copies() {
  std::vector<const AttentionHeadFns*> copies{&avx2::attention_head_fns()};
  if (detected_cpu_isa() >= CpuIsa::Avx512) copies.push_back(&avx512::attention_head_fns());
  return copies;
}

void check(const AttentionHeadFns* fns, const Case& c) {
  SCOPED_TRACE(std::string(fns->isa) + " " + c.name());
  const AttentionInputs<float> in = testing::make_attention_inputs<float>(c);
  const AttentionOutputs ref = testing::attention_reference(c, in);
  const AttentionOutputs got = run(fns, c, in);
  const char* names[] = {"out", "lse", "dq", "dk", "dv"};
  const std::vector<double>* g[] = {&got.out, &got.lse, &got.dq, &got.dk, &got.dv};
  const std::vector<double>* want[] = {&ref.out, &ref.lse, &ref.dq, &ref.dk, &ref.dv};
  for (int t = 0; t < 5; ++t) EXPECT_LT(relative_error(*g[t], *want[t]), kFloat32Tolerance) << names[t];
  // A fully masked row: lse -inf, zero output and zero dq (not NaN), as attention.cc's tiles give.
  if (c.mask) {
    for (int64_t b = 0; b < c.batch * c.heads; ++b) {
      EXPECT_EQ(got.lse[b * c.L + 1], -kInf);
      for (int64_t e = 0; e < c.Ev; ++e) EXPECT_EQ(got.out[(b * c.L + 1) * c.Ev + e], 0.0);
      for (int64_t e = 0; e < c.E; ++e) EXPECT_EQ(got.dq[(b * c.L + 1) * c.E + e], 0.0);
    }
  }
}

TEST(AttentionHead, MatchesFloat64OnEveryCopy) {
  for (const AttentionHeadFns* fns : runnable_copies()) {
    for (const Case& c : cases()) check(fns, c);
  }
}

TEST(AttentionHead, TheEntryTakesThisPathForFloat32WithoutDropout) {
  AttentionArgs a;
  a.dtype = DType::Float32;
  a.L = a.S = 256;
  a.E = a.Ev = 64;
  EXPECT_TRUE(head_attention_applies(a));
  a.S = 257;  // longer: attention.cc's online softmax
  EXPECT_FALSE(head_attention_applies(a));
  a.S = 64;
  a.dropout_p = 0.1;
  EXPECT_FALSE(head_attention_applies(a));
  a.dropout_p = 0.0;
  a.dtype = DType::Float64;
  EXPECT_FALSE(head_attention_applies(a));
  // The entry's results are the active copy's, bit for bit.
  for (const Case& c : {cases()[0], cases()[4]}) {
    SCOPED_TRACE(c.name());
    const AttentionInputs<float> in = testing::make_attention_inputs<float>(c);
    const AttentionOutputs direct = run(&active_attention_head_fns(), c, in), entry = run(nullptr, c, in);
    EXPECT_EQ(direct.out, entry.out);
    EXPECT_EQ(direct.dq, entry.dq);
    EXPECT_EQ(direct.dk, entry.dk);
    EXPECT_EQ(direct.dv, entry.dv);
  }
}

// 16-bit inputs where AMX is not active (attention_head.h's widened entry points): each output must
// be the float32 path's on the widened inputs, rounded once, bit for bit (the backward reading the
// rounded output, as the 16-bit forward stores it).
template <typename T>
void check_widened(const Case& c) {
  SCOPED_TRACE(std::string(std::is_same_v<T, BFloat16> ? "bfloat16 " : "float16 ") + c.name());
  const AttentionInputs<T> in = testing::make_attention_inputs<T>(c);
  AttentionInputs<float> wide;
  auto widen = [](const std::vector<T>& x) { return std::vector<float>(x.begin(), x.end()); };
  wide.q = widen(in.q);
  wide.k = widen(in.k);
  wide.v = widen(in.v);
  wide.go = widen(in.go);
  wide.mask = in.mask;
  wide.q_row = in.q_row;
  wide.o_row = in.o_row;
  ScopedAmxGemmFns no_amx(nullptr);
  ASSERT_TRUE(widened_head_attention_applies(testing::attention_shape(c, kDType<T>)));
  const AttentionOutputs got = run(nullptr, c, in), f32 = run<float, T>(nullptr, c, wide);
  auto rounded = [](const std::vector<double>& x) {
    std::vector<double> r(x.size());
    for (size_t i = 0; i < x.size(); ++i) r[i] = static_cast<float>(T(static_cast<float>(x[i])));
    return r;
  };
  EXPECT_EQ(got.out, rounded(f32.out));
  EXPECT_EQ(got.lse, f32.lse);
  EXPECT_EQ(got.dq, rounded(f32.dq));
  EXPECT_EQ(got.dk, rounded(f32.dk));
  EXPECT_EQ(got.dv, rounded(f32.dv));
}

TEST(AttentionHead, SixteenBitInputsWithoutAmxRunWidenedHere) {
  for (const Case& c : cases()) {
    check_widened<BFloat16>(c);
    check_widened<Half>(c);
  }
  AttentionArgs a;
  a.dtype = DType::BFloat16;
  a.L = a.S = 256;
  a.E = a.Ev = 64;
  EXPECT_TRUE(widened_head_attention_applies(a));
  a.S = 257;
  EXPECT_FALSE(widened_head_attention_applies(a));
  a.S = 64;
  a.dropout_p = 0.1;
  EXPECT_FALSE(widened_head_attention_applies(a));
  a.dropout_p = 0.0;
  a.dtype = DType::Float32;
  EXPECT_FALSE(widened_head_attention_applies(a));
}

}  // namespace
}  // namespace colony::kernels::cpu
