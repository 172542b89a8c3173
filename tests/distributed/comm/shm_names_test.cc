// Outbox names in /dev/shm carry the job and the creating pid; the sweep removes those of dead
// processes (a rank SIGKILLed between creating its outbox and unlinking it) and keeps live ones.
#include "distributed/comm/shm_names.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "distributed/comm/shm_outbox.h"

namespace colony::dist::comm_detail {
namespace {

bool in_dev_shm(const std::string& name) {
  struct stat st {};
  return ::stat(("/dev/shm" + name).c_str(), &st) == 0;
}

// Sets COLONY_JOB_ID for the test's duration.
struct JobId {
  explicit JobId(const std::string& id) { ::setenv("COLONY_JOB_ID", id.c_str(), 1); }
  ~JobId() { ::unsetenv("COLONY_JOB_ID"); }
};

TEST(ShmNames, NameCarriesJobAndPidAndParsesBack) {
  const std::string name = outbox_name("abc123", 4242, 0x0123456789abcdefULL);
  EXPECT_EQ(name, "/colony-abc123-4242-0123456789abcdef");
  const auto owner = parse_outbox_name(name);
  ASSERT_TRUE(owner.has_value());
  EXPECT_EQ(owner->job, "abc123");
  EXPECT_EQ(owner->pid, 4242);
  EXPECT_TRUE(parse_outbox_name("colony-0-17-ffffffffffffffff").has_value()) << "as a /dev/shm listing shows it";
}

TEST(ShmNames, OtherNamesAreNotOutboxes) {
  for (const char* other : {"/colony-12-0123456789abcdef", "/colony-a-b-0123456789abcdef", "/colony-a-12-0123",
                            "/sem.colony-a-12-0123456789abcdef", "/colony--12-0123456789abcdef",
                            "/colony-a-12-0123456789abcdeg", "/colony-a-1234567890-0123456789abcdef", "/other"})
    EXPECT_FALSE(parse_outbox_name(other).has_value()) << other;
}

TEST(ShmNames, JobIdKeepsLettersAndDigitsOnly) {
  {
    JobId id("a1-b2/c3");
    EXPECT_EQ(outbox_job_id(), "a1b2c3");
  }
  {
    JobId id(std::string(40, 'x'));
    EXPECT_EQ(outbox_job_id(), std::string(32, 'x'));
  }
  EXPECT_EQ(outbox_job_id(), "0");
}

TEST(ShmNames, SweepRemovesTheOutboxOfAKilledProcessAndKeepsLiveOnes) {
  const std::string job = "sweeptest" + std::to_string(::getpid());
  JobId id(job);
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Created and not unlinked yet: where a rank killed during set-up leaves its outbox.
    auto outbox = SharedOutbox::create(4096, 1);
    const std::string name = outbox->name() + "\n";
    if (::write(p[1], name.data(), name.size()) != static_cast<ssize_t>(name.size())) ::_exit(1);
    ::pause();
    ::_exit(0);
  }
  ::close(p[1]);
  std::string dead_name;
  char c;
  while (::read(p[0], &c, 1) == 1 && c != '\n') dead_name += c;
  ::close(p[0]);
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  ASSERT_EQ(dead_name.rfind("/colony-" + job + "-" + std::to_string(child) + "-", 0), 0u) << dead_name;
  ASSERT_TRUE(in_dev_shm(dead_name)) << "SIGKILL leaves the outbox behind";

  auto live = SharedOutbox::create(4096, 2);  // this process's: alive
  // Another job's leftovers are not this job's to sweep.
  sweep_dead_outboxes("someotherjob", std::chrono::seconds(0));
  EXPECT_TRUE(in_dev_shm(dead_name));
  // Too young for a sweep of every job that asks for a minute's age.
  const auto young = sweep_dead_outboxes("", std::chrono::seconds(60));
  EXPECT_EQ(std::count(young.begin(), young.end(), dead_name), 0);
  EXPECT_TRUE(in_dev_shm(dead_name));

  const std::vector<std::string> removed = sweep_dead_outboxes(job, std::chrono::seconds(0));
  EXPECT_EQ(removed, std::vector<std::string>{dead_name});
  EXPECT_FALSE(in_dev_shm(dead_name));
  EXPECT_TRUE(in_dev_shm(live->name())) << "a live process's outbox stays";
  live->unlink();
  EXPECT_FALSE(in_dev_shm(live->name()));
}

}  // namespace
}  // namespace colony::dist::comm_detail
