// The vector GELU and SiLU loops (kernels/cpu/activation_simd.h), each ISA's copy (AVX2 always,
// AVX-512 where the CPU has it), against float64 evaluations of the functions of
// kernels/common/elementwise_functors.h over a sweep of ~9M floats in [-120, 120] and the special
// values, with lengths that leave every tail size of both vector widths; and the elementwise
// kernels' contiguous float32 path through the active copy; likewise sigmoid, tanh, exp, the
// softmax's rows and the logarithms (log, log2, log10).
//
// The float64 references: the functors' formulas cancel in the lower tail even in float64
// (1 + erf(x / sqrt2) for x < -8 keeps no correct digit), so the references are the same functions
// written without the cancellation (erfc, 1 / (1 + e^(-2u))), checked against the functors
// themselves where those are accurate. Errors are counted in ulps of the float32 result, and for
// the derivatives, which are sums of two terms of either sign (zero near x = -0.75 for GELU), in
// ulps of the larger term. Values under FLT_MIN count in ulps of FLT_MIN (denormal spacing).
#include "kernels/cpu/activation_simd.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cstdio>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "kernels/common/half.h"
#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/elementwise.h"

namespace colony::kernels::cpu {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const GeluApproximate kNone = GeluApproximate::None, kTanh = GeluApproximate::Tanh;

std::vector<const ActivationSimdFns*> every_copy() {
  std::vector<const ActivationSimdFns*> copies = {&avx2::activation_simd_fns()};
  if (detected_cpu_isa() >= CpuIsa::Avx512) {
    copies.push_back(&avx512::activation_simd_fns());
  } else {
    std::printf("this CPU has no AVX-512: testing the avx2 copy only\n");
  }
  return copies;
}

// The float32 spacing at |v| (FLT_MIN's below it).
double ulp(double v) {
  v = std::fabs(v);
  if (v < FLT_MIN) v = FLT_MIN;
  int e;
  std::frexp(v, &e);  // v = m 2^e, m in [0.5, 1)
  return std::ldexp(1.0, e - 24);
}

// Reference values (float64) and the magnitude their error is counted against.
struct Ref {
  double value, scale;
};

double normal_cdf(double x) { return 0.5 * std::erfc(-x * kSqrtHalf); }
double normal_pdf(double x) { return kInvSqrtTwoPi * std::exp(-0.5 * x * x); }
double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double two_u(double x) { return 2 * kSqrtTwoOverPi * (x + kGeluCubic * x * x * x); }

Ref gelu_ref(double x, GeluApproximate a) {
  double v = a == kTanh ? x * sigmoid(two_u(x)) : x * normal_cdf(x);
  return {v, v};
}
Ref gelu_grad_ref(double x, GeluApproximate a) {
  if (a == kTanh) {
    double s = sigmoid(two_u(x)), du = kSqrtTwoOverPi * (1 + 3 * kGeluCubic * x * x);
    double second = 2 * x * s * sigmoid(-two_u(x)) * du;
    return {s + second, std::fmax(s, std::fabs(second))};
  }
  double cdf = normal_cdf(x), second = x * normal_pdf(x);
  return {cdf + second, std::fmax(cdf, std::fabs(second))};
}
Ref silu_ref(double x) {
  double v = x * sigmoid(x);
  return {v, v};
}
Ref silu_grad_ref(double x) {
  double s = sigmoid(x), second = x * s * sigmoid(-x);
  return {s + second, std::fmax(s, std::fabs(second))};
}

// The references are the functors' functions: where the functors' float64 formulas do not cancel.
TEST(ActivationSimd, ReferencesAreTheFunctors) {
  const UnaryAttrs exact{kNone}, tanh_form{kTanh};
  for (double x = -4; x <= 4; x += 1.0 / 64) {
    EXPECT_NEAR(gelu_ref(x, kNone).value, (unary_fn<UnaryOp::Gelu>(x, exact)), 1e-12) << x;
    EXPECT_NEAR(gelu_ref(x, kTanh).value, (unary_fn<UnaryOp::Gelu>(x, tanh_form)), 1e-12) << x;
    EXPECT_NEAR(silu_ref(x).value, (unary_fn<UnaryOp::Silu>(x)), 1e-12) << x;
    EXPECT_NEAR(gelu_grad_ref(x, kNone).value, (activation_grad_fn<ActivationGrad::Gelu>(1.0, x, exact)), 1e-12) << x;
    EXPECT_NEAR(gelu_grad_ref(x, kTanh).value, (activation_grad_fn<ActivationGrad::Gelu>(1.0, x, tanh_form)), 1e-12)
        << x;
    EXPECT_NEAR(silu_grad_ref(x).value, (activation_grad_fn<ActivationGrad::Silu>(1.0, x)), 1e-12) << x;
  }
}

// Every 251st float in [-120, 120] (9M values, every binade's whole range of mantissas, past the
// ends of exp's range) and the values around 0; the length is odd, so both widths end in a tail.
std::vector<float> sweep() {
  std::vector<float> xs;
  uint32_t top;
  float end = 120.0f;
  std::memcpy(&top, &end, 4);
  for (uint32_t b = 0; b <= top; b += 251) {
    float v;
    std::memcpy(&v, &b, 4);
    xs.push_back(v);
    xs.push_back(-v);
  }
  for (float v : {0.0f, -0.0f, FLT_MIN, -FLT_MIN, 1e-30f, -1e-30f, 0.75f, -0.75f, -0.7517916f, -1.2784645f})
    xs.push_back(v);
  if (xs.size() % 2 == 0) xs.push_back(1.0f);
  return xs;
}

// Largest error over xs, in ulps (see the file comment), and where it is.
struct Worst {
  double ulps = 0;
  float x = 0;
  void add(float x_, float got, Ref r, double allowance = 0) {
    double e = std::fabs(static_cast<double>(got) - r.value) / ulp(r.scale) - allowance;
    if (!(e <= ulps)) {  // NaN counts as the worst
      ulps = std::isnan(e) ? kInf : e;
      x = x_;
    }
  }
};

// The bounds: the measured maxima (printed) rounded up, with some margin.
//  - exact GELU, forward and backward: 8 ulps (erfc's fit is good to ~2 ulp, the rest is the
//    rounding of t = 1 / (1 + z/2), which erfc's tail amplifies, and of exp). Below |x| = 3
//    (vec_math.h's kCentralLimit) the central form, Mills' ratio's polynomial times one exp, is
//    printed apart: 3.93 ulp forward, 3.71 backward (erfc's form beyond it: 7.10 forward).
//  - SiLU, forward and backward: 5 ulps.
//  - tanh GELU: 5 ulps, plus what rounding the argument -2u in float32 costs, which the function
//    multiplies by |2u| sigmoid(-2u) (its relative condition in u); -2u takes 4 roundings, so that
//    part is 4 |2u| sigmoid(-2u) ulps (60 at x = -9, 0 for x > 2).
constexpr double kUlps = 5;
constexpr double kGeluExactUlps = 8;
constexpr float kCentralLimit = 3.0f;  // vec_math.h's, where its central form takes over
double tanh_allowance(float x) { return 4 * std::fabs(two_u(x)) * sigmoid(-two_u(x)); }

TEST(ActivationSimd, ForwardWithinBoundsOfFloat64) {
  const std::vector<float> xs = sweep();
  const int64_t n = static_cast<int64_t>(xs.size());
  std::vector<float> y(n);
  for (const ActivationSimdFns* f : every_copy()) {
    SCOPED_TRACE(f->isa);
    for (GeluApproximate a : {kNone, kTanh}) {
      f->gelu_forward(xs.data(), y.data(), n, a);
      Worst w, central;  // all values, and those vec_math.h's central form computes (exact GELU)
      int64_t bad = 0;
      for (int64_t i = 0; i < n; ++i) {
        Ref r = gelu_ref(xs[i], a);
        double bound = a == kTanh ? kUlps + tanh_allowance(xs[i]) : kGeluExactUlps;
        double e = std::fabs(static_cast<double>(y[i]) - r.value) / ulp(r.scale);
        if (!(e <= bound) && bad++ < 5) ADD_FAILURE() << "gelu x=" << xs[i] << " got " << y[i] << " want " << r.value;
        w.add(xs[i], y[i], r, a == kTanh ? bound - kUlps : 0);
        if (std::fabs(xs[i]) < kCentralLimit) central.add(xs[i], y[i], r, a == kTanh ? bound - kUlps : 0);
      }
      EXPECT_EQ(bad, 0) << (a == kTanh ? "tanh" : "none");
      std::printf("%s gelu(%s): max %.2f ulp (beyond the allowance) at x=%g; %.2f at x=%g for |x| < 3\n", f->isa,
                  a == kTanh ? "tanh" : "none", w.ulps, w.x, central.ulps, central.x);
    }
    f->silu_forward(xs.data(), y.data(), n);
    Worst w;
    for (int64_t i = 0; i < n; ++i) w.add(xs[i], y[i], silu_ref(xs[i]));
    std::printf("%s silu: max %.2f ulp at x=%g\n", f->isa, w.ulps, w.x);
    EXPECT_LE(w.ulps, kUlps) << "silu at x=" << w.x;
  }
}

TEST(ActivationSimd, BackwardWithinBoundsOfFloat64) {
  const std::vector<float> xs = sweep();
  const int64_t n = static_cast<int64_t>(xs.size());
  // Incoming gradients of several magnitudes and signs: the product is a float32 multiply.
  std::vector<float> g(n), out(n);
  for (int64_t i = 0; i < n; ++i) g[i] = (i % 3 == 0 ? -1.0f : 1.0f) * std::ldexp(1.0f, static_cast<int>(i % 7) - 3);
  for (const ActivationSimdFns* f : every_copy()) {
    SCOPED_TRACE(f->isa);
    for (GeluApproximate a : {kNone, kTanh}) {
      f->gelu_backward(g.data(), xs.data(), out.data(), n, a);
      Worst w, central;  // all values, and those vec_math.h's central form computes (exact GELU)
      int64_t bad = 0;
      for (int64_t i = 0; i < n; ++i) {
        Ref d = gelu_grad_ref(xs[i], a);
        Ref r = {g[i] * d.value, std::fabs(g[i]) * d.scale};
        double bound = a == kTanh ? kUlps + tanh_allowance(xs[i]) : kGeluExactUlps;
        double e = std::fabs(static_cast<double>(out[i]) - r.value) / ulp(r.scale);
        if (!(e <= bound) && bad++ < 5)
          ADD_FAILURE() << "gelu' x=" << xs[i] << " got " << out[i] << " want " << r.value;
        w.add(xs[i], out[i], r, a == kTanh ? bound - kUlps : 0);
        if (std::fabs(xs[i]) < kCentralLimit) central.add(xs[i], out[i], r, a == kTanh ? bound - kUlps : 0);
      }
      EXPECT_EQ(bad, 0) << (a == kTanh ? "tanh" : "none");
      std::printf("%s gelu'(%s): max %.2f ulp (beyond the allowance) at x=%g; %.2f at x=%g for |x| < 3\n", f->isa,
                  a == kTanh ? "tanh" : "none", w.ulps, w.x, central.ulps, central.x);
    }
    f->silu_backward(g.data(), xs.data(), out.data(), n);
    Worst w;
    for (int64_t i = 0; i < n; ++i) {
      Ref d = silu_grad_ref(xs[i]);
      w.add(xs[i], out[i], {g[i] * d.value, std::fabs(g[i]) * d.scale});
    }
    std::printf("%s silu': max %.2f ulp at x=%g\n", f->isa, w.ulps, w.x);
    EXPECT_LE(w.ulps, kUlps) << "silu' at x=" << w.x;
  }
}

// Zeros keep their sign, saturation is exact, NaN propagates, and the infinities give what the
// scalar functors (and PyTorch 2.15's CPU kernels) give.
TEST(ActivationSimd, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> xs = {0.0f, -0.0f, 10.0f, 30.0f, 1e30f, FLT_MAX, -30.0f, -1e30f, -FLT_MAX, inf, -inf, nan};
  const int64_t n = static_cast<int64_t>(xs.size());
  std::vector<float> y(n), ones(n, 1.0f);
  for (const ActivationSimdFns* f : every_copy()) {
    SCOPED_TRACE(f->isa);
    for (GeluApproximate a : {kNone, kTanh}) {
      SCOPED_TRACE(a == kTanh ? "tanh" : "none");
      f->gelu_forward(xs.data(), y.data(), n, a);
      EXPECT_EQ(y[0], 0.0f);
      EXPECT_FALSE(std::signbit(y[0]));
      EXPECT_TRUE(std::signbit(y[1]) && y[1] == 0.0f);
      EXPECT_EQ(y[2], 10.0f);
      EXPECT_EQ(y[3], 30.0f);
      EXPECT_EQ(y[4], 1e30f);
      EXPECT_EQ(y[5], FLT_MAX);
      for (int i = 6; i <= 8; ++i) EXPECT_TRUE(y[i] == 0.0f && std::signbit(y[i])) << xs[i] << " -> " << y[i];
      EXPECT_EQ(y[9], inf);
      EXPECT_TRUE(std::isnan(y[10]));  // -inf * 0, as PyTorch
      EXPECT_TRUE(std::isnan(y[11]));
      f->gelu_backward(ones.data(), xs.data(), y.data(), n, a);
      EXPECT_EQ(y[0], 0.5f);
      EXPECT_EQ(y[1], 0.5f);
      EXPECT_EQ(y[2], 1.0f);
      EXPECT_EQ(y[3], 1.0f);
      EXPECT_EQ(y[6], 0.0f);
      EXPECT_TRUE(std::isnan(y[9]) && std::isnan(y[10]) && std::isnan(y[11]));
    }
    f->silu_forward(xs.data(), y.data(), n);
    EXPECT_TRUE(y[0] == 0.0f && !std::signbit(y[0]));
    EXPECT_TRUE(y[1] == 0.0f && std::signbit(y[1]));
    EXPECT_EQ(y[3], 30.0f);
    EXPECT_EQ(y[4], 1e30f);
    EXPECT_TRUE(y[7] == 0.0f && std::signbit(y[7]));
    EXPECT_EQ(y[9], inf);
    EXPECT_TRUE(std::isnan(y[10]) && std::isnan(y[11]));
    f->silu_backward(ones.data(), xs.data(), y.data(), n);
    EXPECT_EQ(y[0], 0.5f);
    EXPECT_EQ(y[4], 1.0f);
    EXPECT_EQ(y[7], 0.0f);
    EXPECT_TRUE(std::isnan(y[9]) && std::isnan(y[10]) && std::isnan(y[11]));
  }
}

// Every length from 0 to 70 at every offset within a vector: the same values as one long call
// (a lane's result does not depend on its position), nothing written past the end, and in place.
TEST(ActivationSimd, TailsAndOffsets) {
  std::vector<float> x(200), g(200);
  for (int i = 0; i < 200; ++i) {
    x[i] = -9.0f + 0.0917f * static_cast<float>(i);
    g[i] = 1.0f + 0.01f * static_cast<float>(i);
  }
  const float sentinel = 12345.0f;
  for (const ActivationSimdFns* f : every_copy()) {
    SCOPED_TRACE(f->isa);
    std::vector<float> want_fwd[3], want_bwd[3];
    for (int k = 0; k < 3; ++k) {
      want_fwd[k].resize(200);
      want_bwd[k].resize(200);
    }
    f->gelu_forward(x.data(), want_fwd[0].data(), 200, kNone);
    f->gelu_forward(x.data(), want_fwd[1].data(), 200, kTanh);
    f->silu_forward(x.data(), want_fwd[2].data(), 200);
    f->gelu_backward(g.data(), x.data(), want_bwd[0].data(), 200, kNone);
    f->gelu_backward(g.data(), x.data(), want_bwd[1].data(), 200, kTanh);
    f->silu_backward(g.data(), x.data(), want_bwd[2].data(), 200);
    for (int off = 0; off < 16; ++off) {
      for (int len = 0; len <= 70; ++len) {
        for (int k = 0; k < 6; ++k) {
          std::vector<float> y(200, sentinel);
          const float* in = x.data() + off;
          float* o = y.data() + off;
          switch (k) {
            case 0: f->gelu_forward(in, o, len, kNone); break;
            case 1: f->gelu_forward(in, o, len, kTanh); break;
            case 2: f->silu_forward(in, o, len); break;
            case 3: f->gelu_backward(g.data() + off, in, o, len, kNone); break;
            case 4: f->gelu_backward(g.data() + off, in, o, len, kTanh); break;
            default: f->silu_backward(g.data() + off, in, o, len); break;
          }
          const std::vector<float>& want = k < 3 ? want_fwd[k] : want_bwd[k - 3];
          for (int i = 0; i < 200; ++i) {
            float expect = (i >= off && i < off + len) ? want[i] : sentinel;
            ASSERT_EQ(y[i], expect) << "kernel " << k << " off " << off << " len " << len << " i " << i;
          }
        }
      }
    }
    // In place: out aliasing the input (forward) and the gradient (backward).
    std::vector<float> y(x);
    f->gelu_forward(y.data(), y.data(), 200, kNone);
    EXPECT_EQ(y, want_fwd[0]);
    y = g;
    f->gelu_backward(y.data(), x.data(), y.data(), 200, kTanh);
    EXPECT_EQ(y, want_bwd[1]);
  }
}

// bfloat16 bits as integers in the order of their values (-0 and +0 next to each other), so that
// neighbouring values differ by 1.
int32_t bf16_order(uint16_t b) { return (b & 0x8000u) != 0 ? -static_cast<int32_t>(b & 0x7fffu) - 1 : b; }

// The bfloat16 loops (ActivationSimdFns::gelu_forward_bf16, gelu_backward_bf16) against the float32
// loops' results rounded once, over every bfloat16 value (and gradients of 1, -0.37 and 3e5 in the
// backward): the tanh form equal bit for bit; the exact form's shorter polynomials equal, or 1 ulp
// away where the float32 value lies near a halfway point (at most 1 % of values), and equal from
// |x| = 3 on (the float32 arithmetic); NaN where the float32 loop gives NaN. Every tail length, and
// in place.
TEST(ActivationSimd, BFloat16LoopsMatchTheFloat32LoopsRounded) {
  const int64_t n = 65536;
  std::vector<BFloat16> x(n), y(n), g(n);
  std::vector<float> xf(n), gf(n), yf(n);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = BFloat16::from_bits(static_cast<uint16_t>(i));
    xf[i] = static_cast<float>(x[i]);
  }
  for (const ActivationSimdFns* f : every_copy()) {
    SCOPED_TRACE(f->isa);
    for (GeluApproximate a : {kNone, kTanh}) {
      SCOPED_TRACE(a == kTanh ? "tanh" : "none");
      auto compare = [&](const char* what) {
        int64_t off_by_one = 0, finite = 0;
        for (int64_t i = 0; i < n; ++i) {
          const BFloat16 want(yf[i]);
          if (std::isnan(yf[i])) {
            ASSERT_TRUE(std::isnan(static_cast<float>(y[i]))) << what << " x = " << xf[i];
            continue;
          }
          ++finite;
          const int32_t d = bf16_order(y[i].bits) - bf16_order(want.bits);
          if (d == 0) continue;
          ASSERT_TRUE(a == kNone && std::fabs(xf[i]) < 3.0f && (d == 1 || d == -1))
              << what << " x = " << xf[i] << ": " << static_cast<float>(y[i]) << ", float32 loop rounded "
              << static_cast<float>(want) << " (" << yf[i] << ")";
          ++off_by_one;
        }
        EXPECT_LE(off_by_one, finite / 100) << what;
        std::printf("%s %s %s: %lld of %lld 1 ulp away\n", f->isa, a == kTanh ? "tanh" : "none", what,
                    static_cast<long long>(off_by_one), static_cast<long long>(finite));
      };
      f->gelu_forward(xf.data(), yf.data(), n, a);
      f->gelu_forward_bf16(&x[0].bits, &y[0].bits, n, a);
      compare("gelu");
      for (float grad : {1.0f, -0.37f, 3e5f}) {
        std::fill(g.begin(), g.end(), BFloat16(grad));
        for (int64_t i = 0; i < n; ++i) gf[i] = static_cast<float>(g[i]);
        f->gelu_backward(gf.data(), xf.data(), yf.data(), n, a);
        f->gelu_backward_bf16(&g[0].bits, &x[0].bits, &y[0].bits, n, a);
        compare("gelu'");
      }
    }
    // Tails and in place: a call over [off, off + len) writes those values and nothing else.
    const std::vector<BFloat16> xs(x.begin() + 16300, x.begin() + 16500);  // 1.34 to 3.8: both forms
    std::vector<BFloat16> want_fwd(200), want_bwd(200), gs(200, BFloat16(0.75f));
    f->gelu_forward_bf16(&xs[0].bits, &want_fwd[0].bits, 200, kNone);
    f->gelu_backward_bf16(&gs[0].bits, &xs[0].bits, &want_bwd[0].bits, 200, kNone);
    for (int off = 0; off < 16; ++off) {
      for (int len = 0; len <= 40; ++len) {
        std::vector<BFloat16> out(200, BFloat16(12345.0f));
        f->gelu_forward_bf16(&xs[off].bits, &out[off].bits, len, kNone);
        for (int i = 0; i < 200; ++i) {
          ASSERT_EQ(out[i].bits, (i >= off && i < off + len ? want_fwd[i] : BFloat16(12345.0f)).bits) << off << " " << len;
        }
        out.assign(200, BFloat16(12345.0f));
        f->gelu_backward_bf16(&gs[off].bits, &xs[off].bits, &out[off].bits, len, kNone);
        for (int i = 0; i < 200; ++i) {
          ASSERT_EQ(out[i].bits, (i >= off && i < off + len ? want_bwd[i] : BFloat16(12345.0f)).bits) << off << " " << len;
        }
      }
    }
    std::vector<BFloat16> in_place(xs);
    f->gelu_forward_bf16(&in_place[0].bits, &in_place[0].bits, 200, kNone);
    for (int i = 0; i < 200; ++i) EXPECT_EQ(in_place[i].bits, want_fwd[i].bits);
  }
}

StridedLayout dense_1d(int64_t n, int64_t stride = 1) {
  StridedLayout l;
  l.ndim = 1;
  l.sizes[0] = n;
  l.strides[0] = stride;
  return l;
}

// unary() and ActivationBackward::cpu take the active copy for contiguous float32, float16 and
// bfloat16 (several threads' chunks: 100003 elements) and keep the scalar functors for strided
// operands.
TEST(ActivationSimd, ElementwiseKernelsUseTheActiveCopy) {
  EXPECT_STREQ(active_activation_simd_fns().isa, active_cpu_isa() >= CpuIsa::Avx512 ? "avx512" : "avx2");
  const ActivationSimdFns& f = active_activation_simd_fns();
  const int64_t n = 100003;
  std::vector<float> x(n), g(n), want(n), got(n);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = -12.0f + 24.0f * static_cast<float>(i) / static_cast<float>(n);
    g[i] = 0.5f + static_cast<float>(i % 5);
  }
  for (GeluApproximate a : {kNone, kTanh}) {
    f.gelu_forward(x.data(), want.data(), n, a);
    unary(UnaryOp::Gelu, DType::Float32, x.data(), dense_1d(n), got.data(), dense_1d(n), UnaryAttrs{a});
    EXPECT_EQ(got, want);
    f.gelu_backward(g.data(), x.data(), want.data(), n, a);
    ActivationBackward::cpu(ActivationGrad::Gelu, DType::Float32, g.data(), dense_1d(n), x.data(), dense_1d(n),
                            got.data(), dense_1d(n), UnaryAttrs{a});
    EXPECT_EQ(got, want);
  }
  f.silu_forward(x.data(), want.data(), n);
  unary(UnaryOp::Silu, DType::Float32, x.data(), dense_1d(n), got.data(), dense_1d(n));
  EXPECT_EQ(got, want);
  f.silu_backward(g.data(), x.data(), want.data(), n);
  ActivationBackward::cpu(ActivationGrad::Silu, DType::Float32, g.data(), dense_1d(n), x.data(), dense_1d(n),
                          got.data(), dense_1d(n), UnaryAttrs{});
  EXPECT_EQ(got, want);
  // float16 and bfloat16: the float32 results rounded once (the scalar loops compute them in float).
  std::vector<Half> xh(n), gh(n), yh(n);
  std::vector<BFloat16> xb(n), gb(n), yb(n);
  for (int64_t i = 0; i < n; ++i) {
    xh[i] = static_cast<Half>(x[i]);
    gh[i] = static_cast<Half>(g[i]);
    xb[i] = static_cast<BFloat16>(x[i]);
    gb[i] = static_cast<BFloat16>(g[i]);
  }
  std::vector<float> xf(n), gf(n);
  for (int k = 0; k < 2; ++k) {
    for (int64_t i = 0; i < n; ++i) {
      xf[i] = k == 0 ? static_cast<float>(xh[i]) : static_cast<float>(xb[i]);
      gf[i] = k == 0 ? static_cast<float>(gh[i]) : static_cast<float>(gb[i]);
    }
    const DType dt = k == 0 ? DType::Float16 : DType::BFloat16;
    void* y16 = k == 0 ? static_cast<void*>(yh.data()) : static_cast<void*>(yb.data());
    const void* x16 = k == 0 ? static_cast<const void*>(xh.data()) : static_cast<const void*>(xb.data());
    const void* g16 = k == 0 ? static_cast<const void*>(gh.data()) : static_cast<const void*>(gb.data());
    auto expect_rounded = [&](const char* what) {
      for (int64_t i = 0; i < n; ++i) {
        float want16 = k == 0 ? static_cast<float>(static_cast<Half>(want[i]))
                              : static_cast<float>(static_cast<BFloat16>(want[i]));
        float got16 = k == 0 ? static_cast<float>(yh[i]) : static_cast<float>(yb[i]);
        ASSERT_EQ(got16, want16) << what << (k == 0 ? " float16 " : " bfloat16 ") << i;
      }
    };
    f.gelu_forward(xf.data(), want.data(), n, kTanh);
    unary(UnaryOp::Gelu, dt, x16, dense_1d(n), y16, dense_1d(n), UnaryAttrs{kTanh});
    expect_rounded("gelu");
    f.silu_backward(gf.data(), xf.data(), want.data(), n);
    ActivationBackward::cpu(ActivationGrad::Silu, dt, g16, dense_1d(n), x16, dense_1d(n), y16, dense_1d(n), UnaryAttrs{});
    expect_rounded("silu'");
    if (k == 0) {
      f.gelu_backward(gf.data(), xf.data(), want.data(), n, kNone);
      ActivationBackward::cpu(ActivationGrad::Gelu, dt, g16, dense_1d(n), x16, dense_1d(n), y16, dense_1d(n),
                              UnaryAttrs{});
      expect_rounded("gelu'");
      continue;
    }
    // bfloat16's exact GELU: the copy's own bfloat16 loops (their accuracy: the test below).
    std::vector<BFloat16> want_b(n);
    f.gelu_forward_bf16(&xb[0].bits, &want_b[0].bits, n, kNone);
    unary(UnaryOp::Gelu, dt, x16, dense_1d(n), y16, dense_1d(n), UnaryAttrs{kNone});
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(yb[i].bits, want_b[i].bits) << "gelu bfloat16 " << i;
    f.gelu_backward_bf16(&gb[0].bits, &xb[0].bits, &want_b[0].bits, n, kNone);
    ActivationBackward::cpu(ActivationGrad::Gelu, dt, g16, dense_1d(n), x16, dense_1d(n), y16, dense_1d(n), UnaryAttrs{});
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(yb[i].bits, want_b[i].bits) << "gelu' bfloat16 " << i;
  }
  // Every other element: the scalar functor's float32 values.
  const int64_t half = n / 2;
  std::vector<float> strided(half);
  unary(UnaryOp::Gelu, DType::Float32, x.data(), dense_1d(half, 2), strided.data(), dense_1d(half));
  for (int64_t i = 0; i < half; ++i) ASSERT_EQ(strided[i], (unary_fn<UnaryOp::Gelu>(x[2 * i]))) << i;
}

// ---------- sigmoid, tanh, exp and the softmax's rows ----------

// Every 97th float in [-100, 100] (its ends past exp's range both ways) and both signs, odd in
// length so both widths end in a tail.
std::vector<float> wide_sweep() {
  std::vector<float> xs;
  uint32_t top;
  float end = 100.0f;
  std::memcpy(&top, &end, 4);
  for (uint32_t b = 0; b <= top; b += 97) {
    float v;
    std::memcpy(&v, &b, 4);
    xs.push_back(v);
    xs.push_back(-v);
  }
  if (xs.size() % 2 == 0) xs.push_back(1.0f);
  return xs;
}

// The bounds, from the measured maxima (printed) with margin: vec_math.h's exp 1-2 ulp, sigmoid
// (one exp and a division) and tanh (Cephes, 2 ulp) a few.
constexpr double kExpUlps = 3;
constexpr double kSigmoidUlps = 4;
constexpr double kTanhUlps = 4;

TEST(ActivationSimd, SigmoidTanhExpWithinBoundsOfFloat64) {
  const std::vector<float> xs = wide_sweep();
  const int64_t n = static_cast<int64_t>(xs.size());
  std::vector<float> y(n);
  for (const ActivationSimdFns* f : every_copy()) {
    SCOPED_TRACE(f->isa);
    struct Case {
      const char* name;
      void (*loop)(const float*, float*, int64_t);
      double (*ref)(double);
      double bound;
    };
    for (const Case& c : {Case{"sigmoid", f->sigmoid_forward, [](double x) { return sigmoid(x); }, kSigmoidUlps},
                          Case{"tanh", f->tanh_forward, [](double x) { return std::tanh(x); }, kTanhUlps},
                          Case{"exp", f->exp_forward, [](double x) { return std::exp(x); }, kExpUlps}}) {
      c.loop(xs.data(), y.data(), n);
      Worst w;
      for (int64_t i = 0; i < n; ++i) {
        const double want = c.ref(xs[i]);
        if (want > FLT_MAX) {  // exp past float's range: inf
          EXPECT_EQ(y[i], std::numeric_limits<float>::infinity()) << c.name << " x=" << xs[i];
          continue;
        }
        w.add(xs[i], y[i], {want, want});
      }
      std::printf("%s %s: max %.2f ulp at x=%g\n", f->isa, c.name, w.ulps, w.x);
      EXPECT_LE(w.ulps, c.bound) << c.name << " at x=" << w.x;
    }
  }
}

TEST(ActivationSimd, SigmoidTanhExpSpecialValues) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> xs = {0.0f, -0.0f, inf, -inf, nan, 100.0f, -100.0f, -104.0f};
  const int64_t n = static_cast<int64_t>(xs.size());
  std::vector<float> y(n);
  for (const ActivationSimdFns* f : every_copy()) {
    SCOPED_TRACE(f->isa);
    f->sigmoid_forward(xs.data(), y.data(), n);
    EXPECT_EQ(y[0], 0.5f);
    EXPECT_EQ(y[1], 0.5f);
    EXPECT_EQ(y[2], 1.0f);
    EXPECT_EQ(y[3], 0.0f);
    EXPECT_TRUE(std::isnan(y[4]));
    EXPECT_EQ(y[5], 1.0f);
    EXPECT_FLOAT_EQ(y[6], static_cast<float>(std::exp(-100.0)));  // a denormal, kept
    f->tanh_forward(xs.data(), y.data(), n);
    EXPECT_TRUE(y[0] == 0.0f && !std::signbit(y[0]));
    EXPECT_TRUE(y[1] == 0.0f && std::signbit(y[1]));
    EXPECT_EQ(y[2], 1.0f);
    EXPECT_EQ(y[3], -1.0f);
    EXPECT_TRUE(std::isnan(y[4]));
    EXPECT_EQ(y[5], 1.0f);
    EXPECT_EQ(y[6], -1.0f);
    f->exp_forward(xs.data(), y.data(), n);
    EXPECT_EQ(y[0], 1.0f);
    EXPECT_EQ(y[1], 1.0f);
    EXPECT_EQ(y[2], inf);
    EXPECT_EQ(y[3], 0.0f);
    EXPECT_TRUE(std::isnan(y[4]));
    EXPECT_EQ(y[5], inf);
    EXPECT_FLOAT_EQ(y[6], static_cast<float>(std::exp(-100.0)));
    EXPECT_EQ(y[7], static_cast<float>(std::exp(-104.0)));  // the smallest denormals
  }
}

// Softmax (or log-softmax) of one row, and its backward, in float64.
std::vector<double> softmax_ref(const std::vector<float>& x, bool log) {
  double m = -kInf, s = 0;
  for (float v : x) m = std::max(m, static_cast<double>(v));
  for (float v : x) s += std::exp(v - m);
  std::vector<double> y;
  for (float v : x) y.push_back(log ? (v - m) - std::log(s) : std::exp(v - m) / s);
  return y;
}
std::vector<double> softmax_backward_ref(const std::vector<float>& g, const std::vector<float>& y, bool log) {
  double acc = 0;
  for (size_t i = 0; i < g.size(); ++i) acc += log ? g[i] : static_cast<double>(g[i]) * y[i];
  std::vector<double> gx;
  for (size_t i = 0; i < g.size(); ++i) gx.push_back(log ? g[i] - std::exp(static_cast<double>(y[i])) * acc
                                                         : y[i] * (g[i] - acc));
  return gx;
}

// Every row length from 0 to 70 (every tail of both widths) and 1000, 1024, 1025 at every offset
// within a vector: values against float64, nothing written past the row. Rows of values far below
// 0 (-200 + ...): a masked tail lane read as 0 would be taken for the max, every e^(x - 0)
// underflow, and the row come out NaN.
TEST(ActivationSimd, SoftmaxRowsEveryTail) {
  const float sentinel = 12345.0f;
  for (const ActivationSimdFns* f : every_copy()) {
    SCOPED_TRACE(f->isa);
    std::vector<int64_t> lengths;
    for (int64_t n = 0; n <= 70; ++n) lengths.push_back(n);
    for (int64_t n : {1000, 1024, 1025}) lengths.push_back(n);
    for (int64_t n : lengths) {
      for (int off : {0, 1, 5, 15}) {
        for (float base : {0.0f, -200.0f}) {
          std::vector<float> x(n), g(n);
          for (int64_t i = 0; i < n; ++i) {
            x[i] = base + 3.0f * std::sin(0.37f * static_cast<float>(i + off));
            g[i] = std::cos(0.11f * static_cast<float>(i)) - 0.2f;
          }
          for (bool log : {false, true}) {
            SCOPED_TRACE(::testing::Message() << (log ? "log_softmax" : "softmax") << " n " << n << " off " << off
                                              << " base " << base);
            std::vector<float> buf(n + 40, sentinel), xbuf(n + 40, 0.0f);
            std::copy(x.begin(), x.end(), xbuf.begin() + off);
            f->softmax_row(xbuf.data() + off, buf.data() + off, n, log);
            const std::vector<double> want = softmax_ref(x, log);
            std::vector<float> y(buf.begin() + off, buf.begin() + off + n);
            for (int64_t i = 0; i < n; ++i) {
              ASSERT_NEAR(y[i], want[i], 2e-6 * std::max(1.0, std::fabs(want[i]))) << i;
            }
            for (int64_t i = 0; i < off; ++i) ASSERT_EQ(buf[i], sentinel);
            for (int64_t i = off + n; i < n + 40; ++i) ASSERT_EQ(buf[i], sentinel);
            // Backward from the float32 y, into a buffer holding g (gx may alias g).
            std::vector<float> gbuf(n + 40, sentinel);
            std::copy(g.begin(), g.end(), gbuf.begin() + off);
            std::vector<float> ybuf(n + 40, 0.0f);
            std::copy(y.begin(), y.end(), ybuf.begin() + off);
            f->softmax_backward_row(gbuf.data() + off, ybuf.data() + off, gbuf.data() + off, n, log);
            const std::vector<double> want_g = softmax_backward_ref(g, y, log);
            for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(gbuf[off + i], want_g[i], 1e-5) << "backward " << i;
            for (int64_t i = 0; i < off; ++i) ASSERT_EQ(gbuf[i], sentinel);
            for (int64_t i = off + n; i < n + 40; ++i) ASSERT_EQ(gbuf[i], sentinel);
          }
          // Cross-entropy's two row loops: the statistics, and the probabilities from them.
          if (n == 0) continue;
          float m;
          const float s = f->max_and_sum_exp_row(x.data(), n, &m);
          double wm = -kInf, ws = 0;
          for (float v : x) wm = std::max(wm, static_cast<double>(v));
          for (float v : x) ws += std::exp(v - wm);
          ASSERT_EQ(m, static_cast<float>(wm));
          ASSERT_NEAR(s, ws, 2e-6 * ws);
          std::vector<float> p(n + 8, sentinel);
          f->exp_log_softmax_row(x.data(), p.data(), n, m, std::log(s));
          const std::vector<double> want = softmax_ref(x, false);
          for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(p[i], want[i], 2e-6) << "probabilities " << i;
          for (int64_t i = n; i < n + 8; ++i) ASSERT_EQ(p[i], sentinel);
        }
      }
    }
  }
}

// A NaN anywhere in a row (a full vector's lane or the tail's) makes the whole row NaN, forward,
// statistics and backward; -inf gets probability 0 (log: -inf); +inf makes the row NaN (inf - inf),
// as the scalar loops and PyTorch.
TEST(ActivationSimd, SoftmaxRowsNaNAndInfinities) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (const ActivationSimdFns* f : every_copy()) {
    SCOPED_TRACE(f->isa);
    for (int64_t n : {5, 16, 37}) {
      for (int64_t at : {int64_t{0}, n / 2, n - 1}) {
        std::vector<float> x(n, 1.0f), y(n);
        x[at] = nan;
        for (bool log : {false, true}) {
          f->softmax_row(x.data(), y.data(), n, log);
          for (int64_t i = 0; i < n; ++i) ASSERT_TRUE(std::isnan(y[i])) << "n " << n << " NaN at " << at << " i " << i;
        }
        float m;
        EXPECT_TRUE(std::isnan(f->max_and_sum_exp_row(x.data(), n, &m)) || std::isnan(m)) << n << " " << at;
        std::vector<float> g(n, 1.0f), ones(n, 0.5f);
        g[at] = nan;
        for (bool log : {false, true}) {
          f->softmax_backward_row(g.data(), ones.data(), y.data(), n, log);
          for (int64_t i = 0; i < n; ++i) ASSERT_TRUE(std::isnan(y[i])) << "backward n " << n << " i " << i;
        }
        x[at] = -inf;
        f->softmax_row(x.data(), y.data(), n, false);
        EXPECT_EQ(y[at], 0.0f);
        EXPECT_FLOAT_EQ(y[(at + 1) % n], 1.0f / static_cast<float>(n - 1));
        f->softmax_row(x.data(), y.data(), n, true);
        EXPECT_EQ(y[at], -inf);
        x[at] = inf;
        f->softmax_row(x.data(), y.data(), n, false);
        EXPECT_TRUE(std::isnan(y[at]));
      }
    }
  }
}

// unary() takes the active copy's sigmoid, tanh and exp for contiguous float32 (several threads'
// chunks) and keeps the scalar functors for strided operands and float64.
TEST(ActivationSimd, SigmoidTanhExpKernelsUseTheActiveCopy) {
  const ActivationSimdFns& f = active_activation_simd_fns();
  const int64_t n = 100003;
  std::vector<float> x(n), want(n), got(n);
  for (int64_t i = 0; i < n; ++i) x[i] = -30.0f + 60.0f * static_cast<float>(i) / static_cast<float>(n);
  struct Case {
    UnaryOp op;
    void (*loop)(const float*, float*, int64_t);
  };
  for (const Case& c : {Case{UnaryOp::Sigmoid, f.sigmoid_forward}, Case{UnaryOp::Tanh, f.tanh_forward},
                        Case{UnaryOp::Exp, f.exp_forward}}) {
    c.loop(x.data(), want.data(), n);
    unary(c.op, DType::Float32, x.data(), dense_1d(n), got.data(), dense_1d(n));
    EXPECT_EQ(got, want);
    const int64_t half = n / 2;
    std::vector<float> strided(half);
    unary(c.op, DType::Float32, x.data(), dense_1d(half, 2), strided.data(), dense_1d(half));
    for (int64_t i = 0; i < half; ++i) {
      float scalar = c.op == UnaryOp::Sigmoid ? unary_fn<UnaryOp::Sigmoid>(x[2 * i])
                     : c.op == UnaryOp::Tanh  ? unary_fn<UnaryOp::Tanh>(x[2 * i])
                                              : unary_fn<UnaryOp::Exp>(x[2 * i]);
      ASSERT_EQ(strided[i], scalar) << i;
    }
  }
}

// ---------- log, log2, log10 ----------

struct LogCase {
  const char* name;
  void (*loop)(const float*, float*, int64_t);
  double (*ref)(double);
};
std::vector<LogCase> log_cases(const ActivationSimdFns& f) {
  return {LogCase{"log", f.log_forward, [](double x) { return std::log(x); }},
          LogCase{"log2", f.log2_forward, [](double x) { return std::log2(x); }},
          LogCase{"log10", f.log10_forward, [](double x) { return std::log10(x); }}};
}

// Every 1009th positive float from the smallest denormal to FLT_MAX (about 2.1M, odd in length so
// both widths end in a tail), against float64. Measured over every third float: log 0.86 ulp,
// log2 1.30, log10 0.91.
constexpr double kLogUlps = 1.5;

TEST(ActivationSimd, LogWithinBoundsOfFloat64) {
  std::vector<float> xs;
  for (uint32_t b = 1; b < 0x7f800000u; b += 1009) {
    float v;
    std::memcpy(&v, &b, 4);
    xs.push_back(v);
  }
  if (xs.size() % 2 == 0) xs.push_back(3.0f);
  const int64_t n = static_cast<int64_t>(xs.size());
  std::vector<float> y(n);
  for (const ActivationSimdFns* f : every_copy()) {
    SCOPED_TRACE(f->isa);
    for (const LogCase& c : log_cases(*f)) {
      c.loop(xs.data(), y.data(), n);
      Worst w;
      for (int64_t i = 0; i < n; ++i) {
        const double want = c.ref(xs[i]);
        w.add(xs[i], y[i], {want, want});
      }
      std::printf("%s %s: max %.2f ulp at x=%g\n", f->isa, c.name, w.ulps, w.x);
      EXPECT_LE(w.ulps, kLogUlps) << c.name << " at x=" << w.x;
    }
  }
}

// std::log's values where it has special ones, and exact results (log(1), log2 of powers of 2),
// in every lane position: each value is tested in a run of 37 copies of it at an offset.
TEST(ActivationSimd, LogSpecialValues) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float denorm_min = std::numeric_limits<float>::denorm_min();
  const std::vector<float> xs = {0.0f, -0.0f, inf, -inf, nan, -1.0f, -denorm_min, -FLT_MAX, 1.0f, 2.0f, 0.5f,
                                 1024.0f, denorm_min, FLT_MIN, FLT_MIN / 2, FLT_MAX, 1e-40f};
  for (const ActivationSimdFns* f : every_copy()) {
    SCOPED_TRACE(f->isa);
    for (const LogCase& c : log_cases(*f)) {
      for (float x : xs) {
        std::vector<float> in(40, x), out(40, 7.0f);
        c.loop(in.data() + 3, out.data() + 3, 37);
        const double want = c.ref(x);
        for (int i = 3; i < 40; ++i) {
          if (std::isnan(want)) {
            ASSERT_TRUE(std::isnan(out[i])) << c.name << "(" << x << ") = " << out[i];
          } else if (std::isinf(want) || want == std::floor(want)) {  // +-inf, and the exact ones
            ASSERT_EQ(out[i], static_cast<float>(want)) << c.name << "(" << x << ")";
          } else {
            ASSERT_NEAR(out[i], want, kLogUlps * ulp(want)) << c.name << "(" << x << ")";
          }
        }
        ASSERT_EQ(out[2], 7.0f);
      }
    }
  }
}

// Every length from 0 to 40 at every offset within a vector: each result equals the same value's
// in a long run (a lane's result does not depend on its position or the tail), and nothing past the
// end is written.
TEST(ActivationSimd, LogTailsAndOffsets) {
  std::vector<float> x(80);
  for (int i = 0; i < 80; ++i) x[i] = 0.01f + 3.7f * static_cast<float>(i * i);
  for (const ActivationSimdFns* f : every_copy()) {
    SCOPED_TRACE(f->isa);
    for (const LogCase& c : log_cases(*f)) {
      std::vector<float> whole(80);
      c.loop(x.data(), whole.data(), 80);
      for (int64_t off = 0; off < 16; ++off) {
        for (int64_t n = 0; n <= 40; ++n) {
          std::vector<float> y(80, 12345.0f);
          c.loop(x.data() + off, y.data() + off, n);
          for (int64_t i = 0; i < 80; ++i) {
            if (i >= off && i < off + n) {
              ASSERT_EQ(y[i], whole[i]) << c.name << " n " << n << " off " << off << " i " << i;
            } else {
              ASSERT_EQ(y[i], 12345.0f) << c.name << " n " << n << " off " << off << " wrote " << i;
            }
          }
        }
      }
    }
  }
}

// unary() takes the active copy's logarithms for contiguous float32 (several threads' chunks) and
// keeps the scalar functors for strided operands and float64.
TEST(ActivationSimd, LogKernelsUseTheActiveCopy) {
  const ActivationSimdFns& f = active_activation_simd_fns();
  const int64_t n = 100003;
  std::vector<float> x(n), want(n), got(n);
  for (int64_t i = 0; i < n; ++i) x[i] = 1e-3f + 50.0f * static_cast<float>(i) / static_cast<float>(n);
  struct Case {
    UnaryOp op;
    void (*loop)(const float*, float*, int64_t);
    float (*scalar)(float);
    double (*scalar64)(double);
  };
  for (const Case& c : {Case{UnaryOp::Log, f.log_forward, [](float v) { return unary_fn<UnaryOp::Log>(v); },
                             [](double v) { return unary_fn<UnaryOp::Log>(v); }},
                        Case{UnaryOp::Log2, f.log2_forward, [](float v) { return unary_fn<UnaryOp::Log2>(v); },
                             [](double v) { return unary_fn<UnaryOp::Log2>(v); }},
                        Case{UnaryOp::Log10, f.log10_forward, [](float v) { return unary_fn<UnaryOp::Log10>(v); },
                             [](double v) { return unary_fn<UnaryOp::Log10>(v); }}}) {
    c.loop(x.data(), want.data(), n);
    unary(c.op, DType::Float32, x.data(), dense_1d(n), got.data(), dense_1d(n));
    EXPECT_EQ(got, want);
    const int64_t half = n / 2;
    std::vector<float> strided(half);
    unary(c.op, DType::Float32, x.data(), dense_1d(half, 2), strided.data(), dense_1d(half));
    for (int64_t i = 0; i < half; ++i) ASSERT_EQ(strided[i], c.scalar(x[2 * i])) << i;
    std::vector<double> x64(x.begin(), x.end()), y64(n);
    unary(c.op, DType::Float64, x64.data(), dense_1d(n), y64.data(), dense_1d(n));
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y64[i], c.scalar64(x64[i])) << i;
  }
}

}  // namespace
}  // namespace colony::kernels::cpu
