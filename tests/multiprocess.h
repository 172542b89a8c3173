// Multi-process tests with real processes: run_ranks() re-executes the running test binary once
// per rank (--gtest_filter=<this test>), with the launcher's environment (RANK, WORLD_SIZE,
// LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR=127.0.0.1, MASTER_PORT=<a free port>,
// COLONY_JOB_TOKEN). In a child it runs `body(rank)` and exits (0 when no assertion failed and
// nothing was thrown); in the parent it waits for every child, kills them all after `timeout`, and
// returns what each one did, so a multi-process test can never hang.
//
//   TEST(Store, Counter) {
//     auto results = colony::testing::run_ranks(3, [](int rank) { ... EXPECT_...; });
//     EXPECT_TRUE(colony::testing::all_succeeded(results));
//   }
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace colony::testing {

struct RankResult {
  int rank = -1;
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;      // the signal that ended it, else 0
  bool timed_out = false;
  double seconds = 0;  // wall time from start until it ended
  std::string output;  // stdout and stderr together
};

struct RunRanksOptions {
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
  // Extra environment for every child; "{rank}" in a value is replaced by the rank.
  std::map<std::string, std::string> env;
  // Use this MASTER_PORT instead of a fresh free one.
  int master_port = 0;
};

std::vector<RankResult> run_ranks(int world_size, const std::function<void(int rank)>& body,
                                  const RunRanksOptions& options = {});

// True when running as a child of run_ranks (the test body then runs once per rank).
bool in_rank_child();

// A TCP port on 127.0.0.1 that was free a moment ago.
int free_port();

// Success when every rank exited 0; otherwise names each failed rank with its output.
::testing::AssertionResult all_succeeded(const std::vector<RankResult>& results);

}  // namespace colony::testing
