// F::interpolate, F::pixel_shuffle, F::pixel_unshuffle (nn/functional_upsample.cc) and their modules
// (nn/upsample.h): outputs and gradients against torch in float64 and outputs in float32
// (tests/nn/upsample_golden.py writes upsample_golden.h from the same closed-form input), gradchecks,
// dtypes, autocast, the modules' options and printing, and every refusal.
#include "nn/upsample.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "autograd/autocast.h"
#include "autograd/ops.h"
#include "nn/any_module.h"
#include "nn/interpolate_path.h"
#include "nn/nn.h"
#include "tests/autograd/gradcheck.h"
#include "tests/nn/upsample_golden.h"
#include "tests/test_util.h"

namespace colony::nn {
namespace {

using colony::testing::throws_with;
using Opts = F::InterpolateFuncOptions;

Tensor wave(const Shape& shape, double a, double b, DType dtype = kFloat64) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = 2.0 * std::sin(a * static_cast<double>(i) + b);
  return raw::to(raw::from_vector(v, shape, TensorOptions(kFloat64)), kCPU, dtype);
}

using Fn = std::function<Tensor(const Tensor&)>;
Fn interp(Opts o) {
  return [o](const Tensor& x) { return F::interpolate(x, o); };
}
std::vector<int64_t> sz(std::initializer_list<int64_t> v) { return v; }
std::vector<double> sf(std::initializer_list<double> v) { return v; }

// upsample_golden.py's CASES, in its order.
const std::vector<std::pair<std::string, std::pair<Shape, Fn>>>& cases() {
  static const std::vector<std::pair<std::string, std::pair<Shape, Fn>>> all = {
      {"nearest_1d_size", {{1, 2, 5}, interp(Opts().size(sz({8})))}},
      {"nearest_1d_scale2", {{1, 2, 5}, interp(Opts().scale_factor(sf({2.0})))}},
      {"nearest_1d_down", {{1, 2, 7}, interp(Opts().size(sz({3})))}},
      {"nearest_1d_scale1.7", {{1, 2, 5}, interp(Opts().scale_factor(sf({1.7})))}},
      {"nearest_1d_scale1.7_recompute", {{1, 2, 5}, interp(Opts().scale_factor(sf({1.7})).recompute_scale_factor(true))}},
      {"nearest_2d_size", {{2, 2, 5, 7}, interp(Opts().size(sz({3, 10})))}},
      {"nearest_3d_scale2", {{1, 1, 3, 4, 5}, interp(Opts().scale_factor(sf({2.0})))}},
      {"nearest-exact_2d_size", {{2, 2, 5, 7}, interp(Opts().size(sz({3, 10})).mode("nearest-exact"))}},
      {"nearest-exact_2d_scale", {{1, 2, 5, 7}, interp(Opts().scale_factor(sf({1.5, 0.6})).mode("nearest-exact"))}},
      {"linear_size", {{2, 3, 6}, interp(Opts().size(sz({11})).mode("linear"))}},
      {"linear_size_ac", {{2, 3, 6}, interp(Opts().size(sz({11})).mode("linear").align_corners(true))}},
      {"linear_down", {{2, 3, 6}, interp(Opts().scale_factor(sf({0.5})).mode("linear"))}},
      {"linear_scale2.3", {{2, 3, 6}, interp(Opts().scale_factor(sf({2.3})).mode("linear"))}},
      {"linear_to1_ac", {{1, 1, 6}, interp(Opts().size(sz({1})).mode("linear").align_corners(true))}},
      {"bilinear_size", {{1, 2, 5, 6}, interp(Opts().size(sz({9, 4})).mode("bilinear"))}},
      {"bilinear_size_ac", {{1, 2, 5, 6}, interp(Opts().size(sz({9, 4})).mode("bilinear").align_corners(true))}},
      {"bilinear_scale2", {{1, 2, 5, 6}, interp(Opts().scale_factor(sf({2.0})).mode("bilinear"))}},
      {"bilinear_scale0.7", {{1, 2, 5, 6}, interp(Opts().scale_factor(sf({0.7})).mode("bilinear"))}},
      {"bilinear_aa_down", {{1, 2, 9, 11}, interp(Opts().size(sz({3, 4})).mode("bilinear").antialias(true))}},
      {"bilinear_aa_scale0.4", {{1, 2, 9, 11}, interp(Opts().scale_factor(sf({0.4})).mode("bilinear").antialias(true))}},
      {"bilinear_aa_ac",
       {{1, 2, 9, 11}, interp(Opts().size(sz({4, 5})).mode("bilinear").antialias(true).align_corners(true))}},
      {"bilinear_aa_up", {{1, 2, 4, 5}, interp(Opts().size(sz({7, 9})).mode("bilinear").antialias(true))}},
      {"bilinear_aa_mixed", {{1, 1, 8, 3}, interp(Opts().size(sz({3, 7})).mode("bilinear").antialias(true))}},
      {"bicubic_size", {{1, 2, 5, 6}, interp(Opts().size(sz({9, 4})).mode("bicubic"))}},
      {"bicubic_size_ac", {{1, 2, 5, 6}, interp(Opts().size(sz({9, 4})).mode("bicubic").align_corners(true))}},
      {"bicubic_scale2", {{1, 2, 5, 6}, interp(Opts().scale_factor(sf({2.0})).mode("bicubic"))}},
      {"bicubic_same", {{1, 2, 5, 6}, interp(Opts().size(sz({5, 6})).mode("bicubic"))}},
      {"bicubic_aa_down", {{1, 2, 9, 11}, interp(Opts().size(sz({3, 4})).mode("bicubic").antialias(true))}},
      {"bicubic_aa_up", {{1, 2, 4, 5}, interp(Opts().size(sz({7, 9})).mode("bicubic").antialias(true))}},
      {"trilinear_size", {{1, 2, 3, 4, 5}, interp(Opts().size(sz({5, 3, 7})).mode("trilinear"))}},
      {"trilinear_size_ac", {{1, 2, 3, 4, 5}, interp(Opts().size(sz({5, 3, 7})).mode("trilinear").align_corners(true))}},
      {"area_1d", {{1, 2, 7}, interp(Opts().size(sz({3})).mode("area"))}},
      {"area_2d", {{1, 2, 7, 9}, interp(Opts().size(sz({3, 4})).mode("area"))}},
      {"area_2d_scale", {{1, 2, 8, 6}, interp(Opts().scale_factor(sf({0.5})).mode("area"))}},
      {"area_3d", {{1, 1, 5, 6, 7}, interp(Opts().size(sz({2, 3, 4})).mode("area"))}},
      {"area_up", {{1, 1, 3, 2}, interp(Opts().size(sz({5, 5})).mode("area"))}},
      {"lanczos_down", {{1, 2, 9, 11}, interp(Opts().size(sz({3, 4})).mode("lanczos").antialias(true))}},
      {"lanczos_scale0.6", {{1, 2, 9, 11}, interp(Opts().scale_factor(sf({0.6})).mode("lanczos").antialias(true))}},
      {"lanczos_up", {{1, 2, 4, 5}, interp(Opts().size(sz({7, 9})).mode("lanczos").antialias(true))}},
      {"lanczos_mixed", {{1, 1, 8, 3}, interp(Opts().size(sz({3, 7})).mode("lanczos").antialias(true))}},
      {"lanczos_long", {{1, 1, 3, 300}, interp(Opts().size(sz({2, 70})).mode("lanczos").antialias(true))}},
      {"linear_long", {{1, 1, 300}, interp(Opts().size(sz({301})).mode("linear"))}},
      {"bicubic_long_aa", {{1, 1, 2, 300}, interp(Opts().size(sz({3, 40})).mode("bicubic").antialias(true))}},
      {"pixel_shuffle", {{2, 8, 3, 2}, [](const Tensor& x) { return F::pixel_shuffle(x, 2); }}},
      {"pixel_shuffle_5d", {{2, 1, 9, 2, 2}, [](const Tensor& x) { return F::pixel_shuffle(x, 3); }}},
      {"pixel_unshuffle", {{1, 3, 4, 6}, [](const Tensor& x) { return F::pixel_unshuffle(x, 2); }}},
  };
  return all;
}

const std::vector<double>& golden(const std::string& key) {
  const auto& g = colony::testing::upsample_golden();
  auto it = g.find(key);
  if (it == g.end()) throw std::runtime_error("no golden values for " + key);
  return it->second;
}

Shape golden_shape(const std::string& name) {
  Shape s;
  for (double v : golden(name + ".shape")) s.push_back(static_cast<int64_t>(v));
  return s;
}

// The weighted modes' two ways of resampling a dim (nn/interpolate_path.h), each forced in turn, and
// the automatic choice.
const std::vector<std::pair<const char*, F::ResamplePath>>& paths() {
  static const std::vector<std::pair<const char*, F::ResamplePath>> all = {
      {"automatic", F::ResamplePath::automatic}, {"matrix", F::ResamplePath::matrix}, {"kernel", F::ResamplePath::kernel}};
  return all;
}

TEST(Interpolate, MatchesTorchInFloat64) {
  for (const auto& [path_name, path] : paths())
  for (const auto& [name, c] : cases()) {
    SCOPED_TRACE(std::string(path_name) + " " + name);
    F::ForceResamplePath force(path);
    Tensor x = wave(c.first, 0.37, 0.1);
    x.requires_grad_(true);
    Tensor y = c.second(x);
    EXPECT_EQ(y.sizes(), golden_shape(name));
    EXPECT_EQ(y.dtype(), kFloat64);
    EXPECT_TRUE(colony::testing::matches_values(y, golden(name + ".out"), 1e-12)) << "output";
    colony::sum(colony::mul(y, wave(y.sizes(), 0.31, 0.2))).backward();
    EXPECT_TRUE(colony::testing::matches_values(x.grad(), golden(name + ".grad"), 1e-12)) << "gradient";
  }
}

// float32: the positions and weights are computed in float, as torch computes them, so a nearest
// index or a weight that differs in float from the double value still matches.
TEST(Interpolate, MatchesTorchInFloat32) {
  int checked = 0;
  for (const auto& [path_name, path] : paths())
  for (const auto& [name, c] : cases()) {
    const auto& g = colony::testing::upsample_golden();
    auto it = g.find(name + ".out32");
    if (it == g.end()) continue;
    SCOPED_TRACE(std::string(path_name) + " " + name);
    F::ForceResamplePath force(path);
    Tensor y = c.second(wave(c.first, 0.37, 0.1, kFloat32));
    EXPECT_EQ(y.dtype(), kFloat32);
    EXPECT_TRUE(colony::testing::matches_values(y, it->second, 2e-6));
    ++checked;
  }
  EXPECT_EQ(checked, 3 * 11);
}

TEST(Interpolate, Gradchecks) {
  const std::vector<std::pair<Shape, Opts>> checks = {
      {{1, 2, 4}, Opts().size(sz({7})).mode("linear")},
      {{1, 1, 3, 4}, Opts().size(sz({5, 3})).mode("bilinear").align_corners(true)},
      {{1, 1, 3, 4}, Opts().scale_factor(sf({1.5})).mode("bicubic")},
      {{1, 1, 7, 6}, Opts().size(sz({3, 2})).mode("bicubic").antialias(true)},
      {{1, 1, 2, 3, 3}, Opts().size(sz({3, 2, 4})).mode("trilinear")},
      {{1, 2, 5, 5}, Opts().size(sz({2, 3})).mode("area")},
      {{1, 2, 3, 3}, Opts().scale_factor(sf({2.0, 1.5})).mode("nearest")},
      {{1, 1, 8, 5}, Opts().size(sz({3, 7})).mode("lanczos").antialias(true)},
      {{2, 1, 9}, Opts().size(sz({4})).mode("linear")},
  };
  for (const auto& [path_name, path] : paths())
  for (const auto& [shape, o] : checks) {
    SCOPED_TRACE(std::string(path_name) + " " + o.mode());
    F::ForceResamplePath force(path);
    EXPECT_TRUE(colony::testing::gradcheck([o = o](const std::vector<Tensor>& x) { return F::interpolate(x[0], o); },
                                           {colony::testing::input(shape)}));
  }
  EXPECT_TRUE(colony::testing::gradcheck([](const std::vector<Tensor>& x) { return F::pixel_shuffle(x[0], 2); },
                                         {colony::testing::input({1, 8, 2, 3})}));
}

// Nearest modes move elements, so any dtype goes through unchanged; bfloat16 is interpolated in
// float32 and rounded once.
TEST(Interpolate, Dtypes) {
  Tensor ints = raw::arange(0, 6, 1, TensorOptions(kInt64)).reshape({1, 1, 2, 3});
  Tensor up = F::interpolate(ints, Opts().scale_factor(sf({2.0})));
  EXPECT_EQ(up.dtype(), kInt64);
  EXPECT_EQ(colony::testing::values(up),
            (std::vector<double>{0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 3, 3, 4, 4, 5, 5}));
  Tensor mask = raw::to(ints, kCPU, kBool);
  EXPECT_EQ(F::interpolate(mask, Opts().size(sz({3, 5})).mode("nearest-exact")).dtype(), kBool);

  Tensor x32 = wave({1, 2, 5, 6}, 0.37, 0.1, kFloat32);
  for (const auto& [path_name, path] : paths())
  for (DType half : {kBFloat16, kFloat16})
  for (const Opts& o : {Opts().size(sz({9, 4})).mode("bicubic"), Opts().size(sz({3, 7})).mode("lanczos").antialias(true)}) {
    SCOPED_TRACE(std::string(path_name) + " " + dtype_name(half) + " " + o.mode());
    F::ForceResamplePath force(path);
    Tensor y16 = F::interpolate(raw::to(x32, kCPU, half), o);
    EXPECT_EQ(y16.dtype(), half);
    Tensor expected = raw::to(F::interpolate(raw::to(raw::to(x32, kCPU, half), kCPU, kFloat32), o), kCPU, half);
    EXPECT_EQ(colony::testing::values(y16), colony::testing::values(expected));
  }
}

// A kernel-path gradient is the adjoint kernel's, not the dense product's: the same values as the
// matrix path's on a long image row and a tall column (both loops of each kernel), float64.
TEST(Interpolate, KernelPathGradientMatchesTheMatrixPath) {
  for (const Opts& o : {Opts().scale_factor(sf({2.0})).mode("bilinear"), Opts().scale_factor(sf({0.5})).mode("bicubic"),
                        Opts().scale_factor(sf({0.3})).mode("lanczos").antialias(true),
                        Opts().scale_factor(sf({0.45})).mode("bilinear").antialias(true)}) {
    SCOPED_TRACE(o.mode());
    std::vector<double> out[2], grad[2];
    for (int p = 0; p < 2; ++p) {
      F::ForceResamplePath force(p == 0 ? F::ResamplePath::matrix : F::ResamplePath::kernel);
      Tensor x = wave({2, 3, 70, 90}, 0.37, 0.1);
      x.requires_grad_(true);
      Tensor y = F::interpolate(x, o);
      colony::sum(colony::mul(y, wave(y.sizes(), 0.31, 0.2))).backward();
      out[p] = colony::testing::values(y);
      grad[p] = colony::testing::values(x.grad());
    }
    ASSERT_EQ(out[0].size(), out[1].size());
    ASSERT_EQ(grad[0].size(), grad[1].size());
    for (size_t i = 0; i < out[0].size(); ++i) ASSERT_NEAR(out[0][i], out[1][i], 1e-12) << i;
    for (size_t i = 0; i < grad[0].size(); ++i) ASSERT_NEAR(grad[0][i], grad[1][i], 1e-12) << i;
  }
}

// interpolate's autocast row: a bfloat16 input computes and returns float32, as torch's upsample ops.
TEST(Interpolate, AutocastRunsInFloat32) {
  Tensor x = raw::to(wave({1, 2, 3, 4}, 0.37, 0.1, kFloat32), kCPU, kBFloat16);
  AutocastGuard amp(DeviceType::CPU, kBFloat16);
  Tensor y = F::interpolate(x, Opts().scale_factor(sf({2.0})).mode("bilinear"));
  EXPECT_EQ(y.dtype(), kFloat32);
}

TEST(Interpolate, Refusals) {
  Tensor x3 = wave({1, 2, 5}, 0.37, 0.1), x4 = wave({1, 2, 5, 6}, 0.37, 0.1);
  EXPECT_TRUE(throws_with([&] { F::interpolate(x4, Opts()); }, "either size or scale_factor must be given"));
  EXPECT_TRUE(throws_with([&] { F::interpolate(x4, Opts().size(sz({2})).scale_factor(sf({2.0}))); },
                          "only one of size and scale_factor"));
  EXPECT_TRUE(throws_with([&] { F::interpolate(x4, Opts().size(sz({2, 3, 4}))); },
                          "must give one size or one per spatial dim of the input [5, 6]"));
  EXPECT_TRUE(throws_with([&] { F::interpolate(x4, Opts().scale_factor(sf({2.0, 2.0, 2.0}))); },
                          "one factor or one per spatial dim"));
  EXPECT_TRUE(throws_with([&] { F::interpolate(x4, Opts().scale_factor(sf({-1.0}))); }, "must be positive and finite"));
  EXPECT_TRUE(throws_with([&] { F::interpolate(x4, Opts().scale_factor(sf({0.1}))); },
                          "sizes must be greater than 0, got input [5, 6] and output [0, 0]"));
  EXPECT_TRUE(throws_with([&] { F::interpolate(x4, Opts().size(sz({3})).mode("linear")); },
                          "mode 'linear' needs a 3-D input, got a 4-D input"));
  EXPECT_TRUE(throws_with([&] { F::interpolate(x3, Opts().size(sz({3})).mode("bilinear")); },
                          "mode 'bilinear' needs a 4-D input"));
  EXPECT_TRUE(throws_with([&] { F::interpolate(wave({2, 5}, 0.3, 0.1), Opts().size(sz({3}))); },
                          "expects a 3-D, 4-D or 5-D input"));
  EXPECT_TRUE(throws_with([&] { F::interpolate(x4, Opts().size(sz({3})).mode("cubic")); }, "unknown mode 'cubic'"));
  EXPECT_TRUE(throws_with([&] { F::interpolate(x4, Opts().size(sz({3})).align_corners(false)); },
                          "align_corners can only be set with the interpolating modes"));
  EXPECT_TRUE(throws_with([&] { F::interpolate(x3, Opts().size(sz({3})).mode("linear").antialias(true)); },
                          "antialias is restricted to the bilinear, bicubic and lanczos modes"));
  EXPECT_TRUE(throws_with([&] { F::interpolate(x4, Opts().size(sz({3})).mode("lanczos")); },
                          "mode 'lanczos' requires antialias=True"));
  EXPECT_TRUE(throws_with([&] { F::interpolate(x4, Opts().size(sz({3})).mode("lanczos").antialias(true).align_corners(true)); },
                          "mode 'lanczos' does not support align_corners=True"));
  EXPECT_TRUE(throws_with([&] { F::interpolate(x3, Opts().size(sz({3})).mode("lanczos").antialias(true)); },
                          "mode 'lanczos' needs a 4-D input, got a 3-D input"));
  EXPECT_TRUE(throws_with([&] { F::interpolate(x4, Opts().size(sz({3})).recompute_scale_factor(true)); },
                          "not meaningful with an explicit size"));
  EXPECT_TRUE(throws_with([&] { F::interpolate(raw::to(x4, kCPU, kInt64), Opts().size(sz({3})).mode("bilinear")); },
                          "needs a floating-point input, got int64"));
  EXPECT_TRUE(throws_with([&] { F::pixel_shuffle(wave({1, 6, 2, 2}, 0.3, 0.1), 2); },
                          "(size(-3) = 6) must be divisible by upscale_factor^2 = 4"));
  EXPECT_TRUE(throws_with([&] { F::pixel_shuffle(wave({6, 2}, 0.3, 0.1), 1); }, "at least 3 dims"));
  EXPECT_TRUE(throws_with([&] { F::pixel_shuffle(x4, 0); }, "positive upscale_factor"));
  EXPECT_TRUE(throws_with([&] { F::pixel_unshuffle(wave({1, 1, 5, 4}, 0.3, 0.1), 2); },
                          "height and width (5, 4) must be divisible by downscale_factor = 2"));
}

TEST(UpsampleModules, ForwardOptionsAndPrinting) {
  Tensor x = wave({1, 2, 5, 6}, 0.37, 0.1);
  Upsample up(UpsampleOptions().scale_factor(sf({2.0})).mode("bilinear").align_corners(true));
  EXPECT_EQ(colony::testing::values(up.forward(x)),
            colony::testing::values(F::interpolate(x, Opts().scale_factor(sf({2.0})).mode("bilinear").align_corners(true))));
  EXPECT_EQ(up.repr(), "Upsample(scale_factor=2.0, mode='bilinear')");
  EXPECT_EQ(Upsample(UpsampleOptions().size(sz({4, 6}))).repr(), "Upsample(size=(4, 6), mode='nearest')");
  EXPECT_EQ(Upsample(UpsampleOptions().scale_factor(sf({2.0, 1.5}))).repr(),
            "Upsample(scale_factor=(2.0, 1.5), mode='nearest')");
  EXPECT_TRUE(throws_with([] { Upsample(UpsampleOptions().mode("cubic")); }, "unknown mode 'cubic'"));
  EXPECT_EQ(Upsample(UpsampleOptions().size(sz({2})).mode("area")).forward(x).sizes(), (Shape{1, 2, 2, 2}));

  PixelShuffle ps(2);
  PixelUnshuffle pu(2);
  EXPECT_EQ(ps.repr(), "PixelShuffle(upscale_factor=2)");
  EXPECT_EQ(pu.repr(), "PixelUnshuffle(downscale_factor=2)");
  Tensor y = wave({2, 8, 3, 5}, 0.37, 0.1);
  EXPECT_EQ(colony::testing::values(pu.forward(ps.forward(y))), colony::testing::values(y));  // inverses
  EXPECT_TRUE(throws_with([] { PixelShuffle(0); }, "upscale_factor must be positive"));

  AnyModule any(std::make_shared<Upsample>(UpsampleOptions().size(sz({3}))));
  EXPECT_EQ(any.forward(wave({1, 1, 6}, 0.3, 0.1)).sizes(), (Shape{1, 1, 3}));
  Sequential seq(std::make_shared<PixelShuffle>(2),
                 std::make_shared<Upsample>(UpsampleOptions().scale_factor(sf({2.0}))));
  EXPECT_EQ(seq.forward(wave({1, 4, 2, 2}, 0.3, 0.1)).sizes(), (Shape{1, 1, 8, 8}));
}

// Each mode on cuda:0 against the CPU in float32: the output and the input's gradient.
TEST(Interpolate, OnCudaMatchesTheCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  for (const auto& [path_name, path] : paths())
  for (const auto& [name, c] : cases()) {
    SCOPED_TRACE(std::string(path_name) + " " + name);
    F::ForceResamplePath force(path);
    Tensor cpu = wave(c.first, 0.37, 0.1, kFloat32);
    Tensor gpu = raw::to(cpu, Device::cuda(0), kFloat32);
    cpu.requires_grad_(true);
    gpu.requires_grad_(true);
    Tensor yc = c.second(cpu), yg = c.second(gpu);
    EXPECT_TRUE(colony::testing::all_close(raw::to(yg, kCPU, kFloat32), yc, 1e-5, 1e-6));
    colony::sum(colony::mul(yc, wave(yc.sizes(), 0.31, 0.2, kFloat32))).backward();
    colony::sum(colony::mul(yg, raw::to(wave(yg.sizes(), 0.31, 0.2, kFloat32), Device::cuda(0), kFloat32))).backward();
    EXPECT_TRUE(colony::testing::all_close(raw::to(gpu.grad(), kCPU, kFloat32), cpu.grad(), 1e-5, 1e-6));
  }
}

}  // namespace
}  // namespace colony::nn
