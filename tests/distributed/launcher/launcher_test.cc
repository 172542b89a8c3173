// colonyrun on real processes: the workers' environment, output prefixes and log files, the
// first failure stopping the job with that worker's code, signals, restarts, port 0, two
// launchers forming one two-node job, the lenet example under the launcher, a stopped (hung)
// rank named as the job's failure, and no socket or pipe leaking into workers or their children.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/multiprocess.h"
#include "tests/test_util.h"

namespace {

using Clock = std::chrono::steady_clock;

const char* kColonyrun = "distributed/colonyrun";
const char* kWorker = "tests/distributed/launcher/programs/worker";

struct Outcome {
  int code = -1;
  double seconds = 0;
  double cpu_seconds = 0;  // user + system time of the process (and of the children it waited for)
  std::string output;
  bool timed_out = false;
};

struct Process {
  pid_t pid = -1;
  int fd = -1;
};

Process start(const std::vector<std::string>& args, const std::vector<std::pair<std::string, std::string>>& env = {}) {
  int p[2];
  EXPECT_EQ(pipe(p), 0);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(p[1], 1);
    dup2(p[1], 2);
    close(p[0]);
    close(p[1]);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(p[1]);
  fcntl(p[0], F_SETFL, O_NONBLOCK);
  return {pid, p[0]};
}

// Waits for the process (killing it after `timeout`), collecting its output.
Outcome finish(Process proc, double timeout = 30, const Clock::time_point started = Clock::now()) {
  Outcome r;
  bool exited = false;
  int status = 0;
  while (true) {
    pollfd pfd{proc.fd, POLLIN, 0};
    poll(&pfd, 1, 20);
    char buf[4096];
    ssize_t n;
    while ((n = read(proc.fd, buf, sizeof(buf))) > 0) r.output.append(buf, n);
    struct rusage usage {};
    if (!exited && wait4(proc.pid, &status, WNOHANG, &usage) == proc.pid) {
      exited = true;
      r.seconds = std::chrono::duration<double>(Clock::now() - started).count();
      const auto secs = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
      r.cpu_seconds = secs(usage.ru_utime) + secs(usage.ru_stime);
    }
    if (exited && n == 0) break;
    if (exited && std::chrono::duration<double>(Clock::now() - started).count() > timeout + 5) break;
    if (!exited && std::chrono::duration<double>(Clock::now() - started).count() > timeout) {
      r.timed_out = true;
      kill(proc.pid, SIGKILL);
    }
  }
  close(proc.fd);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

// Reads the process's output until it holds `needle` (true) or `timeout` seconds pass (false).
bool read_until(const Process& proc, const std::string& needle, double timeout, std::string& output) {
  const auto give_up = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(timeout * 1000));
  while (output.find(needle) == std::string::npos) {
    if (Clock::now() > give_up) return false;
    pollfd pfd{proc.fd, POLLIN, 0};
    poll(&pfd, 1, 20);
    char buf[4096];
    ssize_t n;
    while ((n = read(proc.fd, buf, sizeof(buf))) > 0) output.append(buf, n);
  }
  return true;
}

// The number after `prefix` in `output` (0 when absent).
long number_after(const std::string& output, const std::string& prefix) {
  const size_t at = output.find(prefix);
  return at == std::string::npos ? 0 : std::atol(output.c_str() + at + prefix.size());
}

std::vector<std::string> colonyrun(std::vector<std::string> flags, std::vector<std::string> program) {
  std::vector<std::string> args{kColonyrun};
  args.insert(args.end(), flags.begin(), flags.end());
  args.insert(args.end(), program.begin(), program.end());
  return args;
}

Outcome run(std::vector<std::string> flags, std::vector<std::string> program, double timeout = 30) {
  return finish(start(colonyrun(std::move(flags), std::move(program))), timeout);
}

bool has(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

TEST(Colonyrun, SetsTheLaunchersEnvironmentAndPrefixesOutput) {
  Outcome r = run({"--nproc_per_node=2", "--master_port=0"}, {kWorker, "env"});
  ASSERT_EQ(r.code, 0) << r.output;
  for (int rank = 0; rank < 2; ++rank) {
    const std::string p = "[rank " + std::to_string(rank) + "] ";
    EXPECT_TRUE(has(r.output, p + "RANK=" + std::to_string(rank) + "\n")) << r.output;
    EXPECT_TRUE(has(r.output, p + "LOCAL_RANK=" + std::to_string(rank) + "\n"));
    EXPECT_TRUE(has(r.output, p + "WORLD_SIZE=2\n"));
    EXPECT_TRUE(has(r.output, p + "LOCAL_WORLD_SIZE=2\n"));
    EXPECT_TRUE(has(r.output, p + "GROUP_RANK=0\n"));
    EXPECT_TRUE(has(r.output, p + "MASTER_ADDR=127.0.0.1\n"));
    EXPECT_TRUE(has(r.output, p + "COLONY_STORE_HOSTED=1\n"));
    EXPECT_TRUE(has(r.output, p + "COLONY_RESTART_COUNT=0\n"));
    EXPECT_TRUE(has(r.output, p + "token_set=1\n"));
    EXPECT_TRUE(has(r.output, p + "to stderr\n"));
    EXPECT_TRUE(has(r.output, p + "no newline at the end\n")) << "partial last lines are flushed";
  }
  EXPECT_FALSE(has(r.output, "MASTER_PORT=0\n")) << "port 0 is replaced by the port the store got";
  EXPECT_FALSE(has(r.output, "MASTER_PORT=<unset>")) << r.output;
  // Cores split between the local processes, unless the caller set it already.
  const char* preset = std::getenv("COLONY_NUM_THREADS");
  const std::string threads =
      preset ? preset : std::to_string(std::max(1u, std::max(1u, std::thread::hardware_concurrency()) / 2));
  for (int rank = 0; rank < 2; ++rank)
    EXPECT_TRUE(has(r.output, "[rank " + std::to_string(rank) + "] COLONY_NUM_THREADS=" + threads + "\n")) << r.output;
}

TEST(Colonyrun, LogDirGetsOneFilePerRank) {
  const std::string dir = ::testing::TempDir() + "/colonyrun_logs";
  Outcome r = run({"--nproc_per_node=2", "--master_port=0", "--log_dir=" + dir}, {kWorker, "env"});
  ASSERT_EQ(r.code, 0) << r.output;
  for (int rank = 0; rank < 2; ++rank) {
    std::ifstream f(dir + "/rank_" + std::to_string(rank) + ".log");
    std::stringstream ss;
    ss << f.rdbuf();
    EXPECT_TRUE(has(ss.str(), "RANK=" + std::to_string(rank) + "\n")) << ss.str();
    EXPECT_FALSE(has(ss.str(), "[rank"));
  }
}

TEST(Colonyrun, FirstFailureStopsTheOthersAndGivesItsExitCode) {
  Outcome r = run({"--nproc_per_node=3", "--master_port=0", "--grace=2"}, {kWorker, "exit", "1", "3"});
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_LT(r.seconds, 10);
  EXPECT_TRUE(has(r.output, "rank 1 (local rank 1) exited with code 3 first")) << r.output;
}

TEST(Colonyrun, KilledWorkerGives128PlusSignal) {
  Outcome r = run({"--nproc_per_node=2", "--master_port=0", "--grace=2"}, {kWorker, "kill", "0"});
  EXPECT_EQ(r.code, 137) << r.output;
  EXPECT_LT(r.seconds, 10);
  EXPECT_TRUE(has(r.output, "rank 0 (local rank 0) was killed by signal 9 (SIGKILL) first")) << r.output;
}

TEST(Colonyrun, FailureSetsTheStoresAbortFlag) {
  Outcome r = run({"--nproc_per_node=2", "--master_port=0", "--grace=2"}, {kWorker, "abort_key"});
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_TRUE(has(r.output, "[rank 0] abort flag: rank 1 (pid ")) << r.output;
  EXPECT_TRUE(has(r.output, ") exited with code 3")) << r.output;
}

TEST(Colonyrun, AStoppedRankIsNamedAsTheJobsFailureNotTheRankThatNoticed) {
  const auto started = Clock::now();
  Process p = start(colonyrun({"--nproc_per_node=2", "--master_port=0", "--grace=2"}, {kWorker, "stop", "1"}),
                    {{"COLONY_HEARTBEAT_TIMEOUT_MS", "1500"}});
  Outcome r = finish(p, 40, started);
  // Whatever happened, the stopped worker does not outlive the test.
  const size_t at = r.output.find("stopping pid ");
  if (at != std::string::npos) {
    const pid_t stopped = std::atoi(r.output.c_str() + at + 13);
    if (stopped > 0) {
      kill(stopped, SIGKILL);
      kill(stopped, SIGCONT);
    }
  }
  ASSERT_NE(at, std::string::npos) << r.output;
  EXPECT_FALSE(r.timed_out) << r.output;
  EXPECT_NE(r.code, 0) << r.output;
  EXPECT_LT(r.seconds, 20) << r.output;
  EXPECT_TRUE(has(r.output, "colonyrun: the job failed: rank 1 stopped responding")) << r.output;
  EXPECT_FALSE(has(r.output, "colonyrun: the job failed: rank 0")) << r.output;
}

TEST(Colonyrun, NoSocketOrPipeLeaksIntoWorkersOrWhatTheyStart) {
  Outcome r = run({"--nproc_per_node=2", "--master_port=0", "--grace=2"}, {kWorker, "fds"});
  EXPECT_EQ(r.code, 0) << r.output;
  for (const std::string rank : {"[rank 0] ", "[rank 1] "}) {
    EXPECT_TRUE(has(r.output, rank + "inherited:\n")) << r.output;
    EXPECT_TRUE(has(r.output, rank + "passed on:\n")) << r.output;
  }
}

TEST(Colonyrun, SigtermToTheLauncherStopsEveryWorker) {
  const auto t0 = Clock::now();
  Process p = start(colonyrun({"--nproc_per_node=2", "--master_port=0", "--grace=2"}, {kWorker, "sleep"}));
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  kill(p.pid, SIGTERM);
  Outcome r = finish(p, 20, t0);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.code, 128 + SIGTERM) << r.output;
  EXPECT_LT(r.seconds, 10);
  EXPECT_TRUE(has(r.output, "stopping the workers")) << r.output;
}

// A worker exits, leaving `sleep 30` in a session of its own (setsid, so outside the worker's
// process group) holding its stdout. The launcher used to spin reading that pipe (550 CPU ticks in
// 7 s), deaf to SIGTERM, until the sleep ended, and then exit 0.
TEST(Colonyrun, APipeHeldByADetachedProcessNeitherSpinsNorHidesASigterm) {
  const auto t0 = Clock::now();
  Process p = start(colonyrun({"--master_port=0", "--grace=2"}, {kWorker, "detach"}));
  std::string before;
  const bool detached = read_until(p, "detached pid ", 20, before) && read_until(p, "\n", 5, before);
  const pid_t sleeper = static_cast<pid_t>(number_after(before, "detached pid "));
  kill(p.pid, SIGTERM);
  Outcome r = finish(p, 20, t0);
  if (sleeper > 0) kill(sleeper, SIGKILL);
  ASSERT_TRUE(detached) << before;
  EXPECT_FALSE(r.timed_out) << before << r.output;
  EXPECT_EQ(r.code, 128 + SIGTERM) << before << r.output;
  EXPECT_LT(r.seconds, 10);
  // Start-up and the store cost the launcher tens of milliseconds; spinning cost seconds.
  EXPECT_LT(r.cpu_seconds, 1.5);
}

TEST(Colonyrun, DoesNotWaitForEverForAPipeHeldByADetachedProcess) {
  Outcome r = run({"--master_port=0", "--grace=2"}, {kWorker, "detach"}, 40);
  const pid_t sleeper = static_cast<pid_t>(number_after(r.output, "detached pid "));
  if (sleeper > 0) kill(sleeper, SIGKILL);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_LT(r.seconds, 15) << "the sleep holding the pipe runs 30 s";
  EXPECT_LT(r.cpu_seconds, 1.5);
  EXPECT_TRUE(has(r.output, "colonyrun: rank 0 exited, but a process it started outside its process group")) << r.output;
}

// A rank killed between creating its shared-memory outbox and unlinking it cannot remove it; the
// launcher does, by the job and pid in its name.
TEST(Colonyrun, RemovesTheSharedMemoryAKilledWorkerLeft) {
  Outcome r = run({"--master_port=0", "--grace=1"}, {kWorker, "leak_outbox"});
  EXPECT_EQ(r.code, 128 + SIGKILL) << r.output;
  const size_t at = r.output.find("[rank 0] outbox /");
  ASSERT_NE(at, std::string::npos) << r.output;
  const std::string name = r.output.substr(at + 16, r.output.find('\n', at) - at - 16);
  struct stat st {};
  EXPECT_NE(stat(("/dev/shm" + name).c_str(), &st), 0) << name << " is still in /dev/shm";
  EXPECT_TRUE(has(r.output, "colonyrun: removed 1 shared-memory segment that exited workers left in /dev/shm (" + name))
      << r.output;
}

// Rank 0 blocks outside the collectives (its watchdog still beating); rank 1's all-reduce times
// out after 2 s waiting for it. The error and the launcher's summary blame rank 0, whose count of
// collectives lags, not rank 1, whose collective timed out.
TEST(Colonyrun, ARankThatStopsMakingProgressIsBlamedNotTheOneWhoseCollectiveTimedOut) {
  Outcome r = run({"--nproc_per_node=2", "--master_port=0", "--grace=2"}, {kWorker, "block", "0"}, 60);
  EXPECT_FALSE(r.timed_out) << r.output;
  EXPECT_NE(r.code, 0) << r.output;
  // The error rank 1 throws, then the launcher's summary.
  for (const char* said : {"[rank 0] blocking", "timed out", "; rank 0 stopped making progress: it has started ",
                           "colonyrun: the job failed: rank 0 stopped making progress: it has started ",
                           " (seen by rank 1: allreduce #"})
    EXPECT_TRUE(has(r.output, said)) << said << "\n" << r.output;
  EXPECT_FALSE(has(r.output, "colonyrun: the job failed: rank 1")) << r.output;
}

TEST(Colonyrun, MaxRestartsRunsTheGroupAgain) {
  Outcome r = run({"--nproc_per_node=2", "--master_port=0", "--max_restarts=1", "--grace=1"}, {kWorker, "fail_first_run"});
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "restarting the workers (1 of 1)")) << r.output;
  EXPECT_TRUE(has(r.output, "[rank 0] run 1 ok")) << r.output;
  Outcome no_restart = run({"--nproc_per_node=2", "--master_port=0", "--grace=1"}, {kWorker, "fail_first_run"});
  EXPECT_EQ(no_restart.code, 3);
}

TEST(Colonyrun, RestartedGroupResumesFromItsCheckpointAndEndsWhereAnUnbrokenRunDoes) {
  const std::string dir = ::testing::TempDir();
  Outcome unbroken = run({"--nproc_per_node=2", "--master_port=0"}, {kWorker, "train", dir + "/a.ckpt", "-1"});
  ASSERT_EQ(unbroken.code, 0) << unbroken.output;
  Outcome restarted = run({"--nproc_per_node=2", "--master_port=0", "--max_restarts=1", "--grace=1"},
                          {kWorker, "train", dir + "/b.ckpt", "7"});
  ASSERT_EQ(restarted.code, 0) << restarted.output;
  EXPECT_TRUE(has(restarted.output, "restarting the workers (1 of 1)")) << restarted.output;
  // Rank 1 left before step 7; the barrier after each checkpoint means steps 0..6 were saved.
  EXPECT_TRUE(has(restarted.output, "[rank 0] resumed at step 7")) << restarted.output;
  auto weights = [](const std::string& out) {
    size_t at = out.find("[rank 0] weights:");
    return at == std::string::npos ? std::string("<none>") : out.substr(at, out.find('\n', at) - at);
  };
  EXPECT_NE(weights(unbroken.output), "<none>");
  EXPECT_EQ(weights(restarted.output), weights(unbroken.output));
}

// Two launchers on 127.0.0.1 forming one job of two nodes with two workers each (node 1 starts
// first, so it waits for node 0's store); `extra` flags go to both. Returns node 0's and node 1's.
std::pair<Outcome, Outcome> run_two_nodes(const std::vector<std::string>& extra, const std::vector<std::string>& program,
                                          const std::string& token) {
  const std::string port = std::to_string(colony::testing::free_port());
  const auto t0 = Clock::now();
  auto node = [&](int k) {
    std::vector<std::string> flags{"--nnodes=2", "--node_rank=" + std::to_string(k), "--nproc_per_node=2",
                                   "--master_port=" + port};
    flags.insert(flags.end(), extra.begin(), extra.end());
    return start(colonyrun(flags, program), {{"COLONY_JOB_TOKEN", token}});
  };
  Process node1 = node(1);
  Process node0 = node(0);
  Outcome r0 = finish(node0, 60, t0), r1 = finish(node1, 60, t0);
  return {r0, r1};
}

TEST(Colonyrun, TwoLaunchersWithTwoNodesFormOneJob) {
  auto [r0, r1] = run_two_nodes({}, {kWorker, "allreduce"}, "two-node-test");
  ASSERT_EQ(r0.code, 0) << r0.output;
  ASSERT_EQ(r1.code, 0) << r1.output;
  // Ranks 0+1+2+3 = 6 over a world of 4, node 1 holding ranks 2 and 3.
  EXPECT_TRUE(has(r0.output, "[rank 0] world=4 sum=6")) << r0.output;
  EXPECT_TRUE(has(r0.output, "[rank 1] world=4 sum=6")) << r0.output;
  EXPECT_TRUE(has(r1.output, "[rank 2] world=4 sum=6")) << r1.output;
  EXPECT_TRUE(has(r1.output, "[rank 3] world=4 sum=6")) << r1.output;
}

TEST(Colonyrun, EveryNodeNamesTheJobsFirstFailure) {
  auto [r0, r1] = run_two_nodes({}, {kWorker, "fail_rank", "1"}, "two-node-failure-test");
  EXPECT_EQ(r0.code, 3) << r0.output;
  EXPECT_NE(r1.code, 0) << r1.output;
  EXPECT_TRUE(has(r0.output, "colonyrun: the job failed: rank 1 (local rank 1) exited with code 3 first")) << r0.output;
  // Node 1's workers were stopped because of rank 1: its summary says so, not that rank 2 failed first.
  EXPECT_TRUE(has(r1.output, "colonyrun: the job failed: rank 1 ")) << r1.output;
  EXPECT_FALSE(has(r1.output, "the job failed: rank 2")) << r1.output;
  EXPECT_FALSE(has(r1.output, "the job failed: rank 3")) << r1.output;
}

TEST(Colonyrun, TwoNodesRestartTogether) {
  // Rank 0 (node 0) fails on the first run; node 1's workers succeed, and still run again with it.
  auto [r0, r1] = run_two_nodes({"--max_restarts=1", "--grace=1"}, {kWorker, "fail_first_run"}, "two-node-restart-test");
  EXPECT_EQ(r0.code, 0) << r0.output;
  EXPECT_EQ(r1.code, 0) << r1.output;
  EXPECT_TRUE(has(r0.output, "restarting the workers (1 of 1)")) << r0.output;
  EXPECT_TRUE(has(r1.output, "restarting the workers (1 of 1)")) << r1.output;
  EXPECT_TRUE(has(r0.output, "[rank 0] run 1 ok")) << r0.output;
  EXPECT_TRUE(has(r1.output, "[rank 2] run 1 ok")) << r1.output;
  EXPECT_TRUE(has(r1.output, "[rank 3] run 1 ok")) << r1.output;
}

TEST(Colonyrun, BadFlagsAreExplained) {
  Outcome r = run({"--nproc_per_node=0"}, {kWorker, "env"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(has(r.output, "--nproc_per_node must be a positive number or auto")) << r.output;
  r = run({"--nnodes=2", "--node_rank=2"}, {kWorker, "env"});
  EXPECT_TRUE(has(r.output, "--node_rank 2 is not valid for --nnodes=2")) << r.output;
  r = run({"--master_port=0"}, {"/nonexistent/program"});
  EXPECT_TRUE(has(r.output, "program \"/nonexistent/program\" was not found")) << r.output;
  r = finish(start({kColonyrun}));
  EXPECT_NE(r.code, 0);
}

TEST(Colonyrun, PortInUseNamesTheAddressAndSuggestsPortZero) {
  const std::string port = std::to_string(colony::testing::free_port());
  Process first = start(colonyrun({"--master_port=" + port}, {kWorker, "sleep"}));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  Outcome second = run({"--master_port=" + port}, {kWorker, "env"});
  kill(first.pid, SIGTERM);
  finish(first, 20);
  EXPECT_NE(second.code, 0);
  EXPECT_TRUE(has(second.output, "127.0.0.1:" + port)) << second.output;
  EXPECT_TRUE(has(second.output, "--master_port=0")) << second.output;
}

TEST(Colonyrun, LenetExampleTrainsOnTwoRanksWithAccumulation) {
  Outcome r = run({"--nproc_per_node=2", "--master_port=0"},
              {"examples/lenet_cifar10/lenet_cifar10", "--epochs", "1", "--max_steps", "20", "--workers", "0",
               "--accum_steps", "2", "--threads", "1", "--checkpoint", ::testing::TempDir() + "/ddp_ckpt.safetensors"},
              120);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "[rank 0] [I rank 0] epoch 1 done")) << r.output;
  // The ranks scored disjoint halves of the synthetic test set: all of it, each image once.
  EXPECT_TRUE(has(r.output, "(10000 test images)")) << r.output;
  EXPECT_FALSE(has(r.output, "[rank 1] [I rank 1] epoch 1 done")) << "logging on rank 0 only";
  // Except where each rank trains (with GPUs, --device cuda or auto: its own cuda:LOCAL_RANK).
  EXPECT_TRUE(has(r.output, "[rank 1] [I rank 1] trains on cpu (process group: gloo, world size 2)")) << r.output;
  std::ifstream ckpt(::testing::TempDir() + "/ddp_ckpt.safetensors");
  EXPECT_TRUE(ckpt.good()) << "rank 0 wrote the checkpoint";
  // What a restarted worker sees (COLONY_RESTART_COUNT=1): it continues from --checkpoint.
  Outcome again = finish(start({"examples/lenet_cifar10/lenet_cifar10", "--epochs", "1", "--max_steps", "22",
                                "--workers", "0", "--threads", "1", "--checkpoint",
                                ::testing::TempDir() + "/ddp_ckpt.safetensors"},
                               {{"COLONY_RESTART_COUNT", "1"}}),
                         120);
  ASSERT_EQ(again.code, 0) << again.output;
  EXPECT_TRUE(has(again.output, "ddp_ckpt.safetensors at epoch 0, step 20")) << again.output;
}

// --first_bucket_cap_mb and --bucket_cap_mb reach DistributedDataParallel. LeNet's 242 KiB of
// gradients fit in one default bucket; with a 0.05 MiB first bucket and 0.1 MiB after it they go
// into three (fc3 and fc2: 43 KiB; fc1's weight alone, larger than the cap: 187 KiB; the rest),
// each with its own all-reduce in the timeline, and the benchmark reports how much overlapped.
TEST(Colonyrun, LenetBenchmarkSplitsGradientsAtTheBucketCaps) {
  const std::string trace = ::testing::TempDir() + "/lenet_buckets{rank}.json";
  Outcome r = finish(start(colonyrun({"--nproc_per_node=2", "--master_port=0"},
                                     {"examples/lenet_cifar10/lenet_cifar10", "--benchmark", "--max_steps", "12",
                                      "--warmup_steps", "2", "--workers", "0", "--threads", "1",
                                      "--first_bucket_cap_mb", "0.05", "--bucket_cap_mb", "0.1"}),
                           {{"COLONY_TRACE", trace}}),
                     120);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "[rank 0] images_per_s=")) << r.output;
  EXPECT_TRUE(has(r.output, "hidden_behind_backward=")) << r.output;
  std::ifstream in(::testing::TempDir() + "/lenet_buckets0.json");
  std::stringstream json;
  json << in.rdbuf();
  const std::string head = json.str().substr(0, 2000);
  EXPECT_TRUE(has(json.str(), "allreduce bucket 0 (43 KiB)")) << head;
  EXPECT_TRUE(has(json.str(), "allreduce bucket 1 (187 KiB)")) << head;
  EXPECT_TRUE(has(json.str(), "allreduce bucket 2 (11 KiB)")) << head;
  EXPECT_FALSE(has(json.str(), "allreduce bucket 3")) << head;
}

}  // namespace
