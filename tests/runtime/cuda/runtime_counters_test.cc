// The runtime layer's counters and the COLONY_CUDA_SYNC switch (plain C++, so they run here).
#include "runtime/cuda/runtime_counters.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace colony::kernels::cuda {
namespace {

TEST(RuntimeCounters, SyncEnvAcceptsThePyTorchStyleSpellings) {
  EXPECT_FALSE(parse_sync_env(nullptr));
  for (const char* off : {"", "0", "false", "FALSE", "no", "off", "Off"}) EXPECT_FALSE(parse_sync_env(off)) << off;
  for (const char* on : {"1", "true", "True", "yes", "ON"}) EXPECT_TRUE(parse_sync_env(on)) << on;
}

TEST(RuntimeCounters, SyncEnvRejectsAnythingElseNamingTheVariable) {
  try {
    parse_sync_env("2");
    FAIL() << "COLONY_CUDA_SYNC=2 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("COLONY_CUDA_SYNC=2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("1/true/yes/on"), std::string::npos) << e.what();
  }
}

TEST(RuntimeCounters, SwitchCanBeSetAtRunTime) {
  const bool before = sync_after_launch();
  set_sync_after_launch(true);
  EXPECT_TRUE(sync_after_launch());
  set_sync_after_launch(false);
  EXPECT_FALSE(sync_after_launch());
  set_sync_after_launch(before);
}

TEST(RuntimeCounters, CountsFromEveryThread) {
  const int64_t syncs = host_sync_count(), launches = launch_count();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([] {
      for (int i = 0; i < 1000; ++i) {
        count_host_sync("test");
        count_launch();
        count_launch();
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(host_sync_count() - syncs, 4000);
  EXPECT_EQ(launch_count() - launches, 8000);
}

}  // namespace
}  // namespace colony::kernels::cuda
