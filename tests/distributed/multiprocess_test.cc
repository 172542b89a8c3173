// The multi-process test harness itself: every rank runs with the launcher's environment, a
// failing rank is reported with its output, and a hanging rank is killed at the timeout.
#include "tests/multiprocess.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

using colony::testing::all_succeeded;
using colony::testing::run_ranks;

TEST(RunRanks, EveryRankSeesItsEnvironment) {
  auto results = run_ranks(3, [](int rank) {
    EXPECT_EQ(std::string(std::getenv("RANK")), std::to_string(rank));
    EXPECT_EQ(std::string(std::getenv("WORLD_SIZE")), "3");
    EXPECT_EQ(std::string(std::getenv("MASTER_ADDR")), "127.0.0.1");
    EXPECT_NE(std::getenv("MASTER_PORT"), nullptr);
    EXPECT_NE(std::getenv("COLONY_JOB_TOKEN"), nullptr);
  });
  if (colony::testing::in_rank_child()) return;
  ASSERT_EQ(results.size(), 3u);
  EXPECT_TRUE(all_succeeded(results));
}

TEST(RunRanks, FailuresAndExceptionsAreReportedWithOutput) {
  auto results = run_ranks(2, [](int rank) {
    if (rank == 1) throw std::runtime_error("boom on one");
    ADD_FAILURE() << "assertion on zero";
  });
  if (colony::testing::in_rank_child()) return;
  EXPECT_EQ(results[0].exit_code, 1);
  EXPECT_NE(results[0].output.find("assertion on zero"), std::string::npos) << results[0].output;
  EXPECT_EQ(results[1].exit_code, 2);
  EXPECT_NE(results[1].output.find("boom on one"), std::string::npos) << results[1].output;
  EXPECT_FALSE(all_succeeded(results));
}

TEST(RunRanks, HangingRankIsKilledAtTheTimeout) {
  colony::testing::RunRanksOptions opts;
  opts.timeout = std::chrono::milliseconds(1500);
  auto results = run_ranks(2, [](int rank) {
    if (rank == 0) sleep(60);
  }, opts);
  if (colony::testing::in_rank_child()) return;
  EXPECT_TRUE(results[0].timed_out);
  EXPECT_EQ(results[0].signal, SIGKILL);
  EXPECT_LT(results[0].seconds, 10);
  EXPECT_EQ(results[1].exit_code, 0);
}
