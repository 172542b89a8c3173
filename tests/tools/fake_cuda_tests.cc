// A stand-in for a bundled test binary: tools/gpu_check.sh's selftest bundles it under four names,
// and what it does depends on the name it runs under (the bundle cannot pass it anything else:
// every bundled binary gets the same command line and environment).
//
//   ..._fails: one test fails, and the process exits as gtest does (1);
//   ..._fails_then_crashes: one test passes, one fails, one skips (no device here), one crashes the
//       process, and one after the crash must still be run and counted;
//   ..._crashes_at_exit: every test passes, then the process aborts after gtest wrote its report;
//   ..._hangs: one test never returns, and the one after it must still be run.
//
// It links //tests:test_main like every Colony test, so it loads Colony's shared libraries from
// the bundle's lib/ folder only when LD_LIBRARY_PATH names it.
#include <errno.h>  // program_invocation_short_name (glibc)
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "tests/test_util.h"

namespace {

bool named(const char* suffix) {
  const std::string self = program_invocation_short_name, end = suffix;
  return self.size() >= end.size() && self.compare(self.size() - end.size(), end.size(), end) == 0;
}

// Aborts after main returned (gtest's report is written by then), when so named.
struct AbortAtExit {
  ~AbortAtExit() {
    if (named("_crashes_at_exit")) std::abort();
  }
} abort_at_exit;

const char* sync_setting() {
  const char* s = std::getenv("COLONY_CUDA_SYNC");
  return s != nullptr ? s : "unset";
}

TEST(Fake, Passes_CUDA) { EXPECT_EQ(1 + 1, 2); }

TEST(Fake, Fails_CUDA) {
  if (named("_fails") || named("_fails_then_crashes")) ADD_FAILURE() << "the first error, COLONY_CUDA_SYNC=" << sync_setting();
}

TEST(Fake, SkipsWithoutADevice_CUDA) { COLONY_REQUIRE_CUDA(1); }

TEST(Fake, Misbehaves_CUDA) {
  if (named("_fails_then_crashes")) {
    std::fprintf(stderr, "about to crash, COLONY_CUDA_SYNC=%s\n", sync_setting());
    std::abort();
  }
  if (named("_hangs")) pause();  // until the runner's timeout kills it
}

TEST(Fake, RunsAfterIt_CUDA) { EXPECT_TRUE(true); }

TEST(Fake, IsNotACudaTest) { FAIL() << "the runner ran a test whose name lacks CUDA"; }

}  // namespace
