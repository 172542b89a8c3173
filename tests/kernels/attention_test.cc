// kernels/cpu/attention.cc's bfloat16 path on AMX tiles (the products on amx_gemm, P and dS
// rounded to bfloat16 before theirs, everything else in float32) against attention written out in
// float64 from the same bfloat16 inputs, for every AMX copy this CPU runs (attention_short_amx.h's
// whole-head kernels where S <= 256, attention.cc's key blocks beyond): the emulated tiles (any
// CPU) and, where AMX is usable, the hardware. Its error must stay in the range of the widened
// path's (the products in float32, what runs without AMX), which each case also runs. Shapes: T
// not a multiple of the 32-row tiles or of the 256-key blocks (so the forward's softmax goes
// online across blocks), L != S, causal, an additive mask with a fully masked row, strided q,
// head dims 32 and 64. tests/ops/attention_ops_test.cc covers the front, dropout and the other
// dtypes on whatever path this CPU takes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/common/attention.h"
#include "kernels/common/half.h"
#include "kernels/cpu/amx_gemm.h"
#include "kernels/cpu/attention_short_amx.h"
#include "tests/kernels/attention_reference.h"

namespace colony::kernels::cpu {
namespace {

using testing::AttentionInputs;
using testing::AttentionOutputs;
using testing::relative_error;
using Problem = testing::AttentionProblem;

AttentionArgs shape_of(const Problem& p) { return testing::attention_shape(p, DType::BFloat16); }

// The kernels on the inputs, forward then backward, on whatever path is active.
AttentionOutputs run(const Problem& p, const AttentionInputs<BFloat16>& in) {
  const int64_t bh = p.batch * p.heads;
  std::vector<BFloat16> out(bh * p.L * p.Ev), dq(bh * p.L * p.E), dk(bh * p.S * p.E), dv(bh * p.S * p.Ev);
  std::vector<float> lse(bh * p.L), mask_t;
  AttentionArgs a = testing::attention_args(p, in, DType::BFloat16, mask_t);
  a.out = out.data();
  a.lse = lse.data();
  AttentionForward::cpu(a);
  a.grad_out = in.go.data();
  a.dq = dq.data();
  a.dk = dk.data();
  a.dv = dv.data();
  AttentionBackward::cpu(a);
  auto widen = [](const std::vector<BFloat16>& x) {
    std::vector<double> d(x.size());
    for (size_t i = 0; i < x.size(); ++i) d[i] = static_cast<float>(x[i]);
    return d;
  };
  return {widen(out), std::vector<double>(lse.begin(), lse.end()), widen(dq), widen(dk), widen(dv)};
}

// bfloat16 keeps 8 significant bits (relative spacing 2^-8 = 0.0039). Relative to each output's
// largest entry, the widened path's errors were 0.0020-0.0035 on these problems (the outputs'
// own rounding), the AMX path's 0.0020-0.0063 (P and dS rounded too; the hardware and the
// emulated tiles agree bit for bit); 0.01 is about 2.5 roundings.
constexpr double kBf16Tolerance = 0.01;

void check(const AmxGemmFns* fns, const Problem& p) {
  SCOPED_TRACE(std::string(fns->isa) + " " + p.name());
  const AttentionInputs<BFloat16> in = testing::make_attention_inputs<BFloat16>(p);
  const AttentionOutputs ref = testing::attention_reference(p, in);
  AttentionOutputs widened;
  {
    ScopedAmxGemmFns none(nullptr);
    widened = run(p, in);
  }
  ScopedAmxGemmFns use(fns);
  EXPECT_EQ(short_amx_attention_applies(shape_of(p)), p.S <= kShortAttentionMaxKeys) << "the path this case is meant for";
  const AttentionOutputs amx = run(p, in);
  const char* names[] = {"out", "dq", "dk", "dv"};
  const std::vector<double>* got[] = {&amx.out, &amx.dq, &amx.dk, &amx.dv};
  const std::vector<double>* base[] = {&widened.out, &widened.dq, &widened.dk, &widened.dv};
  const std::vector<double>* want[] = {&ref.out, &ref.dq, &ref.dk, &ref.dv};
  for (int t = 0; t < 4; ++t) {
    const double e_amx = relative_error(*got[t], *want[t]), e_widened = relative_error(*base[t], *want[t]);
    EXPECT_LT(e_amx, kBf16Tolerance) << names[t];
    // P and dS rounded to bfloat16 add at most about one output rounding to the widened path's error.
    EXPECT_LT(e_amx, 2 * e_widened + 1.0 / 256) << names[t] << " against the widened path's " << e_widened;
  }
  // A fully masked row gives a zero output and zero dq, as on the widened path.
  if (p.mask) {
    for (int64_t b = 0; b < p.batch * p.heads; ++b) {
      for (int64_t e = 0; e < p.Ev; ++e) EXPECT_EQ(amx.out[(b * p.L + 1) * p.Ev + e], 0.0);
      for (int64_t e = 0; e < p.E; ++e) EXPECT_EQ(amx.dq[(b * p.L + 1) * p.E + e], 0.0);
    }
  }
}

std::vector<Problem> problems() {
  std::vector<Problem> ps;
  ps.push_back({1, 2, 64, 64, 32, 32, true});   // the character GPT's CPU shape (context 64, head dim 32)
  ps.push_back({1, 1, 70, 70, 64, 64, true});   // T past whole tiles, head dim 64
  ps.push_back({2, 1, 45, 37, 32, 32});         // L != S, neither a multiple of 32
  ps.push_back({1, 2, 33, 50, 64, 32, false, true});  // additive mask, a fully masked row, Ev != E
  ps.push_back({1, 1, 40, 300, 32, 48});        // two key blocks: the softmax goes online
  ps.push_back({1, 1, 290, 290, 32, 32, true});  // causal across key blocks
  Problem strided{1, 2, 41, 41, 64, 64, true, true};
  strided.q_pad = 24;
  ps.push_back(strided);
  ps.push_back({1, 1, 17, 9, 40, 24});  // head dim past one 32-deep step, not a multiple of it
  // The whole-head kernels (S <= 256): query rows in two groups of P and dS (L > 256), causal with
  // L != S, keys not a multiple of 32, and a mask read by columns.
  ps.push_back({1, 2, 300, 64, 32, 32, true});
  ps.push_back({1, 1, 260, 200, 64, 64});
  Problem by_columns{2, 1, 50, 45, 32, 32, true, true};
  by_columns.mask_by_columns = true;
  ps.push_back(by_columns);
  return ps;
}

TEST(AttentionAmx, MatchesFloat64WithinBfloat16ToleranceOnEveryCopy) {
  for (const AmxGemmFns* fns : runnable_amx_copies()) {
    for (const Problem& p : problems()) check(fns, p);
  }
}

}  // namespace
}  // namespace colony::kernels::cpu
