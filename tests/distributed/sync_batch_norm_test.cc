// dist::SyncBatchNorm and dist::convert_sync_batchnorm. One process (no group): exactly batch norm,
// 2-D to 5-D input, momentum=None included. Several processes (Gloo on the CPU): ranks holding
// slices of different sizes of one batch (one of them empty) get one BatchNorm2d's outputs, input
// gradients, running statistics and, after DDP's reduction, weight and bias gradients over the whole
// batch; an input without gradient costs no backward collective; a converted conv net trained under
// DDP with unequal batches equals one process; autocast; channel counts that differ between ranks
// are named; a rank that fails stops the others. On GPUs
// (skipped without them): two ranks on NCCL, and two ranks sharing one GPU through Gloo.
#include "distributed/sync_batch_norm.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/autocast.h"
#include "autograd/ops.h"
#include "distributed/ddp/ddp.h"
#include "distributed/init.h"
#include "nn/batchnorm.h"
#include "nn/containers.h"
#include "nn/conv.h"
#include "nn/functional.h"
#include "nn/layers.h"
#include "nn/linear.h"
#include "optim/sgd.h"
#include "tensor/grad_mode.h"
#include "tensor/random.h"
#include "tests/multiprocess.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::all_close;
using testing::all_succeeded;
using testing::in_rank_child;
using testing::run_ranks;

// Weight and bias away from 1 and 0, the same on every rank (and in every module given `seed`).
void set_affine(nn::BatchNormBase& bn, uint64_t seed) {
  Generator g(seed);
  const int64_t c = bn.options.num_features();
  const TensorOptions o = TensorOptions(bn.weight.dtype()).device(bn.weight.device());
  raw::copy_(bn.weight, raw::to(raw::add(raw::rand({c}, {}, &g), 0.5), o.device(), o.dtype()));
  raw::copy_(bn.bias, raw::to(raw::randn({c}, {}, &g), o.device(), o.dtype()));
}

// One batch every rank generates alike: mean 0.5, std 2.
Tensor batch(const Shape& shape, uint64_t seed, DType dtype = kFloat32, Device dev = kCPU) {
  Generator g(seed);
  return raw::to(raw::add(raw::mul(raw::randn(shape, {}, &g), 2.0), 0.5), dev, dtype);
}

struct Step {
  Tensor y, dx;
};

// forward on a fresh leaf copy of x, then backward of sum(y * gy).
Step forward_backward(nn::Module& m, const Tensor& x_in, const Tensor& gy) {
  Tensor x = raw::clone(x_in);
  x.requires_grad_(true);
  Tensor y = m.forward(x);
  colony::sum(colony::mul(y, gy)).backward();
  return {y.detach(), x.grad()};
}

void expect_same_running_stats(const nn::BatchNormBase& got, const nn::BatchNormBase& want, double rtol, double atol) {
  EXPECT_TRUE(all_close(got.running_mean, want.running_mean, rtol, atol)) << "running_mean";
  EXPECT_TRUE(all_close(got.running_var, want.running_var, rtol, atol)) << "running_var";
  EXPECT_EQ(got.num_batches_tracked.item<int64_t>(), want.num_batches_tracked.item<int64_t>());
}

// ---------- one process: batch norm ----------

TEST(SyncBatchNorm, WithoutAProcessGroupIsBatchNormFrom2DTo5D) {
  ASSERT_FALSE(dist::is_initialized());
  for (DType dtype : {kFloat64, kFloat32}) {
    const double rtol = dtype == kFloat64 ? 1e-12 : 1e-5, atol = dtype == kFloat64 ? 1e-12 : 1e-6;
    for (const Shape& shape : std::vector<Shape>{{5, 3}, {4, 3, 6}, {2, 3, 4, 5}, {2, 3, 2, 3, 2}}) {
      for (std::optional<double> momentum : {std::optional<double>(0.3), std::optional<double>()}) {
        SCOPED_TRACE(std::string(dtype_name(dtype)) + " " + shape_str(shape) + (momentum ? "" : " momentum=None"));
        const nn::BatchNormOptions o = nn::BatchNormOptions(3).momentum(momentum);
        auto sync = std::make_shared<dist::SyncBatchNorm>(o);
        // The reference: BatchNorm1d over [N, C, L], the 4-D and 5-D inputs' spatial dims flattened
        // (the same statistics), and BatchNorm2d on the 4-D input itself.
        std::shared_ptr<nn::BatchNormBase> ref;
        if (shape.size() == 4) ref = std::make_shared<nn::BatchNorm2d>(o);
        else ref = std::make_shared<nn::BatchNorm1d>(o);
        sync->to(dtype);
        ref->to(dtype);
        set_affine(*sync, 1);
        set_affine(*ref, 1);
        const Shape ref_shape = shape.size() == 5 ? Shape{shape[0], shape[1], shape[2] * shape[3] * shape[4]} : shape;
        for (int step = 0; step < 3; ++step) {
          const Tensor x = batch(shape, 10 + step, dtype), gy = batch(shape, 20 + step, dtype);
          sync->zero_grad();
          ref->zero_grad();
          const Step got = forward_backward(*sync, x, gy);
          const Step want = forward_backward(*ref, raw::reshape(x, ref_shape), raw::reshape(gy, ref_shape));
          EXPECT_TRUE(all_close(got.y, raw::reshape(want.y, shape), rtol, atol)) << "output, step " << step;
          EXPECT_TRUE(all_close(got.dx, raw::reshape(want.dx, shape), rtol, atol)) << "input grad, step " << step;
          EXPECT_TRUE(all_close(sync->weight.grad(), ref->weight.grad(), rtol, atol)) << "weight grad, step " << step;
          EXPECT_TRUE(all_close(sync->bias.grad(), ref->bias.grad(), rtol, atol)) << "bias grad, step " << step;
        }
        expect_same_running_stats(*sync, *ref, rtol, atol);
        sync->eval();
        ref->eval();
        const Tensor x = batch(shape, 30, dtype);
        const Tensor want = raw::reshape(ref->forward(raw::reshape(x, ref_shape)), shape);
        EXPECT_TRUE(all_close(sync->forward(x), want, rtol, atol)) << "evaluation";
      }
    }
  }
}

TEST(SyncBatchNorm, RefusesInputOfFewerThanTwoDims) {
  dist::SyncBatchNorm bn(3);
  try {
    bn.forward(raw::zeros({3}));
    FAIL() << "1-D input accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("SyncBatchNorm: expected at least 2D input (got 1D input"), std::string::npos)
        << e.what();
  }
  try {
    bn.forward(raw::zeros({2, 4}));
    FAIL() << "4 channels accepted by a module of 3";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("SyncBatchNorm: expected 3 channels"), std::string::npos) << e.what();
  }
}

TEST(SyncBatchNorm, PrintsAsTorchPrintsIt) {
  std::ostringstream a, b;
  a << dist::SyncBatchNorm(nn::BatchNormOptions(4));
  b << dist::SyncBatchNorm(nn::BatchNormOptions(4).momentum(std::nullopt).affine(false));
  EXPECT_EQ(a.str(), "SyncBatchNorm(4, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)");
  EXPECT_EQ(b.str(), "SyncBatchNorm(4, eps=1e-05, momentum=None, affine=False, bias=False, track_running_stats=True)");
}

// A model that calls its batch norms through typed members and a Sequential.
struct ConvNet : nn::Module {
  ConvNet() {
    features = register_module(
        "features",
        std::make_shared<nn::Sequential>(std::make_shared<nn::Conv2d>(nn::Conv2dOptions(3, 4, 3).padding(1)),
                                         std::make_shared<nn::BatchNorm2d>(4), std::make_shared<nn::ReLU>()));
    fc = register_module("fc", std::make_shared<nn::Linear>(4 * 6 * 6, 8));
    bn = register_module("bn", std::make_shared<nn::BatchNorm1d>(8));
    head = register_module("head", std::make_shared<nn::Linear>(8, 5));
  }
  Tensor forward(const Tensor& x) override {
    Tensor h = features->forward(x);
    h = F::relu(bn->forward(fc->forward(colony::flatten(h, 1))));
    return head->forward(h);
  }
  std::shared_ptr<nn::Sequential> features;
  std::shared_ptr<nn::Linear> fc, head;
  std::shared_ptr<nn::BatchNorm1d> bn;
};

TEST(SyncBatchNorm, ConvertKeepsNamesValuesAndTheModelsOwnPointers) {
  manual_seed(3);
  auto model = std::make_shared<ConvNet>();
  model->forward(batch({4, 3, 6, 6}, 1));  // running statistics away from their initial values
  nn::NamedTensors before;
  for (const auto& [name, t] : model->state_dict()) before.emplace_back(name, raw::clone(t));
  auto* bn = model->bn.get();
  std::shared_ptr<ConvNet> converted = dist::convert_sync_batchnorm(model);
  EXPECT_TRUE(converted == model);  // converted in place: the members the forward calls are the ones converted
  EXPECT_TRUE(model->bn.get() == bn);
  const nn::NamedTensors after = converted->state_dict();
  ASSERT_EQ(after.size(), before.size());
  for (size_t i = 0; i < after.size(); ++i) {
    EXPECT_EQ(after[i].first, before[i].first);
    EXPECT_TRUE(all_close(after[i].second, before[i].second, 0, 0)) << after[i].first;
  }
  int converted_count = 0;
  for (const auto& [name, m] : model->named_modules()) {
    const bool is_bn = m->as<nn::BatchNormBase>() != nullptr;
    EXPECT_EQ(dist::is_sync_batch_norm(*m), is_bn) << name;
    converted_count += is_bn;
  }
  EXPECT_EQ(converted_count, 2);
  // A batch norm root comes back converted too, and a SyncBatchNorm takes the new group.
  auto root = dist::convert_sync_batchnorm(std::make_shared<nn::BatchNorm2d>(3));
  EXPECT_TRUE(dist::is_sync_batch_norm(*root));
  auto sync = std::make_shared<dist::SyncBatchNorm>(3);
  EXPECT_TRUE(dist::is_sync_batch_norm(*sync));
  EXPECT_FALSE(dist::is_sync_batch_norm(nn::Linear(2, 2)));
  // Without a group the converted model computes what it did.
  manual_seed(3);
  auto plain = std::make_shared<ConvNet>();
  plain->forward(batch({4, 3, 6, 6}, 1));
  const Tensor x = batch({5, 3, 6, 6}, 2);
  EXPECT_TRUE(all_close(model->forward(x), plain->forward(x), 1e-6, 1e-6));
  expect_same_running_stats(*model->bn, *plain->bn, 1e-6, 1e-7);
}

// ---------- several processes ----------

// Rank r's rows of the whole batch: sizes[r] rows after the ranks before it.
Tensor rows(const Tensor& all, const std::vector<int64_t>& sizes, int rank) {
  int64_t from = 0;
  for (int r = 0; r < rank; ++r) from += sizes[r];
  return raw::narrow(all, 0, from, sizes[rank]);
}

// Rank r holds sizes[r] rows (one rank none) of one [8, 3, 3, 4] batch; loss: sum(y * gy) over its
// rows, so the job's loss is sum(y * gy) over the whole batch, one BatchNorm2d's loss. Outputs and
// input gradients equal the reference's rows; DDP averages the weight and bias gradients over the
// ranks, world times less than the whole batch's (torch's SyncBatchNorm and DDP alike).
TEST(SyncBatchNorm, RanksWithDifferentBatchSizesMatchOneBatchNormOverTheWholeBatch) {
  auto results = run_ranks(3, [](int rank) {
    dist::init_process_group();
    const std::vector<int64_t> sizes = {3, 0, 5};
    for (DType dtype : {kFloat64, kFloat32}) {
      const double rtol = dtype == kFloat64 ? 1e-10 : 1e-5, atol = dtype == kFloat64 ? 1e-10 : 2e-6;
      SCOPED_TRACE(dtype_name(dtype));
      auto sync = std::make_shared<dist::SyncBatchNorm>(nn::BatchNormOptions(3).momentum(0.2));
      auto ref = std::make_shared<nn::BatchNorm2d>(nn::BatchNormOptions(3).momentum(0.2));
      sync->to(dtype);
      ref->to(dtype);
      set_affine(*sync, 5);
      set_affine(*ref, 5);
      auto ddp = std::make_shared<dist::DistributedDataParallel>(sync);
      for (int step = 0; step < 3; ++step) {
        const Tensor x = batch({8, 3, 3, 4}, 40 + step, dtype), gy = batch({8, 3, 3, 4}, 50 + step, dtype);
        ddp->zero_grad();
        ref->zero_grad();
        const Step got = forward_backward(*ddp, rows(x, sizes, rank), rows(gy, sizes, rank));
        const Step want = forward_backward(*ref, x, gy);
        EXPECT_TRUE(all_close(got.y, rows(want.y, sizes, rank), rtol, atol)) << "output, step " << step;
        EXPECT_TRUE(all_close(got.dx, rows(want.dx, sizes, rank), rtol, atol)) << "input grad, step " << step;
        EXPECT_TRUE(all_close(raw::mul(sync->weight.grad(), 3.0), ref->weight.grad(), rtol, atol)) << "step " << step;
        EXPECT_TRUE(all_close(raw::mul(sync->bias.grad(), 3.0), ref->bias.grad(), rtol, atol)) << "step " << step;
      }
      expect_same_running_stats(*sync, *ref, rtol, atol);
      // Evaluation: the running statistics, no collective (rank 1 has nothing to normalize).
      sync->eval();
      ref->eval();
      if (rank != 1) {
        const Tensor x = batch({4, 3, 3, 4}, 60 + rank, dtype);
        EXPECT_TRUE(all_close(sync->forward(x), ref->forward(x), rtol, atol)) << "evaluation";
      }
    }
    dist::destroy_process_group();
  });
  if (in_rank_child()) return;
  EXPECT_TRUE(all_succeeded(results));
}

TEST(SyncBatchNorm, MomentumNoneAndNoRunningStatsOverTwoRanks) {
  auto results = run_ranks(2, [](int rank) {
    dist::init_process_group();
    const std::vector<int64_t> sizes = {2, 4};
    for (const nn::BatchNormOptions& o : {nn::BatchNormOptions(3).momentum(std::nullopt),
                                          nn::BatchNormOptions(3).track_running_stats(false).affine(false)}) {
      auto sync = std::make_shared<dist::SyncBatchNorm>(o);
      auto ref = std::make_shared<nn::BatchNorm1d>(o);
      for (int step = 0; step < 3; ++step) {
        const Tensor x = batch({6, 3, 5}, 70 + step), gy = batch({6, 3, 5}, 80 + step);
        const Step got = forward_backward(*sync, rows(x, sizes, rank), rows(gy, sizes, rank));
        const Step want = forward_backward(*ref, x, gy);
        EXPECT_TRUE(all_close(got.y, rows(want.y, sizes, rank), 1e-5, 2e-6)) << "output, step " << step;
        EXPECT_TRUE(all_close(got.dx, rows(want.dx, sizes, rank), 1e-5, 2e-6)) << "input grad, step " << step;
      }
      if (o.track_running_stats()) expect_same_running_stats(*sync, *ref, 1e-5, 1e-6);
    }
    dist::destroy_process_group();
  });
  if (in_rank_child()) return;
  EXPECT_TRUE(all_succeeded(results));
}

// The first layer on data: the input needs no gradient, so backward all-reduces nothing (on every
// rank alike); the weight and bias gradients, summed over the ranks by hand, are the whole batch's.
TEST(SyncBatchNorm, OnAnInputWithoutGradientOnlyTheParametersGetOne) {
  auto results = run_ranks(2, [](int rank) {
    dist::init_process_group();
    const std::vector<int64_t> sizes = {5, 2};
    auto sync = std::make_shared<dist::SyncBatchNorm>(3);
    auto ref = std::make_shared<nn::BatchNorm2d>(3);
    set_affine(*sync, 11);
    set_affine(*ref, 11);
    const Tensor x = batch({7, 3, 2, 3}, 140), gy = batch({7, 3, 2, 3}, 141);
    const uint64_t before = dist::default_process_group()->collectives_started();
    colony::sum(colony::mul(sync->forward(rows(x, sizes, rank)), rows(gy, sizes, rank))).backward();
    EXPECT_EQ(dist::default_process_group()->collectives_started(), before + 1) << "the forward's all-gather only";
    colony::sum(colony::mul(ref->forward(x), gy)).backward();
    Tensor weight_grad = raw::clone(sync->weight.grad()), bias_grad = raw::clone(sync->bias.grad());
    dist::all_reduce(weight_grad);
    dist::all_reduce(bias_grad);
    EXPECT_TRUE(all_close(weight_grad, ref->weight.grad(), 1e-5, 2e-6));
    EXPECT_TRUE(all_close(bias_grad, ref->bias.grad(), 1e-5, 2e-6));
    dist::destroy_process_group();
  });
  if (in_rank_child()) return;
  EXPECT_TRUE(all_succeeded(results));
}

// What a torch user writes: convert, wrap in DDP, train. With unequal batches each rank's loss is
// its share of the whole batch's mean (its sum times world / total), so that DDP's average is the
// whole batch's gradient.
TEST(SyncBatchNorm, ConvertedConvNetUnderDdpWithUnequalBatchesTrainsLikeOneProcess) {
  auto results = run_ranks(2, [](int rank) {
    dist::init_process_group();
    const std::vector<int64_t> sizes = {6, 10};
    manual_seed(21);
    auto model = dist::convert_sync_batchnorm(std::make_shared<ConvNet>());
    auto ddp = std::make_shared<dist::DistributedDataParallel>(model);
    optim::SGD opt(ddp->parameters(), optim::SGDOptions(0.1).momentum(0.9));
    manual_seed(21);
    auto ref = std::make_shared<ConvNet>();
    optim::SGD ref_opt(ref->parameters(), optim::SGDOptions(0.1).momentum(0.9));
    for (int step = 0; step < 5; ++step) {
      const Tensor x = batch({16, 3, 6, 6}, 90 + step);
      Generator g(100 + step);
      const Tensor y = raw::randint(0, 5, {16}, TensorOptions(kInt64), &g);
      opt.zero_grad();
      const double share = static_cast<double>(sizes[rank]) * 2 / 16;
      colony::mul(F::cross_entropy(ddp->forward(rows(x, sizes, rank)), rows(y, sizes, rank)), share).backward();
      opt.step();
      ref_opt.zero_grad();
      F::cross_entropy(ref->forward(x), y).backward();
      ref_opt.step();
    }
    const auto got = model->named_parameters(), want = ref->named_parameters();
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_TRUE(all_close(got[i].second, want[i].second, 1e-4, 1e-5)) << got[i].first;
    expect_same_running_stats(*model->bn, *ref->bn, 1e-4, 1e-5);
    expect_same_running_stats(*model->features->ptr<nn::BatchNorm2d>(1), *ref->features->ptr<nn::BatchNorm2d>(1),
                              1e-4, 1e-5);
    dist::destroy_process_group();
  });
  if (in_rank_child()) return;
  EXPECT_TRUE(all_succeeded(results));
}

// Under CPU autocast (bfloat16) the statistics and normalization run in float32 and the output
// comes back in bfloat16, as batch_norm's.
TEST(SyncBatchNorm, UnderAutocastBehavesAsBatchNorm) {
  auto results = run_ranks(2, [](int rank) {
    dist::init_process_group();
    const std::vector<int64_t> sizes = {3, 5};
    auto sync = std::make_shared<dist::SyncBatchNorm>(3);
    auto ref = std::make_shared<nn::BatchNorm2d>(3);
    set_affine(*sync, 7);
    set_affine(*ref, 7);
    const Tensor x = batch({8, 3, 4, 4}, 110, kBFloat16), gy = batch({8, 3, 4, 4}, 111, kBFloat16);
    AutocastGuard autocast(DeviceType::CPU, kBFloat16);
    const Step got = forward_backward(*sync, rows(x, sizes, rank), rows(gy, sizes, rank));
    const Step want = forward_backward(*ref, x, gy);
    EXPECT_EQ(got.y.dtype(), kBFloat16);
    EXPECT_EQ(got.dx.dtype(), kBFloat16);
    EXPECT_TRUE(all_close(got.y, rows(want.y, sizes, rank), 2e-2, 2e-2));
    EXPECT_TRUE(all_close(got.dx, rows(want.dx, sizes, rank), 2e-2, 2e-2));
    EXPECT_EQ(sync->running_mean.dtype(), kFloat32);
    expect_same_running_stats(*sync, *ref, 1e-5, 1e-6);
    dist::destroy_process_group();
  });
  if (in_rank_child()) return;
  EXPECT_TRUE(all_succeeded(results));
}

// Ranks whose modules have different channel counts: the all-gather's sizes differ, and every
// rank is told who called what instead of hanging or mixing channels.
TEST(SyncBatchNorm, DifferentChannelCountsOnTheRanksAreNamed) {
  auto results = run_ranks(2, [](int rank) {
    dist::init_process_group();
    dist::SyncBatchNorm bn(rank == 0 ? 3 : 4);
    std::string error;
    try {
      bn.forward(batch({4, rank == 0 ? 3 : 4, 2, 2}, 1));
    } catch (const std::exception& e) {
      error = e.what();
    }
    EXPECT_NE(error.find("collective mismatch at #"), std::string::npos) << error;
    EXPECT_NE(error.find("rank 0 called allgather(float32, 7 elements per rank)"), std::string::npos) << error;
    EXPECT_NE(error.find("rank 1 called allgather(float32, 9 elements per rank)"), std::string::npos) << error;
    dist::destroy_process_group();
  });
  if (in_rank_child()) return;
  EXPECT_TRUE(all_succeeded(results));
}

// A rank that fails before its forward's all-gather stops the others, named, through the group's
// watchdog, as any collective's failure does.
TEST(SyncBatchNorm, ARankThatFailsStopsTheOthers) {
  testing::RunRanksOptions quick;
  quick.timeout = std::chrono::seconds(30);
  auto results = run_ranks(3, [](int rank) {
    dist::init_process_group();
    auto bn = std::make_shared<dist::SyncBatchNorm>(3);
    try {
      for (int step = 0;; ++step) {
        if (rank == 2 && step == 3) throw std::runtime_error("bad batch");
        forward_backward(*bn, batch({4, 3, 2, 2}, step), batch({4, 3, 2, 2}, 1000 + step));
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "caught: %s\n", e.what());
      dist::destroy_process_group();
      throw;
    }
  }, quick);
  if (in_rank_child()) return;
  for (const auto& r : results) {
    EXPECT_FALSE(r.timed_out) << "rank " << r.rank << " hung:\n" << r.output;
    EXPECT_NE(r.exit_code, 0) << "rank " << r.rank;
    if (r.rank == 2) continue;
    EXPECT_LT(r.seconds - results[2].seconds, 5.0) << "rank " << r.rank << " outlived the failed rank";
    EXPECT_NE(r.output.find("rank 2 failed: bad batch"), std::string::npos) << "rank " << r.rank << ":\n" << r.output;
  }
}

// ---------- GPUs ----------

// One rank per GPU, NCCL: float32, and float16 input with float32 parameters (mixed precision),
// against a BatchNorm2d over the whole batch on the CPU.
TEST(SyncBatchNorm, TwoRanksOnNcclMatchOneBatchNorm_MultiCUDA) {
  COLONY_REQUIRE_CUDA(2);
  auto results = run_ranks(2, [](int rank) {
    dist::init_process_group();
    const Device dev = dist::local_device();
    ASSERT_TRUE(dev.is_cuda());
    EXPECT_EQ(dist::default_process_group()->backend_name(), "gloo+nccl");
    const std::vector<int64_t> sizes = {3, 5};
    for (DType dtype : {kFloat32, kFloat16}) {
      const double tol = dtype == kFloat32 ? 1e-4 : 2e-2;
      auto sync = std::make_shared<dist::SyncBatchNorm>(3);
      auto ref = std::make_shared<nn::BatchNorm2d>(3);
      set_affine(*sync, 9);
      set_affine(*ref, 9);
      sync->to(dev);
      const Tensor x = batch({8, 3, 4, 4}, 120), gy = batch({8, 3, 4, 4}, 121);
      const Step got = forward_backward(*sync, raw::to(rows(x, sizes, rank), dev, dtype),
                                        raw::to(rows(gy, sizes, rank), dev, dtype));
      const Step want = forward_backward(*ref, x, gy);
      EXPECT_EQ(got.y.device(), dev);
      EXPECT_EQ(got.y.dtype(), dtype);
      EXPECT_TRUE(all_close(raw::to(got.y, kCPU, kFloat32), rows(want.y, sizes, rank), tol, tol));
      EXPECT_TRUE(all_close(raw::to(got.dx, kCPU, kFloat32), rows(want.dx, sizes, rank), tol, tol));
      EXPECT_TRUE(all_close(raw::to(sync->running_mean, kCPU, kFloat32), ref->running_mean, tol, tol));
      EXPECT_TRUE(all_close(raw::to(sync->running_var, kCPU, kFloat32), ref->running_var, tol, tol));
    }
    dist::destroy_process_group();
  });
  if (in_rank_child()) return;
  EXPECT_TRUE(all_succeeded(results));
}

// Two ranks sharing one GPU through Gloo (CUDA tensors staged through host memory).
TEST(SyncBatchNorm, TwoRanksSharingOneGpuThroughGlooMatchOneBatchNorm_CUDA) {
  COLONY_REQUIRE_CUDA(1);
  auto results = run_ranks(2, [](int rank) {
    dist::InitOptions io;
    io.backend = "gloo";
    dist::init_process_group(io);
    const Device dev = Device::cuda(0);
    const std::vector<int64_t> sizes = {2, 6};
    auto sync = std::make_shared<dist::SyncBatchNorm>(3);
    auto ref = std::make_shared<nn::BatchNorm2d>(3);
    set_affine(*sync, 9);
    set_affine(*ref, 9);
    sync->to(dev);
    const Tensor x = batch({8, 3, 4, 4}, 130), gy = batch({8, 3, 4, 4}, 131);
    const Step got = forward_backward(*sync, raw::to(rows(x, sizes, rank), dev, kFloat32),
                                      raw::to(rows(gy, sizes, rank), dev, kFloat32));
    const Step want = forward_backward(*ref, x, gy);
    EXPECT_TRUE(all_close(raw::to(got.y, kCPU, kFloat32), rows(want.y, sizes, rank), 1e-4, 1e-5));
    EXPECT_TRUE(all_close(raw::to(got.dx, kCPU, kFloat32), rows(want.dx, sizes, rank), 1e-4, 1e-5));
    EXPECT_TRUE(all_close(raw::to(sync->running_var, kCPU, kFloat32), ref->running_var, 1e-4, 1e-5));
    dist::destroy_process_group();
  });
  if (in_rank_child()) return;
  EXPECT_TRUE(all_succeeded(results));
}

}  // namespace
}  // namespace colony
