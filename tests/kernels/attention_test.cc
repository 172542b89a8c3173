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

namespace colony::kernels::cpu {
namespace {

struct Problem {
  int64_t batch, heads, L, S, E, Ev;
  bool causal = false, mask = false;
  int64_t q_pad = 0;  // extra elements per row of q (a strided view)
  bool mask_by_columns = false;  // the mask stored transposed (column stride L): gathered per row
  std::string name() const {
    return "L=" + std::to_string(L) + " S=" + std::to_string(S) + " E=" + std::to_string(E) +
           " Ev=" + std::to_string(Ev) + (causal ? " causal" : "") + (mask ? " masked" : "") +
           (q_pad ? " strided q" : "") + (mask_by_columns ? " (by columns)" : "");
  }
};

std::vector<BFloat16> random_bf16(size_t n, uint32_t seed, float range) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-range, range);
  std::vector<BFloat16> v(n);
  for (BFloat16& x : v) x = BFloat16(u(gen));
  return v;
}

struct Inputs {
  std::vector<BFloat16> q, k, v, go;
  std::vector<float> mask;  // [L, S], shared by every (b, h)
  int64_t q_row;
};

Inputs make_inputs(const Problem& p) {
  Inputs in;
  const int64_t bh = p.batch * p.heads;
  in.q_row = p.E + p.q_pad;
  in.q = random_bf16(bh * p.L * in.q_row, 1, 2.0f);
  in.k = random_bf16(bh * p.S * p.E, 2, 2.0f);
  in.v = random_bf16(bh * p.S * p.Ev, 3, 2.0f);
  in.go = random_bf16(bh * p.L * p.Ev, 4, 1.0f);
  if (p.mask) {
    std::mt19937 gen(5);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    in.mask.resize(p.L * p.S);
    for (float& m : in.mask) m = u(gen) < 0.25f ? -std::numeric_limits<float>::infinity() : 2.0f * u(gen) - 1.0f;
    if (p.L > 1) std::fill(in.mask.begin() + p.S, in.mask.begin() + 2 * p.S, -std::numeric_limits<float>::infinity());
  }
  return in;
}

struct Outputs {
  std::vector<double> out, dq, dk, dv;
};

// The problem's dtype and sizes.
AttentionArgs shape_of(const Problem& p) {
  AttentionArgs a;
  a.dtype = DType::BFloat16;
  a.batch = p.batch;
  a.heads = p.heads;
  a.L = p.L;
  a.S = p.S;
  a.E = p.E;
  a.Ev = p.Ev;
  return a;
}

// The kernels on the inputs, forward then backward, on whatever path is active.
Outputs run(const Problem& p, const Inputs& in) {
  const int64_t bh = p.batch * p.heads;
  std::vector<BFloat16> out(bh * p.L * p.Ev), dq(bh * p.L * p.E), dk(bh * p.S * p.E), dv(bh * p.S * p.Ev);
  std::vector<float> lse(bh * p.L);
  AttentionArgs a = shape_of(p);
  a.q = in.q.data();
  a.k = in.k.data();
  a.v = in.v.data();
  a.qs = {p.heads * p.L * in.q_row, p.L * in.q_row, in.q_row, 1};
  a.ks = {p.heads * p.S * p.E, p.S * p.E, p.E, 1};
  a.vs = {p.heads * p.S * p.Ev, p.S * p.Ev, p.Ev, 1};
  std::vector<float> mask_t;
  if (p.mask && p.mask_by_columns) {
    mask_t.resize(p.L * p.S);
    for (int64_t i = 0; i < p.L; ++i)
      for (int64_t j = 0; j < p.S; ++j) mask_t[j * p.L + i] = in.mask[i * p.S + j];
    a.mask = mask_t.data();
    a.ms = {0, 0, 1, p.L};
  } else if (p.mask) {
    a.mask = in.mask.data();
    a.ms = {0, 0, p.S, 1};
  }
  a.causal = p.causal;
  a.scale = 1.0 / std::sqrt(static_cast<double>(p.E));
  a.out = out.data();
  a.lse = lse.data();
  a.os = a.gs = {p.heads * p.L * p.Ev, p.L * p.Ev, p.Ev, 1};  // out, dO, dq, dk, dv contiguous
  a.dqs = {p.heads * p.L * p.E, p.L * p.E, p.E, 1};
  a.dks = {p.heads * p.S * p.E, p.S * p.E, p.E, 1};
  a.dvs = {p.heads * p.S * p.Ev, p.S * p.Ev, p.Ev, 1};
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
  return {widen(out), widen(dq), widen(dk), widen(dv)};
}

// Softmax attention and its gradients in float64 from the same bfloat16 inputs.
Outputs reference(const Problem& p, const Inputs& in) {
  const int64_t bh = p.batch * p.heads, L = p.L, S = p.S, E = p.E, Ev = p.Ev;
  const double scale = 1.0 / std::sqrt(static_cast<double>(E));
  Outputs r{std::vector<double>(bh * L * Ev), std::vector<double>(bh * L * E), std::vector<double>(bh * S * E),
            std::vector<double>(bh * S * Ev)};
  std::vector<double> w(S), dp(S);
  for (int64_t b = 0; b < bh; ++b) {
    const BFloat16* Q = in.q.data() + b * L * in.q_row;
    const BFloat16* K = in.k.data() + b * S * E;
    const BFloat16* V = in.v.data() + b * S * Ev;
    const BFloat16* G = in.go.data() + b * L * Ev;
    for (int64_t i = 0; i < L; ++i) {
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < S; ++j) {
        double acc = 0;
        for (int64_t e = 0; e < E; ++e) {
          acc += static_cast<double>(Q[i * in.q_row + e]) * static_cast<double>(K[j * E + e]);
        }
        w[j] = acc * scale + (p.mask ? in.mask[i * S + j] : 0.0);
        if (p.causal && j > i) w[j] = -std::numeric_limits<double>::infinity();
        mx = std::max(mx, w[j]);
      }
      double sum = 0;
      for (int64_t j = 0; j < S; ++j) sum += w[j] = std::isinf(mx) ? 0.0 : std::exp(w[j] - mx);
      for (int64_t j = 0; j < S; ++j) w[j] = sum > 0 ? w[j] / sum : 0.0;
      double dsum = 0;
      for (int64_t j = 0; j < S; ++j) {
        double acc = 0;
        for (int64_t e = 0; e < Ev; ++e) {
          const double g = static_cast<float>(G[i * Ev + e]), v = static_cast<float>(V[j * Ev + e]);
          r.out[(b * L + i) * Ev + e] += w[j] * v;
          r.dv[(b * S + j) * Ev + e] += w[j] * g;
          acc += g * v;
        }
        dp[j] = acc;
        dsum += w[j] * acc;
      }
      for (int64_t j = 0; j < S; ++j) {
        const double ds = w[j] * (dp[j] - dsum) * scale;
        for (int64_t e = 0; e < E; ++e) {
          r.dq[(b * L + i) * E + e] += ds * static_cast<float>(K[j * E + e]);
          r.dk[(b * S + j) * E + e] += ds * static_cast<float>(Q[i * in.q_row + e]);
        }
      }
    }
  }
  return r;
}

// The largest error relative to the largest reference magnitude.
double relative_error(const std::vector<double>& x, const std::vector<double>& ref) {
  double err = 0, mag = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    err = std::max(err, std::abs(x[i] - ref[i]));
    mag = std::max(mag, std::abs(ref[i]));
  }
  return err / std::max(mag, 1e-30);
}

// bfloat16 keeps 8 significant bits (relative spacing 2^-8 = 0.0039). Relative to each output's
// largest entry, the widened path's errors were 0.0020-0.0035 on these problems (the outputs'
// own rounding), the AMX path's 0.0020-0.0063 (P and dS rounded too; the hardware and the
// emulated tiles agree bit for bit); 0.01 is about 2.5 roundings.
constexpr double kBf16Tolerance = 0.01;

void check(const AmxGemmFns* fns, const Problem& p) {
  SCOPED_TRACE(std::string(fns->isa) + " " + p.name());
  const Inputs in = make_inputs(p);
  const Outputs ref = reference(p, in);
  Outputs widened;
  {
    ScopedAmxGemmFns none(nullptr);
    widened = run(p, in);
  }
  ScopedAmxGemmFns use(fns);
  EXPECT_EQ(short_amx_attention_applies(shape_of(p)), p.S <= kShortAttentionMaxKeys) << "the path this case is meant for";
  const Outputs amx = run(p, in);
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
