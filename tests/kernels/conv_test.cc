// The CPU convolution kernels (kernels/cpu/conv.cc) called on raw buffers: both algorithms against
// the naive loops of conv_reference.h with every ISA's register tiles, the bfloat16 refusals, and
// one and two threads. The front function (raw::conv2d): tests/ops/conv_ops_test.cc.
#include "kernels/cpu/conv.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/small_gemm.h"
#include "kernels/cpu/small_gemm_bf16.h"
#include "kernels/cpu/small_gemm_isa.h"
#include "tests/kernels/conv_reference.h"
#include "tests/kernels/kernel_testing.h"
#include "tests/test_util.h"

namespace colony::kernels::cpu {
namespace {

using namespace colony::testing;  // NOLINT(build/namespaces): the references and helpers of the kernel tests

// Both CPU algorithms, called directly, against the naive loops in float64 and float32.
template <typename T>
void expect_both_algorithms_match_naive(const ConvCase& k, const std::vector<double>& x, const std::vector<double>& w,
                                        const std::vector<double>& b, const std::vector<double>& gy) {
  const DType dt = sizeof(T) == 8 ? DType::Float64 : DType::Float32;
  const double tol = dt == DType::Float64 ? 1e-12 : 2e-5;
  const Conv2dGeometry g = geometry(k);
  const ConvDims d = dims(k);
  std::vector<double> ref = naive_conv(k, x, w, b);
  NaiveGrads ref_g = naive_conv_backward(k, gy, x, w);
  std::vector<T> xt = cast<T>(x), wt = cast<T>(w), bt = cast<T>(b), gyt = cast<T>(gy);
  for (auto algo : algorithms_for(k)) {
    SCOPED_TRACE(name(k) + " " + algo_name(algo) + " " + dtype_name(dt));
    std::vector<T> y(k.n * k.o * d.ho * d.wo);
    conv2d_forward(dt, g, xt.data(), wt.data(), k.bias ? bt.data() : nullptr, y.data(), algo);
    std::string where;
    EXPECT_TRUE(close(cast<double>(y), ref, tol, &where)) << "forward " << where;
    // Stale values in the gradients must be overwritten.
    std::vector<T> gx(xt.size(), T(7)), gw(wt.size(), T(7)), gb(k.o, T(7));
    conv2d_backward(dt, g, gyt.data(), xt.data(), wt.data(), gx.data(), gw.data(), gb.data(), algo);
    EXPECT_TRUE(close(cast<double>(gx), ref_g.gx, tol, &where)) << "grad_input " << where;
    EXPECT_TRUE(close(cast<double>(gw), ref_g.gw, tol * 10, &where)) << "grad_weight " << where;
    EXPECT_TRUE(close(cast<double>(gb), ref_g.gb, tol * 10, &where)) << "grad_bias " << where;
  }
}

void expect_both_algorithms_match_naive() {
  uint32_t seed = 1;
  for (const ConvCase& k : conv_cases()) {
    ConvDims d = dims(k);
    std::vector<double> x = random_values(numel(x_shape(k)), seed++);
    std::vector<double> w = random_values(numel(w_shape(k)), seed++);
    std::vector<double> b = random_values(k.o, seed++);
    std::vector<double> gy = random_values(k.n * k.o * d.ho * d.wo, seed++);
    expect_both_algorithms_match_naive<double>(k, x, w, b, gy);
    expect_both_algorithms_match_naive<float>(k, x, w, b, gy);
  }
}

// Every copy of the direct algorithm's register tiles (kernels/cpu/small_gemm_isa.h): AVX2, the
// AVX-512 tiles built for this CPU's baseline ISA (their logic, on any machine), and the real
// AVX-512 build where the CPU has it.
TEST(Conv2dKernels, BothAlgorithmsMatchNaiveWithEveryIsasTiles) {
  struct Tables {
    const SmallGemmFns<float>& f32;
    const SmallGemmFns<double>& f64;
  };
  std::vector<Tables> tables = {{avx2::small_gemm_fns<float>(), avx2::small_gemm_fns<double>()},
                                {avx512_emulated::small_gemm_fns<float>(), avx512_emulated::small_gemm_fns<double>()}};
  if (detected_cpu_isa() >= CpuIsa::Avx512) {
    tables.push_back({avx512::small_gemm_fns<float>(), avx512::small_gemm_fns<double>()});
  }
  // Without an override the convolutions run the tiles of the ISA users are told of (whose
  // bfloat16 and AMX levels only add small_gemm_bf16.h and amx_gemm.h).
  EXPECT_STREQ(active_small_gemm_fns<float>().isa, active_cpu_isa() >= CpuIsa::Avx512 ? "avx512" : "avx2")
      << cpu_isa_name(active_cpu_isa());
  for (const Tables& t : tables) {
    SCOPED_TRACE(t.f32.isa);
    ScopedSmallGemmFns use(t.f32, t.f64);
    ASSERT_EQ(dot_lanes<float>(), t.f32.dot_lanes);
    expect_both_algorithms_match_naive();
  }
}

TEST(Conv2dKernels, Bfloat16IsRefusedWhereItDoesNotRunNatively) {
  const ConvCase lenet{2, 3, 32, 32, 6, 5, 5, 1, 0, 1, 1, true};
  const ConvCase strided{2, 3, 11, 10, 4, 4, 3, 3, 2, 1, 1, true};
  std::vector<BFloat16> buf(64 * 1024);
  void* p = buf.data();
  {
    ScopedSmallGemmBf16Fns none(nullptr);
    EXPECT_TRUE(throws_with<std::invalid_argument>(
        [&] { conv2d_forward(DType::BFloat16, geometry(lenet), p, p, p, p); }, "AVX512_BF16"));
  }
  ScopedSmallGemmBf16Fns use(&bf16_emulated::small_gemm_bf16_fns());
  EXPECT_TRUE(throws_with<std::invalid_argument>(
      [&] { conv2d_backward(DType::BFloat16, geometry(strided), p, p, p, p, p, p); }, "stride 1"));
  EXPECT_TRUE(throws_with<std::invalid_argument>(
      [&] { conv2d_forward(DType::BFloat16, geometry(lenet), p, p, p, p, ConvAlgorithm::Im2col); }, "stride 1"));
}

// The images of a batch are split over the threads; the weight gradient sums over them. One and
// two threads (and an uneven split: 3 images) give the same forward and input gradient bit for bit,
// and weight and bias gradients equal up to the order of the float32 additions.
TEST(Conv2dKernels, OneAndTwoThreadsAgree) {
  for (const ConvCase& k : {ConvCase{3, 6, 14, 14, 16, 5, 5, 1, 0, 1, 1, true},    // LeNet conv2: direct
                            ConvCase{3, 3, 11, 10, 4, 4, 3, 3, 2, 1, 1, true}}) {  // stride 3: im2col
    SCOPED_TRACE(name(k));
    const Conv2dGeometry g = geometry(k);
    const ConvDims d = dims(k);
    std::vector<float> x = cast<float>(random_values(numel(x_shape(k)), 61));
    std::vector<float> w = cast<float>(random_values(numel(w_shape(k)), 62));
    std::vector<float> b = cast<float>(random_values(k.o, 63));
    std::vector<float> gy = cast<float>(random_values(k.n * k.o * d.ho * d.wo, 64));
    struct Out {
      std::vector<float> y, gx, gw, gb;
    };
    auto run = [&](int threads) {
      ScopedThreads use(threads);
      Out o{std::vector<float>(gy.size()), std::vector<float>(x.size()), std::vector<float>(w.size()),
            std::vector<float>(b.size())};
      conv2d_forward(DType::Float32, g, x.data(), w.data(), b.data(), o.y.data());
      conv2d_backward(DType::Float32, g, gy.data(), x.data(), w.data(), o.gx.data(), o.gw.data(), o.gb.data());
      return o;
    };
    Out one = run(1), two = run(2);
    EXPECT_EQ(one.y, two.y);
    EXPECT_EQ(one.gx, two.gx);
    std::string where;
    EXPECT_TRUE(close(cast<double>(one.gw), cast<double>(two.gw), 1e-5, &where)) << where;
    EXPECT_TRUE(close(cast<double>(one.gb), cast<double>(two.gb), 1e-5, &where)) << where;
    // And both are the convolution.
    EXPECT_TRUE(close(cast<double>(two.y), naive_conv(k, cast<double>(x), cast<double>(w), cast<double>(b)), 2e-5, &where))
        << where;
  }
}

}  // namespace
}  // namespace colony::kernels::cpu
