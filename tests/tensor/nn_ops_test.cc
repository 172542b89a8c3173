// conv2d, pooling and batch_norm (tensor/raw_nn_ops.h) against naive loops written here from the
// definitions, gradients against finite differences in float64, and the CUDA paths against the CPU.
#include "tensor/raw_nn_ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "kernels/cpu/conv.h"
#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/small_gemm.h"
#include "kernels/cpu/small_gemm_bf16.h"
#include "kernels/cpu/small_gemm_isa.h"
#include "tensor/threads.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using raw::Int2;
using testing::all_close;
using testing::throws_with;
using testing::values;

std::vector<double> random_values(int64_t n, uint32_t seed, double lo = -1.0, double hi = 1.0) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(n);
  for (auto& x : v) x = u(gen);
  return v;
}

Tensor random_tensor(const Shape& shape, uint32_t seed, DType dtype = kFloat64) {
  return raw::from_vector(random_values(shape_numel(shape), seed), shape, TensorOptions(dtype));
}

Tensor from(const std::vector<double>& v, const Shape& shape, DType dtype = kFloat64) {
  return raw::from_vector(v, shape, TensorOptions(dtype));
}

// Restores the thread count a test changed.
class ThreadCount {
 public:
  explicit ThreadCount(int n) : saved_(get_num_threads()) { set_num_threads(n); }
  ~ThreadCount() { set_num_threads(saved_); }

 private:
  int saved_;
};

// ---------------------------------------------------------------------------------------------
// Naive convolution from the definition: y[n][o][oy][ox] = b[o] + sum over the group's channels c
// and kernel taps (i, j) of w[o][c][i][j] * x[n][g * Cg + c][oy * sh - ph + i * dh][ox * sw - pw + j * dw].

struct ConvCase {
  int64_t n, c, h, w, o, kh, kw;
  Int2 stride, padding, dilation;
  int64_t groups;
  bool bias;
};

std::string name(const ConvCase& k) {
  return "N" + std::to_string(k.n) + " C" + std::to_string(k.c) + " " + std::to_string(k.h) + "x" +
         std::to_string(k.w) + " O" + std::to_string(k.o) + " k" + std::to_string(k.kh) + "x" + std::to_string(k.kw) +
         " s" + std::to_string(k.stride.h) + "," + std::to_string(k.stride.w) + " p" + std::to_string(k.padding.h) +
         "," + std::to_string(k.padding.w) + " d" + std::to_string(k.dilation.h) + "," +
         std::to_string(k.dilation.w) + " g" + std::to_string(k.groups);
}

struct ConvDims {
  int64_t cg, og, ho, wo;
};

ConvDims dims(const ConvCase& k) {
  ConvDims d;
  d.cg = k.c / k.groups;
  d.og = k.o / k.groups;
  d.ho = (k.h + 2 * k.padding.h - k.dilation.h * (k.kh - 1) - 1) / k.stride.h + 1;
  d.wo = (k.w + 2 * k.padding.w - k.dilation.w * (k.kw - 1) - 1) / k.stride.w + 1;
  return d;
}

// Calls f(n, o, oy, ox, c_global, c_local, i, j, x_index) for every valid tap.
template <typename F>
void for_each_tap(const ConvCase& k, const F& f) {
  ConvDims d = dims(k);
  for (int64_t n = 0; n < k.n; ++n)
    for (int64_t o = 0; o < k.o; ++o)
      for (int64_t oy = 0; oy < d.ho; ++oy)
        for (int64_t ox = 0; ox < d.wo; ++ox)
          for (int64_t cl = 0; cl < d.cg; ++cl)
            for (int64_t i = 0; i < k.kh; ++i)
              for (int64_t j = 0; j < k.kw; ++j) {
                int64_t ih = oy * k.stride.h - k.padding.h + i * k.dilation.h;
                int64_t iw = ox * k.stride.w - k.padding.w + j * k.dilation.w;
                if (ih < 0 || ih >= k.h || iw < 0 || iw >= k.w) continue;
                int64_t c = (o / d.og) * d.cg + cl;
                f(n, o, oy, ox, c, cl, i, j, ((n * k.c + c) * k.h + ih) * k.w + iw);
              }
}

std::vector<double> naive_conv(const ConvCase& k, const std::vector<double>& x, const std::vector<double>& w,
                               const std::vector<double>& b) {
  ConvDims d = dims(k);
  std::vector<double> y(k.n * k.o * d.ho * d.wo, 0.0);
  for (int64_t n = 0; n < k.n; ++n)
    for (int64_t o = 0; o < k.o; ++o)
      for (int64_t p = 0; p < d.ho * d.wo; ++p) y[(n * k.o + o) * d.ho * d.wo + p] = k.bias ? b[o] : 0.0;
  for_each_tap(k, [&](int64_t n, int64_t o, int64_t oy, int64_t ox, int64_t, int64_t cl, int64_t i, int64_t j,
                      int64_t xi) {
    y[((n * k.o + o) * d.ho + oy) * d.wo + ox] += w[((o * d.cg + cl) * k.kh + i) * k.kw + j] * x[xi];
  });
  return y;
}

struct NaiveGrads {
  std::vector<double> gx, gw, gb;
};

NaiveGrads naive_conv_backward(const ConvCase& k, const std::vector<double>& gy, const std::vector<double>& x,
                               const std::vector<double>& w) {
  ConvDims d = dims(k);
  NaiveGrads g{std::vector<double>(x.size(), 0.0), std::vector<double>(w.size(), 0.0),
               std::vector<double>(k.o, 0.0)};
  for (int64_t n = 0; n < k.n; ++n)
    for (int64_t o = 0; o < k.o; ++o)
      for (int64_t p = 0; p < d.ho * d.wo; ++p) g.gb[o] += gy[(n * k.o + o) * d.ho * d.wo + p];
  for_each_tap(k, [&](int64_t n, int64_t o, int64_t oy, int64_t ox, int64_t, int64_t cl, int64_t i, int64_t j,
                      int64_t xi) {
    double gyv = gy[((n * k.o + o) * d.ho + oy) * d.wo + ox];
    int64_t wi = ((o * d.cg + cl) * k.kh + i) * k.kw + j;
    g.gx[xi] += w[wi] * gyv;
    g.gw[wi] += x[xi] * gyv;
  });
  return g;
}

const std::vector<ConvCase>& conv_cases() {
  static const std::vector<ConvCase> cases = {
      {2, 3, 32, 32, 6, 5, 5, 1, 0, 1, 1, true},            // LeNet conv1
      {3, 6, 14, 14, 16, 5, 5, 1, 0, 1, 1, true},           // LeNet conv2
      {2, 4, 7, 9, 5, 3, 3, 1, 1, 1, 1, true},              // 3x3, padding 1
      {2, 4, 9, 8, 6, 3, 2, {2, 1}, {1, 2}, {2, 1}, 2, true},  // everything asymmetric, groups
      {1, 6, 10, 11, 9, 3, 3, 1, {2, 1}, 2, 3, false},      // dilation, groups, no bias
      {2, 8, 5, 5, 4, 1, 1, 1, 0, 1, 1, true},              // 1x1
      {2, 2, 5, 5, 3, 5, 5, 1, 0, 1, 1, true},              // kernel = input: 1x1 output
      {2, 3, 11, 10, 4, 4, 3, 3, 2, 1, 1, true},            // stride 3 with padding
      {1, 32, 6, 6, 20, 3, 3, 1, 1, 1, 1, true},            // 288 patch rows: several K blocks
      {1, 2, 40, 40, 3, 3, 3, 1, 0, 1, 1, false},           // 1520 grid positions: several dot blocks
      {3, 4, 6, 6, 4, 3, 3, 1, 1, 1, 4, true},              // depthwise
  };
  return cases;
}

Shape x_shape(const ConvCase& k) { return {k.n, k.c, k.h, k.w}; }
Shape w_shape(const ConvCase& k) { return {k.o, k.c / k.groups, k.kh, k.kw}; }

kernels::Conv2dGeometry geometry(const ConvCase& k) {
  ConvDims d = dims(k);
  kernels::Conv2dGeometry g;
  g.batch = k.n;
  g.in_channels = k.c;
  g.in_h = k.h;
  g.in_w = k.w;
  g.out_channels = k.o;
  g.kernel_h = k.kh;
  g.kernel_w = k.kw;
  g.stride_h = k.stride.h;
  g.stride_w = k.stride.w;
  g.pad_h = k.padding.h;
  g.pad_w = k.padding.w;
  g.dilation_h = k.dilation.h;
  g.dilation_w = k.dilation.w;
  g.groups = k.groups;
  g.out_h = d.ho;
  g.out_w = d.wo;
  return g;
}

std::vector<kernels::cpu::ConvAlgorithm> algorithms_for(const ConvCase& k) {
  std::vector<kernels::cpu::ConvAlgorithm> a = {kernels::cpu::ConvAlgorithm::Im2col};
  if (k.stride.h == 1 && k.stride.w == 1) a.push_back(kernels::cpu::ConvAlgorithm::Direct);
  return a;
}

const char* algo_name(kernels::cpu::ConvAlgorithm a) {
  return a == kernels::cpu::ConvAlgorithm::Direct ? "direct" : "im2col";
}

bool close(const std::vector<double>& a, const std::vector<double>& b, double tol, std::string* where) {
  if (a.size() != b.size()) {
    *where = "sizes " + std::to_string(a.size()) + " vs " + std::to_string(b.size());
    return false;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (!(std::abs(a[i] - b[i]) <= tol * (1.0 + std::abs(b[i])))) {
      *where = "element " + std::to_string(i) + ": " + std::to_string(a[i]) + " vs " + std::to_string(b[i]);
      return false;
    }
  }
  return true;
}

// Both CPU algorithms, called directly, against the naive loops in float64 and float32.
void expect_both_algorithms_match_naive() {
  uint32_t seed = 1;
  for (const ConvCase& k : conv_cases()) {
    const kernels::Conv2dGeometry g = geometry(k);
    ConvDims d = dims(k);
    std::vector<double> x = random_values(shape_numel(x_shape(k)), seed++);
    std::vector<double> w = random_values(shape_numel(w_shape(k)), seed++);
    std::vector<double> b = random_values(k.o, seed++);
    std::vector<double> gy = random_values(k.n * k.o * d.ho * d.wo, seed++);
    std::vector<double> ref = naive_conv(k, x, w, b);
    NaiveGrads ref_g = naive_conv_backward(k, gy, x, w);
    for (DType dt : {kFloat64, kFloat32}) {
      const double tol = dt == kFloat64 ? 1e-12 : 2e-5;
      Tensor xt = from(x, x_shape(k), dt), wt = from(w, w_shape(k), dt), bt = from(b, {k.o}, dt);
      Tensor gyt = from(gy, {k.n, k.o, d.ho, d.wo}, dt);
      for (auto algo : algorithms_for(k)) {
        SCOPED_TRACE(name(k) + " " + algo_name(algo) + " " + dtype_name(dt));
        Tensor y = raw::empty({k.n, k.o, d.ho, d.wo}, TensorOptions(dt));
        kernels::cpu::conv2d_forward(dt, g, xt.data_ptr_raw(), wt.data_ptr_raw(), k.bias ? bt.data_ptr_raw() : nullptr,
                                     y.data_ptr_raw(), algo);
        std::string where;
        EXPECT_TRUE(close(values(y), ref, tol, &where)) << "forward " << where;
        Tensor gx = raw::full(xt.sizes(), 7.0, TensorOptions(dt));  // stale values must be overwritten
        Tensor gw = raw::full(wt.sizes(), 7.0, TensorOptions(dt));
        Tensor gb = raw::full({k.o}, 7.0, TensorOptions(dt));
        kernels::cpu::conv2d_backward(dt, g, gyt.data_ptr_raw(), xt.data_ptr_raw(), wt.data_ptr_raw(),
                                      gx.data_ptr_raw(), gw.data_ptr_raw(), gb.data_ptr_raw(), algo);
        EXPECT_TRUE(close(values(gx), ref_g.gx, tol, &where)) << "grad_input " << where;
        EXPECT_TRUE(close(values(gw), ref_g.gw, tol * 10, &where)) << "grad_weight " << where;
        EXPECT_TRUE(close(values(gb), ref_g.gb, tol * 10, &where)) << "grad_bias " << where;
      }
    }
  }
}

// Every copy of the direct algorithm's register tiles (kernels/cpu/small_gemm_isa.h): AVX2, the
// AVX-512 tiles built for this CPU's baseline ISA (their logic, on any machine), and the real
// AVX-512 build where the CPU has it.
TEST(Conv2dKernels, BothAlgorithmsMatchNaiveWithEveryIsasTiles) {
  using namespace kernels::cpu;
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
  EXPECT_STREQ(get_cpu_capability(), cpu_isa_name(active_cpu_isa()));
  EXPECT_STREQ(active_small_gemm_fns<float>().isa, active_cpu_isa() >= CpuIsa::Avx512 ? "avx512" : "avx2")
      << get_cpu_capability();
  for (const Tables& t : tables) {
    SCOPED_TRACE(t.f32.isa);
    ScopedSmallGemmFns use(t.f32, t.f64);
    ASSERT_EQ(dot_lanes<float>(), t.f32.dot_lanes);
    expect_both_algorithms_match_naive();
  }
}

// bfloat16 convolutions through the front functions: with bfloat16 tiles (the emulated copy here,
// the AVX512_BF16 one where the CPU has it) every stride-1 case runs natively; without, or with
// another stride, the operands are widened to float32. Either way each output is the float64
// reference on the bfloat16 inputs, up to float32 accumulation and one bfloat16 rounding (2^-9
// relative; 1e-2 allows for the float32 sums of the weight gradients).
void expect_bf16_convolutions_match_naive(bool native_expected) {
  uint32_t seed = 500;
  for (const ConvCase& k : conv_cases()) {
    const kernels::Conv2dGeometry g = geometry(k);
    const bool stride1 = k.stride.h == 1 && k.stride.w == 1;
    EXPECT_EQ(kernels::cpu::conv2d_native_16bit(kBFloat16, g), native_expected && stride1) << name(k);
    ConvDims d = dims(k);
    Tensor xt = random_tensor(x_shape(k), seed++, kBFloat16), wt = random_tensor(w_shape(k), seed++, kBFloat16);
    Tensor bt = random_tensor({k.o}, seed++, kBFloat16);
    Tensor gyt = random_tensor({k.n, k.o, d.ho, d.wo}, seed++, kBFloat16);
    // The reference sees exactly the bfloat16 values.
    std::vector<double> ref = naive_conv(k, values(xt), values(wt), values(bt));
    NaiveGrads ref_g = naive_conv_backward(k, values(gyt), values(xt), values(wt));
    SCOPED_TRACE(name(k));
    Tensor y = raw::conv2d(xt, wt, k.bias ? bt : Tensor(), k.stride, k.padding, k.dilation, k.groups);
    ASSERT_EQ(y.dtype(), kBFloat16);
    std::string where;
    const double tol = 1e-2;
    EXPECT_TRUE(close(values(y), ref, tol, &where)) << "forward " << where;
    raw::Conv2dGrads grads = raw::conv2d_backward(gyt, xt, wt, {k.stride, k.padding, k.dilation, k.groups});
    ASSERT_EQ(grads.grad_weight.dtype(), kBFloat16);
    EXPECT_TRUE(close(values(grads.grad_input), ref_g.gx, tol, &where)) << "grad_input " << where;
    EXPECT_TRUE(close(values(grads.grad_weight), ref_g.gw, tol, &where)) << "grad_weight " << where;
    EXPECT_TRUE(close(values(grads.grad_bias), ref_g.gb, tol, &where)) << "grad_bias " << where;
  }
}

TEST(Conv2d, Bfloat16MatchesNaiveNativelyWithBf16TilesAndWidenedWithout) {
  using namespace kernels::cpu;
  for (const SmallGemmBf16Fns* t : runnable_bf16_copies()) {
    SCOPED_TRACE(t->isa);
    ScopedSmallGemmBf16Fns use(t);
    expect_bf16_convolutions_match_naive(true);
  }
  {
    SCOPED_TRACE("no bfloat16 tiles: widened");
    ScopedSmallGemmBf16Fns none(nullptr);
    expect_bf16_convolutions_match_naive(false);
  }
}

TEST(Conv2dKernels, Bfloat16IsRefusedWhereItDoesNotRunNatively) {
  using namespace kernels::cpu;
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

TEST(Conv2d, FrontFunctionMatchesNaiveWithNonContiguousInputs) {
  const ConvCase k{2, 4, 7, 9, 6, 3, 3, 1, 1, 1, 2, true};
  ConvDims d = dims(k);
  // input built as [N, W, H, C] and permuted to [N, C, H, W]: every stride differs from contiguous
  std::vector<double> x = random_values(shape_numel(x_shape(k)), 11);
  std::vector<double> w = random_values(shape_numel(w_shape(k)), 12);
  std::vector<double> b = random_values(k.o, 13);
  Tensor xc = from(x, x_shape(k));
  Tensor x_nc = raw::permute(raw::contiguous(raw::permute(xc, {0, 3, 2, 1})), {0, 3, 2, 1});
  ASSERT_FALSE(x_nc.is_contiguous());
  Tensor wc = from(w, w_shape(k));
  Tensor w_nc = raw::transpose(raw::contiguous(raw::transpose(wc, 2, 3)), 2, 3);
  ASSERT_FALSE(w_nc.is_contiguous());
  Tensor bias_strided = raw::slice(from([&] {
                                     std::vector<double> twice;
                                     for (double v : b) twice.insert(twice.end(), {v, 0.0});
                                     return twice;
                                   }(), {2 * k.o}), 0, 0, 2 * k.o, 2);
  Tensor y = raw::conv2d(x_nc, w_nc, bias_strided, k.stride, k.padding, k.dilation, k.groups);
  EXPECT_EQ(y.sizes(), (Shape{k.n, k.o, d.ho, d.wo}));
  EXPECT_TRUE(all_close(y, from(naive_conv(k, x, w, b), y.sizes()), 1e-12, 1e-12));
}

TEST(Conv2d, LeNetShapesInFloat32) {
  // Both LeNet layers at a batch the thread pool splits unevenly.
  ThreadCount threads(3);
  for (const ConvCase& k : {ConvCase{5, 3, 32, 32, 6, 5, 5, 1, 0, 1, 1, true},
                            ConvCase{5, 6, 14, 14, 16, 5, 5, 1, 0, 1, 1, true}}) {
    SCOPED_TRACE(name(k));
    ConvDims d = dims(k);
    std::vector<double> x = random_values(shape_numel(x_shape(k)), 21);
    std::vector<double> w = random_values(shape_numel(w_shape(k)), 22);
    std::vector<double> b = random_values(k.o, 23);
    std::vector<double> gy = random_values(k.n * k.o * d.ho * d.wo, 24);
    Tensor y = raw::conv2d(from(x, x_shape(k), kFloat32), from(w, w_shape(k), kFloat32), from(b, {k.o}, kFloat32));
    EXPECT_EQ(y.dtype(), kFloat32);
    EXPECT_TRUE(all_close(y, from(naive_conv(k, x, w, b), y.sizes()), 1e-4, 1e-4));
    auto grads = raw::conv2d_backward(from(gy, y.sizes(), kFloat32), from(x, x_shape(k), kFloat32),
                                      from(w, w_shape(k), kFloat32), {1, 0, 1, 1});
    NaiveGrads ref = naive_conv_backward(k, gy, x, w);
    EXPECT_TRUE(all_close(grads.grad_input, from(ref.gx, x_shape(k)), 1e-4, 1e-4));
    EXPECT_TRUE(all_close(grads.grad_weight, from(ref.gw, w_shape(k)), 1e-4, 1e-3));
    EXPECT_TRUE(all_close(grads.grad_bias, from(ref.gb, {k.o}), 1e-4, 1e-3));
  }
}

TEST(Conv2d, AutoMayPickDifferentAlgorithmsPerGradient) {
  // 288 x 20 weights: Auto computes grad_input directly and grad_weight through im2col + Eigen.
  const ConvCase k{2, 32, 6, 6, 20, 3, 3, 1, 1, 1, 1, true};
  const kernels::Conv2dGeometry g = geometry(k);
  ASSERT_NE(kernels::cpu::choose_conv_algorithm(g, kernels::cpu::ConvPass::BackwardInput),
            kernels::cpu::choose_conv_algorithm(g, kernels::cpu::ConvPass::BackwardWeight));
  ConvDims d = dims(k);
  std::vector<double> x = random_values(shape_numel(x_shape(k)), 25), w = random_values(shape_numel(w_shape(k)), 26);
  std::vector<double> gy = random_values(k.n * k.o * d.ho * d.wo, 27);
  auto grads = raw::conv2d_backward(from(gy, {k.n, k.o, d.ho, d.wo}), from(x, x_shape(k)), from(w, w_shape(k)),
                                    {k.stride, k.padding, k.dilation, k.groups});
  NaiveGrads ref = naive_conv_backward(k, gy, x, w);
  EXPECT_TRUE(all_close(grads.grad_input, from(ref.gx, x_shape(k)), 1e-12, 1e-12));
  EXPECT_TRUE(all_close(grads.grad_weight, from(ref.gw, w_shape(k)), 1e-12, 1e-12));
  EXPECT_TRUE(all_close(grads.grad_bias, from(ref.gb, {k.o}), 1e-12, 1e-12));
}

TEST(Conv2d, ThreadCountDoesNotChangeResultsBeyondRounding) {
  const ConvCase k{7, 6, 14, 14, 16, 5, 5, 1, 0, 1, 1, true};
  ConvDims d = dims(k);
  Tensor x = random_tensor(x_shape(k), 31, kFloat32), w = random_tensor(w_shape(k), 32, kFloat32);
  Tensor b = random_tensor({k.o}, 33, kFloat32), gy = random_tensor({k.n, k.o, d.ho, d.wo}, 34, kFloat32);
  auto run = [&](int n) {
    ThreadCount threads(n);
    return std::make_pair(raw::conv2d(x, w, b), raw::conv2d_backward(gy, x, w, {}));
  };
  auto one = run(1), four = run(4);
  EXPECT_TRUE(raw::equal(one.first, four.first));  // images are independent: same arithmetic
  EXPECT_TRUE(raw::equal(one.second.grad_input, four.second.grad_input));
  EXPECT_TRUE(all_close(one.second.grad_weight, four.second.grad_weight, 1e-5, 1e-4));
  EXPECT_TRUE(all_close(one.second.grad_bias, four.second.grad_bias, 1e-5, 1e-4));
}

// Finite differences of L = sum(conv2d(x, w, b) * r) against conv2d_backward(r).
double conv_loss(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& r, const ConvCase& k) {
  return raw::sum(raw::mul(raw::conv2d(x, w, b, k.stride, k.padding, k.dilation, k.groups), r)).item();
}

std::vector<double> numeric_grad(Tensor& t, const std::function<double()>& loss) {
  const double h = 1e-6;
  std::vector<double> g(t.numel());
  double* p = t.data_ptr<double>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    double saved = p[i];
    p[i] = saved + h;
    double up = loss();
    p[i] = saved - h;
    double down = loss();
    p[i] = saved;
    g[i] = (up - down) / (2 * h);
  }
  return g;
}

TEST(Conv2d, BackwardMatchesFiniteDifferences) {
  for (const ConvCase& k : {ConvCase{2, 4, 6, 5, 6, 3, 2, 1, {1, 0}, {1, 2}, 2, true},   // direct
                            ConvCase{2, 3, 7, 6, 4, 3, 3, 2, 1, 1, 1, true}}) {         // im2col
    SCOPED_TRACE(name(k));
    ConvDims d = dims(k);
    Tensor x = random_tensor(x_shape(k), 41), w = random_tensor(w_shape(k), 42), b = random_tensor({k.o}, 43);
    Tensor r = random_tensor({k.n, k.o, d.ho, d.wo}, 44);
    auto grads = raw::conv2d_backward(r, x, w, {k.stride, k.padding, k.dilation, k.groups});
    auto loss = [&] { return conv_loss(x, w, b, r, k); };
    EXPECT_TRUE(all_close(grads.grad_input, from(numeric_grad(x, loss), x.sizes()), 1e-6, 1e-7));
    EXPECT_TRUE(all_close(grads.grad_weight, from(numeric_grad(w, loss), w.sizes()), 1e-6, 1e-7));
    EXPECT_TRUE(all_close(grads.grad_bias, from(numeric_grad(b, loss), b.sizes()), 1e-6, 1e-7));
  }
}

TEST(Conv2d, OutputMaskSkipsUnwantedGradients) {
  Tensor x = random_tensor({2, 3, 8, 8}, 51), w = random_tensor({4, 3, 3, 3}, 52);
  Tensor gy = random_tensor({2, 4, 6, 6}, 53);
  auto all = raw::conv2d_backward(gy, x, w, {});
  auto weight_only = raw::conv2d_backward(gy, x, w, {}, {false, true, false});
  EXPECT_FALSE(weight_only.grad_input.defined());
  EXPECT_FALSE(weight_only.grad_bias.defined());
  EXPECT_TRUE(raw::equal(weight_only.grad_weight, all.grad_weight));
  auto input_only = raw::conv2d_backward(gy, x, w, {}, {true, false, false});
  EXPECT_FALSE(input_only.grad_weight.defined());
  EXPECT_TRUE(raw::equal(input_only.grad_input, all.grad_input));
}

TEST(Conv2d, EmptyBatch) {
  Tensor x = raw::zeros({0, 3, 8, 8}, kFloat64), w = random_tensor({4, 3, 3, 3}, 54);
  Tensor y = raw::conv2d(x, w);
  EXPECT_EQ(y.sizes(), (Shape{0, 4, 6, 6}));
  auto grads = raw::conv2d_backward(raw::zeros({0, 4, 6, 6}, kFloat64), x, w, {});
  EXPECT_EQ(grads.grad_input.sizes(), x.sizes());
  EXPECT_EQ(values(grads.grad_weight), std::vector<double>(4 * 3 * 9, 0.0));
  EXPECT_EQ(values(grads.grad_bias), std::vector<double>(4, 0.0));
}

TEST(Conv2d, Errors) {
  Tensor w = raw::zeros({6, 3, 5, 5});
  EXPECT_TRUE(throws_with([&] { raw::conv2d(raw::zeros({32, 3072}), w); },
                          "conv2d: input must be 4-D (N,C,H,W), got [32, 3072]"));
  EXPECT_TRUE(throws_with([&] { raw::conv2d(raw::zeros({32, 4, 32, 32}), w); },
                          "conv2d: expected input with 3 channels (weight [6, 3, 5, 5], groups 1), got [32, 4, 32, 32]"));
  EXPECT_TRUE(throws_with([&] { raw::conv2d(raw::zeros({1, 3, 4, 4}), w); },
                          "conv2d: kernel 5x5 is larger than the padded input 4x4 (input [1, 3, 4, 4], padding (0, 0))"));
  EXPECT_TRUE(throws_with([&] { raw::conv2d(raw::zeros({1, 3, 8, 8}), w, {}, 1, 0, 2); },
                          "kernel 5x5 (9x9 with dilation (2, 2)) is larger than the padded input 8x8"));
  EXPECT_TRUE(throws_with([&] { raw::conv2d(raw::zeros({1, 3, 8, 8}, kFloat64), w); },
                          "conv2d: expected weight of dtype float64 like input, got float32"));
  EXPECT_TRUE(throws_with([&] { raw::conv2d(raw::zeros({1, 3, 8, 8}), raw::zeros({6, 3, 5})); },
                          "conv2d: weight must be 4-D (O,C/groups,kH,kW), got [6, 3, 5]"));
  EXPECT_TRUE(throws_with([&] { raw::conv2d(raw::zeros({1, 3, 8, 8}), w, raw::zeros({5})); },
                          "conv2d: expected bias of shape [6] (one per output channel of weight [6, 3, 5, 5]), got [5]"));
  EXPECT_TRUE(throws_with([&] { raw::conv2d(raw::zeros({1, 6, 8, 8}), raw::zeros({6, 3, 3, 3}), {}, 1, 0, 1, 4); },
                          "weight [6, 3, 3, 3] has 6 output channels, which groups 4 does not divide"));
  EXPECT_TRUE(throws_with([&] { raw::conv2d(raw::zeros({1, 3, 8, 8}), w, {}, {1, 0}); },
                          "conv2d: stride must be positive, got (1, 0)"));
  EXPECT_TRUE(throws_with([&] { raw::conv2d(raw::zeros({1, 3, 8, 8}), w, {}, 1, -1); },
                          "conv2d: padding must be non-negative, got (-1, -1)"));
  EXPECT_TRUE(throws_with([&] { raw::conv2d(raw::zeros({1, 3, 8, 8}, kInt64), raw::zeros({6, 3, 5, 5}, kInt64)); },
                          "conv2d: expected a floating point input, got int64"));
  EXPECT_TRUE(throws_with(
      [&] { raw::conv2d_backward(raw::zeros({1, 6, 3, 3}), raw::zeros({1, 3, 8, 8}), w, {}); },
      "conv2d_backward: expected grad_output of shape [1, 6, 4, 4] (the output of input [1, 3, 8, 8] and weight "
      "[6, 3, 5, 5]), got [1, 6, 3, 3]"));
  const kernels::Conv2dGeometry g = geometry({1, 3, 8, 8, 6, 5, 5, 2, 0, 1, 1, false});
  EXPECT_TRUE(throws_with(
      [&] {
        kernels::cpu::conv2d_forward(kFloat32, g, nullptr, nullptr, nullptr, nullptr,
                                     kernels::cpu::ConvAlgorithm::Direct);
      },
      "the direct algorithm needs stride 1"));
}

// ---------------------------------------------------------------------------------------------
// Pooling: naive windows from the definitions.

struct PoolCase {
  Shape in;
  Int2 kernel, stride, padding, dilation;
  bool ceil_mode;
};

int64_t naive_pool_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  double span = static_cast<double>(in + 2 * p - d * (k - 1) - 1) / s;
  int64_t out = static_cast<int64_t>(ceil_mode ? std::ceil(span) : std::floor(span)) + 1;
  if (ceil_mode && (out - 1) * s >= in + p) --out;  // the last window must start inside
  return out;
}

struct NaiveMax {
  std::vector<double> y;
  std::vector<int64_t> idx;
  int64_t ho, wo;
};

NaiveMax naive_max_pool(const PoolCase& c, const std::vector<double>& x) {
  const int64_t H = c.in[c.in.size() - 2], W = c.in[c.in.size() - 1];
  const int64_t planes = shape_numel(c.in) / (H * W);
  NaiveMax r;
  r.ho = naive_pool_size(H, c.kernel.h, c.stride.h, c.padding.h, c.dilation.h, c.ceil_mode);
  r.wo = naive_pool_size(W, c.kernel.w, c.stride.w, c.padding.w, c.dilation.w, c.ceil_mode);
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oy = 0; oy < r.ho; ++oy)
      for (int64_t ox = 0; ox < r.wo; ++ox) {
        double best = -std::numeric_limits<double>::infinity();
        int64_t at = -1;
        for (int64_t i = 0; i < c.kernel.h; ++i)
          for (int64_t j = 0; j < c.kernel.w; ++j) {
            int64_t ih = oy * c.stride.h - c.padding.h + i * c.dilation.h;
            int64_t iw = ox * c.stride.w - c.padding.w + j * c.dilation.w;
            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
            double v = x[p * H * W + ih * W + iw];
            if (at < 0 || v > best || std::isnan(v)) best = v, at = ih * W + iw;
          }
        r.y.push_back(best);
        r.idx.push_back(at);
      }
  return r;
}

const std::vector<PoolCase>& pool_cases() {
  static const std::vector<PoolCase> cases = {
      {{4, 6, 28, 28}, 2, 2, 0, 1, false},          // LeNet pool 1 (the 2x2 fast path)
      {{2, 16, 10, 10}, 2, 2, 0, 1, false},         // LeNet pool 2
      {{2, 3, 9, 7}, 2, 2, 0, 1, false},            // odd sizes: the last row and column are dropped
      {{1, 3, 6, 39}, 2, 2, 0, 1, false},           // rows of 19 windows: whole vectors, then a short group
      {{2, 3, 9, 7}, 2, 2, 0, 1, true},             // ceil_mode keeps them with a clipped window
      {{2, 3, 10, 11}, 3, 2, 1, 1, false},          // overlapping windows with padding
      {{1, 2, 12, 10}, {3, 2}, {2, 3}, {1, 1}, {2, 3}, true},  // dilation, everything asymmetric
      {{3, 8, 8}, {4, 3}, 1, {2, 1}, 1, false},     // 3-D input, stride 1
  };
  return cases;
}

TEST(MaxPool2d, MatchesNaiveValuesAndIndices) {
  uint32_t seed = 100;
  for (const PoolCase& c : pool_cases()) {
    std::vector<double> x = random_values(shape_numel(c.in), seed++);
    NaiveMax ref = naive_max_pool(c, x);
    for (DType dt : {kFloat64, kFloat32}) {
      SCOPED_TRACE(shape_str(c.in) + " " + dtype_name(dt));
      auto r = raw::max_pool2d(from(x, c.in, dt), c.kernel, c.stride, c.padding, c.dilation, c.ceil_mode);
      Shape expected = c.in;
      expected[expected.size() - 2] = ref.ho;
      expected[expected.size() - 1] = ref.wo;
      ASSERT_EQ(r.output.sizes(), expected);
      EXPECT_EQ(r.indices.dtype(), kInt64);
      EXPECT_TRUE(all_close(r.output, from(ref.y, expected), 1e-7, 0));
      std::vector<int64_t> idx(r.indices.data_ptr<int64_t>(), r.indices.data_ptr<int64_t>() + r.indices.numel());
      EXPECT_EQ(idx, ref.idx);
    }
  }
}

TEST(MaxPool2d, NaNWinsAndTiesKeepTheFirst) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  // Window 0: a tie (the first kept); window 1: a NaN; window 2: two NaNs (the last one kept, as in
  // PyTorch's CPU kernel); window 3: all -inf (the first).
  std::vector<double> rows = {1, 1, 5, nan, 1, nan, -inf, -inf,
                              0, 1, 2, 3, nan, 0, -inf, -inf};
  auto fast = raw::max_pool2d(from(rows, {1, 1, 2, 8}), 2);  // the 2 x 2 fast path
  // The general loop: a third row of -inf under a 3 x 2 window picks the same elements.
  for (int i = 0; i < 8; ++i) rows.push_back(-inf);
  auto general = raw::max_pool2d(from(rows, {1, 3, 8}), {3, 2});
  for (const auto& r : {fast, general}) {
    std::vector<double> y = values(r.output);
    const int64_t* idx = r.indices.data_ptr<int64_t>();
    ASSERT_EQ(y.size(), 4u);
    EXPECT_EQ(y[0], 1);
    EXPECT_EQ(idx[0], 0);
    EXPECT_TRUE(std::isnan(y[1]));
    EXPECT_EQ(idx[1], 3);
    EXPECT_TRUE(std::isnan(y[2]));
    EXPECT_EQ(idx[2], 12);
    EXPECT_EQ(y[3], -inf);
    EXPECT_EQ(idx[3], 6);
  }
}

TEST(MaxPool2d, BackwardScattersToIndicesAndMatchesFiniteDifferences) {
  for (const PoolCase& c : pool_cases()) {
    SCOPED_TRACE(shape_str(c.in));
    Tensor x = random_tensor(c.in, 200);
    auto r = raw::max_pool2d(x, c.kernel, c.stride, c.padding, c.dilation, c.ceil_mode);
    Tensor gy = random_tensor(r.output.sizes(), 201);
    Tensor gx = raw::max_pool2d_backward(gy, r.indices, c.in);
    // naive scatter
    const int64_t H = c.in[c.in.size() - 2], W = c.in[c.in.size() - 1];
    const int64_t plane_out = r.output.size(-2) * r.output.size(-1);
    std::vector<double> ref(x.numel(), 0.0), g = values(gy);
    const int64_t* idx = r.indices.data_ptr<int64_t>();
    for (int64_t o = 0; o < r.output.numel(); ++o) ref[(o / plane_out) * H * W + idx[o]] += g[o];
    EXPECT_TRUE(all_close(gx, from(ref, c.in), 1e-12, 1e-12));
    if (c.in[0] * (c.in.size() == 4 ? c.in[1] : 1) > 8) continue;  // finite differences on the small ones
    auto loss = [&] {
      return raw::sum(raw::mul(raw::max_pool2d(x, c.kernel, c.stride, c.padding, c.dilation, c.ceil_mode).output, gy))
          .item();
    };
    EXPECT_TRUE(all_close(gx, from(numeric_grad(x, loss), c.in), 1e-6, 1e-7));
  }
}

TEST(MaxPool2d, Errors) {
  Tensor x = raw::zeros({1, 1, 4, 4});
  EXPECT_TRUE(throws_with([&] { raw::max_pool2d(raw::zeros({16}), 2); },
                          "max_pool2d: input must be 3-D (C,H,W) or 4-D (N,C,H,W), got [16]"));
  EXPECT_TRUE(throws_with([&] { raw::max_pool2d(x, 3, 1, 2); },
                          "max_pool2d: padding (2, 2) must be at most half of kernel_size (3, 3)"));
  EXPECT_TRUE(throws_with([&] { raw::max_pool2d(x, 5); },
                          "max_pool2d: input [1, 1, 4, 4] is too small for kernel_size (5, 5)"));
  EXPECT_TRUE(throws_with([&] { raw::max_pool2d(x, 2, Int2(0)); }, "max_pool2d: stride must be positive, got (0, 0)"));
  EXPECT_TRUE(throws_with([&] { raw::max_pool2d(raw::zeros({1, 0, 4, 4}), 2); },
                          "expected non-empty channel and spatial dims"));
  auto r = raw::max_pool2d(x, 2);
  EXPECT_TRUE(throws_with([&] { raw::max_pool2d_backward(r.output, r.output, {1, 1, 4, 4}); },
                          "max_pool2d_backward: expected int64 indices, got float32"));
  Tensor bad = raw::full({1, 1, 2, 2}, 16, TensorOptions(kInt64));
  EXPECT_TRUE(throws_with<std::out_of_range>([&] { raw::max_pool2d_backward(r.output, bad, {1, 1, 4, 4}); },
                                             "index 16 at output element 0 is outside its input plane of 4 x 4"));
  EXPECT_TRUE(throws_with([&] { raw::max_pool2d_backward(raw::zeros({1, 1, 3, 2}), r.indices, {1, 1, 4, 4}); },
                          "max_pool2d_backward: expected grad_output of shape [1, 1, 2, 2], got [1, 1, 3, 2]"));
}

// Average pooling from the definition: the window's taps are counted in the padded input (for
// count_include_pad) and in the input, independently of the kernel's clipping arithmetic.
std::vector<double> naive_avg_pool(const PoolCase& c, bool include_pad, int64_t divisor_override,
                                   const std::vector<double>& x, int64_t* ho_out, int64_t* wo_out) {
  const int64_t H = c.in[c.in.size() - 2], W = c.in[c.in.size() - 1];
  const int64_t planes = shape_numel(c.in) / (H * W);
  const int64_t ho = naive_pool_size(H, c.kernel.h, c.stride.h, c.padding.h, 1, c.ceil_mode);
  const int64_t wo = naive_pool_size(W, c.kernel.w, c.stride.w, c.padding.w, 1, c.ceil_mode);
  *ho_out = ho;
  *wo_out = wo;
  std::vector<double> y;
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oy = 0; oy < ho; ++oy)
      for (int64_t ox = 0; ox < wo; ++ox) {
        double sum = 0;
        int64_t in_padded = 0, in_input = 0;
        for (int64_t i = 0; i < c.kernel.h; ++i)
          for (int64_t j = 0; j < c.kernel.w; ++j) {
            int64_t ih = oy * c.stride.h - c.padding.h + i, iw = ox * c.stride.w - c.padding.w + j;
            bool padded_h = ih >= -c.padding.h && ih < H + c.padding.h;
            bool padded_w = iw >= -c.padding.w && iw < W + c.padding.w;
            if (padded_h && padded_w) ++in_padded;
            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
            ++in_input;
            sum += x[p * H * W + ih * W + iw];
          }
        int64_t div = divisor_override != 0 ? divisor_override : include_pad ? in_padded : in_input;
        y.push_back(in_input == 0 ? 0.0 : sum / static_cast<double>(div));
      }
  return y;
}

TEST(AvgPool2d, MatchesNaiveForEveryCountingRule) {
  const std::vector<PoolCase> cases = {
      {{2, 3, 8, 8}, 2, 2, 0, 1, false},
      {{2, 3, 9, 7}, 3, 2, 1, 1, true},
      {{1, 2, 10, 9}, {3, 2}, {2, 1}, {1, 1}, 1, false},
      {{3, 7, 6}, {4, 2}, {3, 3}, {2, 1}, 1, true},
  };
  uint32_t seed = 300;
  for (const PoolCase& c : cases) {
    std::vector<double> x = random_values(shape_numel(c.in), seed++);
    for (bool include_pad : {true, false}) {
      for (int64_t divisor : {0, 3}) {
        SCOPED_TRACE(shape_str(c.in) + " include_pad " + std::to_string(include_pad) + " divisor " +
                     std::to_string(divisor));
        int64_t ho, wo;
        std::vector<double> ref = naive_avg_pool(c, include_pad, divisor, x, &ho, &wo);
        std::optional<int64_t> div = divisor != 0 ? std::optional<int64_t>(divisor) : std::nullopt;
        Tensor y = raw::avg_pool2d(from(x, c.in), c.kernel, c.stride, c.padding, c.ceil_mode, include_pad, div);
        Shape expected = c.in;
        expected[expected.size() - 2] = ho;
        expected[expected.size() - 1] = wo;
        EXPECT_TRUE(all_close(y, from(ref, expected), 1e-12, 1e-12));
        Tensor y32 = raw::avg_pool2d(from(x, c.in, kFloat32), c.kernel, c.stride, c.padding, c.ceil_mode, include_pad, div);
        EXPECT_TRUE(all_close(y32, from(ref, expected), 1e-6, 1e-6));
        // The backward is linear in grad_output: compare with finite differences of the forward.
        Tensor xt = from(x, c.in), gy = random_tensor(expected, seed++);
        Tensor gx = raw::avg_pool2d_backward(gy, c.in, c.kernel, c.stride, c.padding, c.ceil_mode, include_pad, div);
        auto loss = [&] {
          return raw::sum(raw::mul(raw::avg_pool2d(xt, c.kernel, c.stride, c.padding, c.ceil_mode, include_pad, div), gy))
              .item();
        };
        EXPECT_TRUE(all_close(gx, from(numeric_grad(xt, loss), c.in), 1e-6, 1e-8));
      }
    }
  }
}

TEST(AvgPool2d, Errors) {
  Tensor x = raw::zeros({1, 1, 4, 4});
  EXPECT_TRUE(throws_with([&] { raw::avg_pool2d(x, 2, std::nullopt, 0, false, true, 0); },
                          "avg_pool2d: divisor_override must not be zero"));
  EXPECT_TRUE(throws_with([&] { raw::avg_pool2d(x, 2, std::nullopt, 2); },
                          "avg_pool2d: padding (2, 2) must be at most half of kernel_size (2, 2)"));
  EXPECT_TRUE(throws_with([&] { raw::avg_pool2d_backward(raw::zeros({1, 1, 3, 3}), {1, 1, 4, 4}, 2); },
                          "avg_pool2d_backward: expected grad_output of shape [1, 1, 2, 2], got [1, 1, 3, 3]"));
}

std::vector<double> naive_adaptive(const Shape& in, Int2 out, const std::vector<double>& x) {
  const int64_t H = in[in.size() - 2], W = in[in.size() - 1], planes = shape_numel(in) / (H * W);
  std::vector<double> y;
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oy = 0; oy < out.h; ++oy)
      for (int64_t ox = 0; ox < out.w; ++ox) {
        auto h0 = static_cast<int64_t>(std::floor(static_cast<double>(oy) * H / out.h));
        auto h1 = static_cast<int64_t>(std::ceil(static_cast<double>(oy + 1) * H / out.h));
        auto w0 = static_cast<int64_t>(std::floor(static_cast<double>(ox) * W / out.w));
        auto w1 = static_cast<int64_t>(std::ceil(static_cast<double>(ox + 1) * W / out.w));
        double sum = 0;
        for (int64_t ih = h0; ih < h1; ++ih)
          for (int64_t iw = w0; iw < w1; ++iw) sum += x[p * H * W + ih * W + iw];
        y.push_back(sum / static_cast<double>((h1 - h0) * (w1 - w0)));
      }
  return y;
}

TEST(AdaptiveAvgPool2d, MatchesNaiveAndFiniteDifferences) {
  const std::vector<std::pair<Shape, Int2>> cases = {
      {{2, 3, 8, 8}, 1},        // global average pooling
      {{2, 3, 10, 7}, {3, 4}},  // uneven, overlapping windows
      {{2, 5, 3}, {7, 5}},      // more outputs than inputs
      {{1, 2, 6, 6}, {6, 6}},   // identity
  };
  uint32_t seed = 400;
  for (const auto& [in, out] : cases) {
    SCOPED_TRACE(shape_str(in));
    std::vector<double> x = random_values(shape_numel(in), seed++);
    Shape expected = in;
    expected[expected.size() - 2] = out.h;
    expected[expected.size() - 1] = out.w;
    Tensor y = raw::adaptive_avg_pool2d(from(x, in), out);
    EXPECT_TRUE(all_close(y, from(naive_adaptive(in, out, x), expected), 1e-12, 1e-12));
    Tensor xt = from(x, in), gy = random_tensor(expected, seed++);
    Tensor gx = raw::adaptive_avg_pool2d_backward(gy, in);
    auto loss = [&] { return raw::sum(raw::mul(raw::adaptive_avg_pool2d(xt, out), gy)).item(); };
    EXPECT_TRUE(all_close(gx, from(numeric_grad(xt, loss), in), 1e-6, 1e-8));
  }
  EXPECT_TRUE(throws_with([&] { raw::adaptive_avg_pool2d(raw::zeros({1, 2, 3, 3}), {-1, 2}); },
                          "adaptive_avg_pool2d: output_size must be non-negative, got (-1, 2)"));
}

// ---------------------------------------------------------------------------------------------
// Batch norm against the formulas computed here in double.

struct NaiveBn {
  std::vector<double> y, mean, invstd, running_mean, running_var;
};

NaiveBn naive_batch_norm(const Shape& shape, const std::vector<double>& x, const std::vector<double>& w,
                         const std::vector<double>& b, std::vector<double> rm, std::vector<double> rv, bool training,
                         double momentum, double eps) {
  const int64_t n = shape[0], c = shape[1], s = shape_numel(shape) / (n * c), m = n * s;
  NaiveBn r;
  r.y.resize(x.size());
  for (int64_t ch = 0; ch < c; ++ch) {
    double mean = 0, var = 0;
    if (training) {
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < s; ++j) mean += x[(i * c + ch) * s + j];
      mean /= m;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < s; ++j) var += std::pow(x[(i * c + ch) * s + j] - mean, 2);
      rm[ch] = (1 - momentum) * rm[ch] + momentum * mean;
      rv[ch] = (1 - momentum) * rv[ch] + momentum * var / (m - 1);
      var /= m;
    } else {
      mean = rm[ch];
      var = rv[ch];
    }
    const double invstd = 1 / std::sqrt(var + eps);
    r.mean.push_back(mean);
    r.invstd.push_back(invstd);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < s; ++j) {
        const int64_t k = (i * c + ch) * s + j;
        r.y[k] = (x[k] - mean) * invstd * w[ch] + b[ch];
      }
  }
  r.running_mean = rm;
  r.running_var = rv;
  return r;
}

TEST(BatchNorm, TrainingNormalizesWithBatchStatisticsAndUpdatesRunningStats) {
  for (const Shape& shape : {Shape{4, 3, 5, 6}, Shape{6, 5}, Shape{2, 4, 3, 2, 2}}) {
    SCOPED_TRACE(shape_str(shape));
    const int64_t c = shape[1];
    std::vector<double> x = random_values(shape_numel(shape), 500, -2, 5);  // |mean| > std
    std::vector<double> w = random_values(c, 501), b = random_values(c, 502);
    std::vector<double> rm = random_values(c, 503), rv = random_values(c, 504, 0.5, 2);
    NaiveBn ref = naive_batch_norm(shape, x, w, b, rm, rv, true, 0.3, 1e-3);
    for (DType dt : {kFloat64, kFloat32}) {
      const double tol = dt == kFloat64 ? 1e-12 : 1e-5;
      Tensor running_mean = from(rm, {c}, dt), running_var = from(rv, {c}, dt);
      const uint32_t version = running_mean.version();
      auto r = raw::batch_norm(from(x, shape, dt), from(w, {c}, dt), from(b, {c}, dt), running_mean, running_var,
                               true, 0.3, 1e-3);
      EXPECT_TRUE(all_close(r.output, from(ref.y, shape), tol, tol));
      EXPECT_TRUE(all_close(r.save_mean, from(ref.mean, {c}), tol, tol));
      EXPECT_TRUE(all_close(r.save_invstd, from(ref.invstd, {c}), tol, tol));
      EXPECT_TRUE(all_close(running_mean, from(ref.running_mean, {c}), tol, tol));
      EXPECT_TRUE(all_close(running_var, from(ref.running_var, {c}), tol, tol));  // unbiased
      EXPECT_GT(running_mean.version(), version);
    }
  }
}

TEST(BatchNorm, EvaluationUsesRunningStatsAndLeavesThemAlone) {
  const Shape shape{3, 4, 2, 5};
  std::vector<double> x = random_values(shape_numel(shape), 510);
  std::vector<double> w = random_values(4, 511), b = random_values(4, 512);
  std::vector<double> rm = random_values(4, 513), rv = random_values(4, 514, 0.5, 2);
  NaiveBn ref = naive_batch_norm(shape, x, w, b, rm, rv, false, 0.1, 1e-5);
  Tensor running_mean = from(rm, {4}), running_var = from(rv, {4});
  auto r = raw::batch_norm(from(x, shape), from(w, {4}), from(b, {4}), running_mean, running_var, false);
  EXPECT_TRUE(all_close(r.output, from(ref.y, shape), 1e-12, 1e-12));
  EXPECT_TRUE(all_close(r.save_mean, from(rm, {4}), 0, 0));
  EXPECT_TRUE(all_close(r.save_invstd, from(ref.invstd, {4}), 1e-14, 0));
  EXPECT_EQ(values(running_mean), rm);
  EXPECT_EQ(values(running_var), rv);
}

TEST(BatchNorm, WithoutAffineOrRunningStatsAndWithNonContiguousRunningStats) {
  const Shape shape{5, 3, 4};
  std::vector<double> x = random_values(shape_numel(shape), 520);
  std::vector<double> ones(3, 1.0), zeros(3, 0.0);
  NaiveBn ref = naive_batch_norm(shape, x, ones, zeros, zeros, ones, true, 0.1, 1e-5);
  auto r = raw::batch_norm(from(x, shape), Tensor(), Tensor(), Tensor(), Tensor(), true);
  EXPECT_TRUE(all_close(r.output, from(ref.y, shape), 1e-12, 1e-12));
  // running stats viewed with stride 2: the update must land in the viewed elements
  Tensor storage = raw::zeros({6}, kFloat64);
  Tensor rm = raw::slice(storage, 0, 0, 6, 2);
  Tensor rv = raw::ones({3}, kFloat64);
  raw::batch_norm(from(x, shape), Tensor(), Tensor(), rm, rv, true);
  EXPECT_TRUE(all_close(rm, from(ref.running_mean, {3}), 1e-12, 1e-12));
  EXPECT_EQ(values(storage)[1], 0.0);
}

TEST(BatchNorm, BackwardMatchesFiniteDifferences) {
  const Shape shape{3, 2, 3, 2};
  for (bool training : {true, false}) {
    SCOPED_TRACE(training ? "training" : "evaluation");
    Tensor x = random_tensor(shape, 530), w = random_tensor({2}, 531), b = random_tensor({2}, 532);
    Tensor rm = random_tensor({2}, 533), rv = raw::add(raw::abs(random_tensor({2}, 534)), 0.5);
    Tensor r = random_tensor(shape, 535);
    auto fwd = raw::batch_norm(x, w, b, raw::clone(rm), raw::clone(rv), training, 0.1, 1e-3);
    auto grads = raw::batch_norm_backward(r, x, w, fwd.save_mean, fwd.save_invstd, training);
    auto loss = [&] {
      return raw::sum(raw::mul(raw::batch_norm(x, w, b, raw::clone(rm), raw::clone(rv), training, 0.1, 1e-3).output, r))
          .item();
    };
    EXPECT_TRUE(all_close(grads.grad_input, from(numeric_grad(x, loss), shape), 1e-6, 1e-7));
    EXPECT_TRUE(all_close(grads.grad_weight, from(numeric_grad(w, loss), {2}), 1e-6, 1e-7));
    EXPECT_TRUE(all_close(grads.grad_bias, from(numeric_grad(b, loss), {2}), 1e-6, 1e-7));
    auto masked = raw::batch_norm_backward(r, x, w, fwd.save_mean, fwd.save_invstd, training, {false, true, false});
    EXPECT_FALSE(masked.grad_input.defined());
    EXPECT_FALSE(masked.grad_bias.defined());
    EXPECT_TRUE(all_close(masked.grad_weight, grads.grad_weight, 0, 0));
  }
}

TEST(BatchNorm, Errors) {
  Tensor w = raw::ones({3});
  EXPECT_TRUE(throws_with([&] { raw::batch_norm(raw::zeros({1, 3}), w, w, Tensor(), Tensor(), true); },
                          "batch_norm: expected more than 1 value per channel when training, got input of shape [1, 3]"));
  EXPECT_TRUE(throws_with([&] { raw::batch_norm(raw::zeros({2, 3}), w, w, Tensor(), Tensor(), false); },
                          "batch_norm: running_mean and running_var are required in evaluation mode"));
  EXPECT_TRUE(throws_with([&] { raw::batch_norm(raw::zeros({2, 4, 5}), w, w, Tensor(), Tensor(), true); },
                          "batch_norm: expected weight of shape [4] (one per channel of input [2, 4, 5]), got [3]"));
  EXPECT_TRUE(throws_with([&] { raw::batch_norm(raw::zeros({6}), w, w, Tensor(), Tensor(), true); },
                          "batch_norm: input must have at least 2 dims (N,C,...), got [6]"));
  EXPECT_TRUE(throws_with([&] { raw::batch_norm(raw::zeros({2, 3}, kFloat64), w, w, Tensor(), Tensor(), true); },
                          "batch_norm: expected weight as float64 on cpu like input, got float32 on cpu"));
}

// ---------------------------------------------------------------------------------------------
// CUDA against the CPU (skipped without a GPU).

Tensor to_cuda(const Tensor& t, DType dt) { return raw::to(t, Device::cuda(0), dt); }
Tensor to_cpu64(const Tensor& t) { return raw::to(t, kCPU, kFloat64); }

TEST(Conv2d, MatchesCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  uint32_t seed = 600;
  for (const ConvCase& k : conv_cases()) {
    ConvDims d = dims(k);
    Tensor x = random_tensor(x_shape(k), seed++), w = random_tensor(w_shape(k), seed++);
    Tensor b = k.bias ? random_tensor({k.o}, seed++) : Tensor();
    Tensor gy = random_tensor({k.n, k.o, d.ho, d.wo}, seed++);
    Tensor y_cpu = raw::conv2d(x, w, b, k.stride, k.padding, k.dilation, k.groups);
    raw::Conv2dParams p{k.stride, k.padding, k.dilation, k.groups};
    auto g_cpu = raw::conv2d_backward(gy, x, w, p);
    // float64 is exact up to summation order; float32 may use TF32 tensor cores (10-bit mantissa).
    for (DType dt : {kFloat64, kFloat32, kFloat16}) {
      SCOPED_TRACE(name(k) + " " + dtype_name(dt));
      const double tol = dt == kFloat64 ? 1e-10 : dt == kFloat32 ? 2e-2 : 6e-2;
      Tensor y = raw::conv2d(to_cuda(x, dt), to_cuda(w, dt), b.defined() ? to_cuda(b, dt) : Tensor(), k.stride,
                             k.padding, k.dilation, k.groups);
      EXPECT_TRUE(all_close(to_cpu64(y), y_cpu, tol, tol));
      auto g = raw::conv2d_backward(to_cuda(gy, dt), to_cuda(x, dt), to_cuda(w, dt), p);
      EXPECT_TRUE(all_close(to_cpu64(g.grad_input), g_cpu.grad_input, tol, tol));
      EXPECT_TRUE(all_close(to_cpu64(g.grad_weight), g_cpu.grad_weight, tol, tol * 10));
      EXPECT_TRUE(all_close(to_cpu64(g.grad_bias), g_cpu.grad_bias, tol, tol * 10));
      auto masked = raw::conv2d_backward(to_cuda(gy, dt), to_cuda(x, dt), to_cuda(w, dt), p, {false, true, false});
      EXPECT_FALSE(masked.grad_input.defined());
      EXPECT_TRUE(all_close(to_cpu64(masked.grad_weight), g_cpu.grad_weight, tol, tol * 10));
    }
  }
  EXPECT_TRUE(throws_with([&] { raw::conv2d(to_cuda(raw::zeros({1, 3, 8, 8}), kFloat32), raw::zeros({6, 3, 5, 5})); },
                          "conv2d: expected weight on cuda:0 like input, got cpu"));
}

// cuBLAS and cuDNN handles are per thread and go back to a pool when a thread exits
// (kernels/cuda/handle_pool.h): threads one after another take over the same handles, threads at
// once get their own, and every result stays right.
TEST(Conv2d, HandlesPassFromThreadToThread_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  Tensor x = random_tensor({4, 3, 12, 12}, 900), w = random_tensor({5, 3, 3, 3}, 901);
  Tensor a = random_tensor({33, 17}, 902), b = random_tensor({17, 9}, 903);
  const Tensor y_cpu = raw::conv2d(x, w), m_cpu = raw::mm(a, b);
  auto run = [&]() -> ::testing::AssertionResult {
    Tensor y = raw::conv2d(to_cuda(x, kFloat32), to_cuda(w, kFloat32));
    Tensor m = raw::mm(to_cuda(a, kFloat32), to_cuda(b, kFloat32));
    auto conv_ok = all_close(to_cpu64(y), y_cpu, 2e-2, 2e-2);
    if (!conv_ok) return conv_ok << " (conv2d)";
    auto mm_ok = all_close(to_cpu64(m), m_cpu, 2e-2, 2e-2);
    if (!mm_ok) return mm_ok << " (mm)";
    return ::testing::AssertionSuccess();
  };
  for (int i = 0; i < 6; ++i) {
    ::testing::AssertionResult ok = ::testing::AssertionSuccess();
    std::thread([&] { ok = run(); }).join();
    EXPECT_TRUE(ok) << "thread " << i << ", one after another";
  }
  std::vector<::testing::AssertionResult> ok(4, ::testing::AssertionSuccess());
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back([&, i] { ok[i] = run(); });
  for (auto& t : threads) t.join();
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(ok[i]) << "thread " << i << ", at once";
}

TEST(Pooling, MatchesCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  uint32_t seed = 700;
  for (const PoolCase& c : pool_cases()) {
    Tensor x = random_tensor(c.in, seed++);
    auto r_cpu = raw::max_pool2d(x, c.kernel, c.stride, c.padding, c.dilation, c.ceil_mode);
    Tensor gy = random_tensor(r_cpu.output.sizes(), seed++);
    Tensor gx_cpu = raw::max_pool2d_backward(gy, r_cpu.indices, c.in);
    for (DType dt : {kFloat64, kFloat32}) {
      SCOPED_TRACE(shape_str(c.in) + " " + dtype_name(dt));
      auto r = raw::max_pool2d(to_cuda(x, dt), c.kernel, c.stride, c.padding, c.dilation, c.ceil_mode);
      EXPECT_TRUE(all_close(to_cpu64(r.output), r_cpu.output, 1e-6, 0));
      EXPECT_TRUE(raw::equal(raw::to(r.indices, kCPU, kInt64), r_cpu.indices));
      Tensor gx = raw::max_pool2d_backward(to_cuda(gy, dt), r.indices, c.in);
      EXPECT_TRUE(all_close(to_cpu64(gx), gx_cpu, 1e-6, 1e-6));
      for (bool include_pad : {true, false}) {
        if (c.dilation.h != 1 || c.dilation.w != 1) continue;
        Tensor a_cpu = raw::avg_pool2d(x, c.kernel, c.stride, c.padding, c.ceil_mode, include_pad);
        Tensor a = raw::avg_pool2d(to_cuda(x, dt), c.kernel, c.stride, c.padding, c.ceil_mode, include_pad);
        EXPECT_TRUE(all_close(to_cpu64(a), a_cpu, 1e-6, 1e-6));
        Tensor ga_cpu = raw::avg_pool2d_backward(gy, c.in, c.kernel, c.stride, c.padding, c.ceil_mode, include_pad);
        Tensor ga = raw::avg_pool2d_backward(to_cuda(gy, dt), c.in, c.kernel, c.stride, c.padding, c.ceil_mode,
                                             include_pad);
        EXPECT_TRUE(all_close(to_cpu64(ga), ga_cpu, 1e-6, 1e-6));
      }
      for (Int2 out : {Int2(1), Int2(3, 2), Int2(9, 11)}) {
        Tensor ad_cpu = raw::adaptive_avg_pool2d(x, out);
        EXPECT_TRUE(all_close(to_cpu64(raw::adaptive_avg_pool2d(to_cuda(x, dt), out)), ad_cpu, 1e-6, 1e-6));
        Tensor gout = random_tensor(ad_cpu.sizes(), seed++);
        EXPECT_TRUE(all_close(to_cpu64(raw::adaptive_avg_pool2d_backward(to_cuda(gout, dt), c.in)),
                              raw::adaptive_avg_pool2d_backward(gout, c.in), 1e-6, 1e-6));
      }
    }
  }
}

TEST(BatchNorm, MatchesCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  for (const Shape& shape : {Shape{4, 3, 5, 6}, Shape{6, 5}, Shape{64, 8, 33, 17}}) {
    const int64_t c = shape[1];
    Tensor x = random_tensor(shape, 800), w = random_tensor({c}, 801), b = random_tensor({c}, 802);
    Tensor gy = random_tensor(shape, 803);
    for (bool training : {true, false}) {
      Tensor rm = random_tensor({c}, 804), rv = raw::add(raw::abs(random_tensor({c}, 805)), 0.5);
      Tensor rm_cpu = raw::clone(rm), rv_cpu = raw::clone(rv);
      auto f_cpu = raw::batch_norm(x, w, b, rm_cpu, rv_cpu, training, 0.2, 1e-4);
      auto g_cpu = raw::batch_norm_backward(gy, x, w, f_cpu.save_mean, f_cpu.save_invstd, training);
      for (DType dt : {kFloat64, kFloat32}) {
        SCOPED_TRACE(shape_str(shape) + (training ? " training " : " eval ") + dtype_name(dt));
        const double tol = dt == kFloat64 ? 1e-10 : 1e-4;
        Tensor rm_gpu = to_cuda(rm, dt), rv_gpu = to_cuda(rv, dt);
        auto f = raw::batch_norm(to_cuda(x, dt), to_cuda(w, dt), to_cuda(b, dt), rm_gpu, rv_gpu, training, 0.2, 1e-4);
        EXPECT_TRUE(all_close(to_cpu64(f.output), f_cpu.output, tol, tol));
        EXPECT_TRUE(all_close(to_cpu64(f.save_mean), f_cpu.save_mean, tol, tol));
        EXPECT_TRUE(all_close(to_cpu64(f.save_invstd), f_cpu.save_invstd, tol, tol));
        EXPECT_TRUE(all_close(to_cpu64(rm_gpu), rm_cpu, tol, tol));
        EXPECT_TRUE(all_close(to_cpu64(rv_gpu), rv_cpu, tol, tol));
        auto g = raw::batch_norm_backward(to_cuda(gy, dt), to_cuda(x, dt), to_cuda(w, dt), f.save_mean, f.save_invstd,
                                          training);
        EXPECT_TRUE(all_close(to_cpu64(g.grad_input), g_cpu.grad_input, tol, tol));
        EXPECT_TRUE(all_close(to_cpu64(g.grad_weight), g_cpu.grad_weight, tol, tol * 100));
        EXPECT_TRUE(all_close(to_cpu64(g.grad_bias), g_cpu.grad_bias, tol, tol * 100));
      }
    }
  }
}

// float16/bfloat16 on the CPU: the float32 kernels on the widened operands, rounded once, so the
// results equal the rounded float32 results bit for bit.
TEST(LowPrecisionCpu, ConvAndPoolingRoundTheFloat32Result) {
  auto low = [](const Tensor& t, DType dt) { return raw::to(t, kCPU, dt); };
  auto f32 = [](const Tensor& t) { return raw::to(t, kCPU, kFloat32); };
  for (DType dt : {kFloat16, kBFloat16}) {
    SCOPED_TRACE(dtype_name(dt));
    Tensor x = low(random_tensor({2, 3, 12, 12}, 71, kFloat32), dt), w = low(random_tensor({6, 3, 5, 5}, 72, kFloat32), dt);
    Tensor b = low(random_tensor({6}, 73, kFloat32), dt), gy = low(random_tensor({2, 6, 10, 10}, 74, kFloat32), dt);
    Tensor y = raw::conv2d(x, w, b, 1, 1);
    EXPECT_EQ(y.dtype(), dt);
    EXPECT_TRUE(all_close(y, low(raw::conv2d(f32(x), f32(w), f32(b), 1, 1), dt), 0, 0));
    raw::Conv2dGrads g = raw::conv2d_backward(gy, x, w, {1, 1, 1, 1});
    raw::Conv2dGrads g32 = raw::conv2d_backward(f32(gy), f32(x), f32(w), {1, 1, 1, 1});
    EXPECT_EQ(g.grad_weight.dtype(), dt);
    EXPECT_TRUE(all_close(g.grad_input, low(g32.grad_input, dt), 0, 0));
    EXPECT_TRUE(all_close(g.grad_weight, low(g32.grad_weight, dt), 0, 0));
    EXPECT_TRUE(all_close(g.grad_bias, low(g32.grad_bias, dt), 0, 0));

    raw::MaxPool2dResult mp = raw::max_pool2d(x, 2), mp32 = raw::max_pool2d(f32(x), 2);
    EXPECT_EQ(mp.output.dtype(), dt);
    EXPECT_TRUE(all_close(mp.output, low(mp32.output, dt), 0, 0));
    Tensor gp = low(random_tensor({2, 3, 6, 6}, 75, kFloat32), dt);
    Tensor gx = raw::max_pool2d_backward(gp, mp.indices, x.sizes());
    EXPECT_EQ(gx.dtype(), dt);
    EXPECT_TRUE(all_close(gx, low(raw::max_pool2d_backward(f32(gp), mp32.indices, x.sizes()), dt), 0, 0));
    EXPECT_TRUE(all_close(raw::avg_pool2d(x, 2), low(raw::avg_pool2d(f32(x), 2), dt), 0, 0));
    EXPECT_TRUE(all_close(raw::avg_pool2d_backward(gp, x.sizes(), 2, std::nullopt, 0, false, true),
                          low(raw::avg_pool2d_backward(f32(gp), x.sizes(), 2, std::nullopt, 0, false, true), dt), 0, 0));
    EXPECT_TRUE(all_close(raw::adaptive_avg_pool2d(x, {3, 3}), low(raw::adaptive_avg_pool2d(f32(x), {3, 3}), dt), 0, 0));
    Tensor ga = low(random_tensor({2, 3, 3, 3}, 76, kFloat32), dt);
    EXPECT_TRUE(all_close(raw::adaptive_avg_pool2d_backward(ga, x.sizes()),
                          low(raw::adaptive_avg_pool2d_backward(f32(ga), x.sizes()), dt), 0, 0));
  }
}

TEST(BatchNorm, HalfInputsKeepStatisticsInFloat32_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  const Shape shape{8, 4, 9, 7};
  Tensor x = random_tensor(shape, 810), w = random_tensor({4}, 811), b = random_tensor({4}, 812);
  Tensor gy = random_tensor(shape, 813);
  Tensor rm = random_tensor({4}, 814), rv = raw::add(raw::abs(random_tensor({4}, 815)), 0.5);
  // The float64 CPU reference sees the 16-bit inputs' values.
  for (DType dt : {kFloat16, kBFloat16}) {
    SCOPED_TRACE(dtype_name(dt));
    Tensor xr = to_cpu64(to_cuda(x, dt)), gyr = to_cpu64(to_cuda(gy, dt));
    Tensor rm_cpu = raw::clone(rm), rv_cpu = raw::clone(rv);
    auto f_cpu = raw::batch_norm(xr, w, b, rm_cpu, rv_cpu, true, 0.2, 1e-4);
    auto g_cpu = raw::batch_norm_backward(gyr, xr, w, f_cpu.save_mean, f_cpu.save_invstd, true);
    const double tol = dt == kFloat16 ? 1e-2 : 5e-2;
    // Mixed precision (PyTorch's autocast case): float32 weight, bias and running statistics.
    Tensor rm_gpu = to_cuda(rm, kFloat32), rv_gpu = to_cuda(rv, kFloat32);
    auto f = raw::batch_norm(to_cuda(x, dt), to_cuda(w, kFloat32), to_cuda(b, kFloat32), rm_gpu, rv_gpu, true, 0.2, 1e-4);
    EXPECT_EQ(f.output.dtype(), dt);
    EXPECT_EQ(f.save_mean.dtype(), kFloat32);
    EXPECT_EQ(f.save_invstd.dtype(), kFloat32);
    EXPECT_EQ(rm_gpu.dtype(), kFloat32);
    EXPECT_TRUE(all_close(to_cpu64(f.output), f_cpu.output, tol, tol));
    // Statistics computed and kept in float32: far tighter than the 16-bit output.
    EXPECT_TRUE(all_close(to_cpu64(f.save_mean), f_cpu.save_mean, 1e-5, 1e-5));
    EXPECT_TRUE(all_close(to_cpu64(f.save_invstd), f_cpu.save_invstd, 1e-5, 1e-5));
    EXPECT_TRUE(all_close(to_cpu64(rm_gpu), rm_cpu, 1e-5, 1e-5));
    EXPECT_TRUE(all_close(to_cpu64(rv_gpu), rv_cpu, 1e-5, 1e-5));
    auto g = raw::batch_norm_backward(to_cuda(gy, dt), to_cuda(x, dt), to_cuda(w, kFloat32), f.save_mean, f.save_invstd,
                                      true);
    EXPECT_EQ(g.grad_weight.dtype(), kFloat32);
    EXPECT_TRUE(all_close(to_cpu64(g.grad_input), g_cpu.grad_input, tol, tol));
    EXPECT_TRUE(all_close(to_cpu64(g.grad_weight), g_cpu.grad_weight, 1e-4, 1e-3));
    EXPECT_TRUE(all_close(to_cpu64(g.grad_bias), g_cpu.grad_bias, 1e-4, 1e-3));
    // All-16-bit parameters: the saved statistics are still float32.
    Tensor rm16 = to_cuda(rm, dt), rv16 = to_cuda(rv, dt);
    auto h = raw::batch_norm(to_cuda(x, dt), to_cuda(w, dt), to_cuda(b, dt), rm16, rv16, true, 0.2, 1e-4);
    EXPECT_EQ(h.save_mean.dtype(), kFloat32);
    EXPECT_EQ(rm16.dtype(), dt);
    EXPECT_TRUE(all_close(to_cpu64(h.output), f_cpu.output, tol, tol));
    // Float64 parameters with a 16-bit input are neither.
    EXPECT_TRUE(throws_with([&] { raw::batch_norm(to_cuda(x, dt), to_cuda(w, kFloat64), Tensor(), Tensor(), Tensor(), true); },
                            "batch_norm: expected weight as"));
  }
}

}  // namespace
}  // namespace colony
