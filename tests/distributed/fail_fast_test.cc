// A failing rank ends the whole job within seconds, and every survivor's error names it: a rank
// that throws (caught and passed to destroy_process_group, or uncaught), one killed with SIGKILL,
// and the death of rank 0, which hosts the store.
#include <signal.h>
#include <unistd.h>

#include <thread>

#include "distributed/ddp/ddp.h"
#include "distributed/init.h"
#include "nn/functional.h"
#include "nn/linear.h"
#include "optim/sgd.h"
#include "tests/multiprocess.h"
#include "tests/test_util.h"

namespace colony {
namespace {

using testing::in_rank_child;
using testing::run_ranks;

// Trains until `fail` (called at every step) ends this rank one way or another.
void train(const std::function<void(int step)>& fail) {
  dist::init_process_group();
  auto model = std::make_shared<nn::Linear>(16, 4);
  auto ddp = std::make_shared<dist::DistributedDataParallel>(model);
  optim::SGD opt(ddp->parameters(), optim::SGDOptions(0.01));
  Tensor x = raw::randn({8, 16});
  Tensor y = raw::zeros({8}, TensorOptions(kInt64));
  for (int step = 0; step < 1000000; ++step) {
    fail(step);
    opt.zero_grad();
    F::cross_entropy(ddp->forward(x), y).backward();
    opt.step();
  }
}

// The survivors: each ended non-zero within `seconds` of the job's start and within 5 s of the
// failed rank's end, and said which rank failed.
void expect_job_stopped(const std::vector<testing::RankResult>& results, int failed, const std::string& needle,
                        double seconds = 10) {
  for (const auto& r : results) {
    EXPECT_FALSE(r.timed_out) << "rank " << r.rank << " hung:\n" << r.output;
    EXPECT_LT(r.seconds, seconds) << "rank " << r.rank;
    if (r.rank == failed) continue;
    EXPECT_LT(r.seconds - results[failed].seconds, 5.0) << "rank " << r.rank << " outlived the failed rank " << failed;
    EXPECT_NE(r.exit_code, 0) << "rank " << r.rank << ":\n" << r.output;
    EXPECT_NE(r.output.find(needle), std::string::npos) << "rank " << r.rank << " output lacks \"" << needle
                                                         << "\":\n" << r.output;
  }
}

testing::RunRanksOptions quick() {
  testing::RunRanksOptions o;
  o.timeout = std::chrono::seconds(30);
  return o;
}

TEST(FailFast, RankThatThrowsAndCallsDestroyStopsTheOthers) {
  auto results = run_ranks(3, [](int rank) {
    try {
      train([rank](int step) {
        if (rank == 1 && step == 5) throw std::runtime_error("data file vanished");
      });
    } catch (const std::exception& e) {
      std::fprintf(stderr, "caught: %s\n", e.what());
      dist::destroy_process_group();
      throw;
    }
  }, quick());
  if (in_rank_child()) return;
  expect_job_stopped(results, 1, "rank 1 failed: data file vanished");
}

TEST(FailFast, RankThatThrowsUncaughtStopsTheOthers) {
  auto results = run_ranks(2, [](int rank) {
    train([rank](int step) {
      if (rank == 1 && step == 5) {
        // Uncaught: std::terminate runs Colony's handler, which tells the others.
        std::thread([] { throw std::runtime_error("uncaught on a thread"); }).join();
      }
    });
  }, quick());
  if (in_rank_child()) return;
  EXPECT_EQ(results[1].signal, SIGABRT);
  expect_job_stopped(results, 1, "rank 1 failed: uncaught on a thread");
}

TEST(FailFast, RankKilledWithSigkillStopsTheOthers) {
  auto results = run_ranks(3, [](int rank) {
    train([rank](int step) {
      if (rank == 2 && step == 5) raise(SIGKILL);
    });
  }, quick());
  if (in_rank_child()) return;
  EXPECT_EQ(results[2].signal, SIGKILL);
  expect_job_stopped(results, 2, "rank 2");
  // The survivor that noticed first blamed rank 2, not itself, so nobody reads that a survivor
  // failed first.
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(results[r].output.find("because rank 0 failed"), std::string::npos) << results[r].output;
    EXPECT_EQ(results[r].output.find("because rank 1 failed"), std::string::npos) << results[r].output;
  }
}

TEST(FailFast, DeathOfTheStoreHostStopsTheOthers) {
  auto results = run_ranks(2, [](int rank) {
    train([rank](int step) {
      if (rank == 0 && step == 5) raise(SIGKILL);
    });
  }, quick());
  if (in_rank_child()) return;
  expect_job_stopped(results, 0, "rank 0");
}

TEST(FailFast, OrderlyFinishWhileAnotherRankStillWorksIsNotAFailure) {
  auto results = run_ranks(2, [](int rank) {
    dist::init_process_group();
    dist::barrier();
    // Rank 1 leaves at once; rank 0 keeps the store up and works on alone for longer than the
    // heartbeat timeout (a final evaluation, a checkpoint) without being stopped.
    if (rank == 0) sleep(2);
    dist::destroy_process_group();
  }, [] {
    auto o = quick();
    o.env["COLONY_HEARTBEAT_TIMEOUT_MS"] = "1000";
    return o;
  }());
  if (in_rank_child()) return;
  EXPECT_TRUE(testing::all_succeeded(results));
}

}  // namespace
}  // namespace colony
