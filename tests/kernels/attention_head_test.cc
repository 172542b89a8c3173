// kernels/cpu/attention_head.h's whole-row float32 kernels, each ISA copy this CPU runs (AVX2
// always, AVX-512 where the CPU has it), against attention written out in float64 from the same
// float32 inputs: outputs, lse and the three gradients. Shapes: T not a multiple of any tile or
// of the 64-row panels, head dims 32, 64, 128 and odd ones (read in place where whole vectors,
// packed otherwise), L != S both ways under causal (keys no query sees), an additive mask with a
// fully masked row (-inf lse, zero output and dq), a mask read by columns, strided q and out. The
// entry (AttentionForward::cpu) must take this path and give the active copy's bits.
#include "kernels/cpu/attention_head.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_isa.h"

namespace colony::kernels::cpu {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Case {
  int64_t batch, heads, L, S, E, Ev;
  bool causal = false, mask = false;
  int64_t pad = 0;               // extra elements per row of q and of out (strided views)
  bool mask_by_columns = false;  // the mask stored transposed (column stride L): gathered per row
  std::string name() const {
    return "L=" + std::to_string(L) + " S=" + std::to_string(S) + " E=" + std::to_string(E) +
           " Ev=" + std::to_string(Ev) + (causal ? " causal" : "") + (mask ? " masked" : "") +
           (pad ? " strided" : "") + (mask_by_columns ? " (by columns)" : "");
  }
};

std::vector<float> random_floats(size_t n, uint32_t seed, float range) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-range, range);
  std::vector<float> v(n);
  for (float& x : v) x = u(gen);
  return v;
}

struct Inputs {
  std::vector<float> q, k, v, go, mask;  // mask [L, S], shared by every (b, h); row 1 all -inf
  int64_t q_row, o_row;
};

Inputs make_inputs(const Case& c) {
  Inputs in;
  const int64_t bh = c.batch * c.heads;
  in.q_row = c.E + c.pad;
  in.o_row = c.Ev + c.pad;
  in.q = random_floats(bh * c.L * in.q_row, 1, 2.0f);
  in.k = random_floats(bh * c.S * c.E, 2, 2.0f);
  in.v = random_floats(bh * c.S * c.Ev, 3, 2.0f);
  in.go = random_floats(bh * c.L * in.o_row, 4, 1.0f);
  if (c.mask) {
    std::mt19937 gen(5);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    in.mask.resize(c.L * c.S);
    for (float& m : in.mask) m = u(gen) < 0.25f ? -std::numeric_limits<float>::infinity() : 2.0f * u(gen) - 1.0f;
    if (c.L > 1) std::fill(in.mask.begin() + c.S, in.mask.begin() + 2 * c.S, -std::numeric_limits<float>::infinity());
  }
  return in;
}

struct Outputs {
  std::vector<double> out, lse, dq, dk, dv;
};

AttentionArgs args_of(const Case& c, const Inputs& in, std::vector<float>& mask_t) {
  AttentionArgs a;
  a.dtype = DType::Float32;
  a.batch = c.batch;
  a.heads = c.heads;
  a.L = c.L;
  a.S = c.S;
  a.E = c.E;
  a.Ev = c.Ev;
  a.q = in.q.data();
  a.k = in.k.data();
  a.v = in.v.data();
  a.qs = {c.heads * c.L * in.q_row, c.L * in.q_row, in.q_row, 1};
  a.ks = {c.heads * c.S * c.E, c.S * c.E, c.E, 1};
  a.vs = {c.heads * c.S * c.Ev, c.S * c.Ev, c.Ev, 1};
  if (c.mask && c.mask_by_columns) {
    mask_t.resize(c.L * c.S);
    for (int64_t i = 0; i < c.L; ++i)
      for (int64_t j = 0; j < c.S; ++j) mask_t[j * c.L + i] = in.mask[i * c.S + j];
    a.mask = mask_t.data();
    a.ms = {0, 0, 1, c.L};
  } else if (c.mask) {
    a.mask = in.mask.data();
    a.ms = {0, 0, c.S, 1};
  }
  a.causal = c.causal;
  a.scale = 1.0 / std::sqrt(static_cast<double>(c.E));
  a.os = a.gs = {c.heads * c.L * in.o_row, c.L * in.o_row, in.o_row, 1};
  a.dqs = {c.heads * c.L * c.E, c.L * c.E, c.E, 1};
  a.dks = {c.heads * c.S * c.E, c.S * c.E, c.E, 1};
  a.dvs = {c.heads * c.S * c.Ev, c.S * c.Ev, c.Ev, 1};
  return a;
}

// The padding of out's rows: a strided output must not be written past its row.
constexpr float kSentinel = 12345.0f;

// Forward then backward on `fns` (or, fns null, through the kernel entry points).
Outputs run(const AttentionHeadFns* fns, const Case& c, const Inputs& in) {
  const int64_t bh = c.batch * c.heads;
  std::vector<float> out(bh * c.L * in.o_row, kSentinel), lse(bh * c.L), dq(bh * c.L * c.E), dk(bh * c.S * c.E),
      dv(bh * c.S * c.Ev), mask_t;
  AttentionArgs a = args_of(c, in, mask_t);
  a.out = out.data();
  a.lse = lse.data();
  a.grad_out = in.go.data();
  a.dq = dq.data();
  a.dk = dk.data();
  a.dv = dv.data();
  if (fns != nullptr) {
    head_attention_forward(a, *fns);
    head_attention_backward(a, *fns);
  } else {
    AttentionForward::cpu(a);
    AttentionBackward::cpu(a);
  }
  Outputs r;
  for (int64_t i = 0; i < bh * c.L; ++i) {
    for (int64_t e = 0; e < c.Ev; ++e) r.out.push_back(out[i * in.o_row + e]);
    for (int64_t e = c.Ev; e < in.o_row; ++e) EXPECT_EQ(out[i * in.o_row + e], kSentinel) << "written past out's row";
  }
  r.lse.assign(lse.begin(), lse.end());
  r.dq.assign(dq.begin(), dq.end());
  r.dk.assign(dk.begin(), dk.end());
  r.dv.assign(dv.begin(), dv.end());
  return r;
}

// Softmax attention, its lse and its gradients in float64 from the same float32 inputs.
Outputs reference(const Case& c, const Inputs& in) {
  const int64_t bh = c.batch * c.heads, L = c.L, S = c.S, E = c.E, Ev = c.Ev;
  const double scale = 1.0 / std::sqrt(static_cast<double>(E));
  Outputs r{std::vector<double>(bh * L * Ev), std::vector<double>(bh * L), std::vector<double>(bh * L * E),
            std::vector<double>(bh * S * E), std::vector<double>(bh * S * Ev)};
  std::vector<double> w(S), dp(S);
  for (int64_t b = 0; b < bh; ++b) {
    const float* Q = in.q.data() + b * L * in.q_row;
    const float* K = in.k.data() + b * S * E;
    const float* V = in.v.data() + b * S * Ev;
    const float* G = in.go.data() + b * L * in.o_row;
    for (int64_t i = 0; i < L; ++i) {
      double mx = -kInf;
      for (int64_t j = 0; j < S; ++j) {
        double acc = 0;
        for (int64_t e = 0; e < E; ++e) acc += static_cast<double>(Q[i * in.q_row + e]) * K[j * E + e];
        w[j] = acc * scale + (c.mask ? in.mask[i * S + j] : 0.0);
        if (c.causal && j > i) w[j] = -kInf;
        mx = std::max(mx, w[j]);
      }
      double sum = 0;
      for (int64_t j = 0; j < S; ++j) sum += w[j] = std::isinf(mx) ? 0.0 : std::exp(w[j] - mx);
      r.lse[b * L + i] = sum > 0 ? mx + std::log(sum) : -kInf;
      for (int64_t j = 0; j < S; ++j) w[j] = sum > 0 ? w[j] / sum : 0.0;
      double dsum = 0;
      for (int64_t j = 0; j < S; ++j) {
        double acc = 0;
        for (int64_t e = 0; e < Ev; ++e) {
          const double g = G[i * in.o_row + e], v = V[j * Ev + e];
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
          r.dq[(b * L + i) * E + e] += ds * K[j * E + e];
          r.dk[(b * S + j) * E + e] += ds * Q[i * in.q_row + e];
        }
      }
    }
  }
  return r;
}

// The largest error relative to the largest reference magnitude; infinities must match exactly.
double relative_error(const std::vector<double>& x, const std::vector<double>& ref) {
  double err = 0, mag = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isinf(ref[i]) || std::isinf(x[i])) {
      if (x[i] != ref[i]) return kInf;
      continue;
    }
    err = std::max(err, std::abs(x[i] - ref[i]));
    mag = std::max(mag, std::abs(ref[i]));
  }
  return err / std::max(mag, 1e-30);
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
  strided.pad = 24;
  cs.push_back(strided);
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
  const Inputs in = make_inputs(c);
  const Outputs ref = reference(c, in);
  const Outputs got = run(fns, c, in);
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
    const Inputs in = make_inputs(c);
    const Outputs direct = run(&active_attention_head_fns(), c, in), entry = run(nullptr, c, in);
    EXPECT_EQ(direct.out, entry.out);
    EXPECT_EQ(direct.dq, entry.dq);
    EXPECT_EQ(direct.dk, entry.dk);
    EXPECT_EQ(direct.dv, entry.dv);
  }
}

}  // namespace
}  // namespace colony::kernels::cpu
