// F::grid_sample (ops/grid_sample_ops.cc, kernels/common/grid_sample.h), F::affine_grid,
// F::channel_shuffle / nn::ChannelShuffle and F::local_response_norm / nn::LocalResponseNorm:
// values and the gradients of every input against torch in float64 and float32
// (tests/nn/grid_sample_golden.py writes grid_sample_golden.h), float64 gradchecks, torch's
// refusals, the CPU backward's determinism across thread counts, 16-bit inputs, and CUDA against
// the CPU.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/autograd.h"
#include "nn/functional.h"
#include "nn/normalization.h"
#include "nn/upsample.h"
#include "tensor/threads.h"
#include "tests/autograd/gradcheck.h"
#include "tests/golden_check.h"
#include "tests/nn/cuda_module_check.h"
#include "tests/nn/grid_sample_golden.h"
#include "tests/test_util.h"

namespace colony::nn {
namespace {

namespace F = functional;
using colony::testing::all_close;
using colony::testing::throws_with;
using colony::testing::values;
using In = std::vector<Tensor>;
using testing::golden::Op;

const std::vector<std::string> kModes = {"bilinear", "nearest", "bicubic"};
const std::vector<std::string> kPaddings = {"zeros", "border", "reflection"};

F::GridSampleFuncOptions options(const std::string& mode, const std::string& padding, bool align) {
  return F::GridSampleFuncOptions().mode(mode).padding_mode(padding).align_corners(align);
}

// grid_sample_golden.py's cases, by name.
std::map<std::string, Op> calls() {
  std::map<std::string, Op> c;
  for (const std::string& mode : kModes) {
    for (const std::string& padding : kPaddings) {
      for (bool align : {false, true}) {
        const std::string tag = std::string(align ? "ac" : "noac");
        c["gs4_" + mode + "_" + padding + "_" + tag] = [=](const In& x, Device) {
          return F::grid_sample(x[0], x[1], options(mode, padding, align));
        };
        c["gs5_" + mode + "_" + padding + "_" + tag] = [=](const In& x, Device) {
          return F::grid_sample(x[0], x[1], options(mode, padding, align));
        };
      }
    }
  }
  for (bool align : {false, true}) {
    const std::string tag = align ? "ac" : "noac";
    c["affine2_" + tag] = [=](const In& x, Device) { return F::affine_grid(x[0], {2, 3, 4, 5}, align); };
    c["affine3_" + tag] = [=](const In& x, Device) { return F::affine_grid(x[0], {1, 1, 2, 3, 4}, align); };
  }
  c["affine2_unit"] = [](const In& x, Device) { return F::affine_grid(x[0], {2, 1, 1, 3}, false); };
  c["stn"] = [](const In& x, Device) {
    return F::grid_sample(x[0], F::affine_grid(x[1], {2, 2, 3, 5}, false), F::GridSampleFuncOptions());
  };
  c["channel_shuffle"] = [](const In& x, Device) { return F::channel_shuffle(x[0], 3); };
  c["channel_shuffle_3d"] = [](const In& x, Device) { return F::channel_shuffle(x[0], 2); };
  c["lrn3"] = [](const In& x, Device) { return F::local_response_norm(x[0], 3); };
  c["lrn4"] = [](const In& x, Device) {
    return F::local_response_norm(x[0], F::LocalResponseNormFuncOptions(2).alpha(0.5).beta(0.6).k(2.0));
  };
  c["lrn5"] = [](const In& x, Device) {
    return F::local_response_norm(x[0], F::LocalResponseNormFuncOptions(4).alpha(0.3));
  };
  std::map<std::string, Op> all = c;
  for (const auto& [name, op] : c) all[name + "_f32"] = op;
  return all;
}

// float32 cases to 2e-5 relative: torch's CPU kernels order some products differently (its
// vectorized 4-D kernel unnormalizes as x * s + (s - 0.5), its bicubic sums rows first).
constexpr double kF32Tol = 2e-5;

TEST(GridSample, MatchesTorch) {
  const auto ops = calls();
  for (const auto& c : testing::grid_sample_golden::kCases) {
    EXPECT_TRUE(testing::golden::matches(c, ops, kCPU, kF32Tol));
  }
}

TEST(GridSample, Gradcheck) {
  using colony::testing::gradcheck;
  // Grids of continuous values in [-1.6, 1.6]: outside the image too, and (almost surely) nowhere
  // near the kinks where a finite difference would straddle a pixel or a border.
  const Tensor x4 = colony::testing::input({2, 3, 4, 5}, -1.0, 1.0, 11);
  const Tensor g4 = colony::testing::input({2, 3, 2, 2}, -1.6, 1.6, 12);
  for (const std::string& mode : kModes) {
    for (const std::string& padding : kPaddings) {
      for (bool align : {false, true}) {
        EXPECT_TRUE(gradcheck([&](const In& in) { return F::grid_sample(in[0], in[1], options(mode, padding, align)); },
                              {x4, g4}))
            << mode << " " << padding << " " << align;
      }
    }
  }
  const Tensor x5 = colony::testing::input({1, 2, 3, 4, 3}, -1.0, 1.0, 13);
  const Tensor g5 = colony::testing::input({1, 2, 2, 2, 3}, -1.6, 1.6, 14);
  for (const std::string& mode : kModes) {
    for (const std::string& padding : kPaddings) {
      for (bool align : {false, true}) {
        EXPECT_TRUE(gradcheck([&](const In& in) { return F::grid_sample(in[0], in[1], options(mode, padding, align)); },
                              {x5, g5}))
            << "5-D " << mode << " " << padding << " " << align;
      }
    }
  }
  const Tensor th = colony::testing::input({2, 2, 3}, -1.0, 1.0, 15);
  const Tensor th3 = colony::testing::input({2, 3, 4}, -1.0, 1.0, 16);
  for (bool align : {false, true}) {
    EXPECT_TRUE(gradcheck([&](const In& in) { return F::affine_grid(in[0], {2, 1, 3, 4}, align); }, {th}));
    EXPECT_TRUE(gradcheck([&](const In& in) { return F::affine_grid(in[0], {2, 1, 2, 3, 2}, align); }, {th3}));
  }
  EXPECT_TRUE(gradcheck([](const In& in) { return F::channel_shuffle(in[0], 2); }, {colony::testing::input({2, 4, 3})}));
  EXPECT_TRUE(gradcheck([](const In& in) { return F::local_response_norm(in[0], F::LocalResponseNormFuncOptions(3).alpha(0.5)); },
                        {colony::testing::input({2, 5, 2, 2})}));
}

TEST(GridSample, NearestGivesTheGridAZeroGradient) {
  Tensor x = raw::randn({1, 2, 4, 4}, TensorOptions(kFloat64));
  Tensor g = raw::add(raw::mul(raw::rand({1, 3, 3, 2}, TensorOptions(kFloat64)), 1.8), -0.9);  // all inside
  g.requires_grad_(true);
  x.requires_grad_(true);
  sum(F::grid_sample(x, g, F::GridSampleFuncOptions().mode("nearest"))).backward();
  for (double v : values(g.grad())) EXPECT_EQ(v, 0.0);
  EXPECT_EQ(values(sum(x.grad()))[0], 2.0 * 9);  // every point reads one element of each channel
}

TEST(GridSample, NonFiniteGridEntriesReadZero) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  Tensor x = raw::add(raw::zeros({1, 1, 2, 2}, TensorOptions(kFloat64)), 1.0);
  Tensor g = raw::from_vector<double>({nan, 0.0, inf, 0.0, 0.0, -inf, 1e300, -1e300}, {1, 1, 4, 2});
  for (const std::string& padding : kPaddings) {
    for (const std::string& mode : kModes) {
      const std::vector<double> y = values(F::grid_sample(x, g, options(mode, padding, false)));
      EXPECT_EQ(y[0], 0.0);
      EXPECT_EQ(y[1], 0.0);
      EXPECT_EQ(y[2], 0.0);
      EXPECT_FALSE(std::isnan(y[3])) << mode << " " << padding;  // huge but finite: no crash, a number
    }
  }
}

// The CPU backward adds into each batch element's input gradient on one thread, in point order:
// the same bits on 1 and 2 threads.
TEST(GridSample, CpuBackwardIsDeterministic) {
  const int threads = get_num_threads();
  Generator gen(5);
  const Tensor x = raw::randn({3, 4, 9, 11}, TensorOptions(kFloat32), &gen);
  const Tensor g = raw::add(raw::mul(raw::rand({3, 17, 13, 2}, TensorOptions(kFloat32), &gen), 2.4), -1.2);
  const Tensor go = raw::randn({3, 4, 17, 13}, TensorOptions(kFloat32), &gen);
  std::vector<std::vector<double>> runs;
  for (int t : {1, 2, 1, 2}) {
    set_num_threads(t);
    Tensor xi = raw::clone(x), gi = raw::clone(g);
    xi.requires_grad_(true);
    gi.requires_grad_(true);
    sum(mul(F::grid_sample(xi, gi, F::GridSampleFuncOptions()), go)).backward();
    std::vector<double> v = values(xi.grad());
    const std::vector<double> w = values(gi.grad());
    v.insert(v.end(), w.begin(), w.end());
    runs.push_back(v);
  }
  set_num_threads(threads);
  for (size_t i = 1; i < runs.size(); ++i) EXPECT_EQ(runs[i], runs[0]) << "run " << i;
}

// The backward computes only the gradients asked for (the grid's alone splits over points, not
// batch elements): each alone equals the same gradient computed beside the other.
TEST(GridSample, EitherGradientAloneMatchesBoth) {
  Generator gen(4);
  const Tensor x = raw::randn({2, 3, 6, 7}, TensorOptions(kFloat64), &gen);
  const Tensor g = raw::add(raw::mul(raw::rand({2, 40, 30, 2}, TensorOptions(kFloat64), &gen), 2.4), -1.2);
  const Tensor go = raw::randn({2, 3, 40, 30}, TensorOptions(kFloat64), &gen);
  for (const std::string& mode : kModes) {
    auto grads = [&](bool want_x, bool want_g) {
      Tensor xi = raw::clone(x), gi = raw::clone(g);
      xi.requires_grad_(want_x);
      gi.requires_grad_(want_g);
      sum(mul(F::grid_sample(xi, gi, options(mode, "reflection", false)), go)).backward();
      return std::make_pair(want_x ? xi.grad() : Tensor(), want_g ? gi.grad() : Tensor());
    };
    const auto both = grads(true, true);
    EXPECT_TRUE(all_close(grads(true, false).first, both.first, 0, 0)) << mode;
    EXPECT_TRUE(all_close(grads(false, true).second, both.second, 0, 0)) << mode;
  }
}

TEST(GridSample, SixteenBitInputsComputeInFloat32) {
  Generator gen(6);
  const Tensor x = raw::randn({2, 3, 5, 6}, TensorOptions(kFloat32), &gen);
  const Tensor g = raw::add(raw::mul(raw::rand({2, 4, 3, 2}, TensorOptions(kFloat32), &gen), 2.4), -1.2);
  for (DType dt : {kBFloat16, kFloat16}) {
    const Tensor x16 = raw::to(x, kCPU, dt), g16 = raw::to(g, kCPU, dt);
    const Tensor y = F::grid_sample(x16, g16, F::GridSampleFuncOptions().mode("bicubic"));
    EXPECT_EQ(y.dtype(), dt);
    const Tensor ref = F::grid_sample(raw::to(x16, kCPU, kFloat32), raw::to(g16, kCPU, kFloat32),
                                      F::GridSampleFuncOptions().mode("bicubic"));
    EXPECT_TRUE(all_close(raw::to(y, kCPU, kFloat32), raw::to(raw::to(ref, kCPU, dt), kCPU, kFloat32), 0, 0));
  }
}

TEST(GridSample, AutocastComputesInFloat32) {
  Generator gen(8);
  const Tensor x = raw::to(raw::randn({1, 2, 4, 4}, TensorOptions(kFloat32), &gen), kCPU, kBFloat16);
  const Tensor g = raw::add(raw::mul(raw::rand({1, 3, 3, 2}, TensorOptions(kFloat32), &gen), 2.0), -1.0);
  AutocastGuard amp(DeviceType::CPU, kBFloat16);
  // Mixed dtypes, refused outside autocast, run in float32 (torch's CPU list has grid_sampler in
  // float32, its CUDA list promotes to the widest).
  EXPECT_EQ(F::grid_sample(x, g).dtype(), kFloat32);
  EXPECT_EQ(F::grid_sample(x, raw::to(g, kCPU, kBFloat16)).dtype(), kFloat32);
  // affine_grid is on no list: theta's dtype.
  EXPECT_EQ(F::affine_grid(raw::zeros({1, 2, 3}, TensorOptions(kFloat32)), {1, 1, 2, 2}).dtype(), kFloat32);
}

TEST(GridSample, EmptyBatchChannelsAndGrid) {
  EXPECT_EQ(F::grid_sample(raw::zeros({0, 3, 4, 5}), raw::zeros({0, 3, 3, 2})).sizes(), (Shape{0, 3, 3, 3}));
  EXPECT_EQ(F::grid_sample(raw::zeros({2, 0, 4, 5}), raw::zeros({2, 3, 3, 2})).sizes(), (Shape{2, 0, 3, 3}));
  Tensor g = raw::zeros({2, 0, 3, 2});
  g.requires_grad_(true);
  Tensor y = F::grid_sample(raw::zeros({2, 3, 4, 5}), g);
  EXPECT_EQ(y.sizes(), (Shape{2, 3, 0, 3}));
  sum(y).backward();
  EXPECT_EQ(g.grad().sizes(), g.sizes());
  // No channels: the grid's gradient is zero.
  Tensor g2 = raw::add(raw::zeros({1, 2, 2, 2}), 0.3);
  g2.requires_grad_(true);
  sum(F::grid_sample(raw::zeros({1, 0, 4, 5}), g2)).backward();
  for (double v : values(g2.grad())) EXPECT_EQ(v, 0.0);
}

TEST(GridSample, RefusesAsTorch) {
  const Tensor x = raw::zeros({2, 3, 4, 5});
  const Tensor g = raw::zeros({2, 3, 3, 2});
  auto gs = [](const Tensor& a, const Tensor& b, F::GridSampleFuncOptions o = {}) {
    return [=] { F::grid_sample(a, b, o); };
  };
  EXPECT_TRUE(throws_with(gs(x, raw::zeros({1, 3, 3, 2})),
                          "grid_sampler(): expected grid and input to have same batch size, but got input with sizes "
                          "[2, 3, 4, 5] and grid with sizes [1, 3, 3, 2]"));
  EXPECT_TRUE(throws_with(gs(x, raw::zeros({2, 3, 3, 3})),
                          "grid_sampler(): expected grid to have size 2 in last dimension, but got grid with sizes "
                          "[2, 3, 3, 3]"));
  EXPECT_TRUE(throws_with(gs(raw::zeros({3, 4, 5}), raw::zeros({3, 3, 2})),
                          "grid_sampler(): expected grid to have size 1 in last dimension"));
  EXPECT_TRUE(throws_with(gs(x, raw::zeros({2, 3, 3, 3, 2})),
                          "grid_sampler(): expected 4D input and grid with same number of dimensions, but got input "
                          "with sizes [2, 3, 4, 5] and grid with sizes [2, 3, 3, 3, 2]"));
  EXPECT_TRUE(throws_with(gs(raw::zeros({2, 3, 0, 5}), g),
                          "grid_sampler(): expected input to have non-empty spatial dimensions, but input has sizes "
                          "[2, 3, 0, 5] with dimension 2 being empty"));
  EXPECT_TRUE(throws_with(gs(x, g, F::GridSampleFuncOptions().mode("linear")),
                          "nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but "
                          "got: 'linear'"));
  EXPECT_TRUE(throws_with(gs(x, g, F::GridSampleFuncOptions().padding_mode("circular")),
                          "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                          "'reflection', but got: 'circular'"));
  EXPECT_TRUE(throws_with(gs(raw::to(x, kCPU, kFloat16), g), "expected input and grid to have the same dtype"));
  EXPECT_TRUE(throws_with(gs(raw::to(x, kCPU, kInt64), raw::to(g, kCPU, kInt64)), "expected a floating point"));
  EXPECT_TRUE(throws_with(gs(Tensor(), g), "grid_sampler(): expected input to not be undefined"));

  auto ag = [](const Tensor& t, std::vector<int64_t> size, bool align = false) {
    return [=] { F::affine_grid(t, size, align); };
  };
  EXPECT_TRUE(throws_with(ag(raw::zeros({1, 2, 3}, TensorOptions(kInt64)), {1, 1, 2, 2}),
                          "Expected theta to have floating point type, but got int64"));
  EXPECT_TRUE(throws_with(ag(raw::zeros({1, 3, 3}), {1, 1, 2, 2}),
                          "Expected a batch of 2D affine matrices of shape Nx2x3 for size [1, 1, 2, 2]. Got [1, 3, 3]."));
  EXPECT_TRUE(throws_with(ag(raw::zeros({1, 2, 3}), {1, 1, 2, 2, 2}),
                          "Expected a batch of 3D affine matrices of shape Nx3x4 for size [1, 1, 2, 2, 2]."));
  EXPECT_TRUE(throws_with(ag(raw::zeros({1, 2, 3}), {1, 1, 2}),
                          "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, respectively. "
                          "Got size [1, 1, 2]."));
  EXPECT_TRUE(throws_with(ag(raw::zeros({1, 2, 3}), {1, 1, 0, 2}), "Expected non-zero, positive output size. Got [1, 1, 0, 2]"));
  EXPECT_TRUE(throws_with(ag(raw::zeros({2, 2, 3}), {1, 1, 3, 2}), "affine_grid: expected theta's batch size 2"));

  const Tensor y = raw::zeros({2, 6, 3, 3});
  EXPECT_TRUE(throws_with([&] { F::channel_shuffle(y, 4); },
                          "Number of channels must be divisible by groups. Got 6 channels and 4 groups."));
  EXPECT_TRUE(throws_with([&] { F::channel_shuffle(y, 0); },
                          "Number of groups to divide channels in must be positive. Value of groups:0"));
  EXPECT_TRUE(throws_with([&] { F::channel_shuffle(raw::zeros({2, 6}), 2); },
                          "channel_shuffle expects input with > 2 dims, but got input with sizes [2, 6]"));
  EXPECT_TRUE(throws_with([&] { F::local_response_norm(raw::zeros({2, 6}), 3); },
                          "Expected 3D or higher dimensionality input (got 2 dimensions)"));
  EXPECT_TRUE(throws_with([&] { F::local_response_norm(raw::zeros({2, 6, 4}), 0); },
                          "kernel size should be greater than zero, but got kH: 0 kW: 1"));
}

TEST(GridSample, Modules) {
  EXPECT_EQ(ChannelShuffle(ChannelShuffleOptions(2)).repr(), "ChannelShuffle(groups=2)");
  EXPECT_EQ(LocalResponseNorm(LocalResponseNormOptions(2)).repr(), "LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)");
  EXPECT_EQ(PixelUnshuffle(PixelUnshuffleOptions(2)).repr(), "PixelUnshuffle(downscale_factor=2)");
  const Tensor x = raw::arange(0, 12, 1, TensorOptions(kFloat32));
  ChannelShuffle shuffle(ChannelShuffleOptions(3));
  const Tensor y = shuffle.forward(raw::reshape(x, {1, 6, 2}));
  // [1, 3 groups, 2, 2] transposed: channels 0, 2, 4, 1, 3, 5.
  EXPECT_EQ(values(y), (std::vector<double>{0, 1, 4, 5, 8, 9, 2, 3, 6, 7, 10, 11}));
  EXPECT_EQ(raw::to(shuffle.forward(raw::reshape(raw::to(x, kCPU, kInt64), {1, 6, 2})), kCPU, kFloat64).sizes(),
            (Shape{1, 6, 2}));
  const Tensor z = raw::randn({2, 5, 3, 3}, TensorOptions(kFloat64));
  LocalResponseNorm lrn(LocalResponseNormOptions(3).alpha(0.2).beta(0.5).k(1.5));
  EXPECT_TRUE(all_close(lrn.forward(z), F::local_response_norm(z, F::LocalResponseNormFuncOptions(3).alpha(0.2).beta(0.5).k(1.5)), 0, 0));
  // An empty input comes back as it is, as torch's.
  const Tensor e = raw::zeros({0, 5, 3});
  EXPECT_EQ(F::local_response_norm(e, 3).data_ptr_raw(), e.data_ptr_raw());
}

TEST(GridSample, OnCudaMatchesTorch_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  const auto ops = calls();
  for (const auto& c : testing::grid_sample_golden::kCases) {
    EXPECT_TRUE(testing::golden::matches(c, ops, Device::cuda(0), kF32Tol));
  }
}

TEST(GridSample, OnCudaMatchesTheCpu_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  const Device dev = Device::cuda(0);
  Generator gen(9);
  struct Shapes {
    Shape x, g;
  };
  for (const Shapes& s : {Shapes{{3, 5, 17, 23}, {3, 19, 21, 2}}, Shapes{{2, 3, 7, 9, 11}, {2, 5, 6, 7, 3}}}) {
    for (DType dt : {kFloat64, kFloat32}) {
      const Tensor x = raw::to(raw::randn(s.x, TensorOptions(kFloat64), &gen), kCPU, dt);
      const Tensor g = raw::to(raw::add(raw::mul(raw::rand(s.g, TensorOptions(kFloat64), &gen), 2.6), -1.3), kCPU, dt);
      const Tensor go = raw::to(raw::randn(F::grid_sample(x, g).sizes(), TensorOptions(kFloat64), &gen), kCPU, dt);
      for (const std::string& mode : kModes) {
        for (const std::string& padding : kPaddings) {
          for (bool align : {false, true}) {
            SCOPED_TRACE(mode + " " + padding + (align ? " ac " : " noac ") + dtype_name(dt));
            Tensor outs[2], gx[2], gg[2];
            for (int d = 0; d < 2; ++d) {
              const Device on = d == 0 ? Device(kCPU) : dev;
              Tensor xi = raw::to(x, on, dt), gi = raw::to(g, on, dt);
              xi.requires_grad_(true);
              gi.requires_grad_(true);
              outs[d] = F::grid_sample(xi, gi, options(mode, padding, align));
              sum(mul(outs[d], raw::to(go, on, dt))).backward();
              gx[d] = raw::to(xi.grad(), kCPU, kFloat64);
              gg[d] = raw::to(gi.grad(), kCPU, kFloat64);
              outs[d] = raw::to(outs[d], kCPU, kFloat64);
            }
            const double tol = dt == kFloat64 ? 1e-10 : 1e-4;
            EXPECT_TRUE(all_close(outs[1], outs[0], tol, tol));
            EXPECT_TRUE(all_close(gx[1], gx[0], tol, tol));
            EXPECT_TRUE(all_close(gg[1], gg[0], tol, tol));
          }
        }
      }
    }
  }
  // 16-bit and the modules.
  const Tensor x = raw::randn({2, 6, 8, 8}, TensorOptions(kFloat32), &gen);
  const Tensor g = raw::add(raw::mul(raw::rand({2, 5, 5, 2}, TensorOptions(kFloat32), &gen), 2.0), -1.0);
  for (DType dt : {kFloat16, kBFloat16}) {
    const Tensor a = F::grid_sample(raw::to(x, dev, dt), raw::to(g, dev, dt));
    const Tensor b = F::grid_sample(raw::to(x, kCPU, dt), raw::to(g, kCPU, dt));
    EXPECT_TRUE(all_close(raw::to(a, kCPU, kFloat32), raw::to(b, kCPU, kFloat32), 1e-2, 1e-2));
  }
  testing::expect_cuda_module_matches_cpu([] { return std::make_shared<ChannelShuffle>(ChannelShuffleOptions(3)); }, x);
  testing::expect_cuda_module_matches_cpu(
      [] { return std::make_shared<LocalResponseNorm>(LocalResponseNormOptions(3)); }, x);
}

}  // namespace
}  // namespace colony::nn
