// DistributedDataParallel on real processes with the Gloo group: equivalence with one process on
// the combined batch, gradient accumulation with no_sync, unused parameters, overlap of the
// all-reduce with backward, bucket rebuilding, comm hooks, model checks, buffer broadcast, and
// GradScaler: ranks skip or step together.
#include "distributed/ddp/ddp.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "autograd/autograd.h"
#include "data/sampler.h"
#include "distributed/init.h"
#include "nn/batchnorm.h"
#include "nn/functional.h"
#include "nn/layers.h"
#include "nn/linear.h"
#include "optim/grad_scaler.h"
#include "optim/sgd.h"
#include "tensor/random.h"
#include "tests/distributed/branchy_model.h"
#include "tests/multiprocess.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::all_succeeded;
using testing::in_rank_child;
using testing::run_ranks;

struct Mlp : nn::Module {
  explicit Mlp(int64_t width = 16) {
    fc1 = register_module("fc1", std::make_shared<nn::Linear>(8, width));
    fc2 = register_module("fc2", std::make_shared<nn::Linear>(width, 4));
  }
  Tensor forward(const Tensor& x) override { return fc2->forward(F::relu(fc1->forward(x))); }
  std::shared_ptr<nn::Linear> fc1, fc2;
};

// A fixed dataset every process generates identically.
struct Data {
  Tensor x, y;
  Data(int64_t n, uint64_t seed = 7) {
    Generator g(seed);
    x = raw::randn({n, 8}, {}, &g);
    y = raw::randint(0, 4, {n}, TensorOptions(kInt64), &g);
  }
  std::pair<Tensor, Tensor> batch(const std::vector<int64_t>& idx) const {
    Tensor i = raw::from_vector(idx, {static_cast<int64_t>(idx.size())});
    return {raw::index_select(x, 0, i), raw::index_select(y, 0, i)};
  }
};

std::vector<int64_t> slice(const std::vector<int64_t>& v, size_t from, size_t n) {
  return std::vector<int64_t>(v.begin() + from, v.begin() + from + n);
}

TEST(DistributedDataParallel, TwoRanksMatchOneProcessOnTheCombinedBatch) {
  auto results = run_ranks(2, [](int rank) {
    dist::init_process_group();
    const Data data(640);
    data::DistributedSampler mine(640, data::DistributedSamplerOptions().num_replicas(2).rank(rank).seed(3));
    manual_seed(100 + rank);  // different initial weights: DDP must broadcast rank 0's
    auto model = std::make_shared<Mlp>();
    auto ddp = std::make_shared<dist::DistributedDataParallel>(model);
    optim::SGD opt(ddp->parameters(), optim::SGDOptions(0.1).momentum(0.9));

    // The single-process reference with rank 0's initial weights and batch 32 = both shards.
    manual_seed(100);
    auto ref = std::make_shared<Mlp>();
    optim::SGD ref_opt(ref->parameters(), optim::SGDOptions(0.1).momentum(0.9));
    std::vector<int64_t> idx[2];
    for (int r = 0; r < 2; ++r)
      idx[r] = data::DistributedSampler(640, data::DistributedSamplerOptions().num_replicas(2).rank(r).seed(3))
                   .indices();
    ASSERT_EQ(mine.indices(), idx[rank]);

    for (int step = 0; step < 20; ++step) {
      auto [x, y] = data.batch(slice(idx[rank], step * 16, 16));
      opt.zero_grad();
      F::cross_entropy(ddp->forward(x), y).backward();
      opt.step();

      std::vector<int64_t> both;
      // Interleave like a 32-batch of one process over the same order (the mean is order-free).
      for (int i = 0; i < 16; ++i)
        for (int r = 0; r < 2; ++r) both.push_back(idx[r][step * 16 + i]);
      auto [bx, by] = data.batch(both);
      ref_opt.zero_grad();
      F::cross_entropy(ref->forward(bx), by).backward();
      ref_opt.step();
    }
    auto got = model->named_parameters(), want = ref->named_parameters();
    for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(testing::all_close(got[i].second, want[i].second, 1e-5, 1e-6)) << got[i].first;
    dist::destroy_process_group();
  });
  if (in_rank_child()) return;
  EXPECT_TRUE(all_succeeded(results));
}

TEST(DistributedDataParallel, NoSyncAccumulationOfFourMicroBatchesEqualsOneBigBatch) {
  auto results = run_ranks(2, [](int rank) {
    dist::init_process_group();
    const Data data(64);
    manual_seed(5);
    auto model = std::make_shared<Mlp>();
    auto ddp = std::make_shared<dist::DistributedDataParallel>(model);
    // What this rank alone accumulates over its first three micro-batches.
    manual_seed(5);
    auto local = std::make_shared<Mlp>();
    for (int micro = 0; micro < 4; ++micro) {
      std::vector<int64_t> idx;
      for (int i = 0; i < 8; ++i) idx.push_back(rank * 32 + micro * 8 + i);
      auto [x, y] = data.batch(idx);
      if (micro < 3) {
        auto guard = ddp->no_sync();
        (F::cross_entropy(ddp->forward(x), y) / 4.0).backward();
        (F::cross_entropy(local->forward(x), y) / 4.0).backward();
      } else {
        // Inside the guard nothing was reduced: the gradients are still this rank's own.
        EXPECT_EQ(ddp->reducer()->stats().iterations, 0);
        auto got = model->named_parameters(), own = local->named_parameters();
        for (size_t i = 0; i < got.size(); ++i)
          EXPECT_TRUE(testing::all_close(got[i].second.grad(), own[i].second.grad(), 1e-6, 1e-8)) << got[i].first;
        (F::cross_entropy(ddp->forward(x), y) / 4.0).backward();
        EXPECT_EQ(ddp->reducer()->stats().iterations, 1);
      }
    }
    manual_seed(5);
    auto ref = std::make_shared<Mlp>();
    std::vector<int64_t> all(64);
    for (int i = 0; i < 64; ++i) all[i] = i;
    auto [x, y] = data.batch(all);
    F::cross_entropy(ref->forward(x), y).backward();
    auto got = model->named_parameters(), want = ref->named_parameters();
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_TRUE(testing::all_close(got[i].second.grad(), want[i].second.grad(), 1e-5, 1e-7)) << got[i].first;
    dist::destroy_process_group();
  });
  if (in_rank_child()) return;
  EXPECT_TRUE(all_succeeded(results));
}

using testing::Branchy;  // a head used only by some ranks on some steps, and one no rank ever uses

TEST(DistributedDataParallel, UnusedParametersNeedNoFlag) {
  auto results = run_ranks(2, [](int rank) {
    dist::init_process_group();
    const Data data(64);
    manual_seed(9);
    auto model = std::make_shared<Branchy>();
    dist::DistributedDataParallelOptions opts;
    opts.first_bucket_cap_mb(0.0001).bucket_cap_mb(0.0001);  // one bucket per parameter or so
    auto ddp = std::make_shared<dist::DistributedDataParallel>(model, opts);
    optim::SGD opt(ddp->parameters(), optim::SGDOptions(0.05));
    for (int step = 0; step < 6; ++step) {
      model->use_b = (step % 2 == 1) && rank == 1;  // head_b: used on rank 1 on odd steps only
      std::vector<int64_t> idx;
      for (int i = 0; i < 8; ++i) idx.push_back((step * 16 + rank * 8 + i) % 64);
      auto [x, y] = data.batch(idx);
      opt.zero_grad();
      F::cross_entropy(ddp->forward(x), y).backward();
      EXPECT_FALSE(model->never->weight.grad().defined()) << "no rank used it: its grad stays undefined";
      EXPECT_TRUE(model->trunk->weight.grad().defined());
      if (step % 2 == 1) {
        ASSERT_TRUE(model->head_b->weight.grad().defined()) << "rank 1 used head_b: its average reaches all";
        // Rank 0 did not use head_b: its slot held zeros, so both ranks hold half of rank 1's grad.
        Tensor g = model->head_b->weight.grad().contiguous();
        Tensor other = raw::clone(g);
        dist::broadcast(other, 1);
        EXPECT_TRUE(testing::all_close(g, other, 0, 0));
      } else {
        EXPECT_FALSE(model->head_b->weight.grad().defined());
      }
      opt.step();
    }
    dist::destroy_process_group();
  });
  if (in_rank_child()) return;
  EXPECT_TRUE(all_succeeded(results));
}

struct Deep : nn::Module {
  Deep() {
    for (int i = 0; i < 6; ++i)
      layers.push_back(register_module("l" + std::to_string(i), std::make_shared<nn::Linear>(256, 256)));
  }
  Tensor forward(const Tensor& x) override {
    Tensor h = x;
    for (auto& l : layers) h = F::relu(l->forward(h));
    return h;
  }
  std::vector<std::shared_ptr<nn::Linear>> layers;
};

TEST(DistributedDataParallel, FirstBucketAllReduceStartsBeforeBackwardEnds) {
  const std::string trace_dir = ::testing::TempDir();
  testing::RunRanksOptions ro;
  ro.env["COLONY_TRACE"] = trace_dir + "/ddp_overlap.json";  // each rank writes ddp_overlap.rank<R>.json
  auto results = run_ranks(2, [](int rank) {
    dist::init_process_group();
    manual_seed(1);
    auto model = std::make_shared<Deep>();
    dist::DistributedDataParallelOptions opts;
    opts.first_bucket_cap_mb(0.25).bucket_cap_mb(0.5);  // each layer's weight is 0.25 MiB
    auto ddp = std::make_shared<dist::DistributedDataParallel>(model, opts);
    EXPECT_GE(ddp->reducer()->bucket_layout().size(), 4u);
    Tensor x = raw::randn({256, 256});
    optim::SGD opt(ddp->parameters(), optim::SGDOptions(0.01));
    for (int step = 0; step < 4; ++step) {
      opt.zero_grad();
      ddp->forward(x).sum().backward();
      opt.step();
      // What the reducer decides: the first bucket goes out as soon as its gradients are ready,
      // with five layers' backward still to compute. When Gloo's thread then begins it depends on
      // the OS: on a machine busy with other tests it can start only after backward, so that part
      // is asserted over all iterations together (hidden_seconds) and not for each one.
      EXPECT_LT(ddp->reducer()->stats().last_first_bucket_launch_minus_backward_end, 0)
          << "step " << step << ": the first bucket's all-reduce should be launched while backward still computes";
    }
    // The gradients are views into their bucket: one bucket's lie back to back in its order.
    const std::vector<Tensor> params = model->parameters();
    for (const auto& bucket : ddp->reducer()->bucket_layout()) {
      for (size_t i = 0; i + 1 < bucket.size(); ++i) {
        const Tensor &g = params[bucket[i]].grad(), &next = params[bucket[i + 1]].grad();
        EXPECT_EQ(static_cast<const char*>(next.data_ptr_raw()),
                  static_cast<const char*>(g.data_ptr_raw()) + g.nbytes())
            << "parameters " << bucket[i] << " and " << bucket[i + 1];
      }
    }
    auto stats = ddp->reducer()->stats();
    EXPECT_EQ(stats.iterations, 4);
    EXPECT_GT(stats.hidden_seconds, 0) << "no all-reduce ran while backward computed, in four iterations";
    dist::destroy_process_group();
    std::ifstream f(::testing::TempDir() + "/ddp_overlap.rank" + std::to_string(rank) + ".json");
    std::stringstream ss;
    ss << f.rdbuf();
    EXPECT_NE(ss.str().find("\"allreduce bucket 0"), std::string::npos);
    EXPECT_NE(ss.str().find("\"backward\""), std::string::npos);
    EXPECT_NE(ss.str().find("\"forward\""), std::string::npos);
    EXPECT_NE(ss.str().find("\"optimizer.step\""), std::string::npos);
    EXPECT_NE(ss.str().find("\"clock_origin\",\"ph\":\"M\""), std::string::npos) << "ranks can be lined up";
  }, ro);
  if (in_rank_child()) return;
  EXPECT_TRUE(all_succeeded(results));
}

// Registered in the opposite order of use, so gradients arrive in registration order.
struct Reversed : nn::Module {
  Reversed() {
    second = register_module("second", std::make_shared<nn::Linear>(64, 4));
    first = register_module("first", std::make_shared<nn::Linear>(8, 64));
  }
  Tensor forward(const Tensor& x) override { return second->forward(F::relu(first->forward(x))); }
  std::shared_ptr<nn::Linear> second, first;
};

TEST(DistributedDataParallel, BucketsAreRebuiltInArrivalOrderAfterTheFirstIteration) {
  auto results = run_ranks(2, [](int) {
    dist::init_process_group();
    auto model = std::make_shared<Reversed>();
    dist::DistributedDataParallelOptions opts;
    opts.first_bucket_cap_mb(0.0005).bucket_cap_mb(0.0005);  // ~512 bytes: several buckets
    auto ddp = std::make_shared<dist::DistributedDataParallel>(model, opts);
    // Registration order: second.weight 0, second.bias 1, first.weight 2, first.bias 3.
    EXPECT_EQ(ddp->reducer()->bucket_layout().front().front(), 3u) << "initially reverse registration order";
    const Data data(16);
    auto [x, y] = data.batch({0, 1, 2, 3});
    for (int step = 0; step < 3; ++step) {
      model->zero_grad();
      F::cross_entropy(ddp->forward(x), y).backward();
    }
    auto layout = ddp->reducer()->bucket_layout();
    EXPECT_TRUE(layout.front().front() == 0u || layout.front().front() == 1u)
        << "second's gradients arrive first and now lead the first bucket";
    dist::destroy_process_group();
  });
  if (in_rank_child()) return;
  EXPECT_TRUE(all_succeeded(results));
}

TEST(DistributedDataParallel, HalfPrecisionCommHooksAverageApproximately) {
  auto results = run_ranks(2, [](int rank) {
    dist::init_process_group();
    const Data data(32);
    for (int which = 0; which < 2; ++which) {
      manual_seed(3);
      auto model = std::make_shared<Mlp>();
      auto ddp = std::make_shared<dist::DistributedDataParallel>(model);
      ddp->register_comm_hook(which == 0 ? dist::comm_hooks::fp16_compress() : dist::comm_hooks::bf16_compress());
      std::vector<int64_t> idx;
      for (int i = 0; i < 16; ++i) idx.push_back(rank * 16 + i);
      auto [x, y] = data.batch(idx);
      F::cross_entropy(ddp->forward(x), y).backward();
      manual_seed(3);
      auto ref = std::make_shared<Mlp>();
      std::vector<int64_t> all(32);
      for (int i = 0; i < 32; ++i) all[i] = i;
      auto [bx, by] = data.batch(all);
      F::cross_entropy(ref->forward(bx), by).backward();
      const double tol = which == 0 ? 2e-3 : 2e-2;
      const Tensor got = model->fc1->weight.grad(), exact = ref->fc1->weight.grad();
      EXPECT_TRUE(testing::all_close(got, exact, tol, tol * 0.1));
      // It went over the wire in half precision: every value it came back with is one the wire
      // type holds, which the exact average is not.
      const DType wire = which == 0 ? kFloat16 : kBFloat16;
      auto through_wire = [&](const Tensor& t) { return raw::to(raw::to(t, kCPU, wire), kCPU, kFloat32); };
      EXPECT_TRUE(testing::all_close(through_wire(got), got, 0.0, 0.0)) << dtype_name(wire);
      EXPECT_FALSE(testing::all_close(through_wire(exact), exact, 0.0, 0.0)) << "the check above could not fail";
    }
    dist::destroy_process_group();
  });
  if (in_rank_child()) return;
  EXPECT_TRUE(all_succeeded(results));
}

TEST(DistributedDataParallel, DifferentModelsOnDifferentRanksAreNamed) {
  auto results = run_ranks(2, [](int rank) {
    dist::init_process_group();
    auto model = std::make_shared<Mlp>(rank == 0 ? 16 : 12);
    EXPECT_TRUE(testing::throws_with<std::invalid_argument>(
        [&] { dist::DistributedDataParallel ddp(model); },
        "rank 0 has parameter 'fc1.weight' float32 [16, 8] but rank 1 has parameter 'fc1.weight' float32 [12, 8]"));
    dist::destroy_process_group();
  });
  if (in_rank_child()) return;
  EXPECT_TRUE(all_succeeded(results));
}

struct WithNorm : nn::Module {
  WithNorm() { bn = register_module("bn", std::make_shared<nn::BatchNorm2d>(3)); }
  Tensor forward(const Tensor& x) override { return bn->forward(x); }
  std::shared_ptr<nn::BatchNorm2d> bn;
};

TEST(DistributedDataParallel, BroadcastsRank0sParametersAndBuffers) {
  auto results = run_ranks(2, [](int rank) {
    dist::init_process_group();
    auto model = std::make_shared<WithNorm>();
    {
      NoGradGuard g;
      model->bn->weight.fill_(1.0 + rank);
      model->bn->running_mean.fill_(10.0 * rank + 1);
    }
    auto ddp = std::make_shared<dist::DistributedDataParallel>(model);
    EXPECT_TRUE(testing::all_close(model->bn->weight, raw::full({3}, 1.0)));
    {
      NoGradGuard g;
      model->bn->running_mean.fill_(10.0 * rank + 2);  // drifts apart again
    }
    model->eval();
    ddp->forward(raw::randn({2, 3, 4, 4}));
    EXPECT_TRUE(testing::all_close(model->bn->running_mean, raw::full({3}, 2.0))) << "rank 0's buffers at forward";
    dist::destroy_process_group();
  });
  if (in_rank_child()) return;
  EXPECT_TRUE(all_succeeded(results));
}

TEST(DistributedDataParallel, BuffersStayLocalWithoutBroadcastBuffers) {
  auto results = run_ranks(2, [](int rank) {
    dist::init_process_group();
    auto model = std::make_shared<WithNorm>();
    auto ddp = std::make_shared<dist::DistributedDataParallel>(
        model, dist::DistributedDataParallelOptions().broadcast_buffers(false));
    {
      NoGradGuard g;
      model->bn->running_mean.fill_(10.0 * rank + 2);
    }
    model->eval();
    ddp->forward(raw::randn({2, 3, 4, 4}));
    EXPECT_TRUE(testing::all_close(model->bn->running_mean, raw::full({3}, 10.0 * rank + 2))) << "its own buffers";
    dist::destroy_process_group();
  });
  if (in_rank_child()) return;
  EXPECT_TRUE(all_succeeded(results));
}

// float32 and float64 parameters: buckets never mix dtypes, and both kinds are averaged.
struct TwoDtypes : nn::Module {
  TwoDtypes() {
    single = register_module("single", std::make_shared<nn::Linear>(8, 8));
    twice = register_module("twice", std::make_shared<nn::Linear>(8, 4));
    twice->to(kFloat64);
  }
  Tensor forward(const Tensor& x) override { return twice->forward(single->forward(x).to(kFloat64)); }
  std::shared_ptr<nn::Linear> single, twice;
};

TEST(DistributedDataParallel, BucketsHoldOneDtypeEachAndTheDefaultCaps) {
  auto results = run_ranks(2, [](int rank) {
    dist::init_process_group();
    dist::DistributedDataParallelOptions defaults;
    EXPECT_DOUBLE_EQ(defaults.first_bucket_cap_mb(), 1.0);
    EXPECT_DOUBLE_EQ(defaults.bucket_cap_mb(), 25.0);
    manual_seed(2);
    auto model = std::make_shared<TwoDtypes>();
    auto ddp = std::make_shared<dist::DistributedDataParallel>(model);
    const std::vector<Tensor> params = model->parameters();
    auto layout = ddp->reducer()->bucket_layout();
    ASSERT_EQ(layout.size(), 2u) << "one bucket per dtype";
    for (const auto& bucket : layout)
      for (size_t idx : bucket) EXPECT_EQ(params[idx].dtype(), params[bucket.front()].dtype());
    // Each rank's gradient is (rank + 1) x the same: the average is 1.5 x, in both dtypes.
    Tensor x = raw::full({4, 8}, 1.0);
    (ddp->forward(x).sum() * static_cast<double>(rank + 1)).backward();
    manual_seed(2);
    auto ref = std::make_shared<TwoDtypes>();
    (ref->forward(x).sum() * 1.5).backward();
    auto got = model->named_parameters(), want = ref->named_parameters();
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].second.grad().dtype(), want[i].second.dtype()) << got[i].first;
      EXPECT_TRUE(testing::all_close(got[i].second.grad(), want[i].second.grad(), 1e-6, 1e-7)) << got[i].first;
    }
    dist::destroy_process_group();
  });
  if (in_rank_child()) return;
  EXPECT_TRUE(all_succeeded(results));
}

TEST(DistributedDataParallel, OneProcessWithoutAGroupJustRunsTheModule) {
  auto model = std::make_shared<Mlp>();
  dist::DistributedDataParallel ddp(model);
  EXPECT_EQ(ddp.reducer(), nullptr);
  Tensor x = raw::randn({2, 8});
  EXPECT_TRUE(testing::all_close(ddp.forward(x), model->forward(x), 0, 0));
  EXPECT_EQ(ddp.named_parameters().front().first, "module.fc1.weight");
}

// Forward pre-hooks (what ZeRO's overlap_all_gather waits through) run at the start of every
// forward, before the module, in registration order, until removed; an empty one is refused.
TEST(DistributedDataParallel, ForwardPreHooksRunBeforeTheModuleUntilRemoved) {
  auto model = std::make_shared<Mlp>();
  dist::DistributedDataParallel ddp(model);
  std::string calls;
  const int a = ddp.register_forward_pre_hook([&] { calls += "a"; });
  ddp.register_forward_pre_hook([&] {
    calls += "b";
    // Before the module: what it reads next is what the hook left.
    NoGradGuard no_grad;
    Tensor w = model->parameters().front();
    raw::fill_(w, 0.0);
  });
  Tensor x = raw::randn({2, 8});
  Tensor out = ddp.forward(x);
  EXPECT_EQ(calls, "ab");
  EXPECT_TRUE(testing::all_close(out, model->forward(x), 0, 0));
  ddp.remove_forward_pre_hook(a);
  ddp.forward(x);
  EXPECT_EQ(calls, "abb");
  EXPECT_TRUE(testing::throws_with<std::invalid_argument>([&] { ddp.register_forward_pre_hook(nullptr); },
                                                          "the hook is empty"));
}

// Only rank 1's gradients overflow (an inf in its input); the all-reduce hands every rank the
// inf/NaN average, so both skip the step, back off together and keep identical weights.
TEST(DistributedDataParallel, GradScalerSkipsOnEveryRankWhenOneRankOverflows) {
  auto results = run_ranks(2, [](int rank) {
    dist::init_process_group();
    const Data data(64);
    manual_seed(9);
    auto model = std::make_shared<Mlp>();
    auto ddp = std::make_shared<dist::DistributedDataParallel>(model);
    optim::SGD opt(ddp->parameters(), optim::SGDOptions(0.1).momentum(0.9));
    optim::GradScaler scaler;
    auto weights_sum = [&] {
      double total = 0;
      for (const Tensor& p : model->parameters()) total += raw::sum(raw::to(p, kCPU, kFloat64)).item<double>();
      return total;
    };
    std::vector<bool> stepped;
    for (int step = 0; step < 3; ++step) {
      std::vector<int64_t> idx;
      for (int i = 0; i < 8; ++i) idx.push_back(rank * 32 + step * 8 + i);
      auto [x, y] = data.batch(idx);
      if (step == 1 && rank == 1) raw::narrow(x, 0, 3, 1).fill_(std::numeric_limits<double>::infinity());
      opt.zero_grad();
      const double before = weights_sum();
      scaler.scale(F::cross_entropy(ddp->forward(x), y)).backward();
      stepped.push_back(scaler.step(opt));
      scaler.update();
      if (step == 1) {
        EXPECT_EQ(weights_sum(), before);  // untouched
      }
      // Both ranks hold the same weights and the same scale after every step.
      const double mine = weights_sum();
      EXPECT_EQ(dist::all_reduce(mine, dist::ReduceOp::kMax), dist::all_reduce(mine, dist::ReduceOp::kMin));
      EXPECT_TRUE(std::isfinite(mine));
    }
    EXPECT_EQ(stepped, (std::vector<bool>{true, false, true}));
    EXPECT_EQ(scaler.get_scale(), 32768.0);
    dist::destroy_process_group();
  });
  if (in_rank_child()) return;
  EXPECT_TRUE(all_succeeded(results));
}

}  // namespace
}  // namespace colony
